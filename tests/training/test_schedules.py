"""warmup_share_linear.v1: thinc's warmup_linear with the warm-up a share of the budget."""
import itertools

import numpy
import pytest
from spacy.util import registry
from thinc.api import warmup_linear


def rates(schedule, n: int):
    return list(itertools.islice(schedule, n))


@pytest.mark.parametrize("total,share", [(20, 0.1), (400, 0.1), (1000, 0.25), (7, 0.0)])
def test_it_is_thinc_warmup_linear_with_the_share_in_steps(total, share):
    ours = registry.resolve({"s": {"@schedules": "spacy-imbalance.warmup_share_linear.v1", "initial_rate": 1e-4, "total_steps": total, "warmup_share": share}})["s"]
    numpy.testing.assert_allclose(rates(ours, total + 3), rates(warmup_linear(1e-4, round(share * total), total), total + 3), atol=1e-15)


def test_hand_computed_values():
    ours = registry.resolve({"s": {"@schedules": "spacy-imbalance.warmup_share_linear.v1", "initial_rate": 1.0, "total_steps": 10, "warmup_share": 0.2}})["s"]
    # two warm-up steps, then decay over the remaining eight
    numpy.testing.assert_allclose(rates(ours, 12), [0, 0.5, 1, 0.875, 0.75, 0.625, 0.5, 0.375, 0.25, 0.125, 0, 0])


@pytest.mark.parametrize(
    "setting,value,message",
    [("warmup_share", 1.0, r"warmup_share must be a number in \[0, 1\), got 1.0"), ("warmup_share", -0.1, "warmup_share"),
     ("total_steps", 0, r"total_steps must be a whole number >= 1 \(training.max_steps\), got 0"),
     ("initial_rate", float("inf"), r"initial_rate must be a number in \[0, 1e\+38\], got inf")],
)
def test_settings_out_of_range_are_refused_by_name(setting, value, message):
    block = {"@schedules": "spacy-imbalance.warmup_share_linear.v1", "initial_rate": 1e-4, "total_steps": 100, "warmup_share": 0.1, setting: value}
    with pytest.raises(ValueError, match=message):
        registry.resolve({"s": block})
