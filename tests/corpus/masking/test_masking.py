"""Synthetic unlabeled entities (spacy_imbalance.corpus.masking.masking), the MaskedCorpus
reader and the ``mask`` command."""
import math
import random
import re

import pytest
from spacy.tokens import Doc, Span
from spacy.util import registry
from spacy.vocab import Vocab

from spacy_imbalance.corpus.masking.masking import mask_entities, masking_counts
from spacy_imbalance.corpus.docs_io import copy_ents_to_spans, load_docs
from spacy_imbalance.corpus.masking.reader import create_masked_corpus_reader_v1
from spacy_imbalance.corpus.subsampling.reader import create_subsampled_corpus_reader_v1

from .._corpus import assert_config_rejects, corpus_config, invoke, plain, write_docs

LABELS = ["PER", "ORG", "LOC"]


def make_corpus(n_docs=1000, seed=1, vocab=None):
    """n_docs sentences of 20 tokens with 5 entities each (so 5,000 for the
    default), one token in ten without annotation, entities copied to "sc"."""
    vocab = vocab if vocab is not None else Vocab()
    rng = random.Random(seed)
    docs = []
    for d in range(n_docs):
        tags = [rng.choice(["O"] * 9 + [None]) for _ in range(20)]
        # entities at 5 of the slots 0, 4, 8, 12, 16, 1 to 3 tokens long
        for start in range(0, 20, 4):
            length = rng.randint(1, 3)
            label = rng.choice(LABELS)
            tags[start:start + length] = [f"B-{label}"] + [f"I-{label}"] * (length - 1)
        docs.append(Doc(vocab, words=[f"w{d}_{i}" for i in range(20)], ents=tags))
    copy_ents_to_spans(docs, "sc")
    return docs


def spans_of(group):
    return [(span.start, span.end, span.label_) for span in group]


def annotation(doc):
    """Everything masking may change or must keep, in comparable form."""
    return (
        [t.text for t in doc],
        [(t.ent_iob_, t.ent_type_) for t in doc],
        spans_of(doc.ents),
        {key: spans_of(group) for key, group in sorted(doc.spans.items())},
    )


@pytest.fixture(scope="module")
def corpus():
    return make_corpus()


@pytest.mark.parametrize("p", [0.3, 0.7])
def test_masking_drops_a_share_p_of_the_entities(corpus, p):
    masked = mask_entities(corpus, p, seed=7)
    n, dropped = masking_counts(corpus, masked)
    assert n == 5000
    assert dropped == sum(len(doc.spans["masked"]) for doc in masked)
    std = math.sqrt(p * (1 - p) / n)
    assert abs(dropped / n - p) < 4 * std


@pytest.mark.parametrize("p", [0.3, 0.7])
def test_masking_changes_only_the_dropped_entities(corpus, p):
    masked = mask_entities(corpus, p, seed=3)
    for before, after in zip(corpus, masked):
        dropped = spans_of(after.spans["masked"])
        kept = spans_of(after.ents)
        # masked + kept = original, exactly and in order
        assert sorted(dropped + kept) == spans_of(before.ents)
        assert spans_of(after.spans["sc"]) == kept
        inside = {i for start, end, _ in dropped for i in range(start, end)}
        for i, (b, a) in enumerate(zip(before, after)):
            if i in inside:
                assert (a.ent_iob_, a.ent_type_) == ("O", "")
            else:
                assert (a.ent_iob_, a.ent_type_) == (b.ent_iob_, b.ent_type_)
        assert [t.text for t in before] == [t.text for t in after]


def test_masking_leaves_the_input_alone(corpus):
    before = [annotation(doc) for doc in corpus[:50]]
    mask_entities(corpus[:50], 0.5)
    assert [annotation(doc) for doc in corpus[:50]] == before


def test_masking_p0_changes_nothing_and_p1_drops_all(corpus):
    docs = corpus[:100]
    for before, after in zip(docs, mask_entities(docs, 0.0)):
        text, tags, ents, groups = annotation(before)
        assert annotation(after) == (text, tags, ents, {**groups, "masked": []})
    for before, after in zip(docs, mask_entities(docs, 1.0)):
        assert len(after.ents) == 0 and len(after.spans["sc"]) == 0
        assert spans_of(after.spans["masked"]) == spans_of(before.ents)
        # the tokens without annotation stay without
        assert [t.ent_iob_ == "" for t in after] == [t.ent_iob_ == "" for t in before]


@pytest.mark.parametrize("p", [-0.1, 1.5, float("nan")])
def test_masking_rejects_p_outside_0_1(corpus, p):
    with pytest.raises(ValueError, match="p must be a probability in \\[0, 1\\]"):
        mask_entities(corpus[:2], p)


