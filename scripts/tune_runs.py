"""Tune the decision thresholds of finished two_task_ner or sampled_spancat
runs on dev and score them again on test, as runs named <run>-tuned next to
the untuned ones.

For each run, training/<corpus>/<run>-s<seed>/model-best gets its thresholds
on corpus/<corpus>/dev.spacy from `spacy-imbalance tune-thresholds` (two_task_ner:
the entity and begin thresholds) or `spacy-imbalance calibrate` (sampled_spancat:
per-label thresholds, with a calibration report in training/.../calibration),
is saved as model-tuned, and is evaluated on the test split into
metrics/<corpus>/<run>-tuned-s<seed>.json (with the run's own fields and the
tuned thresholds). A run already tuned from the same training run is skipped.

    python scripts/tune_runs.py --corpus wnut17 --config two_task_auc --seed 0,1,2
"""
from pathlib import Path
from typing import List, Optional

import typer

from bench.names import run_name
from bench.options import parse_seeds, selected
from bench.tuning import tune_one, write_summary


def main(
    corpora: List[str] = typer.Option(..., "--corpus"),
    configs: List[str] = typer.Option(..., "--config"),
    seed_values: List[str] = typer.Option(["0,1,2"], "--seed", help="A seed or a comma-separated list, e.g. 0,1,2"),
    tag: Optional[str] = typer.Option(None, "--tag", help="The --tag the runs were trained with"),
    step: float = typer.Option(0.05, "--step", help="Threshold grid step"),
    gpu_id: int = typer.Option(-1, "--gpu-id"),
    summary: Optional[str] = typer.Option(None, "--summary", help="Also write metrics/<corpus>/NAME.md: untuned and tuned runs side by side"),
    only: str = typer.Option("", "--only", help="Comma-separated run names to tune, as benchmark.py --only; empty: all"),
    reference: Optional[str] = typer.Option(None, "--reference", help="Also pair each tuned run against this finished run (e.g. the best built-in) in the summary"),
    root: Path = typer.Option(Path("."), "--root"),
) -> None:
    seeds = parse_seeds(seed_values)
    runs = [run_name(config, tag) for config in configs]
    chosen = selected(configs, tag, only)
    if not chosen:
        print(f"--only {only}: no run to tune is selected", flush=True)
    for corpus in corpora:
        for config in chosen:
            for seed in seeds:
                tune_one(root, corpus, run_name(config, tag), seed, step, gpu_id)
        if summary is not None:
            # from every tuned run there is, not only those --only selected: a partial rerun
            # rewrites the same summary instead of shrinking it
            write_summary(root, corpus, runs, seeds, summary, reference)


if __name__ == "__main__":
    typer.run(main)
