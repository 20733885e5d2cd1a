"""SplitRateAdam.v1: PyTorch parameters at the encoder's rate, thinc's at the
heads', checked on hand-computed first Adam steps and on a real PyTorch model."""
import numpy
import pytest
import torch
from spacy.util import registry
from thinc.api import Linear, PyTorchWrapper, chain, constant

from spacy_imbalance.training import SplitRateOptimizer, is_torch_param


def optimizer(head: float = 0.001, encoder=5e-5) -> SplitRateOptimizer:
    return registry.resolve(
        {"o": {"@optimizers": "spacy-imbalance.SplitRateAdam.v1", "learn_rate": head, "encoder_learn_rate": encoder, "L2": 0.0}}
    )["o"]


def first_step(opt: SplitRateOptimizer, key) -> numpy.ndarray:
    """The change of weights at 0 (exact in float32) after one update with gradient [2, -3]."""
    weights = numpy.zeros(2, dtype="f")
    gradient = numpy.asarray([2.0, -3.0], dtype="f")
    new, _ = opt(key, weights.copy(), gradient)
    return new - weights


@pytest.mark.parametrize(
    "key,expected",
    [((1, "W"), False), ((1, "b"), False), ((3, "encoder.layer.0.attention.self.query.weight"), True), ((3, "weight"), False)],
)
def test_torch_parameters_are_told_by_their_dotted_names(key, expected):
    assert is_torch_param(key) is expected


def test_the_first_adam_step_is_each_group_s_rate():
    # Adam's first step, bias-corrected, is rate * g / (|g| + eps): the rate times the sign
    opt = optimizer(head=0.001, encoder=5e-5)
    numpy.testing.assert_allclose(first_step(opt, (1, "W")), [-0.001, 0.001], rtol=1e-4)
    numpy.testing.assert_allclose(first_step(opt, (2, "encoder.layer.0.output.dense.weight")), [-5e-5, 5e-5], rtol=1e-4)
    # the heads' rate is back in place after an encoder update
    assert opt.learn_rate == 0.001


def test_the_encoder_moves_when_the_heads_rate_is_zero():
    opt = optimizer(head=0.0, encoder=1e-4)
    numpy.testing.assert_allclose(first_step(opt, (1, "W")), [0.0, 0.0])
    numpy.testing.assert_allclose(first_step(opt, (2, "embeddings.word_embeddings.weight")), [-1e-4, 1e-4], rtol=1e-4)


def test_the_encoder_schedule_steps_with_the_others():
    opt = registry.resolve(
        {"o": {"@optimizers": "spacy-imbalance.SplitRateAdam.v1", "learn_rate": 0.001,
               "encoder_learn_rate": {"@schedules": "warmup_linear.v1", "initial_rate": 1e-4, "warmup_steps": 2, "total_steps": 4}}}
    )["o"]
    rates = []
    for _ in range(5):
        rates.append(opt.encoder_learn_rate)
        opt.step_schedules()
    numpy.testing.assert_allclose(rates, [0.0, 5e-5, 1e-4, 5e-5, 0.0], atol=1e-12)
    assert opt.learn_rate == 0.001


@pytest.mark.parametrize("setting", ["learn_rate", "encoder_learn_rate"])
@pytest.mark.parametrize("value", [-1e-3, float("inf"), float("nan")])
def test_a_rate_out_of_range_is_refused_by_name(setting, value):
    with pytest.raises(ValueError, match=rf"SplitRateAdam.v1: {setting} must be a number in \[0, 1e\+38\], got {value!r}"):
        registry.resolve({"o": {"@optimizers": "spacy-imbalance.SplitRateAdam.v1", setting: value}})


def test_a_pytorch_layer_trains_at_the_encoder_rate_and_a_thinc_layer_at_the_heads():
    torch.manual_seed(0)
    encoder = PyTorchWrapper(torch.nn.Sequential(torch.nn.Linear(3, 4)))
    head = Linear(nO=2, nI=4)
    model = chain(encoder, head)
    X = numpy.random.default_rng(0).normal(size=(5, 3)).astype("f")
    model.initialize(X=X)
    torch_before = encoder.shims[0]._model[0].weight.detach().numpy().copy()
    W_before = head.get_param("W").copy()
    Y, backprop = model.begin_update(X)
    backprop(numpy.ones_like(Y))
    model.finish_update(optimizer(head=0.01, encoder=1e-4))
    torch_step = numpy.abs(encoder.shims[0]._model[0].weight.detach().numpy() - torch_before)
    head_step = numpy.abs(head.get_param("W") - W_before)
    # every weight with a gradient moves by its group's rate on Adam's first step
    numpy.testing.assert_allclose(torch_step[torch_step > 0], 1e-4, rtol=5e-3)
    numpy.testing.assert_allclose(head_step[head_step > 0], 0.01, rtol=5e-3)
    assert (torch_step > 0).sum() > 0 and (head_step > 0).sum() > 0
