"""The v2 heads (a random output layer) send a listened-to encoder a gradient
from the first update; the v1 heads (a zero output layer) send nothing, which
is what kept the fine-tuned configs at 0 F1 (issue 30)."""
import pytest
import spacy
from spacy.training import Corpus

LISTENER = {"@architectures": "spacy.Tok2VecListener.v1", "width": "${components.tok2vec.model.encode.width}", "upstream": "*"}
COMPONENTS = {
    "token_ner": "spacy-imbalance.TokenTagger.{}",
    "two_task_ner": "spacy-imbalance.TwoTaskTagger.{}",
    "sampled_spancat": "spacy-imbalance.SpanScorer.{}",
}


def first_update_gradient(component: str, version: str, corpus) -> float:
    """The squared gradient that reaches the tok2vec component in the first
    nlp.update (spaCy's Tok2Vec adds it to ``losses["tok2vec"]``)."""
    nlp = spacy.blank("en")
    nlp.add_pipe("tok2vec")
    model = {"@architectures": COMPONENTS[component].format(version), "tok2vec": dict(LISTENER, width=96)}
    nlp.add_pipe(component, config={"model": model})
    examples = list(Corpus(str(corpus / "train.spacy"), gold_preproc=True)(nlp))[:20]
    optimizer = nlp.initialize(lambda: examples)
    losses: dict = {}
    nlp.update(examples, sgd=optimizer, losses=losses)
    return losses["tok2vec"]


@pytest.mark.parametrize("component", list(COMPONENTS))
def test_a_v2_head_passes_gradient_from_the_first_update(component, toy_corpus):
    assert first_update_gradient(component, "v2", toy_corpus) > 1e-8


@pytest.mark.parametrize("component", list(COMPONENTS))
def test_a_v1_head_passes_none_on_the_first_update(component, toy_corpus):
    assert first_update_gradient(component, "v1", toy_corpus) == 0.0
