"""Reading reviewed decisions (issue 34): each format from a small
hand-written file, with the decisions computed by hand, and every refusal
naming the file and the line or task."""
import codecs
import json
import tracemalloc

import pytest

from spacy_imbalance.review import decisions as decisions_module
from spacy_imbalance.review.decisions import Decision, DecisionFormat, DecisionFormatError, read_decisions

# characters: Alice 0-5, visited 6-13, New 14-17, York 18-22, "." 22-23
A = "Alice visited New York."
# characters: Bob 0-3, likes 4-9, Rome 10-14
B = "Bob likes Rome"

# line 1: our review page (one suspect, as the reviewer left it); line 2 blank;
# line 3: a binary reject; line 4: a manual-NER task, every span accepted (the
# existing entity too); line 5: a reject whose existing entity is context
# only; line 6: ignored
PRODIGY = """\
{"text": "Alice visited New York.", "tokens": [{"text": "Alice", "start": 0, "end": 5, "id": 0, "ws": true}], "spans": [{"start": 14, "end": 22, "token_start": 2, "token_end": 3, "label": "LOC", "source": "suspect", "score": 0.9}], "answer": "accept", "meta": {"doc": 0, "score": 0.9, "original": "LOC"}}

{"text": "Bob likes Rome", "spans": [{"start": 4, "end": 9, "label": "PER"}], "answer": "reject"}
{"text": "Bob likes Rome", "spans": [{"start": 0, "end": 3, "label": "PER", "source": "annotation"}, {"start": 10, "end": 14, "label": "LOC"}], "answer": "accept", "_input_hash": 12, "_view_id": "ner_manual"}
{"text": "Alice visited New York.", "spans": [{"start": 0, "end": 5, "label": "PER", "source": "annotation"}, {"start": 6, "end": 13, "label": "EVENT", "source": "suspect"}], "answer": "reject", "meta": {"doc": 0}}
{"text": "Bob likes Rome", "spans": [{"start": 10, "end": 14, "label": "GPE"}], "answer": "ignore"}
"""

DOCCANO = """\
{"id": 1, "text": "Alice visited New York.", "label": [[0, 5, "PER"], [14, 22, "LOC"]]}
{"id": 2, "text": "Bob likes Rome", "label": []}
{"id": 3, "text": "Bob likes Rome", "entities": [{"id": 7, "start_offset": 10, "end_offset": 14, "label": "LOC"}], "relations": [], "meta": {"doc": 1}}
"""

# task 1: the second annotation counts (the third was cancelled), its choice
# is no span; task 2: only a cancelled annotation; task 3: one annotation
LABEL_STUDIO = """\
[
  {"id": 1, "data": {"text": "Alice visited New York.", "meta": {"doc": 0}}, "annotations": [
    {"id": 10, "result": [{"type": "labels", "value": {"start": 0, "end": 5, "text": "Alice", "labels": ["PER"]}}]},
    {"id": 11, "result": [
      {"from_name": "label", "to_name": "text", "type": "labels", "value": {"start": 14, "end": 22, "text": "New York", "labels": ["LOC"]}},
      {"from_name": "ok", "to_name": "text", "type": "choices", "value": {"choices": ["ok"]}}
    ]},
    {"id": 12, "was_cancelled": true, "result": [{"type": "labels", "value": {"start": 6, "end": 13, "labels": ["EVENT"]}}]}
  ]},
  {"id": 2, "data": {"text": "Bob likes Rome"}, "annotations": [
    {"was_cancelled": true, "result": [{"type": "labels", "value": {"start": 0, "end": 3, "labels": ["PER"]}}]}
  ]},
  {"id": 3, "data": {"text": "Bob likes Rome"}, "annotations": [
    {"result": [{"type": "labels", "value": {"start": 0, "end": 3, "labels": ["PER"]}}]}
  ]}
]
"""


def _write(tmp_path, content, name="decisions.jsonl"):
    path = tmp_path / name
    path.write_text(content, encoding="utf8")
    return path


