"""The per-label threshold search of sampled_spancat: the search on a
constructed case, scores identical to the component's scorer, validation
and speed, and setting the thresholds into a pipeline."""
import time

import numpy
import pytest
import spacy
from spacy.tokens import Doc, Span

from spacy_imbalance.evaluation.matching import DevMatcher
from spacy_imbalance.evaluation.predictions import SpanPredictions
from spacy_imbalance.evaluation.thresholds.grid import check_grid, default_grid
from spacy_imbalance.evaluation.thresholds.spans import (
    dev_matcher,
    score_thresholds,
    search_thresholds,
    set_span_thresholds,
    tune_span_thresholds,
)

from ...device import device
from ...spans.scripted import NAME, examples, gold_doc, scripted_nlp

LABELS = ("LOC", "PER", "RARE")
# (O, LOC, PER, RARE). RARE loses to O on both gold spans (0.37, 0.32);
# two decoys (0.22, 0.12) make thresholds at or below 0.2 cost precision
PER, LOC = (0.1, 0.05, 0.8, 0.05), (0.1, 0.8, 0.05, 0.05)
TABLE = {
    "Kate visited Xanadu .": {(0, 1): PER, (1, 2): (0.83, 0.025, 0.025, 0.12), (2, 3): (0.53, 0.05, 0.05, 0.37)},
    "Bob saw Zork .": {(0, 1): PER, (2, 3): (0.58, 0.05, 0.05, 0.32)},
    "Ann likes Oslo .": {(0, 1): PER, (2, 3): LOC},
    "Nothing here .": {(1, 2): (0.73, 0.025, 0.025, 0.22)},
}
GOLD = {
    "Kate visited Xanadu .": [(0, 1, "PER"), (2, 3, "RARE")],
    "Bob saw Zork .": [(0, 1, "PER"), (2, 3, "RARE")],
    "Ann likes Oslo .": [(0, 1, "PER"), (2, 3, "LOC")],
    "Nothing here .": [],
}


# the coordinate ascent alone: no shared stage, any strict gain kept
PER_LABEL = {"shared": False, "min_gain": 0.0}


@pytest.fixture(scope="module")
def rare():
    nlp = scripted_nlp(TABLE, LABELS)
    return nlp, [gold_doc(nlp, text, ents) for text, ents in GOLD.items()]


def test_the_search_recovers_a_rare_label_that_argmax_never_predicts(rare):
    """Argmax: PER 3/3, LOC 1/1, RARE 0/2: macro-F1 (1 + 1 + 0) / 3. RARE at
    0.05-0.10 adds both decoys (F 2/3), at 0.15-0.20 one (F 4/5), at 0.25
    none (F 1), at 0.35 it loses Zork: 0.25 is the first best."""
    nlp, docs = rare
    search = tune_span_thresholds(nlp, NAME, docs, grid=default_grid(0.05), **PER_LABEL)
    assert search.current == {} and search.best == {"RARE": 0.25}
    assert search.current_macro_f == pytest.approx(2 / 3) and search.best_macro_f == pytest.approx(1.0)
    assert search.improves
    assert search.current_f == pytest.approx({"LOC": 1.0, "PER": 1.0, "RARE": 0.0})
    assert search.best_f == pytest.approx({"LOC": 1.0, "PER": 1.0, "RARE": 1.0})
    assert search.support == {"LOC": 1, "PER": 3, "RARE": 2}
    # the component decides so with the thresholds: nlp.evaluate agrees
    assert nlp.evaluate(examples(docs))["ents_macro_f"] == pytest.approx(2 / 3)
    set_span_thresholds(nlp, NAME, search.best)
    try:
        assert nlp.evaluate(examples(docs))["ents_macro_f"] == pytest.approx(1.0)
        assert [(e.text, e.label_) for e in nlp("Kate visited Xanadu .").ents] == [("Kate", "PER"), ("Xanadu", "RARE")]
    finally:
        set_span_thresholds(nlp, NAME, None)


