"""spacy-imbalance.ConsoleLogger.v1 (issue 44): spaCy's table plus a progress
line every progress_every steps between evaluations, and a line saying what
the loss column of an encoder our components train is."""
import io
import re
from types import SimpleNamespace
from typing import Any, Dict, List

import pytest
import spacy
from spacy.training.initialize import init_nlp
from spacy.training.loop import train
from spacy.util import registry
from thinc.api import Config

from spacy_imbalance.init_config import ConfigChoice, build_config
from spacy_imbalance.sweeps.trial import dev_curve_of
from spacy_imbalance.training import logger as logger_module
from spacy_imbalance.training.logger import create_console_logger_v1

PROGRESS = re.compile(
    r"^step (\d+)  epoch (\d+)  loss since step (\d+): (.+)  ([\d,]+) words/s  (\d+:\d\d:\d\d) elapsed$"
)


def progress_lines(text: str) -> List[re.Match]:
    return [match for match in map(PROGRESS.match, text.splitlines()) if match]


def losses_of(match: re.Match) -> Dict[str, float]:
    return {name: float(value) for name, value in (part.rsplit(" ", 1) for part in match.group(4).split(", "))}


@pytest.fixture(scope="module")
def sampled_run(toy_corpus) -> str:
    """The console output of 12 steps of sampled_spancat, evaluated every 5,
    a progress line every 3."""
    config = build_config(ConfigChoice("sampled_spancat", overrides={
        "paths.train": str(toy_corpus / "train.spacy"), "paths.dev": str(toy_corpus / "dev.spacy"),
        "training.max_steps": 12, "training.eval_frequency": 5, "training.logger.progress_every": 3,
    }))
    assert config["training"]["logger"]["@loggers"] == "spacy-imbalance.ConsoleLogger.v1"
    out = io.StringIO()
    train(init_nlp(config), None, stdout=out, stderr=io.StringIO())
    return out.getvalue()


def test_a_progress_line_every_progress_every_steps_between_evaluations(sampled_run):
    lines = progress_lines(sampled_run)
    # evaluated at 0, 5 and 10 (their table rows), a line at 3, 6, 9 and 12
    assert [int(m.group(1)) for m in lines] == [3, 6, 9, 12]
    # each since the line or evaluation before it
    assert [int(m.group(3)) for m in lines] == [0, 5, 6, 10]
    assert [int(m.group(2)) for m in lines] == [0, 0, 0, 0]  # 60 sentences: one epoch is more than 12 steps
    assert all(set(losses_of(m)) == {"tok2vec", "sampled_spancat"} for m in lines)
    assert all(int(m.group(5).replace(",", "")) > 0 for m in lines)


def test_the_losses_are_those_since_the_line_before(sampled_run):
    rows = {step: row for step, row in ((int(line.split()[1]), line.split()) for line in sampled_run.splitlines()
                                       if re.match(r"^\s*\d+\s+\d+\s", line))}
    loss = {int(m.group(1)): losses_of(m)["sampled_spancat"] for m in progress_lines(sampled_run)}
    # the table's loss at 5 is the sum over steps 1-5, at 10 over 6-10 (spaCy starts again after an evaluation)
    row_loss = {step: float(rows[step][3]) for step in (5, 10)}
    assert 0 < loss[3] < row_loss[5]
    assert 0 < loss[6] and 0 < loss[9] and loss[6] + loss[9] < row_loss[10]


def test_progress_lines_are_not_read_as_evaluations(sampled_run):
    assert [step for step, _ in dev_curve_of(sampled_run)] == [0, 5, 10]


def test_the_tok2vec_line_names_the_component_once_before_the_table(sampled_run):
    lines = sampled_run.splitlines()
    notes = [i for i, line in enumerate(lines) if "tok2vec's loss column is not a loss" in line]
    table = next(i for i, line in enumerate(lines) if line.startswith("E "))
    assert len(notes) == 1 and notes[0] < table
    assert "sampled_spancat backpropagates into tok2vec and reports one loss, its own" in " ".join(lines[notes[0]:table])


def header(component: str, **logger: Any) -> str:
    """What the logger prints at the start of training ``component``'s
    config (the pipeline built, not initialized)."""
    config = build_config(ConfigChoice(component), fill=False)
    nlp = spacy.util.load_model_from_config(config, auto_fill=True, validate=False)
    out = io.StringIO()
    create_console_logger_v1(**logger)(nlp, out, io.StringIO())
    return " ".join(out.getvalue().split())


@pytest.mark.parametrize("component", ["sampled_spancat", "token_ner", "two_task_ner"])
def test_the_tok2vec_line_for_each_of_our_components(component):
    assert (
        f"tok2vec's loss column is not a loss: {component} backpropagates into tok2vec and reports one loss, its own; "
        "the column sums the squared gradients passed back, so 0.00 there does not mean that tok2vec is not learning"
    ) in header(component)


@pytest.mark.parametrize("component", ["ner", "spancat"])
def test_no_tok2vec_line_for_spacy_s_components(component):
    text = header(component)
    assert "LOSS TOK2VEC" in text and "is not a loss" not in text


