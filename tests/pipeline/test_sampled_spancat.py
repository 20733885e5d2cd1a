"""The sampled_spancat component: labels, overfitting with every sampler,
sampled-only training, missampling rate, serialisation, multiprocessing,
empty docs and config validation."""
import math

import numpy
import pytest
import spacy
from spacy.language import Language
from spacy.tokens import Doc, Span
from spacy.training import Example
from spacy.util import fix_random_seed

from spacy_imbalance.spans.candidates import MAX_SPAN_WIDTH, enumerate_candidates
from spacy_imbalance.pipeline.sampled_spancat import DEFAULT_MODEL
from spacy_imbalance.models.span_scorer import SpanScores

# the toy data, its examples, the training loop and the checks every
# entity component must pass are token_ner's
from .test_token_ner import TRAIN_DATA, check_no_labels_is_a_clear_error, make_examples, pred_ents, train

DEFAULT_TOK2VEC = dict(DEFAULT_MODEL["tok2vec"])

SAMPLERS = {
    "all": {"@misc": "spacy-imbalance.all_negatives.v1"},
    "uniform": {"@misc": "spacy-imbalance.uniform_negatives.v1", "rate": 0.7},
    "weighted": {"@misc": "spacy-imbalance.weighted_negatives.v1", "rate": 0.7, "mu": 8.0},
    "top": {"@misc": "spacy-imbalance.top_negatives.v1", "ratio": 0.3},
    "top_v2": {"@misc": "spacy-imbalance.top_negatives.v2", "ratio": 0.3},
}


def make_nlp(negatives=None, **cfg) -> Language:
    """A blank pipeline with sampled_spancat alone (negatives None: the
    factory's default sampler)."""
    nlp = spacy.blank("en")
    nlp.add_pipe("sampled_spancat", config=cfg if negatives is None else {**cfg, "negatives": negatives})
    return nlp


@pytest.fixture(scope="module")
def trained():
    nlp = make_nlp()
    examples = make_examples(nlp)
    return nlp, examples, train(nlp, examples)


@pytest.mark.parametrize("sampler", sorted(SAMPLERS))
def test_overfits_to_the_exact_spans(sampler):
    nlp = make_nlp(SAMPLERS[sampler])
    examples = make_examples(nlp)
    history = train(nlp, examples)
    assert history[-1] < 0.1 * history[0]
    docs = list(nlp.pipe(text for text, _ in TRAIN_DATA))
    assert pred_ents(docs) == [sorted(ents) for _, ents in TRAIN_DATA]


@pytest.mark.parametrize(
    "loss",
    [
        {"@losses": "spacy-imbalance.FocalLoss.v1", "gamma": 2.0},
        # MoM's majority class is O, class 0 of the span classes
        {"@losses": "spacy-imbalance.MoMLoss.v1", "lambda_": 0.5, "majority_class": 0},
    ],
    ids=["focal", "mom"],
)
def test_span_level_imbalance_losses_train(loss):
    nlp = make_nlp(SAMPLERS["uniform"], loss=loss)
    examples = make_examples(nlp)
    history = train(nlp, examples, n_iter=80)
    assert history[-1] < 0.1 * history[0]
    docs = list(nlp.pipe(text for text, _ in TRAIN_DATA))
    assert pred_ents(docs) == [sorted(ents) for _, ents in TRAIN_DATA]


def test_no_labels_is_a_clear_error():
    check_no_labels_is_a_clear_error(make_nlp(), "sampled_spancat")


def test_labels_and_classes():
    nlp = make_nlp()
    nlp.initialize(get_examples=lambda: make_examples(nlp))
    pipe = nlp.get_pipe("sampled_spancat")
    assert pipe.labels == ("LOC", "PER") and pipe.classes == ["O", "LOC", "PER"]
    assert pipe.model.get_ref("output_layer").get_dim("nO") == 3


def test_only_gold_spans_and_sampled_negatives_are_scored(trained, monkeypatch):
    """With the uniform sampler the head runs on positives + ⌈rate·n⌉
    negatives per sentence, not on every candidate (the negatives that
    overlap gold, which the default adds, left out here)."""
    nlp, examples, _ = trained
    pipe = nlp.get_pipe("sampled_spancat")
    monkeypatch.setattr(pipe.negatives, "overlapping", False)
    head = pipe.model.get_ref("head")
    rows = []
    original = head._func

    def spy(model, X, is_train):
        rows.append((X[1].shape[0], is_train))
        return original(model, X, is_train)

    monkeypatch.setattr(head, "_func", spy)
    nlp.update(examples, losses={})
    n_gold = sum(len(ents) for _, ents in TRAIN_DATA)
    n_negatives = sum(math.ceil(pipe.negatives.rate * len(eg.predicted) - 1e-9) for eg in examples)
    assert rows == [(n_gold + n_negatives, True)]


