"""The review page's stored state, read in Python: checked against the
page's data and turned into the JSONL the page exports (``page.py`` has the
line format), so that the review server writes the decisions itself and the
page sends only its compact state.

A state is ``{"format": 1, "cursor", "rows", "history", "time"}``; a row is
``[suspect index, answer code ("a", "r", "i" or "" for edited but
undecided), label index, start token, end token]`` (end exclusive).
"""
import json
from typing import Any, Dict, Iterator, List

from .payload import ReviewData

FORMAT = 1
ANSWERS = {"a": "accept", "r": "reject", "i": "ignore"}


# milliseconds since 1970 of the year 2286: any clock a browser reports is below it
MAX_TIME = 1e13


def check_state(state: Any, data: ReviewData) -> Dict[str, Any]:
    """``state`` when every row names a suspect, an answer, a label and a
    token range of the suspect's document; ValueError naming the first row
    that does not (the page never sends one: a page of another audit might)."""
    # type(...) is int: JSON's true equals 1 in Python, and the page refuses it
    if not isinstance(state, dict) or type(state.get("format")) is not int or state["format"] != FORMAT:
        raise ValueError(f"'state' must be an object with 'format': {FORMAT}")
    rows = state.get("rows")
    if not isinstance(rows, list):
        raise ValueError("'state' must have a list of 'rows'")
    time = state.get("time", 0)
    # a browser's Date.now(): NaN, an infinity or 10**400 would make the stored state unreadable (issue 43, M1, M2)
    if isinstance(time, bool) or not isinstance(time, (int, float)) or not 0 <= time <= MAX_TIME:
        raise ValueError(f"'time' of 'state' must be a time in milliseconds in [0, {MAX_TIME:.0e}], got {time!r}")
    seen = set()
    for number, row in enumerate(rows, start=1):
        problem = _row_problem(row, data)
        if problem is None and row[0] in seen:
            problem = f"suspect {row[0]} has a row already"
        if problem:
            raise ValueError(f"row {number} of 'state' ({row!r}): {problem}")
        seen.add(row[0])
    return state


def _row_problem(row: Any, data: ReviewData) -> Any:
    if not isinstance(row, list) or len(row) != 5 or not all(isinstance(v, int) and not isinstance(v, bool) for v in row[:1] + row[2:]):
        return "not [suspect, answer, label, start, end] with integers"
    index, code, label, start, end = row
    if not 0 <= index < len(data["suspects"]):
        return f"no suspect {index} (the page has {len(data['suspects'])})"
    if not isinstance(code, str) or (code != "" and code not in ANSWERS):
        return f"answer {code!r} is none of {sorted(ANSWERS)} or ''"
    if not 0 <= label < len(data["labels"]):
        return f"no label {label} (the page has {len(data['labels'])})"
    n_tokens = len(data["docs"][data["suspects"][index]["doc"]]["tokens"])
    if not 0 <= start < end <= n_tokens:
        return f"tokens [{start}, {end}) are not a span of the document's {n_tokens} tokens"
    return None


def decision_records(data: ReviewData, state: Dict[str, Any]) -> List[Dict[str, Any]]:
    """The decided rows of a checked ``state`` as the page exports them, in
    review order: one line per accepted, rejected or skipped suspect."""
    records = []
    token_lists: Dict[int, List[Dict[str, Any]]] = {}  # per document: one built for its five suspects, not five
    for index, code, label, start, end in sorted((row for row in state["rows"] if row[1]), key=lambda row: row[0]):
        suspect = data["suspects"][index]
        doc = data["docs"][suspect["doc"]]
        text = doc["text"]
        if suspect["doc"] not in token_lists:
            token_lists[suspect["doc"]] = [
                {"text": text[a:b], "start": a, "end": b, "id": i, "ws": ws == 1} for i, (a, b, ws) in enumerate(doc["tokens"])
            ]
        tokens = token_lists[suspect["doc"]]
        span = {
            "start": tokens[start]["start"], "end": tokens[end - 1]["end"], "token_start": start, "token_end": end - 1,
            "label": data["labels"][label],
        }
        meta: Dict[str, Any] = {"doc": doc["index"], "score": _as_javascript(suspect["score"])}
        if (label, start, end) != (suspect["label"], suspect["start"], suspect["end"]):
            meta["original"] = {
                "start": tokens[suspect["start"]]["start"], "end": tokens[suspect["end"] - 1]["end"],
                "label": data["labels"][suspect["label"]],
            }
        records.append({"text": text, "tokens": tokens, "spans": [span], "answer": ANSWERS[code], "meta": meta})
    return records


def jsonl_lines(data: ReviewData, state: Dict[str, Any]) -> Iterator[str]:
    """The lines of the JSONL file of a checked ``state``, one at a time: the
    server writes (and, at start, compares) them without a copy of the whole."""
    for record in decision_records(data, state):
        yield json.dumps(record, ensure_ascii=False, separators=(",", ":")) + "\n"


def _as_javascript(number: float) -> Any:
    """``number`` as JavaScript's JSON.stringify writes it: 1 for 1.0, so
    the server's file is byte for byte the page's export."""
    return int(number) if float(number).is_integer() else number
