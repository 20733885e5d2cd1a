"""`spacy-imbalance apply-review` end to end (issue 34): a tiny corpus and one
decisions file per format in, the reviewed corpus and the counts out, the
inputs untouched; every refusal a message naming the file (and line), exit
code 1 and nothing written."""
import json

import pytest
import spacy
from spacy.tokens import Doc, DocBin, Span
from spacy.vocab import Vocab

from spacy_imbalance.corpus.docs_io import write_docbin
from spacy_imbalance.review import decisions as decisions_module

from ._cli import _assert_failed, _invoke, _plain

# characters: Alice 0-5, visited 6-13, New 14-17, York 18-22, "." 22-23
A = "Alice visited New York."
# characters: Bob 0-3, likes 4-9, Rome 10-14
B = "Bob likes Rome"

PAGE = """\
{"text": "Bob likes Rome", "spans": [{"start": 0, "end": 3, "token_start": 0, "token_end": 0, "label": "PER", "source": "suspect", "score": 0.8}], "answer": "accept", "meta": {"doc": 1, "score": 0.8}}
{"text": "Alice visited New York.", "spans": [{"start": 6, "end": 13, "label": "PER"}], "answer": "reject", "meta": {"doc": 0}}
{"text": "Bob likes Rome", "spans": [{"start": 10, "end": 14, "label": "GPE"}], "answer": "ignore"}
"""
DOCCANO = '{"id": 4, "text": "Bob likes Rome", "label": [[10, 14, "LOC"]]}\n'
LABEL_STUDIO = """\
[{"id": 1, "data": {"text": "Alice visited New York."},
  "annotations": [{"result": [{"type": "labels", "value": {"start": 0, "end": 5, "text": "Alice", "labels": ["PER"]}}]}]}]
"""


@pytest.fixture
def corpus(tmp_path):
    vocab = Vocab()
    docs = [
        Doc(vocab, words=["Alice", "visited", "New", "York", "."], spaces=[True, True, True, False, False],
            ents=["B-PER", "O", "B-LOC", "I-LOC", "O"]),
        Doc(vocab, words=["Bob", "likes", "Rome"], spaces=[True, True, False], ents=["O", "O", "O"]),
    ]
    for doc in docs:
        doc.spans["sc"] = list(doc.ents)
    path = tmp_path / "corpus.spacy"
    write_docbin(docs, path)
    return path


@pytest.fixture
def decisions(tmp_path):
    paths = {"page.jsonl": PAGE, "doccano.jsonl": DOCCANO, "export.json": LABEL_STUDIO}
    for name, content in paths.items():
        (tmp_path / name).write_text(content, encoding="utf8")
    return [tmp_path / name for name in paths]


def _read(path):
    return list(DocBin().from_disk(path).get_docs(spacy.blank("en").vocab))


def _ents(doc):
    return [(e.text, e.label_) for e in doc.ents]


def _group(doc, key):
    return [(s.text, s.label_) for s in doc.spans[key]] if key in doc.spans else None


def _lines(path, *lines):
    """Writes a decisions file, one JSON line (or "" for a blank one) a line."""
    path.write_text("".join(line + "\n" for line in lines), encoding="utf8")
    return path


def test_apply_review_end_to_end(tmp_path, corpus, decisions):
    before = {path: path.read_bytes() for path in [corpus, *decisions]}
    output = tmp_path / "reviewed.spacy"
    result = _invoke("apply-review", corpus, *decisions, "-o", output)
    assert result.exit_code == 0, result.output
    a, b = _read(output)
    assert _ents(a) == [("Alice", "PER"), ("New York", "LOC")]
    assert _group(a, "incorrect_spans") == [("visited", "PER")]
    assert _ents(b) == [("Bob", "PER"), ("Rome", "LOC")]
    assert _group(b, "incorrect_spans") is None
    # issue 44, item 4: "sc" held exactly doc.ents (as convert writes it), so
    # it follows them without --spans-key; it kept the old gold before
    assert _group(a, "sc") == _ents(a) and _group(b, "sc") == _ents(b)
    out = _plain(result.output)
    for line in (
        f"{decisions[0]}: prodigy, 3 lines, 3 span decisions",
        f"{decisions[1]}: doccano, 1 line, 1 span decision",
        f"{decisions[2]}: label-studio, 1 task, 1 span decision",
        f"Wrote 2 documents to {output}",
        f"Kept doc.spans['sc'] equal to doc.ents: it held exactly the entities in every document of {corpus}",
        "label accepted unchanged rejected ignored replaced skipped",
        "GPE 0 0 0 1 0 0",
        "LOC 1 0 0 0 0 0",
        "PER 1 1 1 0 0 0",
        "(all labels) 2 1 1 1 0 0",
    ):
        assert line in out, out
    assert {path: path.read_bytes() for path in before} == before