def _read_as(tmp_path, content, fmt, records, name="decisions.jsonl"):
    """The decisions read from ``content`` and the file's name, once the
    format detected and the records counted are checked."""
    path = _write(tmp_path, content, name)
    read = read_decisions(path)
    assert read.format is fmt
    assert read.records == records
    return read.decisions, str(path)


def test_decisions_prodigy_and_review_page(tmp_path):
    decisions, src = _read_as(tmp_path, PRODIGY, DecisionFormat.PRODIGY, 5)
    assert decisions == [
        Decision(src, 1, 0, A, 14, 22, "LOC", "accept"),
        Decision(src, 3, None, B, 4, 9, "PER", "reject"),
        Decision(src, 4, None, B, 0, 3, "PER", "accept"),
        Decision(src, 4, None, B, 10, 14, "LOC", "accept"),
        Decision(src, 5, 0, A, 6, 13, "EVENT", "reject"),
        Decision(src, 6, None, B, 10, 14, "GPE", "ignore"),
    ]
    assert decisions[1].where == f"{src}, line 3"


def test_decisions_doccano_both_forms(tmp_path):
    decisions, src = _read_as(tmp_path, DOCCANO, DecisionFormat.DOCCANO, 3)
    assert decisions == [
        Decision(src, 1, None, A, 0, 5, "PER", "accept"),
        Decision(src, 1, None, A, 14, 22, "LOC", "accept"),
        Decision(src, 3, 1, B, 10, 14, "LOC", "accept"),
    ]


def test_decisions_label_studio_last_annotation_not_cancelled(tmp_path):
    decisions, src = _read_as(tmp_path, LABEL_STUDIO, DecisionFormat.LABEL_STUDIO, 3, "export.json")
    assert decisions == [
        Decision(src, 1, 0, A, 14, 22, "LOC", "accept", unit="task"),
        Decision(src, 3, None, B, 0, 3, "PER", "accept", unit="task"),
    ]
    assert decisions[1].where == f"{src}, task 3"


def test_decisions_byte_order_mark_and_crlf_lines(tmp_path):
    path = tmp_path / "bom.jsonl"
    path.write_bytes(b"\xef\xbb\xbf" + DOCCANO.replace("\n", "\r\n").encode("utf8"))
    assert [(d.line, d.start, d.end) for d in read_decisions(path).decisions] == [(1, 0, 5), (1, 14, 22), (3, 10, 14)]


def test_decisions_format_forced(tmp_path):
    # a doccano line read as Prodigy's: refused, naming the line and the format
    path = _write(tmp_path, DOCCANO)
    with pytest.raises(DecisionFormatError) as err:
        read_decisions(path, DecisionFormat.PRODIGY)
    assert str(err.value).startswith(f"{path}, line 1: \"answer\" must be one of accept, reject, ignore, got None")
    # the review page's file forced as doccano: its lines have no "label"
    path = _write(tmp_path, PRODIGY, "page.jsonl")
    with pytest.raises(DecisionFormatError, match="line 1: has neither \"label\" nor \"entities\"; expected doccano JSONL"):
        read_decisions(path, DecisionFormat.DOCCANO)
    # forced to its own format, a file reads as detected
    assert read_decisions(path, DecisionFormat.PRODIGY).decisions == read_decisions(path).decisions


REVIEW_LINE = '{"text": "Bob likes Rome", "spans": [{"start": 0, "end": 3, "label": "PER"}], "answer": "accept"}\n'


