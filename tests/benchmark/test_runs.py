"""One benchmark run: the resume check and the record (spacy_imbalance/benchmark/runs.py)."""
import sys

import pytest
import srsly

from spacy_imbalance.benchmark.layout import Layout
from spacy_imbalance.benchmark.runs import Run, is_done, make_trial, record_run
from spacy_imbalance.sweeps.provenance import missing_fields

from ..conftest import ROOT

LAYOUT = Layout.at(ROOT)


def test_benchmark_resume_needs_the_same_overrides(tmp_path):
    path = tmp_path / "run.json"
    srsly.write_json(path, {"config_sha256": "x", "max_steps": 10, "overrides": {"a": "1"}, "counts": {}})
    assert is_done(path, "x", 10, True, {"a": "1"})
    assert not is_done(path, "x", 10, True, {"a": "2"})
    assert not is_done(path, "x", 20, True, {"a": "1"})
    srsly.write_json(path, {"config_sha256": "x", "max_steps": 10})  # written before --set existed
    assert is_done(path, "x", 10, False, {}) and not is_done(path, "x", 10, True, {})
    # a run at equal steps does not stand in for one at equal epochs, nor the reverse
    assert not is_done(path, "x", 10, False, {}, "epochs")
    srsly.write_json(path, {"config_sha256": "x", "max_steps": 10, "budget": "epochs"})
    assert is_done(path, "x", 10, False, {}, "epochs") and not is_done(path, "x", 10, False, {})


def test_benchmark_a_run_without_a_dev_curve_is_redone_only_when_asked(tmp_path):
    metrics = tmp_path / "run.json"
    srsly.write_json(metrics, {"config_sha256": "x", "max_steps": 10, "overrides": {}, "counts": {}})
    assert is_done(metrics, "x", 10, True, {})
    assert not is_done(metrics, "x", 10, True, {}, need_dev_curve=True)
    srsly.write_json(metrics, {"config_sha256": "x", "max_steps": 10, "overrides": {}, "counts": {}, "dev_curve": [[0, 0.1]]})
    assert is_done(metrics, "x", 10, True, {}, need_dev_curve=True)


def test_benchmark_a_fresh_run_record_says_where_it_ran(tmp_path):
    from types import SimpleNamespace

    from spacy_imbalance import __version__

    trial = SimpleNamespace(output=str(tmp_path / "out"), metrics=str(tmp_path / "vectors" / "ner-m50-s2.json"))
    # as the evaluation names it: the trial's name, which says the corpus and the seed
    report = {"name": "wnut16 vectors/ner-m50 seed 2", "macro": {"f": 0.1}, "dev_curve": [[100, 0.1]], "train_steps": 100, "train_seconds": 3.0}
    size = {"train_examples": 1, "train_sentences": 1, "size_factor": 1.0, "word_factor": 1.0}
    (tmp_path / "vectors").mkdir()
    record_run(report, LAYOUT, Run("wnut16", "vectors/ner", 2, "vectors/ner-m50", 100, {"corpora.train.p": "0.5"}), trial, size)
    written = srsly.read_json(tmp_path / "vectors" / "ner-m50-s2.json")
    # named as the run, so that a summary pools its seeds into one row
    assert written["name"] == "vectors/ner-m50"
    assert written["provenance"]["package_version"] == __version__
    assert written["provenance"]["device"] == "cpu" and written["provenance"]["cpu_cores"] >= 1
    # in full: commit, time, machine, libraries, and this command with the overrides the run had
    assert missing_fields(written["provenance"]) == []
    assert written["provenance"]["command"]["argv"] == sys.argv
    assert written["provenance"]["command"]["overrides"] == {"corpora.train.p": "0.5"}


def test_benchmark_a_run_record_keeps_where_its_trial_ran_and_says_this_command(tmp_path, monkeypatch):
    """A trial on Ray measures its machine and threads in its worker, whose
    own command line says nothing of the run: the record keeps the one and
    takes the benchmark's command, with the run's overrides, its seed filled in."""
    from types import SimpleNamespace

    from spacy_imbalance.sweeps import run_provenance

    monkeypatch.setattr(sys, "argv", ["ray/default_worker.py", "--node-ip-address=1"])
    measured = {**run_provenance(-1, ROOT), "omp_threads": 1, "torch_threads": 1}
    monkeypatch.setattr(sys, "argv", ["spacy-imbalance", "benchmark", "run", "--set", "corpora.train.seed={seed}"])
    trial = SimpleNamespace(output=str(tmp_path / "out"), metrics=str(tmp_path / "ner-s3.json"))
    report = {"macro": {"f": 0.1}, "train_steps": 10, "train_seconds": 1.0, "provenance": measured}
    size = {"train_examples": 1, "train_sentences": 1, "size_factor": 1.0, "word_factor": 1.0}
    record_run(report, LAYOUT, Run("wnut16", "ner", 3, "ner", 10, {"corpora.train.seed": "{seed}"}), trial, size)
    written = srsly.read_json(tmp_path / "ner-s3.json")["provenance"]
    assert written["time_utc"] == measured["time_utc"] and written["omp_threads"] == 1
    assert written["command"]["argv"] == ["spacy-imbalance", "benchmark", "run", "--set", "corpora.train.seed={seed}"]
    assert written["command"]["overrides"] == {"corpora.train.seed": "3"}
    assert missing_fields(written) == []


