"""Reviewed decisions about spans, read from the files annotation tools
export, as one normalized ``Decision`` per span.

Three formats, detected per file (or forced with ``fmt``):

- ``prodigy``: our review page and Prodigy's ``db-out`` (JSONL), one task a
  line: ``{"text", "spans": [{"start", "end", "label", "source"?}],
  "answer": "accept" | "reject" | "ignore", "meta"?: {"doc"?}}``. The answer
  applies to every span of the line. A span with ``"source": "annotation"``
  is an entity the corpus already has, shown for context (the audit's
  suspects.jsonl carries them): accepted with the line, and left out of a
  rejected or ignored line, whose verdict is on the proposed spans.
- ``doccano``: JSONL, ``{"text", "label": [[start, end, "LABEL"], ...]}`` or
  ``{"text", "entities": [{"start_offset", "end_offset", "label"}]}``; every
  span is accepted.
- ``label-studio``: Label Studio's JSON export, a list of tasks
  ``{"data": {"text", "meta"?}, "annotations": [{"result": [{"type":
  "labels", "value": {"start", "end", "labels": [L]}}], "was_cancelled"?}]}``;
  the last annotation that was not cancelled counts, and every span of it
  is accepted.

A file's records may come as JSON lines, as a JSON list or as one object
(pretty-printed or not), in any of the three formats; the format is told by
the keys of the first record, and a problem of a later one names the format
it was read in. The text is UTF-8, or UTF-16 or UTF-8 with a byte order
mark; an object with a key twice is refused. A file over
``MAX_DECISIONS_BYTES`` is refused unread; JSON lines are read a line at a
time, a JSON document whole.

Offsets are character offsets into the text, the end exclusive. Every
problem raises a ``DecisionFormatError`` naming the file and the line (or
task).
"""
import codecs
import contextlib
import io
import json
import os
from dataclasses import dataclass
from enum import Enum
from pathlib import Path
from typing import Any, BinaryIO, Callable, Dict, Generator, Iterator, List, Optional, Sequence, Tuple, Union

from ..corpus.strict_json import DuplicateKeyError, array_item_starts, line_of, loads_strict

ANSWERS = ("accept", "reject", "ignore")
EXISTING_SOURCE = "annotation"  # Prodigy's and our audit's mark of an entity the corpus has
# the largest decisions file read, in bytes, checked before reading: a file
# read whole as one JSON document takes some 17 times its size in memory
# (30 MB took 508 MB), so this keeps that near 2 GB; JSON lines, read one
# line at a time, take far less. A review is much smaller than this.
MAX_DECISIONS_BYTES = 128 * 1024 * 1024


class DecisionFormat(str, Enum):
    PRODIGY = "prodigy"
    DOCCANO = "doccano"
    LABEL_STUDIO = "label-studio"


# how a message names the format a file was read in
FORMAT_NAMES = {
    DecisionFormat.PRODIGY: "our review page's or Prodigy's format",
    DecisionFormat.DOCCANO: "doccano's format",
    DecisionFormat.LABEL_STUDIO: "Label Studio's format",
}

EXPECTED = (
    "our review page's or Prodigy's JSONL (one {\"text\", \"spans\", \"answer\"} per line), doccano JSONL "
    "(one {\"text\", \"label\": [[start, end, LABEL]]} or {\"text\", \"entities\"} per line), or Label Studio's "
    "JSON export (a list of {\"data\": {\"text\"}, \"annotations\"} tasks)"
)


class DecisionFormatError(ValueError):
    """A decisions file that cannot be read; the message names the file and,
    where there is one, the line or task."""

    def __init__(self, where: str, message: str):
        self.where, self.message = where, message
        super().__init__(f"{where}: {message}")


@dataclass(frozen=True)
class Decision:
    """One reviewed span. ``line`` is the 1-based line of a JSONL file or
    task of a Label Studio export (``unit`` says which); ``doc`` the corpus
    index the task names (``meta.doc``), None when it names none."""

    source: str
    line: int
    doc: Optional[int]
    text: str
    start: int
    end: int
    label: str
    answer: str
    unit: str = "line"

    @property
    def where(self) -> str:
        return f"{self.source}, {self.unit} {self.line}"

    @property
    def key(self) -> Tuple[int, int, str]:
        return self.start, self.end, self.label