def test_the_shared_stage_comes_first(rare):
    """One threshold for all: 0.05-0.20 add decoys, 0.25 is the first to
    reach macro-F1 1 (PER and LOC spans are at 0.8); no label can add more."""
    nlp, docs = rare
    search = tune_span_thresholds(nlp, NAME, docs, grid=default_grid(0.05))
    assert search.best == {"LOC": 0.25, "PER": 0.25, "RARE": 0.25}
    assert search.best_macro_f == pytest.approx(1.0)


@pytest.mark.parametrize("min_gain,best", [(0.2, {"RARE": 0.25}), (0.34, {})])
def test_a_per_label_change_must_add_min_gain(rare, min_gain, best):
    # RARE at 0.25 adds 1/3 of macro-F1: kept above a 0.2 margin, not above 0.34
    nlp, docs = rare
    search = tune_span_thresholds(nlp, NAME, docs, grid=default_grid(0.05), shared=False, min_gain=min_gain)
    assert search.best == best
    with pytest.raises(ValueError, match="min_gain"):
        tune_span_thresholds(nlp, NAME, docs, grid=default_grid(0.05), min_gain=1.5)


@pytest.mark.parametrize(
    "grid,best,macro_f",
    [
        # the coarse grid never reaches 0.25: 0.2 (one decoy) is its best
        ([0.2, 0.4, 0.6], {"RARE": 0.2}, (1 + 1 + 0.8) / 3),
        ([0.4, 0.6], {}, 2 / 3),  # nothing beats argmax: kept
    ],
)
def test_the_search_keeps_the_first_strict_improvement(rare, grid, best, macro_f):
    nlp, docs = rare
    search = tune_span_thresholds(nlp, NAME, docs, grid=grid, **PER_LABEL)
    assert search.best == best and search.best_macro_f == pytest.approx(macro_f)
    assert search.improves == (best != {})


@pytest.mark.parametrize(
    "current,best,current_macro_f",
    [
        ({"RARE": 0.3}, {"RARE": 0.3}, 1.0),  # already best: a tie keeps it
        # PER at 0.9 drops every PER span, RARE at 0.5 every RARE one
        ({"PER": 0.9, "RARE": 0.5}, {"RARE": 0.25}, 1 / 3),
    ],
)
def test_the_search_starts_from_the_current_decision_and_never_scores_below_it(rare, current, best, current_macro_f):
    nlp, docs = rare
    set_span_thresholds(nlp, NAME, current)
    try:
        search = tune_span_thresholds(nlp, NAME, docs, grid=default_grid(0.05), **PER_LABEL)
    finally:
        set_span_thresholds(nlp, NAME, None)
    assert search.current == current and search.best == best
    assert search.current_macro_f == pytest.approx(current_macro_f) and search.best_macro_f == pytest.approx(1.0)
    assert search.improves == (current != best)


