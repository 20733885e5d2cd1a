"""The one numeric check of the training settings (issue 43, M6 and M7) and
the finite-loss check of every entity component's update."""
import itertools
import math

import numpy
import pytest
import spacy
from spacy.cli._util import parse_config_overrides
from spacy.training import Example
from spacy.util import registry
from thinc.api import Config

from spacy_imbalance.training.checks import check_finite_loss, check_number, check_number_or_schedule
from spacy_imbalance.training.optimizer import create_split_rate_adam_v1

ADAM = "spacy-imbalance.SplitRateAdam.v1"
BETA = r"must be a number in \(0, 1\) \(at 1 Adam divides by zero or never moves"


@pytest.mark.parametrize(
    "value,bounds,message",
    [
        (True, {}, r"x must be a finite number, got True \(a bool\)"),
        ("5", {}, r"x must be a finite number, got '5' \(a string: write the number without quotes\)"),
        ("nan", {}, r"x must be a finite number, got 'nan' \(a string\)$"),
        (None, {}, r"x must be a finite number, got None \(a NoneType\)"),
        (float("nan"), {"low": 0}, r"x must be a finite number >= 0, got nan"),
        (float("inf"), {"low": 0, "low_open": True}, r"x must be a finite number > 0, got inf"),
        (10**400, {}, r"x must be a finite number, got 1000"),
        (1.0, {"low": 0.0, "high": 1.0, "high_open": True}, r"x must be a number in \[0, 1\), got 1.0"),
        (0.0, {"low": 0, "high": 43200, "low_open": True, "unit": "minutes"}, r"x must be a number of minutes in \(0, 43200\], got 0.0"),
        (2.0, {"high": 1}, r"x must be a finite number <= 1, got 2.0"),
        (100.0, {"low": 1, "integer": True}, r"x must be a whole number >= 1, got 100.0 \(a float\)"),
        (numpy.bool_(True), {}, r"x must be a finite number, got (np\.)?True_? \(a bool_?\)"),
        (-1, {"low": 0, "note": " (why)"}, r"x must be a finite number >= 0 \(why\), got -1$"),
    ],
)
def test_check_number_refuses_by_name_with_the_interval(value, bounds, message):
    with pytest.raises(ValueError, match=message):
        check_number("x", value, **bounds)


def test_check_number_returns_python_numbers_within_the_interval():
    assert check_number("x", numpy.float32(0.5), low=0.0, high=1.0) == 0.5
    assert type(check_number("x", numpy.float32(0.5))) is float
    assert type(check_number("x", numpy.int64(3), integer=True)) is int
    assert check_number("x", 0, low=0) == 0.0  # closed ends are in
    assert check_number("x", 7, low=1, integer=True) == 7


def test_a_schedule_s_values_are_checked_as_they_are_drawn():
    schedule = check_number_or_schedule("rate", [0.1, 0.2, float("nan")], low=0.0)
    assert list(itertools.islice(schedule, 2)) == [0.1, 0.2]
    with pytest.raises(ValueError, match=r"rate \(its schedule's value 2\) must be a finite number >= 0, got nan"):
        next(schedule)
    assert check_number_or_schedule("rate", 3, low=0.0) == 3.0


@pytest.mark.parametrize(
    "setting,value,message",
    [
        # issue 43 M6: ZeroDivisionError in the bias correction
        ("beta1", 1.0, rf"beta1 {BETA}.*got 1.0"),
        # M6: no learning, no message
        ("beta2", 1.0, rf"beta2 {BETA}.*got 1.0"),
        # thinc raises NotImplementedError at the first update / silently runs SGD
        ("beta1", 0.0, rf"beta1 {BETA}.*got 0.0"),
        ("beta2", 0.0, rf"beta2 {BETA}.*got 0.0"),
        # M6: NaN losses, exit code 0 and a saved model
        ("eps", 0.0, r"eps must be a number in \[1e-38, 1e\+38\] \(0 turns a zero gradient into NaN\), got 0.0"),
        ("eps", 1e-50, r"eps must be a number in \[1e-38, 1e\+38\].*got 1e-50"),
        ("grad_clip", -1.0, r"grad_clip must be a number in \[0, 1e\+38\] \(0: no clipping\), got -1.0"),
        ("L2", float("nan"), r"L2 must be a number in \[0, 1e\+38\], got nan"),
        ("L2", -0.01, r"L2 must be a number in \[0, 1e\+38\], got -0.01"),
        ("learn_rate", 1e39, r"learn_rate must be a number in \[0, 1e\+38\], got 1e\+39"),
        ("beta1", "0.9", r"beta1 must be a number in \(0, 1\).*got '0.9' \(a string: write the number without quotes\)"),
        ("encoder_learn_rate", [1e-4, -1.0], r"encoder_learn_rate \(its schedule's value 1\) must be a number in \[0, 1e\+38\], got -1.0"),
    ],
)
def test_split_rate_adam_refuses_every_setting_by_name(setting, value, message):
    with pytest.raises(ValueError, match=rf"^SplitRateAdam.v1: {message}"):
        optimizer = registry.resolve({"o": {"@optimizers": ADAM, setting: value}})["o"]
        # a schedule's later values are checked as the optimizer steps
        optimizer.step_schedules()