@dataclass
class DecisionFile:
    """What one file holds: its format, its lines or tasks, its decisions."""

    path: Path
    format: DecisionFormat
    records: int
    decisions: List[Decision]


def read_decisions(path: Union[str, Path], fmt: Optional[DecisionFormat] = None) -> DecisionFile:
    """The decisions of ``path``, in the format ``fmt`` or the one detected
    from the keys of its first record. A problem of a record is named with
    the format it was read in, and why that one. JSON lines are read one at
    a time: only the decisions are kept, not the text or the records."""
    path = Path(path)
    decisions: List[Decision] = []
    count = 0
    how = "as --format says"
    with contextlib.closing(iter_records(path)) as records:
        for record in records:
            if fmt is None:
                fmt = detect_format(path, [record])
                how = f"detected from the keys of {record.place(fmt)}"
            try:
                decisions += _READERS[fmt](record.where(path, fmt), str(path), record.number(fmt), record.unit(fmt), record.value)
            except DecisionFormatError as err:
                raise DecisionFormatError(err.where, f"{err.message} [read as {FORMAT_NAMES[fmt]}, {how}]") from None
            count += 1
    if fmt is None:  # iter_records refuses a file without a record
        raise DecisionFormatError(str(path), f"holds no decisions; expected {EXPECTED}")
    return DecisionFile(path, fmt, count, decisions)


@dataclass(frozen=True)
class Record:
    """One record of a decisions file: a JSON object, the line where it
    starts, and its place in a JSON list (``item``, 1-based; None for a
    record of JSON lines or a file that is one object)."""

    line: int
    value: Dict[str, Any]
    item: Optional[int] = None

    def unit(self, fmt: Optional[DecisionFormat]) -> str:
        """A Label Studio task of a list is named by its place, as Label
        Studio numbers them ("task 3"); every other record by its line."""
        return "task" if self.item is not None and fmt is DecisionFormat.LABEL_STUDIO else "line"

    def number(self, fmt: Optional[DecisionFormat]) -> int:
        return self.item if self.unit(fmt) == "task" and self.item is not None else self.line

    def place(self, fmt: Optional[DecisionFormat]) -> str:
        return f"{self.unit(fmt)} {self.number(fmt)}"

    def where(self, path: Path, fmt: Optional[DecisionFormat]) -> str:
        return f"{path}, {self.place(fmt)}"


def iter_records(path: Path) -> Generator[Record, None, None]:
    """The JSON objects of a decisions file, in order: JSON lines (one object
    a line), read a line at a time, or the whole file as one JSON document,
    a list of objects (a JSON export) or one object (pretty-printed or not).
    A file over ``MAX_DECISIONS_BYTES`` is refused before it is read, and an
    object that has a key twice is refused (which of the two would hold?)."""
    with open(path, "rb") as raw:
        _check_size(path, os.fstat(raw.fileno()).st_size)
        lines = _lines(path, raw)
        before: List[str] = []  # the blank lines before the first record
        for number, line in lines:
            if line.strip():
                break
            before.append(line)
        else:
            raise DecisionFormatError(str(path), f"is empty: it holds no decisions; expected {EXPECTED}")
        if not line.lstrip().startswith("{"):
            # a JSON list, or no decisions file: read whole (the size is bounded)
            yield from _document_records(path, "".join([*before, line, *(rest for _, rest in lines)]))
            return
        try:
            first = loads_strict(line.removesuffix("\n"))  # its "\n" would shift the column of a message
        except DuplicateKeyError as err:
            raise DecisionFormatError(f"{path}, line {number}", err.problem) from None
        except json.JSONDecodeError as err:
            # no object on the first line alone: one JSON document (a
            # pretty-printed object) or a broken line
            text = "".join([*before, line, *(rest for _, rest in lines)])
            yield from _document_records(path, text, first_line=(number, err))
            return
        yield Record(number, first)
        yield from _jsonl_records(path, lines)


def _check_size(path: Path, size: int) -> None:
    if size > MAX_DECISIONS_BYTES:
        raise DecisionFormatError(
            str(path), f"is {size:,} bytes, more than the {MAX_DECISIONS_BYTES:,} bytes a decisions file may have: "
            "split it into smaller files (apply-review takes several)"
        )


