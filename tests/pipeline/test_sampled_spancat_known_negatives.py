"""sampled_spancat with known negatives: the spans a reviewer rejected
(doc.spans["incorrect_spans"] of the references) are trained on as O at
every update, besides the sampled negatives."""
import pytest
import spacy
from spacy.tokens import Span
from spacy.training import Example

from .test_token_ner import TRAIN_DATA, make_examples

# one negative per sentence at most (ceil(rate * n) = 1): the known ones cannot come from the sampler
RARE_NEGATIVES = {"@misc": "spacy-imbalance.uniform_negatives.v1", "rate": 0.01}


class RecordingLoss:
    """The component's loss, recording the class of every span it trains on."""

    def __init__(self, loss):
        self.loss = loss
        self.batches = []

    def __call__(self, logits, targets):
        self.batches.append(targets.tolist())
        return self.loss(logits, targets)

    def __getattr__(self, name):
        return getattr(self.loss, name)


def rejected(examples, key="incorrect_spans"):
    """Each reference with its first two unannotated tokens rejected (as one-token spans)."""
    out = []
    for eg in examples:
        reference = eg.reference.copy()
        free = [t.i for t in reference if not t.ent_type_][:2]
        reference.spans[key] = [Span(reference, i, i + 1, label="PERSON") for i in free]
        out.append(Example(eg.predicted, reference))
    return out


@pytest.mark.parametrize("key", ["incorrect_spans", None])
def test_every_rejected_span_is_trained_on_as_o(key):
    nlp = spacy.blank("en")
    pipe = nlp.add_pipe("sampled_spancat", config={"negatives": RARE_NEGATIVES, "incorrect_spans_key": key})
    examples = rejected(make_examples(nlp))
    nlp.initialize(lambda: examples)
    pipe.loss = recorder = RecordingLoss(pipe.loss)
    nlp.update(examples)
    (classes,) = recorder.batches
    n_gold = sum(len(eg.reference.ents) for eg in examples)
    n_rejected = sum(len(eg.reference.spans["incorrect_spans"]) for eg in examples)
    n_sampled = len(examples)  # at most one drawn per sentence, maybe a rejected one
    assert sum(c > 0 for c in classes) == n_gold
    negatives = sum(c == 0 for c in classes)
    if key is None:
        assert negatives <= n_sampled
    else:
        assert n_rejected <= negatives <= n_rejected + n_sampled and n_rejected == 2 * len(TRAIN_DATA)


def test_the_setting_is_saved_and_checked(tmp_path):
    nlp = spacy.blank("en")
    nlp.add_pipe("sampled_spancat", config={"incorrect_spans_key": "reviewed_no"})
    nlp.initialize(lambda: make_examples(nlp))
    nlp.to_disk(tmp_path / "p")
    assert spacy.load(tmp_path / "p").get_pipe("sampled_spancat").cfg["incorrect_spans_key"] == "reviewed_no"
    with pytest.raises(ValueError, match="masked_key 'masked' must differ from incorrect_spans_key: it names a span group of its own"):
        spacy.blank("en").add_pipe("sampled_spancat", config={"incorrect_spans_key": "masked"})