@pytest.fixture(scope="module")
def noisy():
    """Random probabilities over 3 labels, gold spans more likely (to their
    label or another one), an entity_ruler before the component (its GPE
    entities are kept and win), a doc with a token whose annotation is
    missing and a doc without any annotation."""
    rng = numpy.random.default_rng(0)
    lengths = [6, 1, 9, 4, 7, 5, 8, 12]
    texts = [" ".join(f"w{i}{j}" for j in range(n)) for i, n in enumerate(lengths)]
    texts[2] = texts[2].replace("w22", "Oslo")
    nlp = scripted_nlp({}, LABELS)
    golds, table = [], {}
    for k, (text, n) in enumerate(zip(texts, lengths)):
        ents = [(s, s + 1 + int(rng.integers(2)), LABELS[int(rng.integers(3))]) for s in range(0, n - 1, 3)]
        table[text] = {}
        for s in range(n):
            for e in range(s + 1, min(s + 3, n) + 1):
                probs = rng.dirichlet([3.0, 1.0, 1.0, 1.0])
                gold = [label for start, end, label in ents if (start, end) == (s, e)]
                if gold:
                    # mostly the gold label, sometimes another one
                    bumped = 1 + LABELS.index(gold[0]) if rng.random() < 0.7 else int(rng.integers(1, 4))
                    probs[bumped] += rng.uniform(0.0, 2.0)
                table[text][(s, e)] = (probs / probs.sum()).tolist()
        doc = gold_doc(nlp, text, ents)
        if k == 3:
            doc.set_ents([], missing=[doc[1:2]], default="unmodified")
        if k == 5:
            doc = Doc(nlp.vocab, words=text.split(" "), spaces=[True] * (n - 1) + [False])
        golds.append(doc)
    golds[2].set_ents([Span(golds[2], 2, 3, label="GPE")], default="unmodified")
    nlp = scripted_nlp(table, LABELS)
    ruler = nlp.add_pipe("entity_ruler", before=NAME)
    ruler.add_patterns([{"label": "GPE", "pattern": "Oslo"}])
    return nlp, golds


@pytest.mark.parametrize(
    "thresholds",
    [{}, {"LOC": 0.2}, {"PER": 0.05, "RARE": 0.3}, {"LOC": 0.1, "PER": 0.15, "RARE": 0.6}, {"RARE": 0.25}],
)
def test_scores_are_those_of_the_component_and_its_scorer(noisy, thresholds):
    """The vectorised decoding and matching give nlp.evaluate's macro-F1 and
    per-label F1 (missing annotation, an unannotated doc, preset entities of
    a label the component lacks)."""
    nlp, golds = noisy
    matcher = dev_matcher(nlp, NAME, golds, floor=0.05)
    macro_f, per_label = score_thresholds(matcher, thresholds)
    set_span_thresholds(nlp, NAME, thresholds or None)
    try:
        scores = nlp.evaluate(examples(golds))
    finally:
        set_span_thresholds(nlp, NAME, None)
    assert macro_f == pytest.approx(scores["ents_macro_f"], abs=1e-12)
    assert {k: v for k, v in per_label.items() if v is not None} == pytest.approx({k: v["f"] for k, v in scores["ents_per_type"].items()})
    assert "GPE" in per_label and matcher.labels[:3] == list(LABELS)


def test_the_search_runs_on_the_device_as_on_numpy(device_ops, rare):
    """predict_spans reduces each batch on the device and copies it once."""
    with device("numpy"):
        expected = tune_span_thresholds(rare[0], NAME, rare[1], grid=default_grid(0.05), batch_size=2)
    nlp = scripted_nlp(TABLE, LABELS)  # its predictions on the test's device
    search = tune_span_thresholds(nlp, NAME, rare[1], grid=default_grid(0.05), batch_size=2)
    assert (search.best, search.best_macro_f, search.current_macro_f) == (expected.best, expected.best_macro_f, expected.current_macro_f)


def test_predictions_cost_one_copy_and_one_sync_per_batch(fake_ops, rare):
    """Each batch is reduced on the device and leaves it once: one sync
    (the candidates that pass the floor) and one copy."""
    nlp = scripted_nlp(TABLE, LABELS)
    for batch_size, n_batches in ((1, 4), (2, 2), (4, 1)):
        with fake_ops.measure() as moved:
            matcher = dev_matcher(nlp, NAME, rare[1], floor=0.05, batch_size=batch_size)
        assert (moved.copies, moved.syncs, moved.loops) == (n_batches, n_batches, 0)
        assert len(matcher.predictions) == 8  # the table's rows with p(label) >= 0.05


