"""The threshold grids of the searches: a step's grid, its limits and the
errors that name them, and a grid given as values."""
import pytest

from spacy_imbalance.evaluation.thresholds.grid import MIN_STEP, check_grid, default_grid


def test_default_grid():
    assert default_grid(0.25) == [0.25, 0.5, 0.75]
    assert len(default_grid()) == 19
    with pytest.raises(ValueError, match="grid step"):
        default_grid(0.7)


def test_default_grid_has_a_size_limit():
    """A tiny step used to start a grid of 10^8 pairs (1e-4) without a word."""
    assert default_grid(0.5) == [0.5]
    assert len(default_grid(MIN_STEP)) == 199
    for step in (1e-4, MIN_STEP / 2, 0.0, -0.05, 0.51, float("nan"), float("inf")):
        with pytest.raises(ValueError, match=rf"grid step must be in \[0.005, 0.5\], at most 199 thresholds per axis, got {step}"):
            default_grid(step)
    with pytest.raises(ValueError, match=r"got 0.0001 \(9999 thresholds per axis\)"):
        default_grid(1e-4)


def test_a_subnormal_step_is_a_clear_error():
    """Found by the property test: --step 5e-324 raised OverflowError while
    default_grid built its message (math.ceil(1 / step) of inf)."""
    with pytest.raises(ValueError, match=r"got 5e-324 \(over 1e308 thresholds per axis\)"):
        default_grid(5e-324)
    with pytest.raises(ValueError, match=r"got 1e-300 \(about 1e\+300 thresholds per axis\)"):
        default_grid(1e-300)


def test_a_grid_of_values_is_sorted_and_checked():
    assert check_grid([0.75, 0.25, 0.75]) == [0.25, 0.75]
    for grid in ([], [0.0], [1.0], [float("nan")]):
        with pytest.raises(ValueError, match=r"the threshold grid must be a non-empty list of values in \(0, 1\)"):
            check_grid(grid)
