"""Copy evaluation splits between corpus folders, so that a derived training
set (e.g. a low-resource subset) is scored on the same dev and test data.

    python scripts/copy_splits.py corpus/wnut17 corpus/wnut17-200 dev test
"""
import shutil
from pathlib import Path
from typing import List

import typer


def main(source: Path, dest: Path, splits: List[str]) -> None:
    dest.mkdir(parents=True, exist_ok=True)
    for split in splits:
        path = source / f"{split}.spacy"
        if not path.exists():
            raise typer.BadParameter(f"{path} does not exist", param_hint="SOURCE")
        shutil.copyfile(path, dest / path.name)


if __name__ == "__main__":
    typer.run(main)
