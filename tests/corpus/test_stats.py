"""Tests for the corpus imbalance statistics (spacy_imbalance.corpus.stats) and the
``stats`` command. Expected values are counted by hand from the tiny corpora
built below."""
import json
import math

import pytest
from spacy.tokens import Doc, Span
from spacy.vocab import Vocab

from spacy_imbalance.corpus.conll import conll_to_docs
from spacy_imbalance.corpus.docs_io import copy_ents_to_spans, write_docbin
from spacy_imbalance.corpus.stats import corpus_stats, rareness, zero_length_spans

from ._corpus import invoke, plain


def _doc(vocab, text, ents=(), sent_starts=None):
    doc = Doc(vocab, words=text.split(), sent_starts=sent_starts)
    doc.ents = [Span(doc, start, end, label=label) for start, end, label in ents]
    return doc


@pytest.fixture
def corpus():
    """17 tokens in 3 one-sentence docs.

    PER: Alice, Bob Smith, Carol      -> 4 tokens, 3 mentions
    LOC: Paris, New York              -> 3 tokens, 2 mentions
    ORG: Acme Corp                    -> 2 tokens, 1 mention (occurs once)
    entity tokens: 4 + 3 + 2 = 9; sentence 2 has no entity.
    """
    vocab = Vocab()
    return [
        _doc(vocab, "Alice met Bob Smith in Paris", [(0, 1, "PER"), (2, 4, "PER"), (5, 6, "LOC")]),
        _doc(vocab, "It rained ."),
        _doc(vocab, "Acme Corp hired Carol in New York .", [(0, 2, "ORG"), (3, 4, "PER"), (5, 7, "LOC")]),
    ]


def test_stats_corpus_totals(corpus):
    s = corpus_stats(corpus)
    assert s.tokens == 6 + 3 + 8 == 17
    assert s.sentences == 3
    assert s.entity_types == 3
    assert s.entity_token_pct == pytest.approx(100 * 9 / 17)
    assert s.sentences_with_entity_pct == pytest.approx(100 * 2 / 3)


def test_stats_least_and_most_frequent_type(corpus):
    s = corpus_stats(corpus)
    assert s.most_frequent_type == "PER"
    assert s.most_frequent_type_pct == pytest.approx(100 * 4 / 17)
    assert s.least_frequent_type == "ORG"
    assert s.least_frequent_type_pct == pytest.approx(100 * 2 / 17)


@pytest.mark.parametrize(
    "label,tokens,mentions",
    [("PER", 4, 3), ("LOC", 3, 2), ("ORG", 2, 1)],
)
def test_stats_per_type(corpus, label, tokens, mentions):
    t = corpus_stats(corpus).per_type[label]
    assert t.tokens == tokens
    assert t.mentions == mentions
    assert t.token_pct == pytest.approx(100 * tokens / 17)
    assert t.rareness == pytest.approx(-math.log2(tokens / 17))


def test_stats_per_type_order_and_rareness_values(corpus):
    s = corpus_stats(corpus)
    # most frequent first
    assert list(s.per_type) == ["PER", "LOC", "ORG"]
    # r_t = -log2(c_t / N) = log2(N) - log2(c_t)
    assert s.per_type["PER"].rareness == pytest.approx(math.log2(17) - 2)
    assert s.per_type["ORG"].rareness == pytest.approx(math.log2(17) - 1)
    # rarer types have larger r_t
    assert s.per_type["PER"].rareness < s.per_type["LOC"].rareness < s.per_type["ORG"].rareness


def test_stats_to_dict(corpus):
    d = corpus_stats(corpus).to_dict()
    assert d["tokens"] == 17
    assert d["per_type"]["ORG"] == {
        "tokens": 2,
        "mentions": 1,
        "token_pct": pytest.approx(100 * 2 / 17),
        "rareness": pytest.approx(-math.log2(2 / 17)),
    }


def test_stats_sentences_inside_docs():
    vocab = Vocab()
    # one doc, two sentences; only the second has an entity
    doc = _doc(vocab, "Hi . Bob left .", [(2, 3, "PER")], sent_starts=[True, False, True, False, False])
    s = corpus_stats([doc, _doc(vocab, "Ann", [(0, 1, "PER")])])
    assert s.sentences == 3
    assert s.sentences_with_entity_pct == pytest.approx(100 * 2 / 3)
    assert s.tokens == 6
    assert s.entity_token_pct == pytest.approx(100 * 2 / 6)


