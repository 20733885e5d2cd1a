"""The headline table of one encoder: every system against the best spaCy
built-in trained on the same encoder and budget, with each method's own claim
re-tested, training time, and the dev curves that show the runs converged.

Reads the runs that `spacy-imbalance benchmark run` wrote to
metrics/<corpus>/<encoder>/<system>-s<seed>.json and writes
metrics/<corpus>/<name>.md, <name>.json and <name>_dev.png.

    python scripts/headline_table.py headline_vectors --corpus wnut17 --encoder vectors

The reference of the paired bootstrap is the built-in (spaCy's ner,
spancat_singlelabel, spancat) with the best mean test macro-F1: choosing it on
test makes every comparison harder for the other systems, never easier. A
system with seeds missing is shown as missing, not averaged over fewer seeds.
"""
import re
from pathlib import Path
from typing import List

import srsly
import typer

from bench.headline.plot import plot_dev_curves
from bench.headline.systems import DEFAULT_MOM_TAG, systems
from bench.headline.table import table
from spacy_imbalance.benchmark.options import parse_list


def main(
    name: str = typer.Argument(..., help="Writes metrics/<corpus>/<name>.md, .json and _dev.png (a name may hold a folder: gpu/NAME)"),
    corpora: List[str] = typer.Option(..., "--corpus"),
    encoder: str = typer.Option(..., "--encoder", help="The config folder of the runs: vectors or features"),
    seeds: str = typer.Option("0,1,2", "--seed", help="Comma-separated seeds"),
    root: Path = typer.Option(Path("."), "--root"),
    mom_tags: List[str] = typer.Option([], "--mom-tag", help=f"CORPUS=TAG: the tag of that corpus's MoM runs, the λ its dev chose (l90: λ 0.9); default {DEFAULT_MOM_TAG}"),
) -> None:
    seed_list = parse_list(seeds, int, "--seed")
    mom = dict(item.partition("=")[::2] for item in mom_tags)
    bad = [item for item in mom_tags if item.count("=") != 1 or item.split("=")[0] not in corpora or not re.fullmatch(r"l\d\d", item.split("=")[1])]
    if bad:
        raise typer.BadParameter(f"expected CORPUS=l<100 λ> for a corpus of --corpus (wnut16=l90), got {bad[0]!r}", param_hint="--mom-tag")
    for corpus in corpora:
        tag = mom.get(corpus, DEFAULT_MOM_TAG)
        text, result, present = table(corpus, encoder, seed_list, root, tag)
        out = root / "metrics" / corpus / f"{name}.md"
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(text.replace("{name}", name), encoding="utf8")
        srsly.write_json(out.with_suffix(".json"), result, indent=0)
        if present:
            plot_dev_curves(present, out.with_name(f"{out.stem}_dev.png"), f"Dev macro-F1, {corpus}, {encoder} encoder", systems(tag)[0])
        typer.echo(text.replace("{name}", name))


if __name__ == "__main__":
    typer.run(main)
