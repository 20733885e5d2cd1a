"""The time budget's minutes go through the training settings' one check
(issue 43, M7), and a stop is recognised whatever the minutes' format."""
import pytest
from spacy.util import registry

from spacy_imbalance.sweeps import budget as budget_module
from spacy_imbalance.sweeps.budget import TimeBudgetReached, create_time_budget_v1
from spacy_imbalance.sweeps.trial import _budget_step

MINUTES = r"^spacy-imbalance.time_budget.v1 \(\[training.before_update\]\): minutes must be a finite number of minutes > 0, got "


@pytest.mark.parametrize(
    "minutes,shown",
    [
        # from an override (--training.before_update.minutes nan / '"5"'): a TypeError before
        ("nan", r"'nan' \(a string\)$"),
        ("5", r"'5' \(a string: write the number without quotes\)$"),
        (float("nan"), "nan$"),
        (float("inf"), "inf$"),
        (0, "0$"),
        (-1.5, r"-1.5$"),
    ],
)
def test_minutes_are_refused_by_name(minutes, shown):
    with pytest.raises(ValueError, match=MINUTES + shown):
        registry.resolve({"c": {"@callbacks": "spacy-imbalance.time_budget.v1", "minutes": minutes}})


@pytest.mark.parametrize("minutes,shown", [(True, r"True \(a bool\)$"), (None, r"None \(a NoneType\)$")])
def test_a_python_caller_gets_the_same_check(minutes, shown):
    # confection refuses these in a config; the function itself refuses them too
    with pytest.raises(ValueError, match=MINUTES + shown):
        create_time_budget_v1(minutes=minutes)


@pytest.mark.parametrize("minutes", [1e-5, 2e6])
def test_a_budget_written_with_an_exponent_is_read_as_a_budget_stop(minutes, tmp_path, monkeypatch):
    # the message formats the minutes with :g (1e-05, 2e+06); the log
    # reader's pattern took only digits and dots, and the trial "failed"
    clock = iter([0.0, 60 * minutes + 1.0])
    monkeypatch.setattr(budget_module.time, "perf_counter", lambda: next(clock))
    before_update = create_time_budget_v1(minutes=minutes)
    before_update(None, {"step": 0})
    with pytest.raises(TimeBudgetReached) as stop:
        before_update(None, {"step": 7})
    assert f"of {minutes:g} minutes" in str(stop.value) and "e" in f"{minutes:g}"
    log = tmp_path / "run.log"
    log.write_text(f"spacy_imbalance.sweeps.budget.TimeBudgetReached: {stop.value}\n", encoding="utf8")
    assert _budget_step(log) == 7