def _document_records(path: Path, text: str, first_line: Optional[Tuple[int, json.JSONDecodeError]] = None) -> List[Record]:
    """The records of a file read as one JSON document. ``first_line``: the
    line number and error of a first line that is no JSON object alone (the
    file begins with "{"), to name when the whole is no JSON either."""
    try:
        document = loads_strict(text)
    except DuplicateKeyError as err:
        raise DecisionFormatError(f"{path}, line {err.line}", err.problem) from None
    except json.JSONDecodeError as whole:
        if first_line is not None:
            number, line_err = first_line
            if whole.lineno > number:
                # the text reads on past the first line: perhaps one JSON
                # document (a pretty-printed object) that breaks further on
                raise DecisionFormatError(
                    f"{path}, line {number}", f"is not JSON ({line_err}), and the file is no one JSON document either: it breaks "
                    f"at line {whole.lineno}, column {whole.colno} ({whole.msg}); expected one JSON object a line, or one JSON "
                    f"document: {EXPECTED}"
                ) from None
            raise DecisionFormatError(f"{path}, line {number}", f"is not JSON ({line_err}); expected one JSON object a line") from None
        if text.lstrip().startswith("["):
            raise DecisionFormatError(str(path), f"is not JSON ({whole}); expected {EXPECTED}") from None
        raise DecisionFormatError(str(path), f"matches no decisions format; expected {EXPECTED}") from None
    if isinstance(document, list):
        if not document:
            raise DecisionFormatError(str(path), f"is an empty JSON list: it holds no decisions; expected {EXPECTED}")
        starts = array_item_starts(text)
        records = []
        for item, (start, value) in enumerate(zip(starts, document), start=1):
            line = line_of(text, start)
            if not isinstance(value, dict):
                raise DecisionFormatError(f"{path}, line {line}", f"item {item} of the list is a JSON {type(value).__name__}, not an object; expected {EXPECTED}")
            records.append(Record(line, value, item))
        return records
    if isinstance(document, dict):
        return [Record(line_of(text, len(text) - len(text.lstrip())), document)]
    raise DecisionFormatError(str(path), f"is a JSON {type(document).__name__}; expected {EXPECTED}")


def detect_format(path: Path, records: Sequence[Record]) -> DecisionFormat:
    """The format of a file's records, told by the keys of the first one:
    ``data`` (Label Studio's tasks), ``answer`` (Prodigy's and our review
    page's), ``label`` or ``entities`` (doccano's), whether the records come
    as JSON lines or as a JSON list."""
    first = records[0]
    keys = first.value
    if "data" in keys:
        return DecisionFormat.LABEL_STUDIO
    if "answer" in keys:
        return DecisionFormat.PRODIGY
    if "label" in keys or "entities" in keys:
        return DecisionFormat.DOCCANO
    where = first.where(path, None)
    if "spans" in keys:
        raise DecisionFormatError(
            where, 'has "spans" but no "answer": is it the audit\'s suspects.jsonl before review? '
            "Review it first (accept, reject or ignore each span)"
        )
    listed = ", ".join(map(repr, keys)) or "none"
    raise DecisionFormatError(where, f"matches no decisions format (its keys: {listed}); expected {EXPECTED}")


# what a text file's byte order mark says it is
BYTE_ORDER_MARKS = (
    (codecs.BOM_UTF32_LE, None, "UTF-32"), (codecs.BOM_UTF32_BE, None, "UTF-32"),  # before UTF-16's: FF FE begins both
    (codecs.BOM_UTF8, "utf-8-sig", "UTF-8"), (codecs.BOM_UTF16_LE, "utf-16", "UTF-16"), (codecs.BOM_UTF16_BE, "utf-16", "UTF-16"),
)
ENCODINGS = "UTF-8 (with or without a byte order mark) or UTF-16 with a byte order mark"
NUL_PROBLEM = f"holds NUL characters: is it UTF-16 or UTF-32 text without a byte order mark? Save it as {ENCODINGS}"