@pytest.mark.parametrize(
    "content,where,message",
    [
        # matches no format
        ('{"text": "Bob likes Rome", "tags": []}\n', "line 1", "matches no decisions format (its keys: 'text', 'tags'); expected our review page's"),
        ("Bob likes Rome\n", "", "matches no decisions format; expected"),
        ("  \n\n", "", "is empty: it holds no decisions"),
        # the audit's suspects.jsonl before review
        ('{"text": "Bob likes Rome", "spans": [{"start": 0, "end": 3, "label": "PER", "source": "suspect"}], "meta": {"doc": 1}}\n',
         "line 1", 'has "spans" but no "answer": is it the audit\'s suspects.jsonl before review?'),
        # broken lines after good ones
        (REVIEW_LINE + "\n" + '{"text": "Bob likes Rome", "spans": [\n', "line 3", "is not JSON (Expecting value"),
        (REVIEW_LINE + "[1, 2]\n", "line 2", "is a JSON list, not an object"),
        (REVIEW_LINE + '{"text": "Bob likes Rome", "spans": [], "answer": "maybe"}\n', "line 2", "\"answer\" must be one of accept, reject, ignore, got 'maybe'"),
        (REVIEW_LINE + '{"text": "Bob likes Rome", "answer": "accept"}\n', "line 2", 'expected "spans": a list'),
        (REVIEW_LINE + '{"text": 5, "spans": [], "answer": "accept"}\n', "line 2", 'expected "text": a string, got 5'),
        (REVIEW_LINE + '{"text": "Bob likes Rome", "spans": [{"start": 10, "end": 15, "label": "LOC"}], "answer": "accept"}\n',
         "line 2", "the span 10-15 is not a span of the text (characters 0-14"),
        (REVIEW_LINE + '{"text": "Bob likes Rome", "spans": [{"start": 3, "end": 3, "label": "LOC"}], "answer": "reject"}\n',
         "line 2", "the span 3-3 is not a span of the text"),
        (REVIEW_LINE + '{"text": "Bob likes Rome", "spans": [{"start": "0", "end": 3, "label": "LOC"}], "answer": "accept"}\n',
         "line 2", "a span's start must be a character offset (a whole number), got '0'"),
        (REVIEW_LINE + '{"text": "Bob likes Rome", "spans": [{"start": 0, "end": 3, "label": "PER"}], "answer": "accept", "meta": {"doc": -1}}\n',
         "line 2", '"meta.doc" must be a document index (a whole number >= 0), got -1'),
        # empty label names, in each format
        (REVIEW_LINE + '{"text": "Bob likes Rome", "spans": [{"start": 0, "end": 3, "label": " "}], "answer": "accept"}\n',
         "line 2", "the span 0-3 ('Bob') has no label name, got ' '"),
        (REVIEW_LINE + '{"text": "Bob likes Rome", "spans": [{"start": 0, "end": 3}], "answer": "reject"}\n',
         "line 2", "the span 0-3 ('Bob') has no label name, got None"),
        ('{"text": "Bob likes Rome", "label": [[0, 3, "PER"]]}\n{"text": "Bob likes Rome", "label": [[0, 3, ""]]}\n',
         "line 2", "the span 0-3 ('Bob') has no label name, got ''"),
        ('{"text": "Bob likes Rome", "label": [[0, 3, "PER"]]}\n{"text": "Bob likes Rome", "label": ["POSITIVE"]}\n',
         "line 2", 'expected "label": a list of [start, end, "LABEL"]'),
        ('{"text": "Bob likes Rome", "entities": [{"start_offset": 0, "end_offset": 3, "label": ""}]}\n',
         "line 1", "the span 0-3 ('Bob') has no label name"),
    ],
)
def test_decisions_refused_naming_file_and_line(tmp_path, content, where, message):
    path = _write(tmp_path, content)
    with pytest.raises(DecisionFormatError) as err:
        read_decisions(path)
    prefix = f"{path}, {where}: " if where else f"{path}: "
    assert str(err.value).startswith(prefix), str(err.value)
    assert message in str(err.value)