def fake_loop(log_step, steps: int, eval_frequency: int) -> None:
    """spaCy's loop as a logger sees it: log_step(info) at an evaluation,
    log_step(None) at any other step, with the step's info in the caller's
    frame (its local ``info``)."""
    losses: Dict[str, float] = {}
    for step in range(steps + 1):
        losses["ours"] = losses.get("ours", 0.0) + 1.0
        info = {"epoch": step // 10, "step": step, "score": 0.5, "other_scores": {}, "losses": losses,
                "checkpoints": [], "seconds": step, "words": 100 * (step + 1)}
        log_step(info if step % eval_frequency == 0 else None)
        if step % eval_frequency == 0:
            losses = {}


def fake_nlp() -> Any:
    nlp = spacy.blank("en")
    nlp.config["training"] = Config({"max_steps": 0, "eval_frequency": 1, "score_weights": {}})
    return nlp


@pytest.fixture
def faked(monkeypatch):
    # the logger finds the loop by its code: the fake loop stands in for spaCy's
    monkeypatch.setattr(logger_module, "loop", SimpleNamespace(train=fake_loop))


def run_fake(steps: int, eval_frequency: int, wrap: bool = False, **settings: Any) -> str:
    out = io.StringIO()
    log_step, finalize = create_console_logger_v1(**settings)(fake_nlp(), out, io.StringIO())
    fake_loop((lambda info: log_step(info)) if wrap else log_step, steps, eval_frequency)
    finalize()
    return out.getvalue()


def test_a_line_gives_the_loss_words_and_time_since_the_line_before(faked):
    lines = progress_lines(run_fake(24, 10, progress_every=4))
    assert [(int(m.group(1)), int(m.group(2)), int(m.group(3))) for m in lines] == [
        (4, 0, 0), (8, 0, 4), (12, 1, 10), (16, 1, 12), (24, 2, 20),
    ]
    # one loss per step: 4 steps since step 0, 2 since the evaluation at 10, 4 since 20
    assert [losses_of(m)["ours"] for m in lines] == [4.0, 4.0, 2.0, 4.0, 4.0]
    assert [m.group(6) for m in lines] == ["0:00:04", "0:00:08", "0:00:12", "0:00:16", "0:00:24"]


def test_lines_through_a_wrapping_logger(faked):
    assert len(progress_lines(run_fake(20, 10, wrap=True, progress_every=5))) == 2


def test_progress_every_0_prints_no_line(faked):
    text = run_fake(20, 10, progress_every=0)
    assert progress_lines(text) == [] and "progress_every" not in text


def test_a_caller_other_than_spacy_s_loop_is_told_once_and_gets_the_table():
    """No frame of spaCy's loop (fake_loop is not it here): a warning, once,
    then the table only."""
    text = run_fake(20, 5, progress_every=2)
    assert progress_lines(text) == []
    assert [step for step, _ in dev_curve_of(text)] == [0, 5, 10, 15, 20]
    text = " ".join(text.split())  # wasabi wraps the warning
    assert text.count("[training.logger] progress_every: no progress lines, as the logger is not called by spaCy's "
                      "training loop") == 1


@pytest.mark.parametrize("settings,message", [
    ({"progress_every": -1}, r"\[training.logger\] progress_every must be a whole number >= 0 \(the steps between "
                             r"progress lines; 0 prints none\), got -1"),
    ({"progress_every": 2.5}, r"\[training.logger\] progress_every must be a whole number >= 0 .*, got 2.5"),
    ({"progress_every": "5"}, r"\[training.logger\] progress_every must be .*, got '5' \(a string"),
    ({"progress_bar": "yes"}, r"\[training.logger\] progress_bar must be true or false, got 'yes'"),
])
def test_bad_settings_are_refused_naming_them(settings, message):
    with pytest.raises(ValueError, match=message):
        create_console_logger_v1(**settings)


def test_a_config_s_bad_setting_is_refused_naming_it():
    config = {"logger": {"@loggers": "spacy-imbalance.ConsoleLogger.v1", "progress_every": -3}}
    with pytest.raises(ValueError, match=r"progress_every must be a whole number >= 0 .*, got -3"):
        registry.resolve(config)


def test_a_budget_that_ends_before_the_first_evaluation_after_step_0_is_warned_of():
    config = build_config(ConfigChoice("ner"), fill=False)
    config["training"]["max_steps"] = 100  # as `spacy train --training.max_steps 100` sets it, eval_frequency 200
    nlp = spacy.util.load_model_from_config(config, auto_fill=True, validate=False)
    out = io.StringIO()
    create_console_logger_v1()(nlp, out, io.StringIO())
    assert (
        "training.max_steps = 100 ends the run before its first evaluation after step 0 (training.eval_frequency = 200), "
        "so model-best will be the model after one update: evaluate more often, e.g. --training.eval_frequency 10"
    ) in " ".join(out.getvalue().split())
    assert "max_steps" not in header("ner")  # 20,000 steps, evaluated every 200
