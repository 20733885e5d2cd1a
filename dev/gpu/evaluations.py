"""Benchmark run records from a GPU call's evaluations and training logs, when
the benchmark's own records did not come back.

A call's archive holds, per run, ``<config>-s<seed>.json`` (``spacy-imbalance
evaluate --output`` on its model-best, with the per-sentence counts and the
GPU's provenance) and ``<config>-s<seed>.log`` (its ``spacy train`` log). This
writes each as scripts/benchmark.py would have (dev curve, steps trained, the
time budget that stopped it) under metrics/<corpus>/gpu/<study>/transformer/,
then the summary and the paired bootstraps against each --baseline:
<study>.md and <study>-paired-<baseline>.json beside it. The headline table
of those runs is scripts/headline_table.py's, with --encoder gpu/<study>/<folder>.

    python dev/gpu/evaluations.py /work/.device/6/evals.tgz --study finetuned_6min \\
        --set training.eval_frequency=100 --time-budget 6 --baseline ner --baseline spancat_singlelabel
"""
import io
import re
import tarfile
from pathlib import Path
from typing import Any, Dict, List

import srsly
import typer

from spacy_imbalance.benchmark.options import split_sets
from spacy_imbalance.benchmark.paired import compare_with_baseline

ROOT = Path(__file__).resolve().parent.parent.parent
RUN = re.compile(r"(?P<name>[\w.-]+)-s(?P<seed>\d+)$")


def run_record(
    report: Dict[str, Any], log: str, config: str, seed: int, max_steps: int, overrides: Dict[str, str], minutes: float,
    corpus: str, commit: str,
) -> Dict[str, Any]:
    """An evaluation report with what scripts/benchmark.py records of a run."""
    from spacy_imbalance.sweeps.budget import STOPPED_BY_BUDGET
    from spacy_imbalance.sweeps.trial import dev_curve_of, step_record

    curve = dev_curve_of(log)
    match = STOPPED_BY_BUDGET.search(log)
    record = {
        **report,
        # as benchmark.py's trials are named: the seeds of a system pool in a summary
        "name": f"{corpus} {config}",
        "corpus": corpus, "config": config, "seed": seed, "max_steps": max_steps, "train_steps": max_steps,
        "budget": "steps", "overrides": overrides, "gpu_id": report.get("provenance", {}).get("gpu_id", 0),
        "dev_curve": curve, "stopped_by_budget": match is not None,
        **({"steps_trained": int(match.group(1))} if match else {}),
        "time_budget_minutes": minutes,
        # a run the budget stopped trained for it, to its first update after it
        # (the budget's clock starts at the first update: loading and initialisation
        # are not counted); one that finished first has no time in its log
        **({"train_seconds": 60 * minutes} if match else {}),
        # the package's commit the call ran (the device's copy has no git history)
        "source_commit": commit,
        "recorded_by": "dev/gpu/evaluations.py (the benchmark's own records were lost with the call)",
    }
    record.update(step_record(record))
    return record


def main(
    archive: Path = typer.Argument(..., exists=True, dir_okay=False, help="The call's .tgz of evaluations and logs"),
    study: str = typer.Option(..., "--study", help="Folder metrics/<corpus>/gpu/<study>/ and its summary name"),
    corpus: str = typer.Option("wnut17", "--corpus"),
    folder: str = typer.Option("transformer", "--folder", help="The configs' folder in configs/ (run names <folder>/<name>)"),
    max_steps: int = typer.Option(1000, "--max-steps", help="training.max_steps of the runs"),
    sets: List[str] = typer.Option([], "--set", help="The runs' --set overrides besides the time budget, as benchmark.py's"),
    minutes: float = typer.Option(..., "--time-budget", help="The runs' time budget (spacy-imbalance.time_budget.v1), minutes"),
    baselines: List[str] = typer.Option([], "--baseline", help="Run name (no seed) to pair the others against; repeatable"),
    commit: str = typer.Option(..., "--commit", help="The commit whose working tree the call ran"),
) -> None:
    from spacy_imbalance.cli.summarize import summarize_cli

    out = ROOT / "metrics" / corpus / "gpu" / study
    overrides = split_sets(sets)
    overrides["training.before_update"] = f'{{"@callbacks":"spacy-imbalance.time_budget.v1","minutes":{minutes:g}}}'
    files: Dict[str, Dict[int, Path]] = {}
    with tarfile.open(archive) as tar:
        members = {Path(m.name).name: m for m in tar.getmembers() if m.isfile()}
        for filename, member in sorted(members.items()):
            match = RUN.match(Path(filename).stem)
            if not (filename.endswith(".json") and match):
                continue
            report = srsly.json_loads(tar.extractfile(member).read().decode("utf8"))
            log_member = members.get(filename[: -len(".json")] + ".log")
            if log_member is None:
                raise SystemExit(f"{archive}: {filename} has no training log {Path(filename).stem}.log beside it")
            log = io.TextIOWrapper(tar.extractfile(log_member), encoding="utf8", errors="replace").read()
            name, seed = f"{folder}/{match['name']}", int(match["seed"])
            record = run_record(report, log, name, seed, max_steps, overrides, minutes, corpus, commit)
            path = out / f"{name}-s{seed}.json"
            path.parent.mkdir(parents=True, exist_ok=True)
            srsly.write_json(path, record, indent=0)
            files.setdefault(name, {})[seed] = path
    if not files:
        raise SystemExit(f"{archive}: no <name>-s<seed>.json evaluation in it")
    seeds = sorted(set.intersection(*(set(by_seed) for by_seed in files.values())))
    paths = [path for by_seed in files.values() for path in by_seed.values()]
    summary = out.parent / f"{study}.md"
    summarize_cli(paths, output=summary, plot=out.parent / f"{study}_per_type_f1.png", title=f"Per-type F1 on {corpus} test")
    for baseline in baselines:
        result, table = compare_with_baseline(out, list(files), seeds, f"{folder}/{baseline}")
        srsly.write_json(out.parent / f"{study}-paired-{baseline}.json", result)
        with summary.open("a", encoding="utf8") as f:
            f.write("\n" + table)
        print(table)


if __name__ == "__main__":
    typer.run(main)