def _lines(path: Path, raw: BinaryIO) -> Iterator[Tuple[int, str]]:
    """The lines of ``path`` (open as ``raw``), numbered from 1, each with
    its "\\n": UTF-8, or what its byte order mark says (UTF-8 or UTF-16, as
    editors on Windows save); any other encoding is refused rather than
    guessed. Lines end at "\\n" only: a line number must be the editor's,
    and JSON strings may hold U+2028 or U+0085, which splitlines() breaks on."""
    head = raw.read(4)
    raw.seek(0)
    for mark, codec, name in BYTE_ORDER_MARKS:
        if head.startswith(mark):
            if codec is None:
                raise DecisionFormatError(str(path), f"is {name} text (its byte order mark says so); save it as {ENCODINGS}")
            if codec == "utf-16":
                return _utf16_lines(path, raw)
            break
    return _utf8_lines(path, raw, head.startswith(codecs.BOM_UTF8))


def _utf8_lines(path: Path, raw: BinaryIO, marked: bool) -> Iterator[Tuple[int, str]]:
    # b"\n" is never part of another character in UTF-8: split the bytes,
    # then decode each line, so that a bad byte is named by its line
    what = "UTF-8 text as its byte order mark says" if marked else "UTF-8 text"
    for number, data in enumerate(raw, start=1):
        if b"\x00" in data:
            # most likely UTF-16 or UTF-32 without a byte order mark, read as UTF-8
            raise DecisionFormatError(str(path), NUL_PROBLEM)
        try:
            yield number, data.decode("utf-8-sig" if number == 1 else "utf-8")
        except UnicodeDecodeError as err:
            raise DecisionFormatError(f"{path}, line {number}", f"is not {what} ({err}); save it as {ENCODINGS}") from None


def _utf16_lines(path: Path, raw: BinaryIO) -> Iterator[Tuple[int, str]]:
    # newline="\n": no other line ending is taken, nor translated
    text = io.TextIOWrapper(raw, encoding="utf-16", newline="\n")
    try:
        for number, line in enumerate(text, start=1):
            if "\x00" in line:
                raise DecisionFormatError(str(path), NUL_PROBLEM)
            yield number, line
    except UnicodeDecodeError as err:
        raise DecisionFormatError(str(path), f"is not UTF-16 text as its byte order mark says ({err}); save it as {ENCODINGS}") from None


def _jsonl_records(path: Path, lines: Iterator[Tuple[int, str]]) -> Iterator[Record]:
    """The records of JSON lines after the first, one object each line that
    is not blank."""
    for number, line in lines:
        if not line.strip():
            continue
        try:
            record = loads_strict(line.removesuffix("\n"))
        except DuplicateKeyError as err:
            raise DecisionFormatError(f"{path}, line {number}", err.problem) from None
        except json.JSONDecodeError as err:
            raise DecisionFormatError(f"{path}, line {number}", f"is not JSON ({err}); expected one JSON object a line") from None
        if not isinstance(record, dict):
            raise DecisionFormatError(f"{path}, line {number}", f"is a JSON {type(record).__name__}, not an object; expected one JSON object a line")
        yield Record(number, record)


def _prodigy_record(where: str, source: str, number: int, unit: str, record: Dict[str, Any]) -> List[Decision]:
    text, doc = _text(where, record), _doc_index(where, record.get("meta"))
    answer = record.get("answer")
    if answer not in ANSWERS:
        raise DecisionFormatError(where, f'"answer" must be one of {", ".join(ANSWERS)}, got {answer!r}; expected our review page\'s or Prodigy\'s JSONL')
    spans = record.get("spans")
    if not isinstance(spans, list):
        raise DecisionFormatError(where, f'expected "spans": a list of {{"start", "end", "label"}}, got {spans!r}')
    decisions = []
    for span in spans:
        if not isinstance(span, dict):
            raise DecisionFormatError(where, f'each span must be an object {{"start", "end", "label"}}, got {span!r}')
        if answer != "accept" and span.get("source") == EXISTING_SOURCE:
            continue
        start, end, label = _offsets(where, text, span.get("start"), span.get("end"), span.get("label"))
        decisions.append(Decision(source, number, doc, text, start, end, label, answer, unit))
    return decisions


