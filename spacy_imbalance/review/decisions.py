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

Offsets are character offsets into the text, the end exclusive. Every
problem raises a ``DecisionFormatError`` naming the file and the line (or
task).
"""
import json
from dataclasses import dataclass
from enum import Enum
from pathlib import Path
from typing import Any, Dict, Iterator, List, Optional, Tuple, Union

ANSWERS = ("accept", "reject", "ignore")
EXISTING_SOURCE = "annotation"  # Prodigy's and our audit's mark of an entity the corpus has


class DecisionFormat(str, Enum):
    PRODIGY = "prodigy"
    DOCCANO = "doccano"
    LABEL_STUDIO = "label-studio"


EXPECTED = (
    "our review page's or Prodigy's JSONL (one {\"text\", \"spans\", \"answer\"} per line), doccano JSONL "
    "(one {\"text\", \"label\": [[start, end, LABEL]]} or {\"text\", \"entities\"} per line), or Label Studio's "
    "JSON export (a list of {\"data\": {\"text\"}, \"annotations\"} tasks)"
)


class DecisionFormatError(ValueError):
    """A decisions file that cannot be read; the message names the file and,
    where there is one, the line or task."""

    def __init__(self, where: str, message: str):
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
    """The decisions of ``path``, in the format ``fmt`` or the one detected."""
    path = Path(path)
    text = _read_text(path)
    if fmt is None:
        fmt = detect_format(path, text)
    if fmt is DecisionFormat.LABEL_STUDIO:
        tasks = _label_studio_tasks(path, text)
        decisions = [d for number, task in enumerate(tasks, start=1) for d in _label_studio_task(str(path), number, task)]
        return DecisionFile(path, fmt, len(tasks), decisions)
    read_record = _prodigy_record if fmt is DecisionFormat.PRODIGY else _doccano_record
    records = list(_jsonl_records(path, text))
    decisions = [d for number, record in records for d in read_record(f"{path}, line {number}", str(path), number, record)]
    return DecisionFile(path, fmt, len(records), decisions)


def detect_format(path: Path, text: str) -> DecisionFormat:
    """The format of a file's ``text``: a JSON list is Label Studio's export;
    JSON lines are told apart by the keys of the first one."""
    body = text.lstrip()
    if body.startswith("["):
        return DecisionFormat.LABEL_STUDIO
    if body.startswith("{"):
        number, first = next(_jsonl_records(path, text))
        if "answer" in first:
            return DecisionFormat.PRODIGY
        if "label" in first or "entities" in first:
            return DecisionFormat.DOCCANO
        keys = ", ".join(map(repr, first)) or "none"
        if "spans" in first:
            raise DecisionFormatError(
                f"{path}, line {number}", 'has "spans" but no "answer": is it the audit\'s suspects.jsonl before review? '
                "Review it first (accept, reject or ignore each span)"
            )
        raise DecisionFormatError(f"{path}, line {number}", f"matches no decisions format (its keys: {keys}); expected {EXPECTED}")
    raise DecisionFormatError(str(path), f"matches no decisions format; expected {EXPECTED}")


def _read_text(path: Path) -> str:
    try:
        # utf-8-sig: a byte order mark, which some editors write, is no JSON
        text = path.read_text(encoding="utf-8-sig")
    except UnicodeDecodeError as err:
        raise DecisionFormatError(str(path), f"is not UTF-8 text ({err}); expected {EXPECTED}") from err
    if not text.strip():
        raise DecisionFormatError(str(path), f"is empty: it holds no decisions; expected {EXPECTED}")
    return text


def _jsonl_records(path: Path, text: str) -> Iterator[Tuple[int, Dict[str, Any]]]:
    """(1-based line number, object) of each line that is not blank."""
    # split("\n") rather than splitlines(): a line number must be the editor's,
    # and JSON strings may hold U+2028 or U+0085, which splitlines() breaks on
    for number, line in enumerate(text.split("\n"), start=1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except ValueError as err:
            raise DecisionFormatError(f"{path}, line {number}", f"is not JSON ({err}); expected one JSON object a line") from err
        if not isinstance(record, dict):
            raise DecisionFormatError(f"{path}, line {number}", f"is a JSON {type(record).__name__}, not an object; expected one JSON object a line")
        yield number, record


def _prodigy_record(where: str, source: str, number: int, record: Dict[str, Any]) -> List[Decision]:
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
        decisions.append(Decision(source, number, doc, text, start, end, label, answer))
    return decisions


def _doccano_record(where: str, source: str, number: int, record: Dict[str, Any]) -> List[Decision]:
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
    return [Decision(source, number, doc, text, *_offsets(where, text, *triple), "accept") for triple in triples]


def _label_studio_tasks(path: Path, text: str) -> List[Any]:
    try:
        tasks = json.loads(text)
    except ValueError as err:
        raise DecisionFormatError(str(path), f"is not JSON ({err}); expected Label Studio's JSON export, a list of tasks") from err
    if not isinstance(tasks, list):
        raise DecisionFormatError(str(path), f"is a JSON {type(tasks).__name__}; expected Label Studio's JSON export, a list of tasks")
    return tasks


def _label_studio_task(source: str, number: int, task: Any) -> List[Decision]:
    where = f"{source}, task {number}"
    data = task.get("data") if isinstance(task, dict) else None
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
        decisions.append(Decision(source, number, doc, text, start, end, label, "accept", unit="task"))
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