def test_stats_rareness_function():
    assert rareness({"A": 2, "B": 1}, 8) == {"A": pytest.approx(2.0), "B": pytest.approx(3.0)}
    assert rareness({"A": 8}, 8) == {"A": 0.0}
    # types without tokens, or no tokens at all: left out, never infinite
    assert rareness({"A": 0, "B": 2}, 8) == {"B": pytest.approx(2.0)}
    assert rareness({"A": 0}, 0) == {}
    assert rareness({}, 10) == {}


@pytest.fixture
def spans_corpus():
    """doc.spans["sc"] differs from doc.ents (and may overlap)."""
    vocab = Vocab()
    doc1 = _doc(vocab, "New York City hall", [(0, 4, "FAC")])
    doc1.spans["sc"] = [Span(doc1, 0, 3, label="LOC"), Span(doc1, 2, 4, label="ORG")]
    doc2 = _doc(vocab, "nothing here", [(0, 1, "MISC")])
    doc2.spans["sc"] = []
    doc3 = _doc(vocab, "no key")  # no "sc" group at all
    return [doc1, doc2, doc3]


def test_stats_spans_key(spans_corpus):
    s = corpus_stats(spans_corpus, spans_key="sc")
    assert s.tokens == 4 + 2 + 2 == 8
    assert s.sentences == 3
    assert s.entity_types == 2
    assert set(s.per_type) == {"LOC", "ORG"}
    assert (s.per_type["LOC"].tokens, s.per_type["LOC"].mentions) == (3, 1)
    assert (s.per_type["ORG"].tokens, s.per_type["ORG"].mentions) == (2, 1)
    assert s.per_type["LOC"].rareness == pytest.approx(-math.log2(3 / 8))
    # overlapping spans: tokens 0-3 are covered, each counted once
    assert s.entity_token_pct == pytest.approx(100 * 4 / 8)
    assert s.sentences_with_entity_pct == pytest.approx(100 * 1 / 3)
    assert (s.most_frequent_type, s.least_frequent_type) == ("LOC", "ORG")


def test_stats_spans_key_none_uses_ents(spans_corpus):
    s = corpus_stats(spans_corpus)
    assert set(s.per_type) == {"FAC", "MISC"}
    assert s.per_type["FAC"].tokens == 4
    assert s.per_type["MISC"].tokens == 1
    assert s.entity_token_pct == pytest.approx(100 * 5 / 8)


def test_stats_empty_corpus():
    s = corpus_stats([])
    assert (s.tokens, s.sentences, s.entity_types) == (0, 0, 0)
    assert s.entity_token_pct == 0.0
    assert s.sentences_with_entity_pct == 0.0
    assert s.least_frequent_type is None and s.least_frequent_type_pct is None
    assert s.most_frequent_type is None and s.most_frequent_type_pct is None
    assert s.per_type == {}


def test_stats_corpus_without_entities():
    vocab = Vocab()
    docs = [_doc(vocab, "It rained ."), _doc(vocab, "Nothing here")]
    s = corpus_stats(docs)
    assert (s.tokens, s.sentences, s.entity_types) == (5, 2, 0)
    assert s.entity_token_pct == 0.0
    assert s.sentences_with_entity_pct == 0.0
    assert s.least_frequent_type is None and s.most_frequent_type is None
    assert s.per_type == {}
    # the same with a spans key no doc has
    assert corpus_stats(docs, spans_key="sc").per_type == {}


def test_stats_accepts_generator(corpus):
    assert corpus_stats(doc for doc in corpus) == corpus_stats(corpus)


# 9 tokens, 2 sentences; PER: Alice, Bob Smith (3 tokens, 2 mentions);
# LOC: Paris (1 token); sentence 2 has no entity.
CONLL = "Alice\tB-PER\nmet\tO\nBob\tB-PER\nSmith\tI-PER\nin\tO\nParis\tB-LOC\n\nIt\tO\nrained\tO\n.\tO\n"


@pytest.fixture
def conll_path(tmp_path):
    path = tmp_path / "small.conll"
    path.write_text(CONLL, encoding="utf-8")
    return path


def _check_small_json(data):
    assert data["tokens"] == 9
    assert data["sentences"] == 2
    assert data["entity_types"] == 2
    assert data["entity_token_pct"] == pytest.approx(100 * 4 / 9)
    assert data["sentences_with_entity_pct"] == pytest.approx(50.0)
    assert (data["most_frequent_type"], data["least_frequent_type"]) == ("PER", "LOC")
    assert data["per_type"]["PER"]["tokens"] == 3
    assert data["per_type"]["PER"]["mentions"] == 2
    assert data["per_type"]["PER"]["rareness"] == pytest.approx(-math.log2(3 / 9))
    assert data["per_type"]["LOC"]["rareness"] == pytest.approx(math.log2(9))


