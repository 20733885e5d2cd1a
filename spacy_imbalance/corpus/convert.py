"""A CoNLL file converted to .spacy: one file, or one per part of a split.

``spacy-imbalance convert`` and ``default-corpus`` call it after checking
their outputs (not the input, writable regular files named .spacy);
nothing is written unless the whole input reads and every part has a
sentence. Not in ``conll``: ``docs_io``, which writes the files, reads
CoNLL through it.
"""
from pathlib import Path
from typing import Dict, List, Optional

from spacy.tokens import Doc
from wasabi import msg

from .conll import ConllReport, conll_to_docs
from .default_corpus import DEFAULT_SPLIT_SEED, split_items
from .docs_io import copy_ents_to_spans, write_docbins


def output_paths(output: Path, split: Optional[Dict[str, float]]) -> Dict[str, Path]:
    """The files ``convert_file`` writes, by part: ``output`` itself without
    a split (the part ""), else NAME.spacy in the folder ``output``."""
    return {name: output / f"{name}.spacy" for name in split} if split else {"": output}


def convert_file(
    input_path: Path, output: Path, *, spans_key: str = "sc", split: Optional[Dict[str, float]] = None, seed: int = DEFAULT_SPLIT_SEED
) -> Dict[str, List[Doc]]:
    """Convert one CoNLL file to .spacy (``output_paths``), printing what
    the parser noticed; each part's docs. A ConllFormatError naming the file
    and line when the input does not read, a ValueError when a part would
    get no sentence or an output is a folder or a device."""
    paths = output_paths(output, split)
    docs, report = conll_to_docs(input_path)
    if spans_key:
        copy_ents_to_spans(docs, spans_key)
    print_conll_report(input_path, report)
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


def print_conll_report(path: Path, report: ConllReport) -> None:
    """What the parser noticed in ``path``: its counts, the -DOCSTART- lines
    it skipped, and the I-/E- tags that started an entity."""
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