def test_weighted_scores_all_candidates_but_trains_on_the_sample(monkeypatch):
    nlp = make_nlp(SAMPLERS["weighted"])
    examples = make_examples(nlp)
    train(nlp, examples, n_iter=2)
    # the output layer, as the no-gradient scores of every candidate come
    # from per-token projections (candidate_logits), not from the head's forward
    output_layer = nlp.get_pipe("sampled_spancat").model.get_ref("output_layer")
    rows, original = [], output_layer._func

    def spy(model, X, is_train):
        rows.append((X.shape[0], is_train))
        return original(model, X, is_train)

    monkeypatch.setattr(output_layer, "_func", spy)
    nlp.update(examples, losses={})
    n_candidates = len(enumerate_candidates(output_layer.ops, [len(eg.predicted) for eg in examples], 8))
    n_train = sum(len(ents) for _, ents in TRAIN_DATA) + sum(math.ceil(0.7 * len(eg.predicted) - 1e-9) for eg in examples)
    assert rows == [(n_candidates, False), (n_train, True)]


def test_top_v2_samples_on_the_hidden_layer_without_dropout(monkeypatch):
    """Top-Neg v2 gets the head's hidden layer of every candidate, computed in
    prediction mode: with a head dropout of 0.5 it is the same on every update
    and equals the hidden ref's predict on the span representations. (The
    token vectors are the update's own, as for v1 and the weighted sampler:
    [training] dropout, the encoder's, is 0 here.)"""
    nlp = make_nlp(SAMPLERS["top_v2"], model={**DEFAULT_MODEL, "tok2vec": DEFAULT_TOK2VEC, "dropout": 0.5})
    examples = make_examples(nlp)
    train(nlp, examples, n_iter=2)
    pipe = nlp.get_pipe("sampled_spancat")
    seen, original = [], pipe.negatives.sample

    def spy(batch, generator):
        seen.append(batch)
        return original(batch, generator)

    monkeypatch.setattr(pipe.negatives, "sample", spy)
    for _ in range(2):
        pipe.update(examples, drop=0.0, losses={})  # no sgd: the weights stay
    first, second = seen
    assert first.vectors is None and first.probs is None
    assert first.hidden.shape == (len(first.candidates), DEFAULT_MODEL["hidden_width"])
    numpy.testing.assert_array_equal(first.hidden, second.hidden)
    model = pipe.model
    assert {n.attrs["dropout_rate"] for n in model.get_ref("hidden").walk() if "dropout_rate" in n.attrs} == {0.5}
    X = model.ops.flatten(model.get_ref("tok2vec").predict([eg.predicted for eg in examples]))
    span_input = (X, first.candidates.starts, first.candidates.ends)
    expected = model.get_ref("hidden").predict(model.get_ref("span_repr").predict(span_input))
    # float32 rounding: the sampler's hidden layer comes from per-token
    # projections summed per span, a different summation order, so a unit near
    # zero differs on the scale of the largest ones
    numpy.testing.assert_allclose(first.hidden, expected, rtol=1e-5, atol=1e-5 * max(1.0, float(numpy.abs(expected).max())))


def test_top_v2_trains_and_round_trips():
    nlp = make_nlp(SAMPLERS["top_v2"])
    examples = make_examples(nlp)
    history = train(nlp, examples, n_iter=40)
    assert history[-1] < 0.2 * history[0]
    texts = [text for text, _ in TRAIN_DATA] + ["Paris and London ."]
    expected = list(nlp.pipe(texts))
    loaded = make_nlp(SAMPLERS["top_v2"]).from_bytes(nlp.to_bytes())
    got = list(loaded.pipe(texts))
    assert pred_ents(got) == pred_ents(expected)
    for a, b in zip(got, expected):
        assert a.spans["sc"].attrs["scores"] == pytest.approx(b.spans["sc"].attrs["scores"], abs=1e-6)
    # the loaded component samples on its hidden layer like the trained one
    fix_random_seed(0)
    _, _, drawn = loaded.get_pipe("sampled_spancat").sample_negatives(examples)
    assert len(drawn) > 0


def test_mean_max_representation_overfits_and_round_trips():
    """spaCy's pooling (first, last, mean, max) with the width embedding:
    the component learns the exact spans and a reload predicts the same
    scores (the fast prediction path builds the mean and max per run)."""
    model = {"@architectures": "spacy-imbalance.SpanScorer.v2", "representation": "endpoints_mean_max", "tok2vec": DEFAULT_TOK2VEC}
    nlp = make_nlp(SAMPLERS["all"], model=model)
    examples = make_examples(nlp)
    history = train(nlp, examples)
    assert history[-1] < 0.1 * history[0]
    texts = [text for text, _ in TRAIN_DATA]
    expected = list(nlp.pipe(texts))
    assert pred_ents(expected) == [sorted(ents) for _, ents in TRAIN_DATA]
    loaded = make_nlp(SAMPLERS["all"], model=model).from_bytes(nlp.to_bytes())
    for a, b in zip(loaded.pipe(texts), expected):
        assert a.spans["sc"].attrs["scores"] == pytest.approx(b.spans["sc"].attrs["scores"], abs=1e-6)