def test_apply_review_spans_key_and_overlaps_replace(tmp_path, corpus, decisions):
    page = _lines(
        tmp_path / "relabel.jsonl",
        '{"text": "Alice visited New York.", "spans": [{"start": 14, "end": 17, "label": "PER"}], "answer": "accept"}',
    )
    output = tmp_path / "reviewed.spacy"
    result = _invoke("apply-review", corpus, page, decisions[1], "-o", output, "--spans-key", "sc", "--overlaps", "replace")
    assert result.exit_code == 0, result.output
    a, b = _read(output)
    assert _ents(a) == [("Alice", "PER"), ("New", "PER")]
    assert _group(a, "sc") == [("Alice", "PER"), ("New", "PER")]
    assert _ents(b) == [("Rome", "LOC")] and _group(b, "sc") == [("Rome", "LOC")]
    assert "LOC 1 0 0 0 1 0" in _plain(result.output)


def test_apply_review_conll_corpus_and_rejected_key(tmp_path, conll_path):
    page = _lines(
        tmp_path / "page.jsonl",
        '{"text": "it rains", "spans": [{"start": 0, "end": 2, "label": "PER"}], "answer": "accept"}',
        '{"text": "Ann sings", "spans": [{"start": 4, "end": 9, "label": "PER"}], "answer": "reject"}',
    )
    output = tmp_path / "out.spacy"
    result = _invoke("apply-review", conll_path, page, "-o", output, "--rejected-key", "wrong")
    assert result.exit_code == 0, result.output
    docs = _read(output)
    assert [_ents(doc) for doc in docs] == [[("Ann", "PER")], [("Bob Lee", "PER")], [("it", "PER")]]
    assert _group(docs[0], "wrong") == [("sings", "PER")] and _group(docs[0], "incorrect_spans") is None


def test_apply_review_replaces_an_existing_output(tmp_path, corpus, decisions):
    # as the other corpus-writing commands do: an existing file is replaced, atomically
    output = tmp_path / "reviewed.spacy"
    output.write_bytes(b"old")
    result = _invoke("apply-review", corpus, decisions[1], "-o", output)
    assert result.exit_code == 0, result.output
    assert [_ents(doc) for doc in _read(output)] == [[("Alice", "PER"), ("New York", "LOC")], [("Rome", "LOC")]]


def test_apply_review_refuses_an_overlap_naming_file_and_line(tmp_path, corpus):
    page = _lines(
        tmp_path / "page.jsonl",
        '{"text": "Bob likes Rome", "spans": [{"start": 0, "end": 3, "label": "PER"}], "answer": "accept"}',
        '{"text": "Alice visited New York.", "spans": [{"start": 14, "end": 17, "label": "PER"}], "answer": "accept"}',
    )
    before = corpus.read_bytes()
    output = tmp_path / "reviewed.spacy"
    result = _invoke("apply-review", corpus, page, "-o", output)
    _assert_failed(
        result, f"{page}, line 2 accepts 'New' (PER, characters 14-17), which overlaps the entity 'New York' "
        f"(LOC, characters 14-22) of document 0 of {corpus}: give --overlaps replace",
    )
    assert not output.exists()
    assert corpus.read_bytes() == before
    # kept: the entity stays, the decision is skipped, the other one applied
    result = _invoke("apply-review", corpus, page, "-o", output, "--overlaps", "keep")
    assert result.exit_code == 0, result.output
    assert [_ents(doc) for doc in _read(output)] == [[("Alice", "PER"), ("New York", "LOC")], [("Bob", "PER")]]
    assert "PER 1 0 0 0 0 1" in _plain(result.output)


def test_apply_review_refuses_conflicting_decisions_across_files(tmp_path, corpus, decisions):
    # line 1 is blank, so the refusal names line 2
    rejects = _lines(
        tmp_path / "rejects.jsonl",
        "",
        '{"text": "Bob likes Rome", "spans": [{"start": 10, "end": 14, "label": "LOC"}], "answer": "reject"}',
    )
    output = tmp_path / "reviewed.spacy"
    result = _invoke("apply-review", corpus, decisions[1], rejects, "-o", output)
    _assert_failed(result, f"{decisions[1]}, line 1 accepts 'Rome' (LOC, characters 10-14) and {rejects}, line 2 rejects it")
    assert not output.exists()


