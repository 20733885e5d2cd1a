"""JSON read strictly: an object that gives a key twice is refused.

Python's ``json`` (and srsly's ujson) keep the last value of a repeated key
and say nothing, so an edited file whose two ``"label"`` keys disagree is
read as if the first were not there. ``loads_strict`` raises a
``DuplicateKeyError`` with the key and the line of its second appearance
instead; the readers of metrics and decisions files add the file's name.
"""
import json
import re
from typing import Any, Dict, List, Tuple

# the whitespace JSON allows between tokens (json.decoder's own pattern,
# which its type stubs keep private)
_WHITESPACE = re.compile(r"[ \t\n\r]*")


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
    and where its repeat starts, found by a walk that sees positions: objects
    and arrays are walked here, keys and other values read by ``raw_decode``
    (json's public parser; its scanner internals are no API to build on)."""
    try:
        _walk(text, _skip(text, 0), json.JSONDecoder())
    except _Repeated as repeat:
        return repeat.key, repeat.index
    except ValueError:  # text that is no JSON past the repeat the fast parser met
        pass
    raise AssertionError("loads_strict: a repeated key that the positioned parse did not find")


def _skip(text: str, index: int) -> int:
    """Past the whitespace JSON allows at ``index``."""
    match = _WHITESPACE.match(text, index)
    return match.end() if match else index


def _walk(text: str, index: int, decoder: json.JSONDecoder) -> int:
    """Read the value at ``index``, raising ``_Repeated`` at a key an object
    gives twice (a key before its value, as json.decoder's JSONObject reads);
    where the value ends."""
    opening = text[index:index + 1]
    if opening not in ("{", "["):
        _, end = decoder.raw_decode(text, index)
        return end
    closing = "}" if opening == "{" else "]"
    seen = set()
    index = _skip(text, index + 1)
    if text[index:index + 1] == closing:
        return index + 1
    while True:
        if opening == "{":
            if text[index:index + 1] != '"':
                raise ValueError(f"no key at {index}")
            key, end = decoder.raw_decode(text, index)
            if key in seen:
                raise _Repeated(key, index)
            seen.add(key)
            index = _skip(text, end)
            if text[index:index + 1] != ":":
                raise ValueError(f"no ':' at {index}")
            index = _skip(text, index + 1)
        index = _skip(text, _walk(text, index, decoder))
        if text[index:index + 1] == closing:
            return index + 1
        if text[index:index + 1] != ",":
            raise ValueError(f"no ',' at {index}")
        index = _skip(text, index + 1)


def array_item_starts(text: str) -> List[int]:
    """Where each item of the JSON list that ``text`` holds starts (text that
    ``loads_strict`` has read as a list), so that a message can name its line."""
    decoder = json.JSONDecoder()
    index = _skip(text, _skip(text, 0) + 1)  # past the '['
    starts: List[int] = []
    while text[index] != "]":
        starts.append(index)
        _, end = decoder.raw_decode(text, index)
        index = _skip(text, end)
        if text[index] == ",":
            index = _skip(text, index + 1)
    return starts
