"""JSON read strictly (issue 43, L10): a key given twice in one object is
refused with the key and the line of its second appearance."""
import json

import pytest

from spacy_imbalance.corpus.strict_json import DuplicateKeyError, array_item_starts, line_of, loads_strict


def test_loads_strict_reads_json_as_json_does():
    text = '[{"a": 1, "b": {"a": 2}}, {"a": [1, {"b": null}]}, "x", 1.5]'
    assert loads_strict(text) == json.loads(text)
    with pytest.raises(json.JSONDecodeError):
        loads_strict('{"a": 1,}')


@pytest.mark.parametrize(
    "text,key,line",
    [
        ('{"label": "PER", "label": "LOC"}', "label", 1),
        # nested: the first repeat in reading order, on the line where it comes again
        ('{\n "spans": [\n  {"start": 0,\n   "end": 3,\n   "start": 1}\n ],\n "text": "x"\n}', "start", 5),
        # the outer repeat comes first in the text, though the inner object closes first
        ('{"a": 1,\n "a": {"b": 1,\n "b": 2}}', "a", 2),
        # a key spelled with an escape is the same key
        ('[{"x": 1}, {"ab": 1,\n\n "a\\u0062": 2}]', "ab", 3),
    ],
    ids=["flat", "nested", "outer-first", "escaped"],
)
def test_loads_strict_names_the_repeated_key_and_its_line(text, key, line):
    # json.loads keeps the last value and says nothing
    json.loads(text)
    with pytest.raises(DuplicateKeyError) as err:
        loads_strict(text)
    assert (err.value.key, err.value.line) == (key, line)
    assert str(err.value) == f"line {line}: the key {key!r} is given twice in one object; a JSON reader would keep the last one silently, so give it once"


def test_array_item_starts_and_line_of():
    text = '[\n  {"a": [1, 2]},\n  "b" ,\n\n  3\n]'
    starts = array_item_starts(text)
    assert [text[i] for i in starts] == ["{", '"', "3"]
    assert [line_of(text, i) for i in starts] == [2, 3, 5]
    assert array_item_starts(" [ ] ") == []
