"""The result cells of the write-ups (spacy_imbalance/benchmark/cells.py)."""
from spacy_imbalance.benchmark.cells import MISSING, bounds, excludes_zero, interval, mean_std, over_seeds, points, signed


def test_study_table_cells():
    assert over_seeds([0.1, 0.2, 0.3]) == "20.0 ± 10.0"
    assert over_seeds([0.25]) == "25.0 ± 0.0" and over_seeds([]) == "–"


def test_mean_std_cells():
    assert over_seeds([0.01, 0.01], 2) == "1.00 ± 0.00"
    # a single seed alone (the audit's summary); values already in points
    assert over_seeds([0.25], alone=True) == "25.0" and over_seeds([0.1, 0.3], alone=True) == "20.0 ± 14.1"
    assert over_seeds([25.0, 35.0], scale=1, alone=True) == "30.0 ± 7.1" and over_seeds([25.0], scale=1, alone=True) == "25.0"
    assert mean_std(0.2, 0.1) == "20.0 ± 10.0" and points(0.2534) == "25.3" and points(0.2534, 2) == "25.34"
    assert over_seeds([], alone=True) == MISSING


def test_interval_cells_are_bold_where_the_interval_excludes_zero():
    spans = {"delta": 0.012, "low": -0.003, "high": 0.028}
    above = {"delta": 0.02, "low": 0.001, "high": 0.04}
    below = {"delta": -0.02, "low": -0.04, "high": -0.001}
    assert signed(0.012) == "+1.2" and signed(-0.003) == "-0.3"
    # a nonzero value that rounds to a signed zero gets one digit more; 0 itself stays "+0.0"
    assert signed(-0.0004) == "-0.04" and signed(0.0004) == "+0.04" and signed(-0.0006) == "-0.1"
    assert signed(0.0) == "+0.0" and bounds({"low": -0.015, "high": -0.0004}) == "[-1.5, -0.04]"
    assert bounds(spans) == "[-0.3, +2.8]"
    assert interval(spans) == "+1.2 [-0.3, +2.8]" and interval(spans, bold=True) == "+1.2 [-0.3, +2.8]"
    assert interval(above, bold=True) == "**+2.0 [+0.1, +4.0]**" and interval(above) == "+2.0 [+0.1, +4.0]"
    assert interval(below, bold=True) == "**-2.0 [-4.0, -0.1]**"
    assert not excludes_zero(spans) and excludes_zero(above) and excludes_zero(below)
    # an interval that ends at 0 does not exclude it
    assert not excludes_zero({"low": 0.0, "high": 0.1})