def test_masking_is_seeded(corpus):
    docs = corpus[:200]
    first = [annotation(doc) for doc in mask_entities(docs, 0.5, seed=11)]
    assert [annotation(doc) for doc in mask_entities(docs, 0.5, seed=11)] == first
    assert [annotation(doc) for doc in mask_entities(docs, 0.5, seed=12)] != first


def test_masking_nests(corpus):
    docs = corpus[:50]
    once = mask_entities(docs, 0.5, seed=1)
    twice = mask_entities(once, 1.0, seed=1)
    for before, a, b in zip(docs, once, twice):
        # the second round appends what was still there to the first round's group
        assert spans_of(b.spans["masked"]) == spans_of(a.spans["masked"]) + spans_of(a.ents)
        assert sorted(spans_of(b.spans["masked"])) == spans_of(before.ents)
        assert len(b.ents) == 0 and len(b.spans["sc"]) == 0


def test_masking_keeps_spans_that_are_not_identical():
    doc = Doc(Vocab(), words="Ann met Bob in New York".split(), ents=["B-PER", "O", "B-PER", "O", "B-LOC", "I-LOC"])
    # overlapping but not identical, or identical but with another label
    doc.spans["other"] = [Span(doc, 4, 5, "CITY"), Span(doc, 0, 1, "NAME"), Span(doc, 2, 3, "PER")]
    after = mask_entities([doc], 1.0)[0]
    assert spans_of(after.spans["other"]) == [(4, 5, "CITY"), (0, 1, "NAME")]
    assert spans_of(after.spans["masked"]) == [(0, 1, "PER"), (2, 3, "PER"), (4, 6, "LOC")]


def test_masking_spans_key_masks_that_group():
    vocab = Vocab()
    doc = Doc(vocab, words="Ann met Bob in New York".split(), ents=["B-PER", "O", "B-PER", "O", "B-LOC", "I-LOC"])
    # the gold group holds one span more than doc.ents (nested)
    doc.spans["sc"] = list(doc.ents) + [Span(doc, 5, 6, "CITY")]
    after = mask_entities([doc], 1.0, spans_key="sc")[0]
    assert len(after.spans["sc"]) == 0
    assert spans_of(after.spans["masked"]) == [(0, 1, "PER"), (2, 3, "PER"), (4, 6, "LOC"), (5, 6, "CITY")]
    # the identical spans left doc.ents too, their tokens are O
    assert len(after.ents) == 0 and all(t.ent_iob_ == "O" for t in after)
    with pytest.raises(ValueError, match="masked_key"):
        mask_entities([doc], 0.5, spans_key="sc", masked_key="sc")


# --- the MaskedCorpus reader -------------------------------------------------


@pytest.fixture(scope="module")
def corpus_path(tmp_path_factory):
    return write_docs(tmp_path_factory.mktemp("masking") / "train.spacy", make_corpus(300))


def test_masked_corpus_is_the_same_every_epoch_and_equals_the_function(corpus_path, nlp, capsys):
    reader = create_masked_corpus_reader_v1(corpus_path, p=0.5, seed=4)
    first = [annotation(eg.reference) for eg in reader(nlp)]
    second = [annotation(eg.reference) for eg in reader(nlp)]
    assert first == second
    expected = mask_entities(load_docs(corpus_path), 0.5, seed=4)
    assert first == [annotation(doc) for doc in expected]
    n_dropped = sum(len(doc.spans["masked"]) for doc in expected)
    # spacy train builds the train reader twice (initialize, then training): still once
    list(create_masked_corpus_reader_v1(corpus_path, p=0.5, seed=4)(nlp))
    out = plain(capsys.readouterr().out)
    assert out.count("MaskedCorpus") == 1
    assert f"MaskedCorpus: p=0.5, {n_dropped} of 1,500 entities masked ({100 * n_dropped / 1500:.1f} %) in 300 sentences" in out


def test_masked_corpus_wraps_a_subsampled_corpus(corpus_path, nlp):
    inner = create_subsampled_corpus_reader_v1(corpus_path, n_sentences=40, seed=2)
    reader = create_masked_corpus_reader_v1(corpus=inner, p=0.5, seed=4)
    examples = list(reader(nlp))
    assert len(examples) == 40
    originals = {doc.text: doc for doc in load_docs(corpus_path)}
    for eg in examples:
        before = originals[eg.reference.text]
        assert sorted(spans_of(eg.reference.ents) + spans_of(eg.reference.spans["masked"])) == spans_of(before.ents)
    assert sum(len(eg.reference.spans["masked"]) for eg in examples) > 0


def test_masked_corpus_from_config(corpus_path, nlp):
    config = corpus_config(
        ("ResampledCorpus", 'method = "none"'),
        ("MaskedCorpus", "p = 1.0"),
        ("SubsampledCorpus", "n_sentences = 10"),
        path=corpus_path,
    )
    reader = registry.resolve(config)["corpus"]
    examples = list(reader(nlp))
    assert len(examples) == 10
    assert all(len(eg.reference.ents) == 0 and len(eg.reference.spans["masked"]) == 5 for eg in examples)


