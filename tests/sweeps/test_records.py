"""A trial's record as resuming reads it (sweeps/records.py), and a sweep
that runs only the trials whose records are not fresh (runner.run_pending)."""
import os

import pytest
import srsly

from spacy_imbalance.sweeps import Trial, is_fresh, pending, read_record, run_pending, write_record
from spacy_imbalance.sweeps import runner as runner_module

EXPECTED = {"config_sha256": "abc", "max_steps": 10, "budget": "steps", "overrides": {"a.b": "1"}}
DEFAULTS = {"budget": "steps", "overrides": {}}


@pytest.mark.parametrize(
    "record, requires, fresh",
    [
        (None, (), False),  # no record
        ({**EXPECTED, "counts": {}}, ("counts",), True),
        ({**EXPECTED, "config_sha256": "abd"}, (), False),
        ({**EXPECTED, "max_steps": 20}, (), False),
        ({**EXPECTED, "budget": "epochs"}, (), False),
        ({**EXPECTED, "overrides": {"a.b": "2"}}, (), False),
        ({**EXPECTED, "overrides": {}}, (), False),
        (EXPECTED, ("counts",), False),  # a field the caller needs is missing
        (EXPECTED, ("counts", "dev_curve"), False),
        ({**EXPECTED, "budget": None}, (), False),  # null is a value, not an absence
        ({"config_sha256": "abc", "max_steps": 10, "overrides": {"a.b": "1"}}, (), True),  # no budget: steps
        ({"max_steps": 10, "budget": "steps", "overrides": {"a.b": "1"}}, (), False),  # no default for the config
    ],
)
def test_a_record_is_fresh_with_every_expected_value_and_required_field(record, requires, fresh):
    assert is_fresh(record, EXPECTED, requires, DEFAULTS) is fresh


def test_a_missing_field_reads_as_its_default_only():
    old = {"config_sha256": "abc", "max_steps": 10}  # written before budgets and overrides existed
    assert is_fresh(old, {**EXPECTED, "overrides": {}}, defaults=DEFAULTS)
    assert not is_fresh(old, EXPECTED, defaults=DEFAULTS)  # it had no overrides
    assert not is_fresh(old, {**EXPECTED, "overrides": {}})  # without defaults: stale
    assert not is_fresh(old, {**EXPECTED, "overrides": {}, "budget": "epochs"}, defaults=DEFAULTS)


def test_read_record_gives_floats_as_written_and_names_a_file_it_cannot_read(tmp_path):
    path = tmp_path / "run.json"
    assert read_record(path) is None
    path.write_text('{"macro": {"f": 0.3}}', encoding="utf8")
    assert read_record(path)["macro"]["f"] == 0.3  # srsly reads 0.30000000000000004
    path.write_text('{"advise_key": "k", "macro"', encoding="utf8")  # cut off while written
    with pytest.raises(ValueError, match=rf"{path} is not a readable record: "):
        read_record(path)
    path.write_text("[1, 2]", encoding="utf8")
    with pytest.raises(ValueError, match=rf"{path} is not a record: a JSON list, not an object"):
        read_record(path)


def test_write_record_is_compact_json_with_a_newline_or_nothing(tmp_path, monkeypatch):
    path = tmp_path / "run.json"
    write_record(path, {"name": "a", "macro": {"f": 0.3}})
    assert path.read_text(encoding="utf8") == srsly.json_dumps({"name": "a", "macro": {"f": 0.3}}, indent=0) + "\n"

    def stopped(*args):
        raise KeyboardInterrupt

    monkeypatch.setattr(os, "replace", stopped)
    with pytest.raises(KeyboardInterrupt):
        write_record(path, {"name": "b"})
    assert read_record(path) == {"name": "a", "macro": {"f": 0.3}}
    assert os.listdir(tmp_path) == ["run.json"]


def _trials(folder, names=("a", "b", "c")):
    return [
        Trial(name=name, config=f"{name}.cfg", output=str(folder / name), metrics=str(folder / f"{name}.json"),
              train="train.spacy", dev="dev.spacy", test="test.spacy", seed=0, max_steps=5)
        for name in names
    ]


@pytest.fixture
def fake_training(monkeypatch):
    """run_trial replaced by one that writes a report and remembers the trial."""
    ran = []

    def run_trial(trial, on_evaluation=None):
        ran.append(trial.name)
        report = {"name": trial.name, "macro": {"f": 0.3}}
        write_record(trial.metrics, report)
        return srsly.read_json(trial.metrics)  # as run_trial reads it back

    monkeypatch.setattr(runner_module, "run_trial", run_trial)
    return ran


