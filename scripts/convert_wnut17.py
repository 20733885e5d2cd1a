"""Convert WNUT-2017 train/dev/test to .spacy, from the first folder that has them.

Used by project.yml: the shared copy (../shared/corpora/wnut17) when present,
otherwise the files that `spacy project assets` downloaded to assets/wnut17.
"""
import sys
from pathlib import Path

import typer

from spacy_imbalance.corpus.convert import convert_file

SPLITS = ("train", "dev", "test")


def main(
    output_dir: Path = typer.Argument(..., help="Folder for train/dev/test.spacy"),
    candidates: list[Path] = typer.Argument(..., help="Folders to look in, in order"),
) -> None:
    for folder in candidates:
        if all((folder / f"{split}.conll").is_file() for split in SPLITS):
            for split in SPLITS:
                convert_file(folder / f"{split}.conll", output_dir / f"{split}.spacy")
            return
    looked = ", ".join(str(c) for c in candidates)
    typer.echo(
        f"WNUT-2017 not found (looked for train/dev/test.conll in {looked}). "
        "Run `python -m spacy project assets` to download it.",
        err=True,
    )
    sys.exit(1)


if __name__ == "__main__":
    typer.run(main)