def test_missampling_rate_is_exact_on_a_masked_example():
    """All-negatives sampling draws every negative, so the rate is the masked
    candidates over the negative candidates, counted by hand."""
    nlp = make_nlp(SAMPLERS["all"], max_span_width=2)
    words = ["Kate", "met", "Bob", "in", "Rome"]
    reference = Doc(nlp.vocab, words=words)
    reference.set_ents([Span(reference, 0, 1, label="PER")], default="outside")
    reference.spans["masked"] = [Span(reference, 2, 3, label="PER"), Span(reference, 4, 5, label="LOC")]
    example = Example(Doc(nlp.vocab, words=words), reference)
    nlp.initialize(get_examples=lambda: [example])
    pipe = nlp.get_pipe("sampled_spancat")
    assert pipe.missampling_rate() is None
    nlp.update([example], losses={})
    # 5 + 4 = 9 candidates, 1 gold, 8 negatives drawn, 2 of them masked entities
    assert pipe.missampling_rate() == pytest.approx(2 / 8)
    assert pipe.cfg["missampled"] == [2, 8]
    scores = pipe.score([example])
    assert scores["missampling_rate"] == pytest.approx(0.25)
    assert pipe.score([example])["missampling_rate"] is None  # reset by the evaluation
    assert pipe.cfg["missampled"] == [2, 8]  # the training total stays


def test_unannotated_tokens_are_never_sampled():
    nlp = make_nlp(SAMPLERS["all"], max_span_width=3)
    words = ["Kate", "met", "Bob", "today"]
    reference = Doc(nlp.vocab, words=words)
    reference.set_ents([Span(reference, 0, 1, label="PER")], missing=[reference[2:3]], default="outside")
    example = Example(Doc(nlp.vocab, words=words), reference)
    nlp.initialize(get_examples=lambda: [example])
    candidates, targets, negatives = nlp.get_pipe("sampled_spancat").sample_negatives([example])
    drawn = {(int(s), int(e)) for s, e in zip(candidates.starts[negatives], candidates.ends[negatives])}
    assert drawn == {(1, 1), (3, 3), (0, 1)}  # every span avoiding token 2, minus the gold (0, 0)


def test_gold_from_a_span_group():
    nlp = make_nlp(SAMPLERS["all"], gold_key="gold", spans_key="predicted")
    examples = []
    for text, ents in TRAIN_DATA:
        doc = nlp.make_doc(text)
        reference = nlp.make_doc(text)
        reference.spans["gold"] = [reference.char_span(s, e, label=l) for s, e, l in ents]
        examples.append(Example(doc, reference))
    train(nlp, examples)
    assert nlp.get_pipe("sampled_spancat").labels == ("LOC", "PER")
    doc = nlp("Kate Bush sings in New York .")
    assert [(s.text, s.label_) for s in doc.spans["predicted"]] == [("Kate Bush", "PER"), ("New York", "LOC")]
    assert len(doc.spans["predicted"].attrs["scores"]) == 2
    # the default scorer compares the predicted ents with the gold group
    # (the reference has no doc.ents at all)
    scores = nlp.evaluate(examples)
    assert scores["ents_macro_f"] == 1.0 and scores["ents_per_type"]["LOC"]["r"] == 1.0


def test_a_span_with_two_gold_labels_is_a_clear_error():
    nlp = make_nlp(SAMPLERS["all"], gold_key="gold")
    reference = nlp.make_doc("Kate Bush sings")
    reference.spans["gold"] = [Span(reference, 0, 2, label="PER"), Span(reference, 0, 2, label="ORG")]
    example = Example(nlp.make_doc("Kate Bush sings"), reference)
    with pytest.raises(ValueError, match="'Kate Bush' .* has two labels, 'PER' and 'ORG'"):
        nlp.initialize(get_examples=lambda: [example])


def test_the_head_keeps_its_own_dropout():
    """[training] dropout reaches the encoder; SpanScorer.v1's dropout stays
    the scoring head's rate."""
    nlp = spacy.blank("en")
    nlp.add_pipe("sampled_spancat", config={"model": {"@architectures": "spacy-imbalance.SpanScorer.v1", "dropout": 0.3,
                                                      "tok2vec": DEFAULT_TOK2VEC}})
    examples = make_examples(nlp)
    nlp.initialize(get_examples=lambda: examples)
    pipe = nlp.get_pipe("sampled_spancat")
    nlp.update(examples, drop=0.0, losses={})
    head_rates = {node.attrs["dropout_rate"] for node in pipe.model.get_ref("scorer").walk() if "dropout_rate" in node.attrs}
    assert head_rates == {0.3}
    nlp.update(examples, drop=0.2, losses={})
    assert {node.attrs["dropout_rate"] for node in pipe.model.get_ref("scorer").walk() if "dropout_rate" in node.attrs} == {0.3}


