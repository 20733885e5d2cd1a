"""The package's one softmax: every form agrees with the textbook formula,
keeps to float32 where a decision compares with a float32 threshold, and is
the only place the package writes a softmax."""
import re

import numpy
import pytest

from spacy_imbalance.decisions.softmax import log_softmax, probability_of, softmax, softmax_parts

from ..conftest import ROOT

LOGITS = numpy.asarray([[2.0, 0.5, -1.0], [0.0, 0.0, 0.0], [-3.0, 4.0, 1.0], [80.0, 79.0, 20.0]], dtype="float32")


def reference(row):
    """p_k = exp(z_k) / sum exp(z_j), in float64 (shifted, as exp(80) overflows float32)."""
    row = numpy.asarray(row, dtype="float64")
    exp = numpy.exp(row - row.max())
    return exp / exp.sum()


def test_every_form_gives_the_textbook_probabilities():
    expected = numpy.stack([reference(row) for row in LOGITS])
    assert numpy.allclose(softmax(numpy, LOGITS), expected, rtol=1e-6, atol=1e-7)
    assert numpy.allclose(numpy.exp(log_softmax(numpy, LOGITS)), expected, rtol=1e-6, atol=1e-7)
    assert numpy.allclose(softmax_parts(LOGITS).p, expected, rtol=1e-6, atol=1e-7)
    for column in range(3):
        p = probability_of(numpy, LOGITS, column)
        assert p.dtype == numpy.float32 and numpy.allclose(p, expected[:, column], rtol=1e-6, atol=1e-7)
    chosen = numpy.asarray([0, 2, 1, 1], dtype="int32")
    assert numpy.allclose(probability_of(numpy, LOGITS, chosen), expected[numpy.arange(4), chosen], rtol=1e-6)


def test_a_batch_without_rows_gives_no_rows():
    empty = numpy.zeros((0, 3), dtype="float32")
    assert log_softmax(numpy, empty).shape == (0, 3)
    assert probability_of(numpy, empty, numpy.zeros(0, dtype="int32")).shape == (0,)


def test_the_top_class_keeps_its_distance_from_one():
    # 1 - p of the top class where p rounds to 1 in float32: log1p/expm1 keep it
    parts = softmax_parts(numpy.asarray([[30.0, 0.0]], dtype="float32"))
    assert parts.one_minus_p[0, 0] == pytest.approx(numpy.exp(-30.0), rel=1e-4)
    assert parts.is_top.tolist() == [[True, False]]


def test_no_other_module_writes_a_softmax():
    """A softmax written again drifts from this one (a float32 cast, a shift
    forgotten): exp of logits summed over a row lives in decisions/softmax.py only."""
    pattern = re.compile(r"exp\([^()]*(?:\([^()]*\)[^()]*)*\)\.sum\(axis=1")
    package = ROOT / "spacy_imbalance"
    found = [
        str(path.relative_to(ROOT))
        for path in sorted(package.rglob("*.py"))
        if path != package / "decisions" / "softmax.py" and pattern.search(path.read_text(encoding="utf8"))
    ]
    assert found == []
