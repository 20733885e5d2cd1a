"""The negative samplers by the name the command line takes: the one menu
that ``init-config --sampler`` writes a config from and ``missampling
--sampler`` measures. Each name is the ``[components.sampled_spancat.negatives]``
block of a registered sampler, so a new sampler is its module, its entry
point and a line here.

Names without a version take the newest registered function (the papers'
formulas, see docs/fidelity.md); ``*_v1`` names keep the first release's, so
that every shipped config can be written by ``init-config``.
"""
import copy
from typing import Any, Dict, Iterator, Optional, Tuple

from spacy.util import registry

from ._base import NegativeSampler
from .uniform import CHOSEN_RATE, DEFAULT_CORRECTION, DEFAULT_FIXED, DEFAULT_RATE
from .weighted import DEFAULT_MU

Block = Dict[str, Any]

# the temperature schedule of Li et al. (2022): T = sqrt(epoch), the epoch
# counted from training.max_steps, so a shorter budget gets the whole schedule
SQRT_TEMPERATURE: Block = {
    "@misc": "spacy-imbalance.sqrt_temperature.v1",
    "total_steps": "${training.max_steps}",
    "n_epochs": 10,
}

# the sampler init-config writes when --sampler is not given
DEFAULT_SAMPLER = "uniform"
SAMPLERS: Dict[str, Block] = {
    # init-config's default (docs/benchmarks/never_worse.md): the kept draw at one negative per token and every negative overlapping a gold span
    "uniform": {
        "@misc": "spacy-imbalance.uniform_negatives.v2", "rate": CHOSEN_RATE, "correction": DEFAULT_CORRECTION, "fixed": DEFAULT_FIXED,
        "overlapping": True,
    },
    "uniform_v1": {"@misc": "spacy-imbalance.uniform_negatives.v1", "rate": DEFAULT_RATE},
    "weighted": {
        "@misc": "spacy-imbalance.weighted_negatives.v3", "rate": DEFAULT_RATE, "mu": DEFAULT_MU,
        "temperature": SQRT_TEMPERATURE, "correction": DEFAULT_CORRECTION,
    },
    "weighted_v2": {"@misc": "spacy-imbalance.weighted_negatives.v2", "rate": DEFAULT_RATE, "mu": DEFAULT_MU, "temperature": SQRT_TEMPERATURE},
    "weighted_v1": {"@misc": "spacy-imbalance.weighted_negatives.v1", "rate": DEFAULT_RATE, "mu": DEFAULT_MU, "temperature": SQRT_TEMPERATURE},
    "top": {"@misc": "spacy-imbalance.top_negatives.v2", "ratio": 0.05},
    "top_v1": {"@misc": "spacy-imbalance.top_negatives.v1", "ratio": 0.05},
    "all": {"@misc": "spacy-imbalance.all_negatives.v1"},
}


def sampler_block(
    name: str, *, rate: Optional[float] = None, mu: Optional[float] = None, temperature: Optional[float] = None,
    ratio: Optional[float] = None,
) -> Block:
    """A copy of the menu's block ``name`` with the settings given replacing
    those the block has (a sampler without one ignores it: the uniform
    sampler has no ``mu``); ``temperature`` is a constant T in place of the
    training schedule."""
    if name not in SAMPLERS:
        raise ValueError(f"unknown sampler {name!r}; choose from {', '.join(SAMPLERS)}")
    block = copy.deepcopy(SAMPLERS[name])
    given: Dict[str, Any] = {"rate": rate, "mu": mu, "ratio": ratio}
    if temperature is not None:
        given["temperature"] = {"@misc": "spacy-imbalance.constant_temperature.v1", "value": temperature}
    block.update({key: value for key, value in given.items() if value is not None and key in block})
    return block


def build_sampler(name: str, **settings: Optional[float]) -> NegativeSampler:
    """The sampler of ``sampler_block(name, **settings)``, outside a
    training config: a setting that reads one (the temperature schedule's
    ``training.max_steps``) must be replaced, by a constant ``temperature``."""
    block = sampler_block(name, **settings)
    unresolved = [f"{key} = {value}" for key, value in _flat(block) if isinstance(value, str) and "${" in value]
    if unresolved:
        raise ValueError(
            f"the {name} sampler's {', '.join(unresolved)} reads a training config; give a constant temperature outside training"
        )
    return registry.resolve({"sampler": block})["sampler"]


def _flat(block: Block, prefix: str = "") -> Iterator[Tuple[str, Any]]:
    """Each setting of a block and of its nested blocks, by its dotted name."""
    for key, value in block.items():
        if isinstance(value, dict):
            yield from _flat(value, f"{prefix}{key}.")
        else:
            yield f"{prefix}{key}", value