def test_the_temperature_step_counts_optimizer_steps():
    """The weighted sampler's schedule follows optimizer steps (finish_update),
    so accumulating gradients over several update calls is one step."""
    nlp = make_nlp(SAMPLERS["weighted"])
    examples = make_examples(nlp)
    optimizer = nlp.initialize(get_examples=lambda: examples)
    pipe = nlp.get_pipe("sampled_spancat")
    seen = []
    pipe.negatives.temperature = lambda step: seen.append(step) or 1.0
    nlp.update(examples, sgd=optimizer, losses={})
    nlp.update(examples, sgd=optimizer, losses={})
    assert seen == [0, 1]
    for half in (examples[:2], examples[2:]):  # accumulate_gradient = 2, as spacy train does it
        nlp.update(half, sgd=False, losses={})
    pipe.finish_update(optimizer)
    assert seen == [0, 1, 2, 2] and pipe.cfg["n_updates"] == 3


def test_too_wide_gold_spans_are_counted_in_a_warning():
    nlp = make_nlp(max_span_width=1)
    examples = make_examples(nlp)
    with pytest.warns(UserWarning, match=r"2 of 5 gold spans \(40.0 %\) are wider than max_span_width = 1"):
        nlp.initialize(get_examples=lambda: examples)


def test_decoding_never_overlaps_and_keeps_every_non_o_span_in_the_group(trained):
    nlp, _, _ = trained
    pipe = nlp.get_pipe("sampled_spancat")
    doc = nlp.make_doc("a b c d")
    candidates = enumerate_candidates(pipe.model.ops, [4], 8)
    rng = numpy.random.default_rng(0)
    logits = rng.normal(size=(len(candidates), 3)).astype("f")
    logits[:, 0] -= 5  # every candidate is an entity
    pipe.set_annotations([doc], SpanScores(candidates, logits))
    assert len(doc.spans["sc"]) == len(candidates)
    covered = [0] * 4
    for ent in doc.ents:
        for i in range(ent.start, ent.end):
            covered[i] += 1
    assert max(covered) == 1
    # the best-scored span is an entity
    scores = doc.spans["sc"].attrs["scores"]
    best = doc.spans["sc"][int(numpy.argmax(scores))]
    assert (best.start, best.end, best.label_) in [(e.start, e.end, e.label_) for e in doc.ents]


def reference_annotations(pipe, docs, scores):
    """The decoding spelled out per doc and per candidate: softmax, argmax,
    the non-O spans of each doc, greedy non-overlapping by probability."""
    candidates, logits = scores
    probs = numpy.exp(logits - logits.max(axis=1, keepdims=True))
    probs /= probs.sum(axis=1, keepdims=True)
    offset, result = 0, []
    for i, doc in enumerate(docs):
        rows = [k for k in range(len(candidates)) if candidates.doc_ids[k] == i and probs[k].argmax() > 0]
        spans = [(int(candidates.starts[k]) - offset, int(candidates.ends[k]) + 1 - offset, pipe.classes[int(probs[k].argmax())]) for k in rows]
        confidence = [float(probs[k].max()) for k in rows]
        taken, ents = set(), []
        for k in sorted(range(len(rows)), key=lambda k: (-confidence[k], k)):
            tokens = set(range(spans[k][0], spans[k][1]))
            if not tokens & taken:
                taken |= tokens
                ents.append(spans[k])
        result.append((spans, confidence, sorted(ents)))
        offset += len(doc)
    return result


def test_set_annotations_matches_the_per_doc_reference(trained):
    """One host copy per batch, split by doc: the same spans, labels,
    probabilities and entities as the decoding written per doc, on random
    scores for a batch with empty docs."""
    nlp, _, _ = trained
    pipe = nlp.get_pipe("sampled_spancat")
    texts = ["a b c d e f", "", "g", "h i j", "", "k l m n o p q r s t"]
    docs = [nlp.make_doc(text) for text in texts]
    candidates = enumerate_candidates(pipe.model.ops, [len(doc) for doc in docs], 8)
    logits = numpy.random.default_rng(0).normal(size=(len(candidates), 3)).astype("f")
    logits[:, 0] += 1.0  # a mix of O and entity candidates
    pipe.set_annotations(docs, SpanScores(candidates, logits))
    for doc, (spans, confidence, ents) in zip(docs, reference_annotations(pipe, docs, SpanScores(candidates, logits))):
        assert [(s.start, s.end, s.label_) for s in doc.spans["sc"]] == spans
        assert doc.spans["sc"].attrs["scores"] == pytest.approx(confidence, rel=1e-5)
        assert [(e.start, e.end, e.label_) for e in doc.ents] == ents
    assert sum(len(doc.spans["sc"]) for doc in docs) > 0 and docs[1].ents == () and len(docs[4].spans["sc"]) == 0