@pytest.mark.parametrize(
    "task,message",
    [
        ('{"data": {"text": "Bob likes Rome"}, "annotations": [{"result": [{"type": "labels", "value": {"start": 0, "end": 3, "labels": [""]}}]}]}',
         "the span 0-3 ('Bob') has no label name, got ''"),
        ('{"data": {"text": "Bob likes Rome"}, "annotations": [{"result": [{"type": "labels", "value": {"start": 0, "end": 3, "labels": ["PER", "ORG"]}}]}]}',
         'each "labels" region needs a "value" with one label in "labels"'),
        ('{"data": {"text": "Bob likes Rome"}, "annotations": [{"result": [{"type": "labels", "value": {"start": 1, "end": 4, "text": "Bob", "labels": ["PER"]}}]}]}',
         "the region 1-4 says its text is 'Bob', but the task's text there is 'ob ': its offsets do not fit the text"),
        ('{"data": {"content": "Bob likes Rome"}, "annotations": []}', 'expected "text": a string, got None'),
        ('{"data": "Bob likes Rome"}', 'expected a task {"data": {"text"}, "annotations"}'),
    ],
)
def test_decisions_label_studio_refused_naming_file_and_task(tmp_path, task, message):
    good = '{"data": {"text": "Bob likes Rome"}, "annotations": []}'
    path = _write(tmp_path, f"[{good},\n {task}]", "export.json")
    with pytest.raises(DecisionFormatError) as err:
        read_decisions(path)
    assert str(err.value).startswith(f"{path}, task 2: "), str(err.value)
    assert message in str(err.value)
    # the format the task was read in, and why
    assert str(err.value).endswith("[read as Label Studio's format, detected from the keys of task 1]")


def test_decisions_a_list_item_that_is_no_object(tmp_path):
    good = '{"data": {"text": "Bob likes Rome"}, "annotations": []}'
    path = _write(tmp_path, f'[{good},\n "Bob likes Rome"]', "export.json")
    with pytest.raises(DecisionFormatError) as err:
        read_decisions(path)
    assert str(err.value).startswith(f"{path}, line 2: item 2 of the list is a JSON str, not an object; expected"), str(err.value)


def test_decisions_label_studio_one_task_and_broken_json(tmp_path):
    # one task, not in a list: read as the one task it is
    path = _write(tmp_path, '{"data": {"text": "Bob likes Rome"}}', "export.json")
    read = read_decisions(path, DecisionFormat.LABEL_STUDIO)
    assert (read.format, read.records, read.decisions) == (DecisionFormat.LABEL_STUDIO, 1, [])
    path = _write(tmp_path, "[{", "broken.json")
    with pytest.raises(DecisionFormatError) as err:
        read_decisions(path)
    assert str(err.value).startswith(f"{path}: is not JSON")


def test_decisions_not_utf8(tmp_path):
    path = tmp_path / "latin1.jsonl"
    path.write_bytes(('{"text": "Zurich", "label": []}\n\n{"text": "Zürich", "label": []}\n').encode("latin-1"))
    with pytest.raises(DecisionFormatError) as err:
        read_decisions(path)
    # read a line at a time, so the bad byte is named by its line
    assert str(err.value) == (
        f"{path}, line 3: is not UTF-8 text ('utf-8' codec can't decode byte 0xfc in position 11: invalid start byte); "
        "save it as UTF-8 (with or without a byte order mark) or UTF-16 with a byte order mark"
    )


# issue 43, L9: the records' keys tell the format, whatever holds them (JSON
# lines, a JSON list, one pretty-printed object), and a refusal names it

PRODIGY_LIST = """\
[
  {"text": "Bob likes Rome", "spans": [{"start": 0, "end": 3, "label": "PER"}], "answer": "accept"},
  {
    "text": "Alice visited New York.",
    "spans": [{"start": 6, "end": 13, "label": "EVENT"}],
    "answer": "reject"
  }
]
"""


def test_decisions_a_json_list_of_prodigy_records(tmp_path):
    # before: every JSON list was read as Label Studio's export ("expected a task")
    decisions, src = _read_as(tmp_path, PRODIGY_LIST, DecisionFormat.PRODIGY, 2, "page.json")
    # each decision names the line where its record starts
    assert decisions == [Decision(src, 2, None, B, 0, 3, "PER", "accept"), Decision(src, 3, None, A, 6, 13, "EVENT", "reject")]


def test_decisions_a_json_list_of_doccano_records(tmp_path):
    content = '[{"text": "Bob likes Rome", "label": [[10, 14, "LOC"]]},\n {"text": "Bob likes Rome", "entities": []}]'
    decisions, src = _read_as(tmp_path, content, DecisionFormat.DOCCANO, 2, "doccano.json")
    assert decisions == [Decision(src, 1, None, B, 10, 14, "LOC", "accept")]


