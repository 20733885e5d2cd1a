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
mark; an object with a key twice is refused.

Offsets are character offsets into the text, the end exclusive. Every
problem raises a ``DecisionFormatError`` naming the file and the line (or
task).
"""
import codecs
import json
from dataclasses import dataclass
from enum import Enum
from pathlib import Path
from typing import Any, Callable, Dict, List, Optional, Tuple, Union

from ..corpus.strict_json import DuplicateKeyError, array_item_starts, line_of, loads_strict

ANSWERS = ("accept", "reject", "ignore")
EXISTING_SOURCE = "annotation"  # Prodigy's and our audit's mark of an entity the corpus has


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
    the format it was read in, and why that one."""
    path = Path(path)
    records = read_records(path)
    how = "as --format says"
    if fmt is None:
        fmt = detect_format(path, records)
        how = f"detected from the keys of {records[0].place(fmt)}"
    decisions: List[Decision] = []
    try:
        for record in records:
            decisions += _READERS[fmt](record.where(path, fmt), str(path), record.number(fmt), record.unit(fmt), record.value)
    except DecisionFormatError as err:
        raise DecisionFormatError(err.where, f"{err.message} [read as {FORMAT_NAMES[fmt]}, {how}]") from None
    return DecisionFile(path, fmt, len(records), decisions)


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


def read_records(path: Path) -> List[Record]:
    """The JSON objects of a decisions file: JSON lines (one object a line),
    or the whole file as one JSON document, a list of objects (a JSON
    export) or one object (pretty-printed or not). An object that has a key
    twice is refused (which of the two would hold?)."""
    text = _read_text(path)
    try:
        document = loads_strict(text)
    except DuplicateKeyError as err:
        raise DecisionFormatError(f"{path}, line {err.line}", err.problem) from None
    except json.JSONDecodeError as err:
        if text.lstrip().startswith("["):
            raise DecisionFormatError(str(path), f"is not JSON ({err}); expected {EXPECTED}") from None
        if not text.lstrip().startswith("{"):
            raise DecisionFormatError(str(path), f"matches no decisions format; expected {EXPECTED}") from None
        return _jsonl_records(path, text, err)
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


def detect_format(path: Path, records: List[Record]) -> DecisionFormat:
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


def _read_text(path: Path) -> str:
    """The text of ``path``: UTF-8, or what its byte order mark says (UTF-8
    or UTF-16, as editors on Windows save); any other encoding is refused
    rather than guessed."""
    raw = path.read_bytes()
    encoding, name = "utf-8", "UTF-8"
    for mark, codec, mark_name in BYTE_ORDER_MARKS:
        if raw.startswith(mark):
            if codec is None:
                raise DecisionFormatError(str(path), f"is {mark_name} text (its byte order mark says so); save it as {ENCODINGS}")
            encoding, name = codec, mark_name
            break
    try:
        text = raw.decode(encoding)
    except UnicodeDecodeError as err:
        what = f"{name} text as its byte order mark says" if name != "UTF-8" or raw.startswith(codecs.BOM_UTF8) else "UTF-8 text"
        raise DecisionFormatError(str(path), f"is not {what} ({err}); save it as {ENCODINGS}") from err
    if "\x00" in text:
        # NUL characters: most likely UTF-16 or UTF-32 without a byte order mark, read as UTF-8
        raise DecisionFormatError(str(path), f"holds NUL characters: is it UTF-16 or UTF-32 text without a byte order mark? Save it as {ENCODINGS}")
    if not text.strip():
        raise DecisionFormatError(str(path), f"is empty: it holds no decisions; expected {EXPECTED}")
    return text


def _jsonl_records(path: Path, text: str, whole: json.JSONDecodeError) -> List[Record]:
    """The records of JSON lines, one object each line that is not blank;
    ``whole`` is why the whole text is no one JSON document."""
    records = []
    # split("\n") rather than splitlines(): a line number must be the editor's,
    # and JSON strings may hold U+2028 or U+0085, which splitlines() breaks on
    for number, line in enumerate(text.split("\n"), start=1):
        if not line.strip():
            continue
        try:
            record = loads_strict(line)
        except DuplicateKeyError as err:
            raise DecisionFormatError(f"{path}, line {number}", err.problem) from None
        except json.JSONDecodeError as err:
            if not records and whole.lineno > number:
                # the whole text reads on past the first line: perhaps one JSON
                # document (a pretty-printed object) that breaks further on
                raise DecisionFormatError(
                    f"{path}, line {number}", f"is not JSON ({err}), and the file is no one JSON document either: it breaks "
                    f"at line {whole.lineno}, column {whole.colno} ({whole.msg}); expected one JSON object a line, or one JSON "
                    f"document: {EXPECTED}"
                ) from None
            raise DecisionFormatError(f"{path}, line {number}", f"is not JSON ({err}); expected one JSON object a line") from None
        if not isinstance(record, dict):
            raise DecisionFormatError(f"{path}, line {number}", f"is a JSON {type(record).__name__}, not an object; expected one JSON object a line")
        records.append(Record(number, record))
    return records


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
