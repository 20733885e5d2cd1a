"""JSON read strictly: an object that gives a key twice is refused.

Python's ``json`` (and srsly's ujson) keep the last value of a repeated key
and say nothing, so an edited file whose two ``"label"`` keys disagree is
read as if the first were not there. ``loads_strict`` raises a
``DuplicateKeyError`` with the key and the line of its second appearance
instead; the readers of metrics and decisions files add the file's name.
"""
import json
from json.decoder import WHITESPACE, scanstring
from json.scanner import py_make_scanner
from typing import Any, Callable, Dict, List, Optional, Tuple


class DuplicateKeyError(ValueError):
    """A JSON object that has ``key`` twice; ``line`` (1-based, in the text
    given) is where it comes the second time."""

    def __init__(self, key: str, line: int):
        self.key, self.line = key, line
        # without the line, for a message that names the file and line its own way
        self.problem = f"the key {key!r} is given twice in one object; a JSON reader would keep the last one silently, so give it once"
        super().__init__(f"line {line}: {self.problem}")


class _Repeated(Exception):
    def __init__(self, key: str, index: int = -1):
        self.key, self.index = key, index


def _unique_pairs(pairs: List[Tuple[str, Any]]) -> Dict[str, Any]:
    obj = dict(pairs)
    if len(obj) < len(pairs):
        seen = set()
        for key, _ in pairs:
            if key in seen:
                raise _Repeated(key)
            seen.add(key)
    return obj


def loads_strict(text: str) -> Any:
    """``json.loads(text)`` that raises a ``DuplicateKeyError`` for an object
    with a key twice (``json.JSONDecodeError`` for text that is no JSON)."""
    try:
        return json.loads(text, object_pairs_hook=_unique_pairs)
    except _Repeated:
        # the fast parser says which object closed first with a repeat, not
        # where: find the first repeat in the text and its line
        key, index = _first_repeat(text)
        raise DuplicateKeyError(key, line_of(text, index)) from None


def line_of(text: str, index: int) -> int:
    """The 1-based line of character ``index`` of ``text``."""
    return text.count("\n", 0, index) + 1


def _first_repeat(text: str) -> Tuple[str, int]:
    """The first key (in reading order) that an object of ``text`` repeats,
    and where its repeat starts, found by a parser that sees positions: the
    pure-Python scanner with its object parser replaced."""
    decoder = json.JSONDecoder()
    decoder.parse_object = _positioned_object  # type: ignore[assignment]
    scan = py_make_scanner(decoder)
    try:
        scan(text, WHITESPACE.match(text, 0).end())
    except _Repeated as repeat:
        return repeat.key, repeat.index
    except (ValueError, StopIteration):  # text that is no JSON past the repeat the fast parser met
        pass
    raise AssertionError("loads_strict: a repeated key that the positioned parse did not find")


def _positioned_object(
    s_and_end: Tuple[str, int], strict: bool, scan_once: Callable[[str, int], Tuple[Any, int]],
    object_hook: Optional[Callable[..., Any]], object_pairs_hook: Optional[Callable[..., Any]], memo: Optional[Dict[str, str]] = None,
) -> Tuple[Dict[str, Any], int]:
    """json.decoder.JSONObject's walk over one object (which the fast parser
    has read as far as its repeat), raising ``_Repeated`` at a key seen before."""
    s, end = s_and_end
    seen = set()
    end = WHITESPACE.match(s, end).end()
    if s[end:end + 1] == "}":
        return {}, end + 1
    while True:
        start = end
        key, end = scanstring(s, end + 1, strict)
        if key in seen:
            raise _Repeated(key, start)
        seen.add(key)
        end = WHITESPACE.match(s, end).end() + 1  # past the ':'
        _, end = scan_once(s, WHITESPACE.match(s, end).end())
        end = WHITESPACE.match(s, end).end()
        if s[end:end + 1] == "}":
            return {}, end + 1
        end = WHITESPACE.match(s, end + 1).end()  # past the ','


def array_item_starts(text: str) -> List[int]:
    """Where each item of the JSON list that ``text`` holds starts (text that
    ``loads_strict`` has read as a list), so that a message can name its line."""
    decoder = json.JSONDecoder()
    index = WHITESPACE.match(text, WHITESPACE.match(text, 0).end() + 1).end()  # past the '['
    starts: List[int] = []
    while text[index] != "]":
        starts.append(index)
        _, end = decoder.raw_decode(text, index)
        index = WHITESPACE.match(text, end).end()
        if text[index] == ",":
            index = WHITESPACE.match(text, index + 1).end()
    return starts