def test_decisions_one_pretty_printed_object(tmp_path):
    # before: "line 1: is not JSON"
    content = '\n{\n  "text": "Bob likes Rome",\n  "label": [\n    [0, 3, "PER"]\n  ]\n}\n'
    decisions, src = _read_as(tmp_path, content, DecisionFormat.DOCCANO, 1, "one.json")
    assert decisions == [Decision(src, 2, None, B, 0, 3, "PER", "accept")]
    # broken further on: the line where it breaks, not only "line 2 is not JSON"
    path = _write(tmp_path, content.replace('[0, 3, "PER"]', '[0, 3 "PER"]'), "broken.json")
    with pytest.raises(DecisionFormatError) as err:
        read_decisions(path)
    assert str(err.value).startswith(
        f"{path}, line 2: is not JSON (Expecting property name enclosed in double quotes: line 1 column 2 (char 1)), and the file "
        "is no one JSON document either: it breaks at line 5, column 11 (Expecting ',' delimiter); expected one JSON object a line"
    ), str(err.value)


@pytest.mark.parametrize(
    "content,where,message",
    [
        (PRODIGY_LIST.replace('"answer": "reject"', '"answer": "maybe"'), "line 3",
         "\"answer\" must be one of accept, reject, ignore, got 'maybe'; expected our review page's or Prodigy's JSONL "
         "[read as our review page's or Prodigy's format, detected from the keys of line 2]"),
        ('{"text": "Bob likes Rome", "label": [[0, 3, "PER"]]}\n{"text": "Bob likes Rome", "spans": [], "answer": "accept"}\n', "line 2",
         'has neither "label" nor "entities"; expected doccano JSONL, {"text", "label": [[start, end, LABEL]]} or {"text", "entities"} per line '
         "[read as doccano's format, detected from the keys of line 1]"),
        ("[]", "", "is an empty JSON list: it holds no decisions"),
    ],
    ids=["prodigy-list", "doccano-lines", "empty-list"],
)
def test_decisions_refusals_name_the_format_detected(tmp_path, content, where, message):
    path = _write(tmp_path, content, "decisions.json")
    with pytest.raises(DecisionFormatError) as err:
        read_decisions(path)
    assert str(err.value) == f"{path}, {where}: {message}" if where else str(err.value).startswith(f"{path}: {message}"), str(err.value)


def test_decisions_a_forced_format_is_named_as_forced(tmp_path):
    path = _write(tmp_path, DOCCANO)
    with pytest.raises(DecisionFormatError) as err:
        read_decisions(path, DecisionFormat.PRODIGY)
    assert str(err.value).endswith("[read as our review page's or Prodigy's format, as --format says]")


@pytest.mark.parametrize("codec", ["utf-16", "utf-16-le", "utf-16-be", "utf-8-sig"])
def test_decisions_utf16_and_utf8_with_a_byte_order_mark(tmp_path, codec):
    path = tmp_path / "export.json"
    content = DOCCANO.replace("Alice", "Zoë  ")
    # "utf-16" and "utf-8-sig" write their own byte order mark
    path.write_bytes((content if codec in ("utf-16", "utf-8-sig") else "\ufeff" + content).encode(codec))
    read = read_decisions(path)
    assert read.format is DecisionFormat.DOCCANO
    assert [(d.line, d.text[d.start:d.end]) for d in read.decisions] == [(1, "Zoë  "), (1, "New York"), (3, "Rome")]


