"""The fine-tuning trials of configs/transformer_trials.yml on WNUT-2017 dev
(issue 30): each trial trains a config with its settings for a number of
epochs, evaluates dev once per epoch, and scores model-best on dev. Writes
metrics/wnut17/transformer_trials/<trial>.json (the dev report and curve) and
metrics/wnut17/transformer_trials.md (every trial, in the order of the file).

A finished trial (same config fingerprint, settings and epochs) is skipped,
so the script resumes where it stopped; a trial cut off part-way trains again.

    python dev/transformer_trials.py            # every trial, one at a time
    python dev/transformer_trials.py --only spancat_uniform-base
    python dev/transformer_trials.py --table    # the summary only
"""
from pathlib import Path

import srsly
import typer

from spacy_imbalance.benchmark.options import only_names
from dev.transformer.trials import run
from dev.transformer.trials_table import features_table, plot, table

ROOT = Path(__file__).resolve().parent.parent
TRIALS = ROOT / "configs" / "transformer_trials.yml"


def main(
    only: str = typer.Option("", "--only", help="Comma-separated trial names; empty: all"),
    table_only: bool = typer.Option(False, "--table", help="Write the summary only"),
    corpus: str = typer.Option("wnut17", "--corpus"),
) -> None:
    spec = srsly.read_yaml(TRIALS)
    names = list(spec["trials"])
    chosen = [n for n in names if n in only_names(only)] if only else names
    folder = ROOT / "metrics" / corpus / "transformer_trials"
    folder.mkdir(parents=True, exist_ok=True)
    if not table_only:
        for name in chosen:
            run(ROOT, name, spec["trials"][name], spec["defaults"], ROOT / "corpus" / corpus, folder)
            (folder.parent / "transformer_trials.md").write_text(table(names, folder), encoding="utf8")
    text = table(names, folder)
    against = features_table(ROOT, names, folder, corpus)
    if against:
        text += "\nFine-tuning against frozen features of the same model on the CPU (one thread each, seed 0):\n\n" + against
    if plot(names, folder, folder.parent / "transformer_trials.png"):
        text += f"\n![Dev macro-F1 by epoch](../../metrics/{corpus}/transformer_trials.png)\n"
    (folder.parent / "transformer_trials.md").write_text(text, encoding="utf8")
    print(text)


if __name__ == "__main__":
    typer.run(main)