def _doccano_record(where: str, source: str, number: int, unit: str, record: Dict[str, Any]) -> List[Decision]:
    text, doc = _text(where, record), _doc_index(where, record.get("meta"))
    if "entities" in record:
        items = record["entities"]
        if not isinstance(items, list) or not all(isinstance(item, dict) for item in items):
            raise DecisionFormatError(where, f'expected "entities": a list of {{"start_offset", "end_offset", "label"}}, got {items!r}')
        triples = [(item.get("start_offset"), item.get("end_offset"), item.get("label")) for item in items]
    elif "label" in record:
        items = record["label"]
        if not isinstance(items, list) or not all(isinstance(item, list) and len(item) == 3 for item in items):
            raise DecisionFormatError(where, f'expected "label": a list of [start, end, "LABEL"], got {items!r}')
        triples = [tuple(item) for item in items]
    else:
        raise DecisionFormatError(where, 'has neither "label" nor "entities"; expected doccano JSONL, {"text", "label": [[start, end, LABEL]]} or {"text", "entities"} per line')
    return [Decision(source, number, doc, text, *_offsets(where, text, *triple), "accept", unit) for triple in triples]


def _label_studio_task(where: str, source: str, number: int, unit: str, task: Dict[str, Any]) -> List[Decision]:
    data = task.get("data")
    if not isinstance(data, dict):
        raise DecisionFormatError(where, 'expected a task {"data": {"text"}, "annotations"}')
    text, doc = _text(where, data), _doc_index(where, data.get("meta"))
    annotations = task.get("annotations", [])
    if not isinstance(annotations, list) or not all(isinstance(a, dict) for a in annotations):
        raise DecisionFormatError(where, f'expected "annotations": a list of {{"result"}}, got {annotations!r}')
    done = [a for a in annotations if not a.get("was_cancelled", False)]
    if not done:
        return []
    result = done[-1].get("result")
    if not isinstance(result, list) or not all(isinstance(item, dict) for item in result):
        raise DecisionFormatError(where, f'expected "result": a list of regions, got {result!r}')
    decisions = []
    for item in result:
        if item.get("type") != "labels":
            continue  # choices, relations, text areas: no span decisions
        value = item.get("value")
        labels = value.get("labels") if isinstance(value, dict) else None
        if not isinstance(labels, list) or len(labels) != 1:
            raise DecisionFormatError(where, f'each "labels" region needs a "value" with one label in "labels", got {value!r}')
        start, end, label = _offsets(where, text, value.get("start"), value.get("end"), labels[0])
        if "text" in value and value["text"] != text[start:end]:
            raise DecisionFormatError(
                where, f"the region {start}-{end} says its text is {value['text']!r}, but the task's text there is "
                f"{text[start:end]!r}: its offsets do not fit the text"
            )
        decisions.append(Decision(source, number, doc, text, start, end, label, "accept", unit=unit))
    return decisions


def _text(where: str, record: Dict[str, Any]) -> str:
    text = record.get("text")
    if not isinstance(text, str):
        raise DecisionFormatError(where, f'expected "text": a string, got {text!r}')
    return text


def _doc_index(where: str, meta: Any) -> Optional[int]:
    """``meta.doc``: the document's index in the corpus, or None."""
    if not isinstance(meta, dict) or meta.get("doc") is None:
        return None
    doc = meta["doc"]
    if isinstance(doc, bool) or not isinstance(doc, int) or doc < 0:
        raise DecisionFormatError(where, f'"meta.doc" must be a document index (a whole number >= 0), got {doc!r}')
    return doc


def _offsets(where: str, text: str, start: Any, end: Any, label: Any) -> Tuple[int, int, str]:
    for name, value in (("start", start), ("end", end)):
        if isinstance(value, bool) or not isinstance(value, int):
            raise DecisionFormatError(where, f"a span's {name} must be a character offset (a whole number), got {value!r}")
    if not 0 <= start < end <= len(text):
        raise DecisionFormatError(
            where, f"the span {start}-{end} is not a span of the text (characters 0-{len(text)}, the end exclusive, "
            "at least one character)"
        )
    if not isinstance(label, str) or not label.strip():
        raise DecisionFormatError(where, f"the span {start}-{end} ({text[start:end]!r}) has no label name, got {label!r}")
    return start, end, label


# the reader of one record: (where, source file, number, unit, record) -> its decisions
_READERS: Dict[DecisionFormat, Callable[[str, str, int, str, Dict[str, Any]], List[Decision]]] = {
    DecisionFormat.PRODIGY: _prodigy_record,
    DecisionFormat.DOCCANO: _doccano_record,
    DecisionFormat.LABEL_STUDIO: _label_studio_task,
}