def test_pipe_predicts_what_the_plain_head_predicts(trained):
    """nlp.pipe (the fast path) and the head run on the concatenated span
    vectors of every candidate give the same annotations."""
    nlp, _, _ = trained
    pipe = nlp.get_pipe("sampled_spancat")
    texts = [text for text, _ in TRAIN_DATA] + ["", "Paris and London and Kate Bush ."]
    got = list(nlp.pipe(texts))
    docs = [nlp.make_doc(text) for text in texts]
    model = pipe.model
    candidates = enumerate_candidates(model.ops, [len(doc) for doc in docs], pipe.max_span_width)
    X = model.ops.flatten(model.get_ref("tok2vec").predict(docs))
    plain = model.get_ref("head").predict((X, candidates.starts, candidates.ends))
    # the default sampler's prior correction, which predict adds to O
    shift = pipe.negatives.prior_shift(model.ops, candidates)
    if shift is not None:
        plain[:, 0] += shift
    pipe.set_annotations(docs, SpanScores(candidates, plain))
    assert pred_ents(got) == pred_ents(docs) and any(doc.ents for doc in docs)
    for a, b in zip(got, docs):
        assert [(s.start, s.end, s.label_) for s in a.spans["sc"]] == [(s.start, s.end, s.label_) for s in b.spans["sc"]]
        assert a.spans["sc"].attrs["scores"] == pytest.approx(b.spans["sc"].attrs["scores"], abs=1e-5)


