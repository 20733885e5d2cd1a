"""What Ray buys the audit on a corpus (``audit-check workers``): its
training set with a share p of its entities hidden, audited with k folds of
a fixed number of steps one fold after another (one process, its default
threads) and with ``--workers N`` (Ray, one thread per fold), timed side by
side on this machine, and the two audits' suspects and scored spans
compared. Every audit starts from an empty folder (a resumed audit would
time nothing); a fold count measured before is skipped."""
import json
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Dict, List

from ...benchmark.processes import measured
from ...benchmark.records import device_words
from ...benchmark.tables import head, row
from .steps import package_command, run_logged

# what both audits must agree on: the suspects and every scored span
OUTPUTS = ("suspects.jsonl", "scored_spans.tsv")
# --only's name of a fold count k: audit-workers/k4
ONLY_PREFIX = "audit-workers"


@dataclass(frozen=True)
class Timing:
    """The audits to time: ``train`` with ``p`` of its entities hidden
    (``seed``), calibrated on ``dev``, each fold ``steps`` steps, the
    parallel one on ``workers`` Ray workers; their folders in ``work``."""

    train: Path
    dev: Path
    work: Path
    steps: int = 600
    workers: int = 2
    p: float = 0.3
    seed: int = 0

    def masked(self) -> Path:
        """The training set with its entities hidden, made once."""
        out = self.work / f"masked-p{round(100 * self.p):02d}-s{self.seed}.spacy"
        if not out.exists():
            out.parent.mkdir(parents=True, exist_ok=True)
            cmd = package_command("mask", str(self.train), str(out), "--p", str(self.p), "--seed", str(self.seed))
            run_logged(cmd, out.with_suffix(".log"), "Masking")
        return out


def _suspects(folder: Path) -> List[str]:
    return (folder / "suspects.jsonl").read_text(encoding="utf8").splitlines()


def measure(timing: Timing, k: int) -> Dict[str, Any]:
    """One fold count: both audits timed, their outputs compared."""
    train = timing.masked()
    result: Dict[str, Any] = {"folds": k, "steps": timing.steps, "workers": timing.workers}
    for mode, extra in (("sequential", []), ("ray", ["--workers", str(timing.workers)])):
        out = timing.work / f"k{k}-{timing.steps}" / mode
        shutil.rmtree(out, ignore_errors=True)
        out.parent.mkdir(parents=True, exist_ok=True)
        print(f"k = {k}, {mode}: auditing ({k} folds x {timing.steps} steps)", flush=True)
        command = package_command("audit", str(train), "--dev", str(timing.dev), "-o", str(out), "--folds", str(k), "--resamples", "0",
                                  "--training.max_steps", str(timing.steps), "--training.eval_frequency", str(max(1, timing.steps // 3)), *extra)
        result[mode] = measured(command, log=str(out.parent / f"{mode}.log"))
        print(f"  {result[mode]}", flush=True)
    seq, par = (timing.work / f"k{k}-{timing.steps}" / mode for mode in ("sequential", "ray"))
    result["ratio"] = round(result["ray"]["seconds"] / result["sequential"]["seconds"], 3)
    result["same_outputs"] = all((seq / name).read_bytes() == (par / name).read_bytes() for name in OUTPUTS)
    a, b = set(_suspects(seq)), set(_suspects(par))
    result["suspects"] = {"sequential": len(a), "ray": len(b), "shared": len(a & b)}
    print(f"  ray / sequential {result['ratio']:.2f}x; same suspects and scores: {result['same_outputs']}", flush=True)
    return result


def measure_all(timing: Timing, folds: List[int], record: Path) -> Dict[str, Any]:
    """Each fold count not measured before, added to ``record`` (JSON) as it finishes; the records."""
    from ...sweeps import run_provenance

    records: Dict[str, Any] = json.loads(record.read_text(encoding="utf8")) if record.exists() else {"rows": []}
    done = {(r["folds"], r["steps"], r["workers"]) for r in records["rows"]}
    for k in folds:
        if (k, timing.steps, timing.workers) in done:
            print(f"k = {k}: measured before", flush=True)
            continue
        rows = [*records["rows"], measure(timing, k)]
        records["rows"] = sorted(rows, key=lambda r: (r["steps"], r["folds"], r["workers"]))
        records["provenance"] = run_provenance()
        record.parent.mkdir(parents=True, exist_ok=True)
        record.write_text(json.dumps(records, indent=1) + "\n", encoding="utf8")
    return records


def workers_table(records: Dict[str, Any], name: str, p: float) -> str:
    """The measurements as a Markdown table, ``name`` the corpus audited."""
    lines = [
        f"`audit` of {name} ({100 * p:g} % of its entities removed) on {device_words(records['provenance'])}, one fold "
        "after another and on Ray, timed side by side:",
        "",
        *head(["folds", "steps per fold", "sequential s", "Ray s (workers)", "Ray / sequential", "suspects", "same suspects and scores"],
              "rrrrrrl"),
        *[row([str(r["folds"]), str(r["steps"]), f"{r['sequential']['seconds']:.0f}", f"{r['ray']['seconds']:.0f} ({r['workers']})",
               f"{r['ratio']:.2f}x", str(r["suspects"]["sequential"]), "yes" if r["same_outputs"] else
               f"no ({r['suspects']['shared']} of {r['suspects']['sequential']} shared)"]) for r in records["rows"]],
    ]
    return "\n".join(lines) + "\n"
