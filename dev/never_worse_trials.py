"""Issue 42's trials of configs/never_worse_trials.yml on WNUT-2017 dev: each
trial trains a config (seed 0, one thread) on the complete train set or with
p = 0.5 of its entities removed, scores model-best on dev, and for a
sampled_spancat scores it again at every share of the prior correction.
Writes metrics/wnut17/never_worse/<trial>.json; a finished trial is skipped,
so it resumes where it stopped.

    python dev/never_worse_trials.py                      # every trial, in order
    python dev/never_worse_trials.py --only f-uniform-c   # some
    python dev/never_worse_trials.py --part 1/2           # every other trial (two queues)
    python dev/never_worse_trials.py --table              # metrics/wnut17/never_worse_trials.md only
    python dev/never_worse_trials.py --errors             # each trial's false positives by kind (never_worse_errors.md)
    python dev/never_worse_trials.py --from-run t-fixed-c=metrics/wnut17/transformer/sampled_spancat_uniform-nw_v2-s0.json
                                                          # a trial a grid run already trained: its model-best on dev
"""
from pathlib import Path
from typing import List

import srsly
import typer

from dev.never_worse.errors import count_trials, errors_table
from dev.never_worse.table import overall, pairs, table
from dev.never_worse.trials import from_run, run
from spacy_imbalance.benchmark.options import only_names

ROOT = Path(__file__).resolve().parent.parent
TRIALS = ROOT / "configs" / "never_worse_trials.yml"


def main(
    only: str = typer.Option("", "--only", help="Comma-separated trial names; empty: all"),
    part: str = typer.Option("1/1", "--part", help="K/N: the K-th of N interleaved shares of the trials"),
    table_only: bool = typer.Option(False, "--table", help="Write the summary only"),
    from_runs: List[str] = typer.Option([], "--from-run", help="TRIAL=RECORD: the trial from a run that trained its exact config (its model-best scored on dev); repeatable"),
    errors: bool = typer.Option(False, "--errors", help="Count each trial's false positives on dev by kind (inside a gold entity, ...) and write their table"),
) -> None:
    trials = srsly.read_yaml(TRIALS)["trials"]
    names = [n for n in trials if not only or n in only_names(only)]
    k, n = (int(x) for x in part.split("/"))
    folder = ROOT / "metrics" / "wnut17" / "never_worse"
    folder.mkdir(parents=True, exist_ok=True)
    out = folder.parent / "never_worse_trials.md"
    if errors:
        counted = count_trials(folder, ROOT / "corpus" / "wnut17" / "dev.spacy", folder.parent / "never_worse_errors.json")
        (folder.parent / "never_worse_errors.md").write_text(errors_table(counted, list(trials)), encoding="utf8")
        print((folder.parent / "never_worse_errors.md").read_text(encoding="utf8"))
        return
    for item in from_runs:
        name, _, record = item.partition("=")
        if name not in trials or not record:
            raise typer.BadParameter(f"expected TRIAL=RECORD with a trial of {TRIALS.name}, got {item!r}", param_hint="--from-run")
        from_run(ROOT, name, trials[name], Path(record).resolve(), ROOT / "corpus" / "wnut17", folder)
    for name in [] if table_only or from_runs else names[k - 1 :: n]:
        run(ROOT, name, trials[name], ROOT / "corpus" / "wnut17", folder)
        out.write_text(table(trials, folder), encoding="utf8")
    out.write_text(table(trials, folder), encoding="utf8")
    chosen = pairs(trials, folder)
    everywhere = overall(trials, folder)
    if everywhere:
        chosen += "\nOver every trial scored at every share:\n\n" + everywhere
    (folder.parent / "never_worse_choice.md").write_text(chosen or "No trial has run on both train sets yet.\n", encoding="utf8")
    print(out.read_text(encoding="utf8") + "\n" + chosen)


if __name__ == "__main__":
    typer.run(main)