def test_search_validates_its_settings(rare):
    nlp, docs = rare
    for grid in ([], [0.0, 0.5], [0.5, 1.0], [float("nan")]):
        with pytest.raises(ValueError, match=r"the threshold grid must be a non-empty list of values in \(0, 1\)"):
            tune_span_thresholds(nlp, NAME, docs, grid=grid)
    assert check_grid([0.5, 0.25, 0.5]) == [0.25, 0.5]
    with pytest.raises(ValueError, match="rounds must be an integer >= 1"):
        tune_span_thresholds(nlp, NAME, docs, grid=[0.5], rounds=0)
    with pytest.raises(ValueError, match="the pipeline has no component 'ner'; its components: sampled_spancat"):
        tune_span_thresholds(nlp, "ner", docs, grid=[0.5])
    with pytest.raises(ValueError, match=r"the dev docs has no gold entities \(1 docs\)"):
        tune_span_thresholds(nlp, NAME, [gold_doc(nlp, "Nothing here .", [])], grid=[0.5])
    matcher = dev_matcher(nlp, NAME, docs, floor=0.3)
    with pytest.raises(ValueError, match=r"keep candidates down to p = 0.3, above the lowest threshold to search \(0.05\)"):
        search_thresholds(matcher, {}, [0.05, 0.5])


def synthetic_predictions(n_docs: int = 1000, n_labels: int = 10, seed: int = 0):
    """A tweet-sized dev set: ~1000 docs of 10-30 tokens, ~130k candidates
    of width <= 8, 10 labels with Zipf-like frequencies."""
    rng = numpy.random.default_rng(seed)
    vocab = spacy.blank("en").vocab
    labels = [f"L{i}" for i in range(n_labels)]
    docs, rows = [], []
    offset = 0
    for d in range(n_docs):
        n = int(rng.integers(10, 31))
        doc = Doc(vocab, words=["w"] * n)
        ents = [Span(doc, s, s + 1, label=labels[min(int(rng.exponential(2.0)), n_labels - 1)]) for s in range(1, n, 7)]
        doc.set_ents(ents, default="outside")
        docs.append(doc)
        for s in range(n):
            for e in range(s + 1, min(s + 8, n) + 1):
                rows.append((offset + s, offset + e, d))
        offset += n
    rows = numpy.asarray(rows, dtype="int64")
    logits = rng.normal(size=(len(rows), n_labels + 1)).astype("float32")
    logits[:, 0] += 3.0
    lab = logits[:, 1:].argmax(axis=1) + 1
    top = logits[numpy.arange(len(rows)), lab]
    confidence = (1.0 / numpy.exp(logits - top[:, None]).sum(axis=1)).astype("float32")
    keep = (confidence >= 0.05) | (top > logits[:, 0])
    starts = numpy.concatenate([[0], numpy.cumsum([len(doc) for doc in docs])]).astype("int64")
    predictions = SpanPredictions(
        docs=docs, classes=["O", *labels], starts=rows[keep, 0], ends=rows[keep, 1], doc_ids=rows[keep, 2],
        labels=lab[keep].astype("int64"), confidence=confidence[keep], entity_prob=confidence[keep],
        is_argmax=(top > logits[:, 0])[keep], doc_starts=starts, floor=0.05,
    )
    return predictions, docs, len(rows)


def test_a_tweet_sized_dev_set_tunes_in_seconds():
    """1,000 docs, ~130k candidates, 10 labels: the search (predictions
    made) takes ~1 s on one core; 30 s allows for a loaded machine."""
    predictions, docs, n_candidates = synthetic_predictions()
    assert n_candidates > 120_000 and len(predictions) > 10_000
    start = time.perf_counter()
    search = search_thresholds(DevMatcher(predictions, docs), {}, default_grid(0.05))
    assert time.perf_counter() - start < 30
    assert search.best_macro_f >= search.current_macro_f


def test_set_span_thresholds_refuses_other_components():
    nlp = spacy.blank("en")
    nlp.add_pipe("sentencizer")
    with pytest.raises(ValueError, match="'sentencizer' is a Sentencizer, not a sampled_spancat; the pipeline's components: sentencizer"):
        set_span_thresholds(nlp, "sentencizer", {"LOC": 0.5})
