"""The one menu of negative samplers: each name is the block of a
registered sampler, init-config writes it and missampling builds it, with
the measurement's settings in place of the block's."""
import pytest
from spacy.util import registry

from spacy_imbalance.init_config import options
from spacy_imbalance.spans.negatives import (
    AllNegatives,
    ConstantTemperature,
    TopNegatives,
    TopNegativesV2,
    UniformNegatives,
    UniformNegativesV2,
    WeightedNegatives,
    WeightedNegativesV2,
    WeightedNegativesV3,
)
from spacy_imbalance.spans.negatives.menu import SAMPLERS, build_sampler, sampler_block

BUILT = {
    "uniform": UniformNegativesV2,
    "uniform_v1": UniformNegatives,
    "weighted": WeightedNegativesV3,
    "weighted_v2": WeightedNegativesV2,
    "weighted_v1": WeightedNegatives,
    "top": TopNegativesV2,
    "top_v1": TopNegatives,
    "all": AllNegatives,
}


def test_init_config_reads_the_same_menu():
    assert options.SAMPLERS is SAMPLERS
    assert sorted(SAMPLERS) == sorted(BUILT)


@pytest.mark.parametrize("name", sorted(BUILT))
def test_every_name_builds_its_registered_sampler_with_the_settings_given(name):
    assert registry.misc.get(SAMPLERS[name]["@misc"])  # a registered name
    sampler = build_sampler(name, rate=0.5, mu=4.0, temperature=2.0, ratio=0.1)
    assert type(sampler) is BUILT[name]
    if "rate" in SAMPLERS[name]:
        assert sampler.rate == 0.5
    if "mu" in SAMPLERS[name]:
        assert sampler.mu == 4.0
        assert isinstance(sampler.temperature, ConstantTemperature) and sampler.temperature.value == 2.0
    if "ratio" in SAMPLERS[name]:
        assert sampler.ratio == 0.1


def test_a_setting_the_sampler_lacks_is_left_out_and_the_menu_kept():
    block = sampler_block("uniform_v1", rate=0.3, mu=4.0, ratio=0.1)
    assert block == {"@misc": "spacy-imbalance.uniform_negatives.v1", "rate": 0.3}
    assert SAMPLERS["uniform_v1"]["rate"] == 0.7  # a copy was changed
    # uniform keeps one draw per sentence all run, and corrects nothing at prediction
    uniform = build_sampler("uniform", rate=0.5)
    assert (uniform.fixed, uniform.correction) == (True, 0.0)


def test_a_training_schedule_outside_training_and_an_unknown_name_are_refused():
    with pytest.raises(ValueError, match=r"the weighted sampler's temperature.total_steps = \$\{training.max_steps\} reads a training config; give a constant temperature"):
        build_sampler("weighted")
    with pytest.raises(ValueError, match=r"unknown sampler 'best'; choose from uniform, uniform_v1, weighted, weighted_v2, weighted_v1, top, top_v1, all"):
        build_sampler("best")
