"""uniform_negatives.v2's ``overlapping``: every negative sharing a token
with a gold span is trained on besides the draw (values by hand)."""
import numpy
import pytest
from spacy.util import registry
from thinc.api import Config, NumpyOps

from spacy_imbalance.spans.candidates import enumerate_candidates
from spacy_imbalance.spans.gold import UNKNOWN
from spacy_imbalance.spans.negatives import SamplingBatch, UniformNegativesV2, make_generator
from spacy_imbalance.spans.negatives._base import overlapping

OPS = NumpyOps()


def _batch(lengths, max_width, gold=(), unknown=()):
    """A batch whose candidates (global first, last token) in ``gold`` are
    positives (class 1) and in ``unknown`` UNKNOWN."""
    candidates = enumerate_candidates(OPS, lengths, max_width)
    spans = list(zip(candidates.starts.tolist(), candidates.ends.tolist()))
    classes = numpy.zeros(len(spans), dtype="int32")
    for span in gold:
        classes[spans.index(span)] = 1
    for span in unknown:
        classes[spans.index(span)] = UNKNOWN
    return SamplingBatch(OPS, candidates, classes, doc_keys=list(range(len(lengths)))), spans


def test_overlapping_by_hand():
    # doc 0: 5 tokens, gold (1, 2); doc 1: 3 tokens (global 5-7), no gold; width <= 3
    batch, spans = _batch([5, 3], 3, gold=[(1, 2)])
    found = [spans[i] for i in overlapping(batch)]
    # every span of doc 0 touching token 1 or 2, but the gold span itself
    expected = [(0, 1), (0, 2), (1, 1), (1, 3), (2, 2), (2, 3), (2, 4)]
    assert found == expected
    # nothing in doc 1: spans do not reach across docs
    assert all(end < 5 for _, end in found)


def test_overlapping_skips_unknown_and_gold():
    batch, spans = _batch([4], 2, gold=[(0, 0), (2, 3)], unknown=[(1, 2)])
    found = [spans[i] for i in overlapping(batch)]
    # (0, 1) overlaps both gold spans; (1, 2) is UNKNOWN; (2, 2), (3, 3) sit inside (2, 3)
    assert found == [(0, 1), (2, 2), (3, 3)]


def test_overlapping_without_gold_or_candidates_is_empty():
    batch, _ = _batch([4], 2)
    assert overlapping(batch).shape == (0,)
    empty, _ = _batch([], 2)
    assert overlapping(empty).shape == (0,)


@pytest.mark.parametrize("fixed", [True, False])
def test_sample_is_the_draw_and_the_overlapping_negatives(fixed):
    batch, _ = _batch([10, 6], 4, gold=[(3, 4), (12, 12)])
    plain = UniformNegativesV2(0.3, fixed=fixed).sample(batch, make_generator(OPS, 7))
    with_overlaps = UniformNegativesV2(0.3, fixed=fixed, overlapping=True).sample(batch, make_generator(OPS, 7))
    expected = numpy.union1d(plain, overlapping(batch))
    assert with_overlaps.tolist() == expected.tolist()
    assert len(with_overlaps) > len(plain)
    assert (batch.classes[with_overlaps] == 0).all()


def test_overlapping_is_validated_by_name():
    config = Config({"s": {"@misc": "spacy-imbalance.uniform_negatives.v2", "overlapping": "yes"}})
    with pytest.raises(ValueError, match="overlapping"):
        registry.resolve(config)
