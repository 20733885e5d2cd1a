"""Macro/micro scoring against hand-computed values and against spaCy's own scorer."""
import pytest
from spacy.scorer import Scorer, get_ner_prf
from spacy.tokens import Doc, Span
from spacy.training import Example
from spacy.util import registry
from spacy.vocab import Vocab

from spacy_imbalance.scorers.macro import ents_macro_score, spans_macro_score

WORDS = ["w0", "w1", "w2", "w3", "w4", "w5"]
# (gold ents, predicted ents) per document, as (start, end, label)
CASES = [
    # PER right; LOC with a wrong boundary (fp + fn); ORG never predicted (fn)
    ([(0, 1, "PER"), (2, 4, "LOC"), (5, 6, "ORG")], [(0, 1, "PER"), (2, 3, "LOC")]),
    # PER right, a spurious PER (fp) and MISC, a type that only exists in predictions (fp)
    ([(1, 2, "PER")], [(0, 1, "PER"), (1, 2, "PER"), (3, 4, "MISC")]),
    # two LOC right
    ([(0, 1, "LOC"), (2, 3, "LOC")], [(0, 1, "LOC"), (2, 3, "LOC")]),
    # nothing in gold, nothing predicted
    ([], []),
]
# Hand count:      tp fp fn      P     R     F
#   PER            2  1  0      2/3   1     0.8
#   LOC            2  1  1      2/3   2/3   2/3
#   ORG            0  0  1      0     0     0     (gold, never predicted: counts)
#   MISC           0  1  0      0     0     0     (predicted, no gold: counts)
#   micro          4  3  2      4/7   4/6   8/13
MICRO = (4 / 7, 4 / 6, 8 / 13)
MACRO = ((2 / 3 + 2 / 3) / 4, (1 + 2 / 3) / 4, (0.8 + 2 / 3) / 4)
PER_TYPE = {"PER": (2 / 3, 1.0, 0.8), "LOC": (2 / 3, 2 / 3, 2 / 3), "ORG": (0.0, 0.0, 0.0), "MISC": (0.0, 0.0, 0.0)}


def _doc(vocab, spans, key=None):
    doc = Doc(vocab, words=WORDS)
    made = [Span(doc, s, e, label=label) for s, e, label in spans]
    if key is None:
        doc.ents = made
        for token in doc:  # fully annotated: O where there is no entity
            if token.ent_iob == 0:
                token.ent_iob_ = "O"
    else:
        doc.spans[key] = made
    return doc


def make_examples(key=None):
    vocab = Vocab()
    return [Example(_doc(vocab, pred, key), _doc(vocab, gold, key)) for gold, pred in CASES]


def test_scorers_ents_macro_hand_computed():
    scores = ents_macro_score(make_examples())
    assert (scores["ents_p"], scores["ents_r"], scores["ents_f"]) == pytest.approx(MICRO)
    macro = (scores["ents_macro_p"], scores["ents_macro_r"], scores["ents_macro_f"])
    assert macro == pytest.approx(MACRO)
    assert set(scores["ents_per_type"]) == set(PER_TYPE)
    for label, (p, r, f) in PER_TYPE.items():
        got = scores["ents_per_type"][label]
        assert (got["p"], got["r"], got["f"]) == pytest.approx((p, r, f))


def test_scorers_ents_against_a_gold_span_group():
    """With gold_key (a sampled_spancat trained on doc.spans[gold_key]), the
    predicted doc.ents are scored against that group: the same hand counts."""
    vocab = Vocab()
    examples = []
    for gold, pred in CASES:
        reference = Doc(vocab, words=WORDS)
        reference.spans["gold"] = [Span(reference, s, e, label=label) for s, e, label in gold]
        examples.append(Example(_doc(vocab, pred), reference))
    examples.append(Example(_doc(vocab, [(0, 1, "PER")]), Doc(vocab, words=WORDS)))  # no gold group: skipped
    scores = ents_macro_score(examples, gold_key="gold")
    assert (scores["ents_p"], scores["ents_r"], scores["ents_f"]) == pytest.approx(MICRO)
    assert scores["ents_macro_f"] == pytest.approx(MACRO[2])
    assert ents_macro_score(examples)["ents_f"] is None  # the references have no doc.ents annotation


def test_scorers_ents_micro_matches_spacy():
    examples = make_examples()
    ours, spacy_scores = ents_macro_score(examples), get_ner_prf(examples)
    for key in ("ents_p", "ents_r", "ents_f"):
        assert ours[key] == pytest.approx(spacy_scores[key])
    for label, prf in spacy_scores["ents_per_type"].items():
        assert ours["ents_per_type"][label] == pytest.approx(prf)