def test_benchmark_resume_does_not_depend_on_provenance(tmp_path):
    """A finished run from before records carried provenance is still reused."""
    path = tmp_path / "run.json"
    srsly.write_json(path, {"config_sha256": "x", "max_steps": 10, "overrides": {}, "counts": {}})
    assert is_done(path, "x", 10, True, {})
    srsly.write_json(path, {"config_sha256": "x", "max_steps": 10, "overrides": {}, "counts": {}, "provenance": {"device": "cpu"}})
    assert is_done(path, "x", 10, True, {})


def test_benchmark_a_record_is_written_whole_or_not_at_all(tmp_path, monkeypatch):
    """record_run wrote the file in place: a benchmark stopped while writing
    it left half a record, which the next resume could not read. Now through
    a temporary file, as every sweep record is written (compact, a newline at the end)."""
    import os
    from types import SimpleNamespace

    trial = SimpleNamespace(output=str(tmp_path / "out"), metrics=str(tmp_path / "ner-s0.json"))
    size = {"train_examples": 1, "train_sentences": 1, "size_factor": 1.0, "word_factor": 1.0}
    report = {"macro": {"f": 0.3}, "train_steps": 10, "train_seconds": 1.0, "provenance": {"device": "cpu"}}
    (tmp_path / "ner-s0.json").write_text('{"earlier": "record"}', encoding="utf8")

    def stopped(*args):
        raise KeyboardInterrupt

    monkeypatch.setattr(os, "replace", stopped)
    with pytest.raises(KeyboardInterrupt):
        record_run(dict(report), LAYOUT, Run("wnut16", "ner", 0, "ner", 10), trial, size)
    assert (tmp_path / "ner-s0.json").read_text(encoding="utf8") == '{"earlier": "record"}'
    assert sorted(os.listdir(tmp_path)) == ["ner-s0.json"]
    monkeypatch.undo()
    written = record_run(dict(report), LAYOUT, Run("wnut16", "ner", 0, "ner", 10), trial, size)
    assert (tmp_path / "ner-s0.json").read_text(encoding="utf8") == srsly.json_dumps(written, indent=0) + "\n"


def test_benchmark_resume_names_a_record_it_cannot_read(tmp_path):
    path = tmp_path / "ner-s0.json"
    path.write_text('{"config_sha256": "x", "max_st', encoding="utf8")
    with pytest.raises(ValueError, match=rf"{path} is not a readable record"):
        is_done(path, "x", 10, False, {})


def test_a_runs_trial_and_record_are_where_the_layout_puts_them(tmp_path):
    """Nothing assumes the repository: configs, corpora, records and
    pipelines are read and written where the layout says (a user's project)."""
    layout = Layout(tmp_path / "cfg", tmp_path / "data", tmp_path / "m", tmp_path / "t")
    run = Run("mine", "vectors/ner", 3, "vectors/ner-n50", 100, {"corpora.train.seed": "{seed}"})
    trial = make_trial(layout, run, 250)
    assert trial.name == "mine vectors/ner-n50 seed 3"
    assert trial.config == str(tmp_path / "cfg" / "vectors" / "ner.cfg")
    assert (trial.train, trial.dev, trial.test) == tuple(str(tmp_path / "data" / "mine" / f"{split}.spacy") for split in ("train", "dev", "test"))
    assert trial.metrics == str(tmp_path / "m" / "mine" / "vectors" / "ner-n50-s3.json")
    assert trial.output == str(tmp_path / "t" / "mine" / "vectors" / "ner-n50-s3")
    # the steps it trains (an epochs budget scales them), and its seed in the overrides
    assert trial.max_steps == 250 and trial.seed == 3 and trial.overrides == {"corpora.train.seed": "3"}