def test_apply_review_refuses_a_file_of_no_format(tmp_path, corpus, decisions):
    other = _lines(tmp_path / "notes.jsonl", '{"text": "Bob likes Rome", "tags": ["B-PER", "O", "O"]}')
    output = tmp_path / "reviewed.spacy"
    result = _invoke("apply-review", corpus, decisions[0], other, "-o", output)
    _assert_failed(result, f"{other}, line 1: matches no decisions format", "expected our review page's or Prodigy's JSONL")
    assert not output.exists()
    # a format forced on a file of another one
    result = _invoke("apply-review", corpus, decisions[0], "-o", output, "--format", "doccano")
    _assert_failed(result, f"{decisions[0]}, line 1: has neither \"label\" nor \"entities\"")
    assert not output.exists()


def test_apply_review_refuses_text_in_no_document(tmp_path, corpus):
    page = _lines(tmp_path / "page.jsonl", '{"text": "Bob likes Paris", "spans": [{"start": 0, "end": 3, "label": "PER"}], "answer": "accept"}')
    result = _invoke("apply-review", corpus, page, "-o", tmp_path / "out.spacy")
    _assert_failed(result, f"{page}, line 1: the text 'Bob likes Paris' is in no document of {corpus}")


@pytest.mark.parametrize("which", ["corpus", "decisions"])
def test_apply_review_never_writes_over_an_input(tmp_path, corpus, decisions, which):
    target = corpus if which == "corpus" else decisions[1]
    before = target.read_bytes()
    result = _invoke("apply-review", corpus, *decisions, "-o", target)
    _assert_failed(result, f"--output {target} is the input {target}: writing it would destroy the input")
    assert target.read_bytes() == before


@pytest.mark.parametrize(
    "options,message",
    [
        (["--rejected-key", " "], "--rejected-key must name a span group, got ' '"),
        (["--spans-key", ""], "--spans-key must name a span group, got ''"),
        (["--spans-key", "wrong", "--rejected-key", "wrong"], "--spans-key and --rejected-key are both 'wrong'"),
        (["--spans-key", "nokey"], "no document has spans under --spans-key 'nokey'; the span keys with spans are 'sc'"),
        (["--overlaps", "merge"], "Invalid value for '--overlaps'"),
    ],
)
def test_apply_review_refuses_bad_settings(tmp_path, corpus, decisions, options, message):
    output = tmp_path / "out.spacy"
    result = _invoke("apply-review", corpus, decisions[0], "-o", output, *options)
    assert result.exit_code != 0
    assert message in _plain(result.output), _plain(result.output)
    assert not output.exists()


def test_apply_review_refuses_missing_and_repeated_decisions_files(tmp_path, corpus, decisions):
    output = tmp_path / "out.spacy"
    missing = tmp_path / "missing.jsonl"
    _assert_failed(_invoke("apply-review", corpus, missing, "-o", output), f"No such decisions file: {missing}")
    _assert_failed(
        _invoke("apply-review", corpus, decisions[0], tmp_path / "." / "page.jsonl", "-o", output),
        f"{decisions[0]} and {tmp_path / '.' / 'page.jsonl'} are the same DECISIONS file: give each once",
    )
    _assert_failed(_invoke("apply-review", corpus, corpus, "-o", output), f"{corpus} is CORPUS")
    assert not output.exists()


def test_apply_review_refuses_a_corpus_with_a_zero_length_span(tmp_path, decisions):
    vocab = Vocab()
    doc = Doc(vocab, words=["Bob", "likes", "Rome"], spaces=[True, True, False])
    doc.spans["sc"] = [Span(doc, 1, 1, "LOC")]
    path = tmp_path / "zero.spacy"
    DocBin(docs=[doc]).to_disk(path)
    result = _invoke("apply-review", path, decisions[1], "-o", tmp_path / "out.spacy")
    _assert_failed(result, f"{path}: document 0 has a zero-length span in doc.spans['sc']")