def test_split_rate_adam_refuses_a_bool_given_in_python():
    # confection refuses a bool for a float in a config; a Python caller gets the same check
    with pytest.raises(ValueError, match=r"SplitRateAdam.v1: grad_clip .*got True \(a bool\)"):
        create_split_rate_adam_v1(grad_clip=True)


def test_split_rate_adam_keeps_the_edges_that_work():
    # a frozen group, no clipping, no weight decay, a schedule as a list
    optimizer = registry.resolve(
        {"o": {"@optimizers": ADAM, "learn_rate": [0.0, 0.5], "encoder_learn_rate": 0, "grad_clip": 0.0, "L2": 0,
               "beta1": 0.5, "beta2": 0.99, "eps": 1e-38}}
    )["o"]
    assert (optimizer.learn_rate, optimizer.encoder_learn_rate, optimizer.grad_clip, optimizer.b1) == (0.0, 0.0, 0.0, 0.5)
    optimizer.step_schedules()
    assert optimizer.learn_rate == 0.5
    weights, _ = optimizer((1, "W"), numpy.zeros(2, dtype="f"), numpy.zeros(2, dtype="f"))
    # eps at its lowest still divides a zero gradient by a non-zero number
    assert numpy.isfinite(weights).all()


OVERRIDDEN = """
[training]
[training.optimizer]
@optimizers = "spacy-imbalance.SplitRateAdam.v1"
learn_rate = 0.001
encoder_learn_rate = 0.00005

[training.before_update]
@callbacks = "spacy-imbalance.time_budget.v1"
minutes = 5
"""


@pytest.mark.parametrize(
    "args,message",
    [
        # issue 43 M7: each was a TypeError or thinc's "Invalid schedule ... str"
        (["--training.before_update.minutes", "nan"], r"time_budget.v1 .*minutes must be a finite number of minutes > 0, got 'nan' \(a string\)"),
        (["--training.before_update.minutes", '"5"'], r"minutes must be a finite number of minutes > 0, got '5' \(a string: write the number without quotes\)"),
        (["--training.optimizer.encoder_learn_rate", "nan"], r"SplitRateAdam.v1: encoder_learn_rate must be a number in \[0, 1e\+38\], got 'nan'"),
        (["--training.optimizer.beta1", "1.0"], r"SplitRateAdam.v1: beta1 must be a number in \(0, 1\)"),
    ],
)
def test_cli_overrides_are_refused_with_the_setting_named(args, message):
    # what `spacy train config.cfg --key value` resolves: spaCy's override parser, then the config
    config = Config().from_str(OVERRIDDEN, overrides=parse_config_overrides(args))
    with pytest.raises(ValueError, match=message):
        registry.resolve(config["training"])


def test_the_unchanged_config_resolves():
    resolved = registry.resolve(Config().from_str(OVERRIDDEN)["training"])
    assert resolved["optimizer"].encoder_learn_rate == 5e-5
    assert callable(resolved["before_update"])


def test_check_finite_loss_names_the_owner_and_the_loss():
    check_finite_loss("token_ner 'ner'", numpy.float32(3.5))
    with pytest.raises(ValueError, match=r"^token_ner 'ner': the loss of this training step is nan, "):
        check_finite_loss("token_ner 'ner'", float("nan"))
    with pytest.raises(ValueError, match=r"^sampled_spancat 'spans': the loss of this training step is -inf, "):
        check_finite_loss("sampled_spancat 'spans'", numpy.float32(-math.inf))


DATA = [("I like London and Paris .", [(7, 13, "LOC"), (18, 23, "LOC")]), ("Talk to Kate .", [(8, 12, "PER")])]


def _params(model):
    return {(node.id, name): node.get_param(name).copy() for node in model.walk() for name in node.param_names if node.has_param(name)}


@pytest.mark.parametrize("factory", ["token_ner", "sampled_spancat", "two_task_ner"])
def test_a_nan_loss_stops_the_update_before_the_weights_change(factory):
    nlp = spacy.blank("en")
    pipe = nlp.add_pipe(factory, name="ents")
    examples = [Example.from_dict(nlp.make_doc(text), {"entities": ents}) for text, ents in DATA]
    optimizer = nlp.initialize(lambda: examples)
    # NaN scores, as diverging weights give: the loss of the next step is NaN
    output_layer = pipe.model.get_ref("output_layer")
    output_layer.set_param("W", numpy.full_like(output_layer.get_param("W"), numpy.nan))
    before = _params(pipe.model)
    with pytest.raises(ValueError, match=rf"^{factory} 'ents': the loss of this training step is nan"):
        pipe.update(examples, sgd=optimizer)
    after = _params(pipe.model)
    assert before.keys() == after.keys()
    for key in before:
        numpy.testing.assert_array_equal(after[key], before[key])