@pytest.mark.parametrize("n_docs", [4, 40])
def test_annotations_cost_one_copy_and_one_sync_per_batch(n_docs):
    """On the fake cupy of tests/device.py: the non-O spans of the whole
    batch leave the device in one copy (after the one sync of selecting
    them), whatever the number of docs, and are split by doc on the host."""
    device = pytest.importorskip("tests.device")
    with device.fake_device() as ops:
        nlp = make_nlp()
        nlp.initialize(get_examples=lambda: make_examples(nlp))
        pipe = nlp.get_pipe("sampled_spancat")
        output_layer = pipe.model.get_ref("output_layer")
        W = numpy.random.default_rng(0).normal(size=output_layer.get_param("W").shape).astype("f")
        output_layer.set_param("W", ops.asarray(W))
        docs = [nlp.make_doc(text) for text, _ in TRAIN_DATA] * (n_docs // len(TRAIN_DATA))
        scores = pipe.predict(docs)
        with ops.measure() as counts:
            pipe.set_annotations(docs, scores)
    assert (counts.copies, counts.syncs) == (1, 1)
    assert all(len(doc.spans["sc"]) for doc in docs)


def test_preset_entities_are_kept(trained):
    nlp, _, _ = trained
    doc = nlp.make_doc("Kate Bush sings in New York .")
    doc.set_ents([doc.char_span(19, 27, label="CITY")], default="unmodified")
    doc = nlp.get_pipe("sampled_spancat")(doc)
    assert [(e.text, e.label_) for e in doc.ents] == [("Kate Bush", "PER"), ("New York", "CITY")]


def test_to_bytes_and_to_disk_round_trips_predict_the_same(trained, tmp_path):
    nlp, _, _ = trained
    texts = [text for text, _ in TRAIN_DATA] + ["Paris and London ."]
    expected = list(nlp.pipe(texts))
    nlp.to_disk(tmp_path / "model")
    for loaded in (spacy.load(tmp_path / "model"), make_nlp().from_bytes(nlp.to_bytes())):
        got = list(loaded.pipe(texts))
        assert pred_ents(got) == pred_ents(expected)
        for a, b in zip(got, expected):
            assert a.spans["sc"].attrs["scores"] == pytest.approx(b.spans["sc"].attrs["scores"], abs=1e-6)
        pipe = loaded.get_pipe("sampled_spancat")
        assert pipe.labels == ("LOC", "PER")
        assert pipe.cfg["n_updates"] == nlp.get_pipe("sampled_spancat").cfg["n_updates"] >= 60


def test_nlp_pipe_with_two_processes(trained):
    nlp, _, _ = trained
    texts = [text for text, _ in TRAIN_DATA] * 3
    assert pred_ents(nlp.pipe(texts, n_process=2, batch_size=2)) == pred_ents(nlp.pipe(texts))


def test_empty_and_one_token_docs(trained):
    nlp, examples, _ = trained
    docs = list(nlp.pipe(["", "Kate", "", "London"]))
    assert [len(doc.spans["sc"]) for doc in docs][0] == 0 and docs[0].ents == ()
    assert all(len(doc.ents) <= 1 for doc in docs)
    empty = Example.from_dict(nlp.make_doc(""), {"entities": []})
    one = Example.from_dict(nlp.make_doc("Kate"), {"entities": [(0, 4, "PER")]})
    assert nlp.update([empty], losses={}) == {"sampled_spancat": 0.0}
    losses = nlp.update([empty, one], losses={})
    assert numpy.isfinite(losses["sampled_spancat"])


@pytest.mark.parametrize(
    "cfg,message",
    [
        ({"max_span_width": 0}, r"max_span_width must be an integer in \[1, 256\]"),
        # issue 31 M11: a million trained, then predicting 10-token texts asked for 2.86 GiB
        ({"max_span_width": 1_000_000}, r"sampled_spancat 'sampled_spancat': max_span_width must be an integer in \[1, 256\].*got 1000000"),
        ({"max_span_width": 257}, r"max_span_width must be an integer in \[1, 256\]"),
        ({"negatives": {"@misc": "spacy-imbalance.uniform_negatives.v1", "rate": 2.0}}, r"rate must be in \(0, 1\]"),
        ({"negatives": {"@misc": "spacy-imbalance.weighted_negatives.v1", "mu": -2}}, "mu must be >= 0"),
        ({"masked_key": "sc"}, "masked_key 'sc' must differ from spans_key: it names a span group of its own"),
        ({"entities_key": "gold", "gold_key": "gold"}, "entities_key 'gold' must differ from gold_key"),
        ({"spans_key": ""}, "spans_key must be a non-empty span group name or null"),
        ({"spans_key": "  "}, "spans_key must be a non-empty span group name or null, got '  '"),
        ({"gold_key": " "}, "gold_key must be a non-empty span group name or null, got ' '"),
        ({"masked_key": "\t"}, r"masked_key must be a non-empty span group name or null, got '\\t'"),
    ],
)
def test_invalid_settings_are_clear_errors(cfg, message):
    with pytest.raises(ValueError, match=message):
        make_nlp(**cfg)


def test_the_widest_max_span_width_predicts_short_docs_with_small_tables():
    # issue 31 M11: the width embedding has a row per width; at the bound it
    # stays small, and a doc shorter than the width enumerates its own spans only
    nlp = make_nlp(max_span_width=MAX_SPAN_WIDTH)
    nlp.initialize(lambda: make_examples(nlp))
    pipe = nlp.get_pipe("sampled_spancat")
    assert pipe.model.get_ref("span_repr").get_param("E").shape[0] == MAX_SPAN_WIDTH
    doc = nlp.make_doc("one two three four five six seven eight nine ten")
    scores = pipe.predict([doc])
    assert len(scores.candidates) == 10 * 11 // 2


def test_loss_with_class_counts_survives_serialisation(tmp_path):
    nlp = make_nlp(loss={"@losses": "spacy-imbalance.WeightedCrossEntropy.v1", "scheme": "log"})
    examples = make_examples(nlp)
    train(nlp, examples, n_iter=3)
    counts = nlp.get_pipe("sampled_spancat").cfg["class_counts"]
    n_words = [len(eg.predicted) for eg in examples]
    n_candidates = sum(min(8, n) * n - min(8, n) * (min(8, n) - 1) // 2 for n in n_words)
    assert counts[1:] == [3, 2] and sum(counts) == n_candidates
    nlp.to_disk(tmp_path / "wce")
    loaded = spacy.load(tmp_path / "wce")
    assert loaded.get_pipe("sampled_spancat").loss.class_counts == counts


def test_same_seed_same_training():
    def run():
        nlp = make_nlp()
        history = train(nlp, make_examples(nlp), n_iter=5)
        return history

    assert run() == run()


def test_a_batch_without_annotation_changes_nothing(trained):
    nlp, _, _ = trained
    words = ["Kate", "met", "Bob"]
    reference = Doc(nlp.vocab, words=words)
    reference.set_ents([], missing=[reference[0:3]], default="unmodified")
    example = Example(Doc(nlp.vocab, words=words), reference)
    pipe = nlp.get_pipe("sampled_spancat")
    output_layer = pipe.model.get_ref("output_layer")
    before = output_layer.get_grad("W").copy()
    losses = pipe.update([example], losses={})
    assert losses["sampled_spancat"] == 0.0
    assert (output_layer.get_grad("W") == before).all()  # no gradient was added


def test_per_sentence_losses_are_refused():
    nlp = spacy.blank("en")
    with pytest.raises(ValueError, match="MoMLossV2 averages over sentences"):
        nlp.add_pipe("sampled_spancat", config={"loss": {"@losses": "spacy-imbalance.MoMLoss.v2"}})


# -- decision thresholds ------------------------------------------------------

# "a b c d": candidates in (start, width) order; the rows that are not O-sure
HAND_PROBS = {
    0: [0.6, 0.3, 0.1],  # a: LOC loses to O
    1: [0.7, 0.25, 0.05],  # a b: LOC loses to O, overlaps a and b
    4: [0.3, 0.1, 0.6],  # b: PER is the argmax
    7: [0.4, 0.55, 0.05],  # c: LOC is the argmax
    9: [0.5, 0.1, 0.4],  # d: PER loses to O
}


def hand_scores(pipe, doc):
    candidates = enumerate_candidates(pipe.model.ops, [len(doc)], 8)
    probs = numpy.full((len(candidates), 3), 0.01, dtype="f")
    probs[:, 0] = 0.98
    for row, p in HAND_PROBS.items():
        probs[row] = p
    return SpanScores(candidates, numpy.log(probs))


@pytest.mark.parametrize(
    "thresholds,group,ents",
    [
        # null: the argmax class
        (None, [("b", "PER", 0.6), ("c", "LOC", 0.55)], ["b", "c"]),
        # a threshold below a label's argmax-losing probability predicts it;
        # greedy decoding then drops "a b" (0.25), which overlaps b and a
        ({"LOC": 0.2}, [("a", "LOC", 0.3), ("a b", "LOC", 0.25), ("b", "PER", 0.6), ("c", "LOC", 0.55)], ["a", "b", "c"]),
        # one above the argmax's probability suppresses it; PER keeps argmax
        ({"LOC": 0.6}, [("b", "PER", 0.6)], ["b"]),
        ({"PER": 0.35}, [("b", "PER", 0.6), ("c", "LOC", 0.55), ("d", "PER", 0.4)], ["b", "c", "d"]),
        ({"PER": 0.65}, [("c", "LOC", 0.55)], ["c"]),
    ],
)
def test_thresholds_decide_on_hand_made_logits(trained, thresholds, group, ents):
    nlp, _, _ = trained
    pipe = nlp.get_pipe("sampled_spancat")
    doc = nlp.make_doc("a b c d")
    before = pipe.thresholds
    try:
        pipe.set_thresholds(thresholds)
        pipe.set_annotations([doc], hand_scores(pipe, doc))
    finally:
        pipe.set_thresholds(before)
    assert [(s.text, s.label_) for s in doc.spans["sc"]] == [(text, label) for text, label, _ in group]
    assert doc.spans["sc"].attrs["scores"] == pytest.approx([p for _, _, p in group], rel=1e-5)
    assert [e.text for e in doc.ents] == ents


def test_a_probability_equal_to_its_threshold_is_predicted_and_a_tie_with_o_is_not(trained):
    """p(LOC) = p(O) = 0.5 exactly: argmax gives O (column 0 wins ties),
    also for LOC on the argmax rule beside a PER threshold; a LOC threshold
    of 0.5 predicts it (p >= threshold)."""
    nlp, _, _ = trained
    pipe = nlp.get_pipe("sampled_spancat")
    candidates = enumerate_candidates(pipe.model.ops, [1], 8)
    logits = numpy.asarray([[0.0, 0.0, -30.0]], dtype="f")
    results = []
    for thresholds in (None, {"PER": 0.9}, {"LOC": 0.5}):
        doc = nlp.make_doc("x")
        pipe.set_thresholds(thresholds)
        pipe.set_annotations([doc], SpanScores(candidates, logits))
        results.append(([(e.text, e.label_) for e in doc.ents], list(doc.spans["sc"].attrs["scores"])))
    pipe.set_thresholds(None)
    assert results == [([], []), ([], []), ([("x", "LOC")], [0.5])]


def test_empty_thresholds_are_null(trained):
    nlp = make_nlp(thresholds={})
    assert nlp.get_pipe("sampled_spancat").thresholds is None
    assert nlp.get_pipe("sampled_spancat").cfg["thresholds"] is None


# low enough that the overfitted default head labels more spans with them
THRESHOLDS = {"LOC": 1e-6, "PER": 2e-6}


@pytest.fixture
def thresholded(trained):
    """A copy of the trained pipeline with thresholds low enough to change its spans."""
    from spacy_imbalance.evaluation.thresholds.spans import set_span_thresholds

    nlp, _, _ = trained
    copy = make_nlp().from_bytes(nlp.to_bytes())
    set_span_thresholds(copy, "sampled_spancat", THRESHOLDS)
    return copy


def spans_of(docs):
    return [[(s.start, s.end, s.label_) for s in doc.spans["sc"]] for doc in docs]


def test_thresholds_round_trip_through_disk_and_config(trained, thresholded, tmp_path):
    from spacy.util import load_config, load_model_from_config

    texts = [text for text, _ in TRAIN_DATA] + ["Paris and London ."]
    expected = list(thresholded.pipe(texts))
    assert spans_of(expected) != spans_of(trained[0].pipe(texts))  # the thresholds matter here
    thresholded.to_disk(tmp_path / "model")
    config = load_config(tmp_path / "model" / "config.cfg")
    assert config["components"]["sampled_spancat"]["thresholds"] == THRESHOLDS
    # a pipeline built from the saved config alone carries them
    assert load_model_from_config(config, auto_fill=True).get_pipe("sampled_spancat").thresholds == THRESHOLDS
    for loaded in (spacy.load(tmp_path / "model"), make_nlp().from_bytes(thresholded.to_bytes())):
        assert loaded.get_pipe("sampled_spancat").thresholds == THRESHOLDS
        got = list(loaded.pipe(texts))
        assert pred_ents(got) == pred_ents(expected) and spans_of(got) == spans_of(expected)
        for a, b in zip(got, expected):
            assert a.spans["sc"].attrs["scores"] == pytest.approx(b.spans["sc"].attrs["scores"], abs=1e-6)


def test_thresholds_back_to_null_round_trip(thresholded, tmp_path):
    from spacy_imbalance.evaluation.thresholds.spans import set_span_thresholds

    set_span_thresholds(thresholded, "sampled_spancat", None)
    thresholded.to_disk(tmp_path / "model")
    assert spacy.load(tmp_path / "model").get_pipe("sampled_spancat").thresholds is None
    assert "thresholds = null" in (tmp_path / "model" / "config.cfg").read_text()


@pytest.mark.parametrize("value", [0.0, 1.0, -0.2, 1.5, float("nan")])
def test_threshold_values_outside_0_1_are_clear_errors(value):
    message = r"sampled_spancat 'sampled_spancat': thresholds\['LOC'\] is a decision threshold on the label's probability, in \(0, 1\)"
    if value == value:  # spaCy refuses NaN in a config before the component sees it
        with pytest.raises(ValueError, match=message):
            make_nlp(thresholds={"PER": 0.5, "LOC": value})
    pipe = make_nlp().get_pipe("sampled_spancat")
    with pytest.raises(ValueError, match=message):
        pipe.set_thresholds({"PER": 0.5, "LOC": value})


def test_threshold_for_an_unknown_label_fails_at_initialize():
    nlp = make_nlp(thresholds={"ORG": 0.5, "LOC": 0.3})
    with pytest.raises(ValueError, match=r"thresholds has label 'ORG' that the component does not know; its labels: LOC, PER"):
        nlp.initialize(get_examples=lambda: make_examples(nlp))


def test_threshold_for_an_unknown_label_fails_when_set(trained):
    from spacy_imbalance.evaluation.thresholds.spans import set_span_thresholds

    nlp, _, _ = trained
    with pytest.raises(ValueError, match=r"thresholds has labels 'GPE', 'ORG' that the component does not know; its labels: LOC, PER"):
        set_span_thresholds(nlp, "sampled_spancat", {"ORG": 0.5, "GPE": 0.5})
    with pytest.raises(ValueError, match=r"thresholds\['LOC'\] .* got 1"):
        nlp.get_pipe("sampled_spancat").set_thresholds({"LOC": 1})
    assert nlp.get_pipe("sampled_spancat").thresholds is None  # nothing was set
    with pytest.raises(ValueError, match="the pipeline has no component 'ner'; its components: sampled_spancat"):
        set_span_thresholds(nlp, "ner", {"LOC": 0.5})


def test_threshold_for_an_unknown_label_fails_at_from_disk(thresholded, tmp_path):
    import srsly

    thresholded.to_disk(tmp_path / "model")
    cfg_path = tmp_path / "model" / "sampled_spancat" / "cfg"
    cfg = srsly.read_json(cfg_path)
    cfg["thresholds"]["ORG"] = 0.5
    srsly.write_json(cfg_path, cfg)
    with pytest.raises(ValueError, match=r"thresholds has label 'ORG' that the component does not know; its labels: LOC, PER"):
        spacy.load(tmp_path / "model")


def test_pipelines_saved_before_thresholds_load_as_null(trained, tmp_path):
    """A saved pipeline whose config.cfg and cfg lack the setting predicts as before."""
    import srsly

    nlp, _, _ = trained
    nlp.to_disk(tmp_path / "model")
    config_path = tmp_path / "model" / "config.cfg"
    config_path.write_text(config_path.read_text().replace("thresholds = null\n", ""))
    cfg_path = tmp_path / "model" / "sampled_spancat" / "cfg"
    cfg = srsly.read_json(cfg_path)
    del cfg["thresholds"]
    srsly.write_json(cfg_path, cfg)
    assert "thresholds" not in config_path.read_text()
    loaded = spacy.load(tmp_path / "model")
    assert loaded.get_pipe("sampled_spancat").thresholds is None
    texts = [text for text, _ in TRAIN_DATA]
    assert spans_of(loaded.pipe(texts)) == spans_of(nlp.pipe(texts))
