"""Thresholds for spaCy's own spancat_singlelabel: its predictions made once
score as the pipeline itself scores (its decoded entities as `evaluate` and
the benchmarks score them, its spans as its own scorer does), a decision
under thresholds scores as the same decision made span by span, and the
search never ends below argmax."""
import numpy
import pytest
import spacy
from spacy.tokens import Doc, Span, SpanGroup
from spacy.training import Example

from spacy_imbalance.evaluation.thresholds.builtin import builtin_matcher, decided_examples, singlelabel_component
from spacy_imbalance.evaluation.thresholds.grid import default_grid
from spacy_imbalance.evaluation.thresholds.spans import score_thresholds, search_thresholds
from spacy_imbalance.scorers.evaluation import evaluate_pipeline, score_report
from spacy_imbalance.scorers.counts import ents_counts
from spacy_imbalance.scorers.macro import spans_macro_score

TEXTS = {
    "Kate visited Paris today": [(0, 1, "PER"), (2, 3, "LOC")],
    "Bob saw New York": [(0, 1, "PER"), (2, 4, "LOC")],
    "we met Ann in Oslo": [(2, 3, "PER"), (4, 5, "LOC")],
    "nothing here at all": [],
    "Tom left": [(0, 1, "PER")],
}


def gold_docs(nlp):
    docs = []
    for text, spans in TEXTS.items():
        doc = nlp.make_doc(text)
        doc.spans["sc"] = SpanGroup(doc, name="sc", spans=[Span(doc, s, e, label=label) for s, e, label in spans])
        docs.append(doc)
    return docs


def trained(allow_overlap: bool, steps: int = 4):
    """A spancat_singlelabel stopped early (4 updates: argmax macro-F1 0.68,
    one threshold for both labels reaches 0.93 with overlaps, 1.0 without)."""
    spacy.util.fix_random_seed(0)
    nlp = spacy.blank("en")
    nlp.add_pipe("spancat_singlelabel", config={
        "spans_key": "sc", "allow_overlap": allow_overlap,
        "suggester": {"@misc": "spacy.ngram_suggester.v1", "sizes": [1, 2]},
        "scorer": {"@scorers": "spacy-imbalance.spans_macro_scorer.v1"},
    })
    examples = [Example(nlp.make_doc(doc.text), doc) for doc in gold_docs(nlp)]
    optimizer = nlp.initialize(lambda: examples)
    for _ in range(steps):
        nlp.update(examples, sgd=optimizer, drop=0.0)
    return nlp


def decided_by_hand(nlp, docs, thresholds, allow_overlap):
    """The span group each doc gets under ``thresholds``, decided span by span
    from the component's own scores (spaCy's argmax where a label has none)."""
    pipe = nlp.get_pipe("spancat_singlelabel")
    predicted = []
    for doc in docs:
        copy = nlp.make_doc(doc.text)
        candidates, scores = pipe.predict([copy])
        scores = numpy.asarray(scores)
        chosen = []
        for (start, end), row in zip(numpy.asarray(candidates.dataXd), scores):
            best = int(row[:-1].argmax())
            label = pipe.labels[best]
            keep = row[best] >= thresholds[label] if label in thresholds else row.argmax() != len(row) - 1
            if keep:
                chosen.append((float(row[best]), int(start), int(end), label))
        if not allow_overlap:
            taken, greedy = set(), []
            for p, start, end, label in sorted(chosen, key=lambda c: -c[0]):
                if not taken & set(range(start, end)):
                    taken |= set(range(start, end))
                    greedy.append((p, start, end, label))
            chosen = greedy
        copy.spans["sc"] = SpanGroup(copy, name="sc", spans=[Span(copy, s, e, label=label) for _, s, e, label in chosen])
        predicted.append(Example(copy, doc))
    return spans_macro_score(predicted, spans_key="sc", allow_overlap=allow_overlap)["spans_sc_macro_f"]


def test_decoded_entities_score_as_the_benchmarks_score_the_pipeline():
    nlp = trained(True)
    docs = gold_docs(nlp)
    for doc in docs:
        doc.ents = list(doc.spans["sc"])
    matcher = builtin_matcher(nlp, "spancat_singlelabel", docs, floor=0.05)
    argmax, _ = score_thresholds(matcher, {})
    report = evaluate_pipeline(nlp, docs)
    assert report["target"] == "ents decoded from spans:sc"
    assert argmax == pytest.approx(report["macro"]["f"])
    seen = {round(argmax, 6)}
    for thresholds in ({"PER": 0.2}, {"LOC": 0.1, "PER": 0.45}, {"LOC": 0.3, "PER": 0.3}):
        examples = decided_examples(matcher, docs, thresholds)
        tuned = score_report(ents_counts(examples), n_resamples=10)
        assert tuned["macro"]["f"] == pytest.approx(score_thresholds(matcher, thresholds)[0])
        assert tuned["n_docs"] == len(docs)
        seen.add(round(tuned["macro"]["f"], 6))
    assert len(seen) >= 3  # the decisions differ, so the comparisons above can fail