@pytest.mark.parametrize("p", ["1.5", "-0.5"])
def test_masked_corpus_config_rejects_bad_p_at_resolve(corpus_path, p):
    assert_config_rejects("MaskedCorpus", f"p = {p}", path=corpus_path, match="MaskedCorpus.v1: p must be a probability")


# --- gold the reader cannot mask (issue 31, M8 and L2) -----------------------


def test_masked_corpus_refuses_an_absent_spans_key(corpus_path, nlp):
    """It trained on the unmasked gold: no sentence has the key, nothing was masked."""
    reader = create_masked_corpus_reader_v1(corpus_path, p=0.5, spans_key="nokey")
    message = f"spacy-imbalance.MaskedCorpus.v1: {corpus_path}: no document has spans under spans_key 'nokey'; the span keys with spans are 'sc'"
    with pytest.raises(ValueError, match=re.escape(message)):
        list(reader(nlp))


def test_masked_corpus_refuses_ents_when_the_gold_is_a_span_group(tmp_path, nlp):
    """spans_key null reads doc.ents: empty there, while "sc" holds the gold."""
    doc = Doc(Vocab(), words=["Ann", "sings"])
    doc.spans["sc"] = [Span(doc, 0, 1, "PER")]
    path = write_docs(tmp_path / "spans.spacy", [doc])
    with pytest.raises(ValueError, match=r"MaskedCorpus.v1: .*spans.spacy: no document has entities in doc.ents \(spans_key null .*'sc'"):
        list(create_masked_corpus_reader_v1(path, p=0.5)(nlp))


def test_masked_corpus_reads_ents_with_a_spans_key_null(corpus_path, nlp):
    """The legitimate case: the gold in doc.ents, spans_key null."""
    examples = list(create_masked_corpus_reader_v1(corpus_path, p=1.0)(nlp))
    assert sum(len(eg.reference.spans["masked"]) for eg in examples) == 1500


def test_masked_corpus_warns_on_a_corpus_without_entities(tmp_path, nlp):
    path = write_docs(tmp_path / "none.spacy", [Doc(Vocab(), words=["it", "rains"], ents=["O", "O"])])
    with pytest.warns(UserWarning, match="MaskedCorpus.v1: .*none.spacy has no gold entities: there is nothing to mask"):
        examples = list(create_masked_corpus_reader_v1(path, p=0.5)(nlp))
    assert len(examples) == 1


def _zero_length_docs():
    vocab = Vocab()
    first = Doc(vocab, words=["Ann", "sings"], ents=["B-PER", "O"])
    second = Doc(vocab, words=["Bob", "Lee", "runs"], ents=["B-PER", "I-PER", "O"])
    second.spans["sc"] = [Span(second, 0, 2, "PER"), Span(second, 2, 2, "LOC")]
    return [first, second]


def test_mask_entities_names_a_zero_length_span():
    """Doc.copy failed with spaCy's E1052, naming no document."""
    with pytest.raises(ValueError, match=re.escape("mask_entities: document 1 has a zero-length span in doc.spans['sc'] (label 'LOC', at token 2)")):
        mask_entities(_zero_length_docs(), 0.5)


def test_masked_corpus_names_a_zero_length_span(tmp_path, nlp):
    path = write_docs(tmp_path / "zero.spacy", _zero_length_docs())
    message = f"spacy-imbalance.MaskedCorpus.v1: {path}: sentence 1 has a zero-length span in doc.spans['sc']"
    with pytest.raises(ValueError, match=re.escape(message)):
        list(create_masked_corpus_reader_v1(path, p=0.5)(nlp))


# --- the mask command --------------------------------------------------------


def test_mask_command_writes_what_the_reader_yields(corpus_path, nlp, tmp_path):
    output = tmp_path / "masked.spacy"
    result = invoke("mask", corpus_path, output, "--p", "0.5", "--seed", "4")
    assert result.exit_code == 0, result.output
    written = [annotation(doc) for doc in load_docs(output)]
    reader = create_masked_corpus_reader_v1(corpus_path, p=0.5, seed=4)
    assert written == [annotation(eg.reference) for eg in reader(nlp)]
    n_dropped = sum(len(doc[3]["masked"]) for doc in written)
    assert f"{n_dropped} of 1,500 entities masked" in plain(result.output)


def test_mask_command_errors(corpus_path, tmp_path):
    result = invoke("mask", tmp_path / "nope.spacy", tmp_path / "out.spacy", "--p", "0.5")
    assert result.exit_code == 1
    assert "nope.spacy" in result.output
    result = invoke("mask", corpus_path, tmp_path / "out.spacy", "--p", "2")
    assert result.exit_code == 1
    assert "--p must be a probability in [0, 1], got 2.0" in plain(result.output)
    assert not (tmp_path / "out.spacy").exists()
