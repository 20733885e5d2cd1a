"""entities_key: each entity component writes its decoded entities to a
span group instead of doc.ents, so that it can sit beside a pipeline's own
ner without changing a single entity of it; its scorer reads that group."""
import pytest
import spacy
from spacy.training import Example

from .test_token_ner import TRAIN_DATA, make_examples, train

COMPONENTS = ["sampled_spancat", "token_ner", "two_task_ner"]


def spans_of(docs, key):
    return [sorted((s.start_char, s.end_char, s.label_) for s in doc.spans[key]) for doc in docs]


@pytest.mark.parametrize("factory", COMPONENTS)
def test_entities_go_to_the_group_and_doc_ents_stay_as_they_were(factory):
    nlp = spacy.blank("en")
    nlp.add_pipe(factory, config={"entities_key": "mine"})
    examples = make_examples(nlp)
    train(nlp, examples, n_iter=80)
    # an earlier component's entities (an existing ner's, here a ruler's) on tokens ours predicts too
    ruler = nlp.add_pipe("entity_ruler", first=True)
    ruler.add_patterns([{"label": "GPE", "pattern": "London"}, {"label": "ORG", "pattern": "Kate Bush"}])
    texts = [text for text, _ in TRAIN_DATA]
    docs = list(nlp.pipe(texts))
    ruler_only = [[(e.start_char, e.end_char, e.label_) for e in doc.ents] for doc in nlp.pipe(texts, disable=[factory])]
    assert [[(e.start_char, e.end_char, e.label_) for e in doc.ents] for doc in docs] == ruler_only
    assert spans_of(docs, "mine") == [sorted(ents) for _, ents in TRAIN_DATA]
    # the component's own score is on its group, not on doc.ents (where the ruler's entities are)
    scored = [Example(doc, eg.reference) for doc, eg in zip(docs, examples)]
    assert nlp.get_pipe(factory).score(scored)["ents_f"] == 1.0


@pytest.mark.parametrize("factory", COMPONENTS)
def test_entities_key_is_checked_and_saved(factory, tmp_path):
    with pytest.raises(ValueError, match="entities_key must be a non-empty span group name or null, got ''"):
        spacy.blank("en").add_pipe(factory, config={"entities_key": ""})
    nlp = spacy.blank("en")
    nlp.add_pipe(factory, config={"entities_key": "mine"})
    nlp.initialize(lambda: make_examples(nlp))
    nlp.to_disk(tmp_path / "p")
    assert spacy.load(tmp_path / "p").get_pipe(factory).cfg["entities_key"] == "mine"


def test_evaluation_scores_the_component_that_writes_to_its_group():
    from spacy_imbalance.scorers.evaluation import entities_key_of, pipeline_counts

    nlp = spacy.blank("en")
    nlp.add_pipe("token_ner", config={"entities_key": "mine"})
    examples = make_examples(nlp)
    train(nlp, examples, n_iter=80)
    ruler = nlp.add_pipe("entity_ruler", first=True)
    ruler.add_patterns([{"label": "GPE", "pattern": "London"}])
    assert entities_key_of(nlp) == "mine"
    counts, target, _ = pipeline_counts(nlp, [eg.reference for eg in examples])
    # ours predicts the gold exactly; the ruler's GPE (on doc.ents) is not what is scored
    totals = counts.totals()
    assert target is None and totals[:, 1].sum() == 0 and totals[:, 2].sum() == 0 and totals[:, 0].sum() == 5  # London, Paris, Kate Bush, New York, Kate
