"""The time budget callback stops training before an update once the time
is spent, and run_trial reads that stop as a finished trial."""
import pytest
from spacy.util import load_config

from spacy_imbalance.sweeps import Trial, run_trial
from spacy_imbalance.sweeps import budget as budget_module
from spacy_imbalance.sweeps.budget import TimeBudgetReached, create_time_budget_v1

from ..conftest import ROOT


def test_time_budget_raises_once_the_minutes_are_spent(monkeypatch):
    clock = iter([100.0, 130.0, 159.9, 160.1])
    monkeypatch.setattr(budget_module.time, "perf_counter", lambda: next(clock))
    before_update = create_time_budget_v1(minutes=1.0)
    before_update(None, {"step": 0})  # the clock starts here
    before_update(None, {"step": 1})
    before_update(None, {"step": 2})  # 59.9 s: still inside
    with pytest.raises(TimeBudgetReached, match="before step 3"):
        before_update(None, {"step": 3})
    with pytest.raises(ValueError, match="minutes"):
        create_time_budget_v1(minutes=0)


@pytest.mark.slow
def test_run_trial_finishes_a_trial_its_budget_stopped(toy_corpus, tmp_path):
    config = load_config(ROOT / "configs" / "ner.cfg", interpolate=False)
    config["training"]["before_update"] = {"@callbacks": "spacy-imbalance.time_budget.v1", "minutes": 0.1}
    path = tmp_path / "ner.cfg"
    path.write_text(config.to_str(), encoding="utf8")
    trial = Trial(name="ner", config=str(path), output=str(tmp_path / "out"), metrics=str(tmp_path / "ner.json"),
                  train=str(toy_corpus / "train.spacy"), dev=str(toy_corpus / "dev.spacy"), test=str(toy_corpus / "dev.spacy"),
                  max_steps=100000, overrides={"training.eval_frequency": "5"})
    report = run_trial(trial)
    assert report["stopped_by_budget"] is True
    # six seconds of updates: more than a few steps, far from the step limit
    assert 5 < report["steps_trained"] < 100000
    assert report["dev_curve"][-1][0] <= report["steps_trained"]
    assert 0.0 <= report["macro"]["f"] <= 1.0


def test_budget_step_is_read_from_a_wrapped_warning_or_the_traceback(tmp_path):
    from spacy_imbalance.sweeps.trial import _budget_step

    log = tmp_path / "run.log"
    # spaCy's warning wraps long lines; the traceback's last line does not
    log.write_text(
        "⚠ Aborting and saving the final best model. Encountered exception:\n"
        "TimeBudgetReached('the time budget of 5.92 minutes ran out before step\n4001')\n"
        "Traceback (most recent call last):\n"
        "spacy_imbalance.sweeps.budget.TimeBudgetReached: the time budget of 5.92 minutes ran out before step 4001\n",
        encoding="utf8",
    )
    assert _budget_step(log) == 4001
    log.write_text("KeyError: 'x'\n", encoding="utf8")
    assert _budget_step(log) is None