@pytest.mark.parametrize(
    "label,hint",
    [("PERSON", "the nearest is 'PER'"), ("per", "did you mean 'PER'?"), (" PER", "did you mean 'PER'?")],
)
def test_apply_review_refuses_a_label_the_corpus_lacks(tmp_path, corpus, label, hint):
    """Issue 43, M12: "per" or " PER" beside PER became a new entity type."""
    page = _lines(
        tmp_path / "page.jsonl",
        '{"text": "Bob likes Rome", "spans": [{"start": 10, "end": 14, "label": "LOC"}], "answer": "accept"}',
        '{"text": "Bob likes Rome", "spans": [{"start": 0, "end": 3, "label": ' + json.dumps(label) + '}], "answer": "accept"}',
    )
    output = tmp_path / "reviewed.spacy"
    result = _invoke("apply-review", corpus, page, "-o", output)
    _assert_failed(
        result, f"{page}, line 2: the label {label!r} (of 'Bob') is no label of {corpus}; {hint}",
        "Its labels (in doc.ents): 'LOC', 'PER'; a review decides on these entity types, it adds none",
    )
    assert not output.exists()


def test_apply_review_reads_a_list_and_a_pretty_printed_object_in_utf16(tmp_path, corpus):
    """Issue 43, L9: a JSON list of Prodigy records (read as Label Studio's
    before), and a pretty-printed doccano object saved as UTF-16."""
    page = tmp_path / "page.json"
    page.write_text(json.dumps([json.loads(line) for line in PAGE.splitlines()], indent=2), encoding="utf8")
    doccano = tmp_path / "doccano.json"
    doccano.write_bytes(json.dumps(json.loads(DOCCANO), indent=2).encode("utf-16"))
    output = tmp_path / "reviewed.spacy"
    result = _invoke("apply-review", corpus, page, doccano, "-o", output)
    assert result.exit_code == 0, result.output
    a, b = _read(output)
    assert _ents(b) == [("Bob", "PER"), ("Rome", "LOC")] and _group(a, "incorrect_spans") == [("visited", "PER")]
    assert f"{page}: prodigy, 3 lines, 3 span decisions" in _plain(result.output)


def test_apply_review_refuses_an_output_not_named_spacy(tmp_path, corpus, decisions):
    """Issue 43, L11: -o o.txt wrote a DocBin that every reader takes for CoNLL."""
    output = tmp_path / "o.txt"
    result = _invoke("apply-review", corpus, decisions[1], "-o", output)
    _assert_failed(result, f"--output {output} must end in .spacy: the command writes a .spacy (DocBin) file", f"Give e.g. {tmp_path / 'o.spacy'}")
    assert not output.exists()


def test_apply_review_leaves_a_group_that_is_no_copy_of_the_entities(tmp_path, corpus):
    """Issue 44, item 4: a group that is no copy of doc.ents is left as it
    was, and the output says so (a spancat trained on it keeps the old gold)."""
    docs = _read(corpus)
    docs[0].spans["masked"] = [Span(docs[0], 1, 2, "PER")]
    masked = tmp_path / "masked.spacy"
    write_docbin(docs, masked)
    output = tmp_path / "reviewed.spacy"
    result = _invoke("apply-review", masked, _lines(tmp_path / "d.jsonl", DOCCANO.strip()), "-o", output)
    assert result.exit_code == 0, result.output
    a, b = _read(output)
    assert _group(a, "masked") == [("visited", "PER")] and _group(b, "masked") is None
    assert _group(b, "sc") == _ents(b) == [("Rome", "LOC")]
    out = _plain(result.output)
    assert (
        f"Left doc.spans['masked'] as it was: it is no copy of doc.ents (the entity 'Alice' (PER, characters 0-5) of document 0 "
        f"of {masked} is not in it); if it is gold that the review should change, give --spans-key masked"
    ) in out, out
    assert f"Kept doc.spans['sc'] equal to doc.ents: it held exactly the entities in every document of {masked}" in out


def test_apply_review_refuses_a_decisions_file_over_the_size_bound(tmp_path, corpus, decisions, monkeypatch):
    """Issue 43, L15: the size is checked before the file is read."""
    monkeypatch.setattr(decisions_module, "MAX_DECISIONS_BYTES", 64)
    output = tmp_path / "reviewed.spacy"
    size = decisions[0].stat().st_size
    result = _invoke("apply-review", corpus, decisions[1], decisions[0], "-o", output)
    _assert_failed(
        result, f"{decisions[0]}: is {size:,} bytes, more than the 64 bytes a decisions file may have: split it into smaller files",
    )
    assert not output.exists()