@pytest.mark.parametrize(
    "content,message",
    [
        (DOCCANO.encode("utf-32"), "is UTF-32 text (its byte order mark says so); save it as UTF-8 (with or without a byte order mark) or UTF-16 with a byte order mark"),
        (DOCCANO.encode("utf-16-le"), "holds NUL characters: is it UTF-16 or UTF-32 text without a byte order mark?"),
        (b"\xff\xfe" + DOCCANO.encode("utf-16-le")[:-1], "is not UTF-16 text as its byte order mark says"),
        ("\ufeff".encode() + "Zürich".encode("latin-1"), "is not UTF-8 text as its byte order mark says"),
    ],
    ids=["utf-32", "utf-16-without-mark", "broken-utf-16", "latin-1-after-a-utf-8-mark"],
)
def test_decisions_other_encodings_are_refused(tmp_path, content, message):
    path = tmp_path / "export.json"
    path.write_bytes(content)
    with pytest.raises(DecisionFormatError) as err:
        read_decisions(path)
    # a bad UTF-8 byte is named by its line; the other problems by the file
    where = f"{path}, line 1" if message.startswith("is not UTF-8") else str(path)
    assert str(err.value).startswith(f"{where}: {message}"), str(err.value)


# issue 43, L10: a key given twice, which a JSON reader keeps the last of silently

@pytest.mark.parametrize(
    "content,line,key",
    [
        (REVIEW_LINE + '{"text": "Bob likes Rome", "spans": [], "answer": "accept", "answer": "reject"}\n', 2, "answer"),
        (REVIEW_LINE + '{"text": "Bob likes Rome", "spans": [{"start": 0, "end": 3, "label": "PER", "label": "LOC"}], "answer": "accept"}\n', 2, "label"),
        (PRODIGY_LIST.replace('"answer": "reject"', '"answer": "reject",\n    "text": "Bob likes Rome"'), 7, "text"),
        ('[{"data": {"text": "Bob likes Rome", "text": "Bob"}, "annotations": []}]', 1, "text"),
    ],
    ids=["jsonl", "jsonl-nested", "list", "label-studio"],
)
def test_decisions_a_key_given_twice_is_refused(tmp_path, content, line, key):
    path = _write(tmp_path, content, "decisions.json")
    with pytest.raises(DecisionFormatError) as err:
        read_decisions(path)
    assert str(err.value) == (
        f"{path}, line {line}: the key {key!r} is given twice in one object; a JSON reader would keep the last one silently, so give it once"
    )


# issue 43, L15: a 30 MB decisions file took 508 MB and 5 s, read whole


def test_decisions_a_file_over_the_size_bound_is_refused_unread(tmp_path, monkeypatch):
    monkeypatch.setattr(decisions_module, "MAX_DECISIONS_BYTES", 100)
    path = tmp_path / "big.jsonl"
    # a UTF-32 mark: read, the file would be refused for its encoding instead
    path.write_bytes(codecs.BOM_UTF32_LE + b"x" * 97)
    with pytest.raises(DecisionFormatError) as err:
        read_decisions(path)
    assert str(err.value) == (
        f"{path}: is 101 bytes, more than the 100 bytes a decisions file may have: split it into smaller files (apply-review takes several)"
    )
    # the bound itself is allowed
    path.write_bytes(REVIEW_LINE.encode("utf8").ljust(100, b"\n"))
    assert len(read_decisions(path).decisions) == 1


def test_decisions_json_lines_are_read_a_line_at_a_time(tmp_path):
    # Prodigy's records carry their tokens and html, most of the file and none of the decisions
    tokens = [{"text": "Bob", "start": 0, "end": 3, "id": 0, "ws": True}, {"text": "likes", "start": 4, "end": 9, "id": 1, "ws": True}]
    record = {"text": B, "tokens": tokens, "spans": [{"start": 0, "end": 3, "label": "PER"}], "answer": "accept", "html": "<b>Bob</b> " * 300}
    n = 1000
    path = tmp_path / "big.jsonl"
    path.write_text((json.dumps(record) + "\n") * n, encoding="utf8")
    size = path.stat().st_size
    assert size > 3_500_000
    tracemalloc.start()
    try:
        read = read_decisions(path)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert (read.records, len(read.decisions), read.decisions[-1]) == (n, n, Decision(str(path), n, None, B, 0, 3, "PER", "accept"))
    # read whole, the text alone took the file's size, its records 3.6 times it
    assert peak < size / 4, (peak, size)