def test_run_pending_runs_only_stale_trials_and_records_their_expected_values(tmp_path, fake_training, capsys):
    a, b, c = _trials(tmp_path)
    expected_of = lambda trial: {"key": f"{trial.name}-1"}  # noqa: E731
    write_record(a.metrics, {"name": "a", "key": "a-1", "macro": {"f": 0.5}})  # fresh
    write_record(b.metrics, {"name": "b", "key": "b-0", "macro": {"f": 0.5}})  # another key: stale
    heard = []
    records = run_pending([a, b, c], expected_of, on_done=lambda trial, report, i, n: heard.append((trial.name, report["key"], i, n)))
    assert fake_training == ["b", "c"]
    # on_done hears of each run trial with its key already merged in
    assert heard == [("b", "b-1", 1, 2), ("c", "c-1", 2, 2)]
    # every record in the order of the trials, as written (the floats too)
    assert records == [
        {"name": "a", "key": "a-1", "macro": {"f": 0.5}},
        {"name": "b", "macro": {"f": 0.3}, "key": "b-1"},
        {"name": "c", "macro": {"f": 0.3}, "key": "c-1"},
    ]
    assert read_record(c.metrics) == records[2]
    # a second sweep runs nothing
    fake_training.clear()
    assert run_pending([a, b, c], expected_of) == records and fake_training == []


def test_pending_runs_again_a_trial_whose_record_is_unreadable_and_says_so(tmp_path, fake_training, capsys):
    (a,) = _trials(tmp_path, ("a",))
    (tmp_path / "a.json").write_text('{"key": "a-1", "mac', encoding="utf8")
    assert [trial.name for trial in pending([a], lambda trial: {"key": "a-1"})] == ["a"]
    said = " ".join(capsys.readouterr().out.split())
    assert f"{tmp_path / 'a.json'} is not a readable record" in said and "a runs again" in said
    # with a field the caller requires
    write_record(a.metrics, {"key": "a-1"})
    assert pending([a], lambda trial: {"key": "a-1"}) == []
    assert [trial.name for trial in pending([a], lambda trial: {"key": "a-1"}, requires=["counts"])] == ["a"]


def test_run_pending_reads_relative_paths_from_the_trials_folder(tmp_path, fake_training, monkeypatch):
    """A trial's relative metrics path is read where run_trials runs it (its
    workdir), not where the caller happens to be."""
    (tmp_path / "runs").mkdir()
    write_record(tmp_path / "runs" / "a.json", {"key": "a-1"})
    trial = Trial(name="a", config="a.cfg", output="a", metrics="a.json", train="t", dev="d", test="e",
                  workdir=str(tmp_path / "runs"))
    monkeypatch.chdir(tmp_path)
    assert run_pending([trial], lambda t: {"key": "a-1"}) == [{"key": "a-1"}]
    assert fake_training == []


def test_run_pending_completes_a_record_before_it_is_written_and_forces_fresh_ones(tmp_path, fake_training, monkeypatch):
    """The benchmark adds its run's fields to each record (``complete``): the
    record is written once, whole, so a sweep stopped in between leaves no
    record that is fresh but lacks them; ``force`` runs fresh trials too."""
    a, b = _trials(tmp_path, ("a", "b"))
    write_record(a.metrics, {"name": "a", "key": "a-1"})  # fresh

    def complete(trial, report):
        return {**report, "run": trial.name.upper()}

    records = run_pending([a, b], lambda trial: {"key": f"{trial.name}-1"}, complete=complete)
    assert fake_training == ["b"] and records[1] == {"name": "b", "macro": {"f": 0.3}, "key": "b-1", "run": "B"}

    def stopped(trial, report):
        raise KeyboardInterrupt

    # stopped while completing a's record: what is on disk is the trial's bare report, stale for the next sweep
    with pytest.raises(KeyboardInterrupt):
        run_pending([a, b], lambda trial: {"key": f"{trial.name}-2"}, complete=stopped)
    assert read_record(a.metrics) == {"name": "a", "macro": {"f": 0.3}}
    fake_training.clear()
    assert run_pending([a, b], lambda trial: {"key": f"{trial.name}-1"}, force=True)[0]["key"] == "a-1"
    assert fake_training == ["a", "b"]