def _approx_dict(d):
    """pytest.approx for every float of a nested dict (the JSON writer keeps
    about 10 decimals)."""
    if isinstance(d, dict):
        return {k: _approx_dict(v) for k, v in d.items()}
    if isinstance(d, float):
        return pytest.approx(d, rel=1e-9, abs=1e-9)
    return d


def test_stats_cli_json_conll(conll_path):
    result = invoke("stats", conll_path, "--json")
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    _check_small_json(data)
    docs, _ = conll_to_docs(conll_path)
    assert data == _approx_dict(corpus_stats(docs).to_dict())


@pytest.mark.parametrize("spans_key_args", [[], ["--spans-key", "sc"]])
def test_stats_cli_json_spacy(conll_path, tmp_path, spans_key_args):
    docs, _ = conll_to_docs(conll_path)
    copy_ents_to_spans(docs, "sc")
    spacy_path = tmp_path / "small.spacy"
    write_docbin(docs, spacy_path)
    result = invoke("stats", spacy_path, "--json", *spans_key_args)
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    _check_small_json(data)
    assert data == _approx_dict(corpus_stats(docs).to_dict())


def test_stats_cli_json_unknown_spans_key(conll_path):
    result = invoke("stats", conll_path, "--json", "--spans-key", "nope")
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert data["tokens"] == 9
    assert data["entity_types"] == 0
    assert data["per_type"] == {}
    assert data["most_frequent_type"] is None


def test_stats_cli_table(conll_path):
    result = invoke("stats", conll_path)
    assert result.exit_code == 0, result.output
    out = plain(result.output)
    assert "% entity tokens 44.44" in out  # 400 / 9
    assert "% tokens of most frequent type 33.33 (PER)" in out  # 300 / 9
    assert "% tokens of least frequent type 11.11 (LOC)" in out  # 100 / 9
    assert "% sentences with an entity 50.00" in out
    assert "PER 3 2 33.33 1.58" in out  # -log2(3/9) = log2(3) = 1.585
    assert "LOC 1 1 11.11 3.17" in out  # -log2(1/9) = log2(9) = 3.170


@pytest.mark.parametrize("name", ["missing.conll", "missing.spacy"])
def test_stats_cli_missing_file(tmp_path, name):
    path = tmp_path / name
    result = invoke("stats", path, "--json")
    assert result.exit_code != 0
    assert str(path) in plain(result.output)


def test_stats_cli_folder(tmp_path):
    result = invoke("stats", tmp_path)
    assert result.exit_code != 0
    assert str(tmp_path) in plain(result.output)


def test_stats_cli_malformed_conll(tmp_path):
    path = tmp_path / "bad.conll"
    path.write_text("a\tO\nb\tX-PER\n", encoding="utf-8")
    result = invoke("stats", path)
    assert result.exit_code != 0
    assert f"{path}, line 2:" in plain(result.output)


def test_stats_overlapping_spans_of_one_type_count_each_token_once():
    """Issue 31 M12: span groups may overlap; a type's tokens are the union of
    its spans (LOC 0-6 and 2-8: 8 tokens, not 12), its mentions each span once."""
    vocab = Vocab()
    doc = _doc(vocab, " ".join(["w"] * 10))
    doc.spans["sc"] = [
        Span(doc, 0, 6, label="LOC"), Span(doc, 2, 8, label="LOC"), Span(doc, 2, 8, label="LOC"),  # the last a duplicate
        Span(doc, 4, 5, label="ORG"),
    ]
    s = corpus_stats([doc], spans_key="sc")
    assert (s.per_type["LOC"].tokens, s.per_type["LOC"].mentions) == (8, 2)
    assert s.per_type["LOC"].token_pct == pytest.approx(80.0)
    assert s.per_type["LOC"].rareness == pytest.approx(-math.log2(8 / 10))
    assert (s.per_type["ORG"].tokens, s.per_type["ORG"].mentions) == (1, 1)
    assert s.entity_token_pct == pytest.approx(80.0)


def test_stats_zero_length_spans_are_no_mentions():
    vocab = Vocab()
    doc = _doc(vocab, "a b c")
    doc.spans["sc"] = [Span(doc, 1, 1, label="PER"), Span(doc, 0, 1, label="LOC"), Span(doc, 2, 2, label="LOC")]
    s = corpus_stats([doc], spans_key="sc")
    assert set(s.per_type) == {"LOC"} and s.entity_types == 1
    assert (s.per_type["LOC"].tokens, s.per_type["LOC"].mentions) == (1, 1)
    assert [(i, span.label_, span.start) for i, span in zero_length_spans([doc], "sc")] == [(0, "PER", 1), (0, "LOC", 2)]