def test_scorers_spans_macro_hand_computed_and_matches_spacy():
    examples = make_examples(key="sc")
    scores = spans_macro_score(examples, spans_key="sc")
    assert (scores["spans_sc_p"], scores["spans_sc_r"], scores["spans_sc_f"]) == pytest.approx(MICRO)
    macro = (scores["spans_sc_macro_p"], scores["spans_sc_macro_r"], scores["spans_sc_macro_f"])
    assert macro == pytest.approx(MACRO)
    reference = Scorer.score_spans(
        examples,
        "spans_sc",
        getter=lambda doc, attr: doc.spans.get("sc", []),
        has_annotation=lambda doc: "sc" in doc.spans,
        allow_overlap=True,
    )
    assert scores["spans_sc_f"] == pytest.approx(reference["spans_sc_f"])
    for label, prf in reference["spans_sc_per_type"].items():
        assert scores["spans_sc_per_type"][label] == pytest.approx(prf)


def test_scorers_spans_overlapping_predictions_are_each_counted():
    vocab = Vocab()
    gold = _doc(vocab, [(0, 2, "PER")], key="sc")
    pred = _doc(vocab, [(0, 2, "PER"), (0, 1, "PER"), (0, 2, "LOC")], key="sc")
    scores = spans_macro_score([Example(pred, gold)], spans_key="sc")
    # PER: tp 1, fp 1 -> P 0.5, R 1, F 2/3; LOC: fp 1 -> 0
    assert scores["spans_sc_per_type"]["PER"]["f"] == pytest.approx(2 / 3)
    assert scores["spans_sc_macro_f"] == pytest.approx((2 / 3 + 0) / 2)


def test_scorers_missing_gold_annotation_is_ignored():
    vocab = Vocab()
    gold = Doc(vocab, words=WORDS, ents=["B-PER", "O", None, None, "O", "O"])
    pred = _doc(vocab, [(0, 1, "PER"), (2, 3, "LOC")])
    scores = ents_macro_score([Example(pred, gold)])
    # the LOC prediction lies on tokens without gold annotation: neither right
    # nor wrong, so LOC takes no part in the macro average
    assert scores["ents_per_type"] == {"PER": {"p": 1.0, "r": 1.0, "f": 1.0}}
    assert scores["ents_p"] == pytest.approx(1.0)
    assert scores["ents_macro_f"] == pytest.approx(1.0)
    assert get_ner_prf([Example(pred, gold)])["ents_p"] == pytest.approx(1.0)


def test_scorers_nothing_to_score_gives_none():
    vocab = Vocab()
    examples = [Example(_doc(vocab, []), _doc(vocab, []))]
    scores = ents_macro_score(examples)
    assert scores["ents_macro_f"] is None and scores["ents_f"] is None and scores["ents_per_type"] is None


def test_scorers_docs_without_spans_key_are_skipped():
    vocab = Vocab()
    gold_without_key = Doc(vocab, words=WORDS)
    pred = _doc(vocab, [(0, 1, "PER")], key="sc")
    assert spans_macro_score([Example(pred, gold_without_key)], spans_key="sc")["spans_sc_f"] is None


@pytest.mark.parametrize(
    "name,score_fn",
    [
        ("spacy-imbalance.ents_macro_scorer.v1", ents_macro_score),
        ("spacy-imbalance.spans_macro_scorer.v1", spans_macro_score),
    ],
)
def test_scorers_registered(name, score_fn):
    assert registry.scorers.get(name)() is score_fn


def test_scorers_accept_component_cfg_kwargs():
    # Pipe.score passes the component's cfg (e.g. moves, threshold, labels)
    scores = ents_macro_score(make_examples(), moves=None, labels=("PER",), threshold=0.5)
    assert scores["ents_macro_f"] == pytest.approx(MACRO[2])


def test_spans_counts_a_predicted_label_the_gold_vocab_never_saw():
    """Gold docs read with their own vocab, predictions made with the
    pipeline's: a label only predicted is a false positive, not spaCy's E084."""
    from spacy_imbalance.scorers.counts import spans_counts

    gold = Doc(Vocab(), words=["Ann", "met", "Bob"])
    gold.spans["sc"] = [Span(gold, 0, 1, label="PER")]
    pipeline_vocab = Vocab()
    pred = Doc(pipeline_vocab, words=["Ann", "met", "Bob"])
    pred.spans["sc"] = [Span(pred, 0, 1, label="PER"), Span(pred, 2, 3, label="NEVER_IN_GOLD")]
    assert "NEVER_IN_GOLD" not in gold.vocab.strings
    counts = spans_counts([Example(pred, gold)], "sc")
    totals = dict(zip(counts.labels, counts.totals().tolist()))
    assert totals == {"NEVER_IN_GOLD": [0, 1, 0], "PER": [1, 0, 0]}
