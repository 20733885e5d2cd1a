"""The data the review page embeds: the suspects in review order, the
documents they are in and the labels a reviewer may choose.

Token offsets are character offsets (end exclusive); token ranges are
``start``/``end`` token indices, end exclusive as spaCy has them (the page
writes Prodigy's inclusive ``token_end`` only on export). Tokens are stored
as ``[start, end, ws]`` triples, ``ws`` 1 when whitespace follows, so that a
5,000-suspect page stays a few megabytes at most.
"""
import hashlib
import json
import math
from typing import Any, Dict, Iterable, List, Protocol, Sequence, Tuple, TypedDict, Union, cast

from spacy.tokens import Doc

# a version of the data layout, in the hash: a page built by a later layout
# never reads decisions a former one stored
LAYOUT = 1


class SuspectLike(Protocol):
    """What the page needs of a suspect (``spacy_imbalance.audit.run.Suspect``
    has it); a protocol, so that the audit may import this package."""

    @property
    def doc(self) -> int: ...
    @property
    def start(self) -> int: ...
    @property
    def end(self) -> int: ...
    @property
    def label(self) -> str: ...
    @property
    def probability(self) -> float: ...


class EntRecord(TypedDict):
    start: int
    end: int
    label: int  # index into ReviewData.labels


class DocRecord(TypedDict):
    index: int  # the corpus index (suspects.jsonl's meta.doc)
    text: str
    tokens: List[Tuple[int, int, int]]
    ents: List[EntRecord]


class SuspectRecord(TypedDict):
    doc: int  # position in ReviewData.docs
    start: int
    end: int
    label: int  # index into ReviewData.labels
    score: float  # calibrated probability, rounded as suspects.jsonl has it


class ReviewData(TypedDict):
    key: str  # hash of everything else: the page's storage key
    labels: List[str]
    docs: List[DocRecord]
    suspects: List[SuspectRecord]


def review_data(docs: Sequence[Doc], suspects: Iterable[SuspectLike], labels: Sequence[str]) -> ReviewData:
    """The suspects, most probable first (ties in corpus order), with their
    documents; ``labels`` are the corpus's, completed by any label a
    suspect or a shown entity has, so every one can be chosen."""
    ordered = sorted(suspects, key=lambda s: (-s.probability, s.doc, s.start, s.end))
    for s in ordered:
        _check_span(docs, s)
    positions = {i: n for n, i in enumerate(sorted({s.doc for s in ordered}))}
    all_labels = sorted({*labels, *(s.label for s in ordered), *(e.label_ for i in positions for e in docs[i].ents)})
    label_ids = {label: n for n, label in enumerate(all_labels)}
    records: List[SuspectRecord] = [
        {"doc": positions[s.doc], "start": s.start, "end": s.end, "label": label_ids[s.label], "score": round(s.probability, 4)}
        for s in ordered
    ]
    doc_records = [_doc_record(i, docs[i], label_ids) for i in positions]
    content = {"layout": LAYOUT, "labels": all_labels, "docs": doc_records, "suspects": records}
    return {"key": _content_key(content), "labels": all_labels, "docs": doc_records, "suspects": records}


def _doc_record(index: int, doc: Doc, label_ids: Dict[str, int]) -> DocRecord:
    return {
        "index": index,
        "text": doc.text,
        "tokens": [(t.idx, t.idx + len(t.text), int(bool(t.whitespace_))) for t in doc],
        "ents": [{"start": e.start, "end": e.end, "label": label_ids[e.label_]} for e in doc.ents],
    }


def _check_span(docs: Sequence[Doc], suspect: SuspectLike) -> None:
    if not 0 <= suspect.doc < len(docs):
        raise ValueError(f"a suspect names document {suspect.doc}, but there are {len(docs)} documents")
    doc = docs[suspect.doc]
    if not 0 <= suspect.start < suspect.end <= len(doc):
        raise ValueError(
            f"suspect tokens [{suspect.start}, {suspect.end}) of document {suspect.doc} are not a span of its {len(doc)} tokens"
        )


def _content_key(content: Dict[str, Any]) -> str:
    """A short hash of the page's data: two audits' pages keep their
    decisions apart in the browser (every file:// page shares one storage)."""
    text = json.dumps(content, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(text.encode("utf8")).hexdigest()[:16]


def check_review_data(data: Any) -> ReviewData:
    """``data`` when it holds everything the review server reads of a page
    (the layout above, every index in range); ValueError naming the first
    key or record that does not. A page whose data lacks, say, "suspects"
    was served and failed at its first save (issue 43, M13)."""
    if not isinstance(data, dict):
        raise ValueError(f"its review data is a JSON {type(data).__name__}, not an object")
    labels, docs, suspects = (_list_of(data, name) for name in ("labels", "docs", "suspects"))
    for n, label in enumerate(labels):
        if not isinstance(label, str):
            raise ValueError(f"its review data's labels[{n}] is {label!r}, not a label name")
    for n, doc in enumerate(docs):
        _check_doc(f"docs[{n}]", doc)
    for n, record in enumerate(suspects):
        _check_suspect(f"suspects[{n}]", record, docs, len(labels))
    # every field ReviewData names was checked above
    return cast(ReviewData, data)


def _list_of(data: Dict[str, Any], name: str) -> List[Any]:
    if name not in data:
        raise ValueError(f"its review data has no {name!r}: not a page spacy-imbalance audit wrote, or one cut short")
    if not isinstance(data[name], list):
        raise ValueError(f"its review data's {name!r} is a JSON {type(data[name]).__name__}, not a list")
    return data[name]


def _field(where: str, record: Any, name: str, kind: Union[type, Tuple[type, ...]], what: str) -> Any:
    if not isinstance(record, dict):
        raise ValueError(f"its review data's {where} is {record!r}, not an object")
    value = record.get(name)
    # bool is an int in Python; JSON's true is no index
    if not isinstance(value, kind) or isinstance(value, bool):
        raise ValueError(f"its review data's {where} has no {name!r} ({what}), got {value!r}")
    return value


def _check_doc(where: str, doc: Any) -> None:
    _field(where, doc, "index", int, "the corpus index")
    text, tokens = _field(where, doc, "text", str, "a string"), _field(where, doc, "tokens", list, "a list")
    _field(where, doc, "ents", list, "a list")
    for n, token in enumerate(tokens):
        ints = isinstance(token, (list, tuple)) and len(token) == 3 and all(type(v) is int for v in token)
        if not ints or not 0 <= token[0] <= token[1] <= len(text) or token[2] not in (0, 1):
            raise ValueError(f"its review data's {where} token {n} is {token!r}, not [start, end, ws] within its text")


def _check_suspect(where: str, record: Any, docs: List[Any], n_labels: int) -> None:
    doc, start, end, label = (_field(where, record, name, int, "an integer") for name in ("doc", "start", "end", "label"))
    score = _field(where, record, "score", (int, float), "a number")
    if not 0 <= doc < len(docs):
        raise ValueError(f"its review data's {where} names document {doc}, but there are {len(docs)}")
    n_tokens = len(docs[doc]["tokens"])
    if not 0 <= start < end <= n_tokens:
        raise ValueError(f"its review data's {where}: tokens [{start}, {end}) are not a span of document {doc}'s {n_tokens} tokens")
    if not 0 <= label < n_labels:
        raise ValueError(f"its review data's {where} names label {label}, but there are {n_labels}")
    if not math.isfinite(score):
        raise ValueError(f"its review data's {where} has the score {score!r}, not a probability")