@pytest.mark.parametrize("allow_overlap", [True, False])
def test_predictions_made_once_score_as_the_pipeline_and_as_a_decision_by_hand(allow_overlap):
    nlp = trained(allow_overlap)
    docs = gold_docs(nlp)
    grid = default_grid(0.05)
    matcher = builtin_matcher(nlp, "spancat_singlelabel", docs, floor=min(grid), on="spans")
    argmax, _ = score_thresholds(matcher, {})
    examples = [Example(nlp.make_doc(doc.text), doc) for doc in docs]
    assert argmax == pytest.approx(nlp.evaluate(examples)["spans_sc_macro_f"])
    scores = []
    for thresholds in ({"PER": 0.2}, {"LOC": 0.1, "PER": 0.45}, {"LOC": 0.3, "PER": 0.3}, {"LOC": 0.9, "PER": 0.9}):
        scores.append(score_thresholds(matcher, thresholds)[0])
        assert scores[-1] == pytest.approx(decided_by_hand(nlp, docs, thresholds, allow_overlap))
    # the decisions differ, so the comparison above can fail
    assert len({round(score, 6) for score in [argmax, *scores]}) >= 4


def test_the_search_never_ends_below_argmax_and_uses_the_shared_rule():
    nlp = trained(True)
    docs = gold_docs(nlp)
    grid = default_grid(0.05)
    matcher = builtin_matcher(nlp, "spancat_singlelabel", docs, floor=min(grid), on="spans")
    search = search_thresholds(matcher, {}, grid)
    # 4 updates: argmax predicts too little, lower thresholds recover spans
    assert search.best_macro_f > search.current_macro_f == pytest.approx(score_thresholds(matcher, {})[0])
    assert search.best_macro_f == pytest.approx(score_thresholds(matcher, search.best)[0])
    assert set(search.labels) == {"LOC", "PER"}


def test_other_components_are_refused_by_name():
    nlp = spacy.blank("en")
    nlp.add_pipe("spancat", config={"spans_key": "sc"})
    with pytest.raises(ValueError, match="'spancat' is a SpanCategorizer, not spaCy's spancat_singlelabel"):
        singlelabel_component(nlp, "spancat")
    with pytest.raises(ValueError, match="no component 'ner'; its components: spancat"):
        singlelabel_component(nlp, "ner")


def test_dev_docs_without_the_span_group_are_refused():
    nlp = trained(True, steps=1)
    docs = [nlp.make_doc(text) for text in TEXTS]
    with pytest.raises(ValueError, match=r"no gold spans in doc.spans\['sc'\]"):
        builtin_matcher(nlp, "spancat_singlelabel", docs, floor=0.05, on="spans")
    with pytest.raises(ValueError, match="has no gold entities"):
        builtin_matcher(nlp, "spancat_singlelabel", docs, floor=0.05)
    with pytest.raises(ValueError, match="on must be 'entities'"):
        builtin_matcher(nlp, "spancat_singlelabel", gold_docs(nlp), floor=0.05, on="ents")
    matcher = builtin_matcher(nlp, "spancat_singlelabel", gold_docs(nlp), floor=0.05, on="spans")
    with pytest.raises(ValueError, match="with on='entities'"):
        decided_examples(matcher, gold_docs(nlp), {})


def test_empty_docs_predict_nothing():
    nlp = trained(True, steps=1)
    docs = gold_docs(nlp) + [Doc(nlp.vocab, words=[])]
    matcher = builtin_matcher(nlp, "spancat_singlelabel", docs, floor=0.05, on="spans")
    assert matcher.predictions.n_tokens == sum(len(doc) for doc in docs)
    assert (matcher.predictions.doc_ids < len(docs) - 1).all()


def test_tune_and_score_chooses_on_dev_and_reports_test():
    from spacy_imbalance.evaluation.thresholds.builtin import tune_and_score

    nlp = trained(True)
    docs = gold_docs(nlp)
    for doc in docs:
        doc.ents = list(doc.spans["sc"])
    dev, test = docs[:3], docs[3:]
    grid = default_grid(0.05)
    search, report = tune_and_score(nlp, "spancat_singlelabel", dev, test, grid=grid, n_resamples=10)
    # the search saw dev only: the same as searching dev alone
    alone = search_thresholds(builtin_matcher(nlp, "spancat_singlelabel", dev, floor=0.05), {}, grid)
    assert search.best == alone.best and search.best_macro_f == pytest.approx(alone.best_macro_f)
    on_test = builtin_matcher(nlp, "spancat_singlelabel", test, floor=0.05)
    assert report["macro"]["f"] == pytest.approx(score_thresholds(on_test, search.best)[0])
    assert report["target"] == "ents decoded from spans:sc" and report["n_docs"] == 2
