"""What Ray buys the audit (issue 34, item 5): `spacy-imbalance audit` of the
default corpus's training set with 30 % of its entities removed (seed 0), k
folds of a fixed number of steps each, run one fold after another (one
process, its default threads) and with `--workers N` (Ray, one thread per
fold), timed side by side on this machine, and the two suspect lists
compared. Every audit starts from an empty folder (a resumed audit would time
nothing); a fold count already measured is skipped.

    python scripts/audit_workers.py --folds 4,5 --steps 600 --workers 2
Writes metrics/wnut16/audit_workers.json and .md. Run it alone on the machine:
it times.
"""
import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any, Dict, List

import typer

from spacy_imbalance.benchmark.options import only_names, parse_list
from spacy_imbalance.benchmark.processes import measured
from spacy_imbalance.benchmark.records import device_words
from spacy_imbalance.benchmark.tables import head, row

ROOT = Path(__file__).resolve().parent.parent
# what both runs must agree on: the suspects and every scored span
OUTPUTS = ("suspects.jsonl", "scored_spans.tsv")


def masked_corpus(out: Path) -> Path:
    if not out.exists():
        out.parent.mkdir(parents=True, exist_ok=True)
        subprocess.run([sys.executable, "-m", "spacy_imbalance", "mask", str(ROOT / "corpus" / "wnut16" / "train.spacy"),
                        str(out), "--p", "0.3", "--seed", "0"], check=True, capture_output=True)
    return out


def suspects(folder: Path) -> List[str]:
    return (folder / "suspects.jsonl").read_text(encoding="utf8").splitlines()


def main(
    folds: str = typer.Option("4,5", "--folds", help="Fold counts k to measure, comma-separated"),
    steps: int = typer.Option(600, "--steps", help="Training steps of each fold"),
    workers: int = typer.Option(2, "--workers", help="Ray workers of the parallel run"),
    work: Path = typer.Option(Path("training/audit_workers"), "--work-dir"),
    metrics: Path = typer.Option(Path("metrics/wnut16/audit_workers.json"), "--output"),
    only: str = typer.Option("", "--only", help="Comma-separated settings to run (audit-workers/k4); empty: all"),
) -> None:
    records: Dict[str, Any] = json.loads(metrics.read_text()) if metrics.exists() else {"rows": []}
    done = {(row["folds"], row["steps"], row["workers"]) for row in records["rows"]}
    names = only_names(only)
    selected = [k for k in parse_list(folds, int, "--folds") if not names or f"audit-workers/k{k}" in names]
    if not selected:
        print("--only: no setting of this benchmark is selected", flush=True)
    dev = ROOT / "corpus" / "wnut16" / "dev.spacy"
    for k in selected:
        if (k, steps, workers) in done:
            print(f"k = {k}: measured before", flush=True)
            continue
        train = masked_corpus(work / "masked-p30-s0.spacy")
        result: Dict[str, Any] = {"folds": k, "steps": steps, "workers": workers}
        for mode, extra in (("sequential", []), ("ray", ["--workers", str(workers)])):
            out = work / f"k{k}-{steps}" / mode
            shutil.rmtree(out, ignore_errors=True)
            out.parent.mkdir(parents=True, exist_ok=True)
            print(f"k = {k}, {mode}: auditing ({k} folds x {steps} steps)", flush=True)
            result[mode] = measured([sys.executable, "-m", "spacy_imbalance", "audit", str(train), "--dev", str(dev), "-o", str(out),
                                     "--folds", str(k), "--resamples", "0", "--training.max_steps", str(steps),
                                     "--training.eval_frequency", str(max(1, steps // 3)), *extra], log=str(out.parent / f"{mode}.log"))
            print(f"  {result[mode]}", flush=True)
        seq, par = (work / f"k{k}-{steps}" / mode for mode in ("sequential", "ray"))
        result["ratio"] = round(result["ray"]["seconds"] / result["sequential"]["seconds"], 3)
        result["same_outputs"] = all((seq / name).read_bytes() == (par / name).read_bytes() for name in OUTPUTS)
        a, b = set(suspects(seq)), set(suspects(par))
        result["suspects"] = {"sequential": len(a), "ray": len(b), "shared": len(a & b)}
        print(f"  ray / sequential {result['ratio']:.2f}x; same suspects and scores: {result['same_outputs']}", flush=True)
        records["rows"] = sorted([*records["rows"], result], key=lambda r: (r["steps"], r["folds"], r["workers"]))
        from spacy_imbalance.sweeps import run_provenance

        records["provenance"] = run_provenance(root=ROOT)
        metrics.parent.mkdir(parents=True, exist_ok=True)
        metrics.write_text(json.dumps(records, indent=1) + "\n", encoding="utf8")
    write_table(records, metrics)


def write_table(records: Dict[str, Any], metrics: Path) -> None:
    if not records["rows"]:
        return
    lines = [
        f"`audit` of WNUT-2016's training set (30 % of its entities removed) on {device_words(records['provenance'])}, one fold "
        "after another and on Ray, timed side by side:",
        "",
        *head(["folds", "steps per fold", "sequential s", "Ray s (workers)", "Ray / sequential", "suspects", "same suspects and scores"],
              "rrrrrrl"),
        *[row([str(r["folds"]), str(r["steps"]), f"{r['sequential']['seconds']:.0f}", f"{r['ray']['seconds']:.0f} ({r['workers']})",
               f"{r['ratio']:.2f}x", str(r["suspects"]["sequential"]), "yes" if r["same_outputs"] else
               f"no ({r['suspects']['shared']} of {r['suspects']['sequential']} shared)"]) for r in records["rows"]],
    ]
    metrics.with_suffix(".md").write_text("\n".join(lines) + "\n", encoding="utf8")
    print("\n".join(lines))


if __name__ == "__main__":
    typer.run(main)
