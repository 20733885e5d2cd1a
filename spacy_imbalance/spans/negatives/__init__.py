"""Negative samplers of ``sampled_spancat`` (registered in ``misc``).

Positives are always all kept; a sampler only chooses which negative
candidates (gold class O) the loss sees. Unsampled negatives get no gradient.

* ``all_negatives.v1``: every negative (the standard span model);
* ``uniform_negatives.v1(rate)``: ⌈rate·n⌉ per sentence, uniformly (Li et al. 2021);
* ``uniform_negatives.v2(rate, correction, fixed)``: v1 with the sampling's odds
  inflation undone at prediction and one draw per sentence kept all run;
* ``weighted_negatives.v1(rate, mu, temperature)``: Eq. 14-16 of Li et al. 2022;
* ``weighted_negatives.v2(rate, mu, temperature)``: Eq. 14-16 with the non-entity factor
  outside the exponential, so that likely unlabeled entities are left out;
* ``weighted_negatives.v3(rate, mu, temperature, correction)``: v2 with the
  prior correction at prediction;
* ``top_negatives.v1(ratio)``: Top-Neg, the most similar to the batch's positives (Xu et al. 2023),
  similarity on the span representations;
* ``top_negatives.v2(ratio)``: Top-Neg with the similarity on the scoring head's hidden layer,
  as in the authors' code.

``menu``: the samplers by the name the command line takes, the one list
that ``init-config --sampler`` and ``missampling --sampler`` read.

``draws``: what the component draws with while it trains: the batch a
sampler sees (the step, the sentences' keys and what the model says of
every candidate), the candidates an update scores, the run's seed and the
missampling counts.

Sampling draws its random keys from a generator the component seeds at
initialize from the global random state, which ``spacy train`` fixes from
``[training] seed``: the same seed gives the same samples.

A GPU run is not bit-identical to a CPU run, and not always to another GPU
run: with cupy the generator is cupy's, whose streams differ from numpy's
for the same seed (other samples, the same distribution), and the backward
passes add gradients with cupy's scatter_add, which uses atomic additions in
no fixed order (the embeddings' and the span representation's gradients
differ in the last bits from run to run). Float sums also run in another
order than numpy's. Compare GPU and CPU runs by their metrics, not their
weights.
"""
from ._base import NegativeSampler, SamplingBatch, check_sampler, make_generator, top_k_per_group
from .draws import CandidateView, Missampling, NegativeDraws, run_seed, sampling_batch, sentence_key, training_rows
from .exhaustive import AllNegatives, create_all_negatives_v1
from .temperature import ConstantTemperature, SqrtTemperature, create_constant_temperature_v1, create_sqrt_temperature_v1
from .top import TopNegatives, TopNegativesV2, create_top_negatives_v1, create_top_negatives_v2
from .uniform import UniformNegatives, UniformNegativesV2, create_uniform_negatives_v1, create_uniform_negatives_v2
from .weighted import (
    WeightedNegatives,
    WeightedNegativesV2,
    WeightedNegativesV3,
    create_weighted_negatives_v1,
    create_weighted_negatives_v2,
    create_weighted_negatives_v3,
)

__all__ = [
    "NegativeSampler",
    "SamplingBatch",
    "check_sampler",
    "make_generator",
    "top_k_per_group",
    "CandidateView",
    "Missampling",
    "NegativeDraws",
    "run_seed",
    "sampling_batch",
    "sentence_key",
    "training_rows",
    "AllNegatives",
    "UniformNegatives",
    "UniformNegativesV2",
    "WeightedNegatives",
    "WeightedNegativesV2",
    "WeightedNegativesV3",
    "TopNegatives",
    "TopNegativesV2",
    "SqrtTemperature",
    "ConstantTemperature",
    "create_all_negatives_v1",
    "create_uniform_negatives_v1",
    "create_uniform_negatives_v2",
    "create_weighted_negatives_v1",
    "create_weighted_negatives_v2",
    "create_weighted_negatives_v3",
    "create_top_negatives_v1",
    "create_top_negatives_v2",
    "create_sqrt_temperature_v1",
    "create_constant_temperature_v1",
]
