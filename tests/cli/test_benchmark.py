"""`spacy-imbalance benchmark`: a tiny run trained, resumed and recorded with
provenance in a project folder of its own (configs/ and corpus/ where the
command runs, not the repository), and bad options named before anything runs."""
import shutil

import pytest
import srsly

from spacy_imbalance.sweeps.provenance import missing_fields

from ..conftest import ROOT
from ._cli import _assert_failed, _invoke, _plain


@pytest.fixture
def project(tmp_path, toy_corpus, monkeypatch):
    """A user's project: configs/ner.cfg and corpus/toy/{train,dev,test}.spacy, the current folder."""
    (tmp_path / "configs").mkdir()
    shutil.copy(ROOT / "configs" / "ner.cfg", tmp_path / "configs" / "ner.cfg")
    (tmp_path / "corpus" / "toy").mkdir(parents=True)
    for split, source in (("train", "train"), ("dev", "dev"), ("test", "dev")):
        shutil.copy(toy_corpus / f"{source}.spacy", tmp_path / "corpus" / "toy" / f"{split}.spacy")
    monkeypatch.chdir(tmp_path)
    return tmp_path


# two steps, evaluated at each: model-best exists after the first evaluation
TINY = ["benchmark", "run", "--corpus", "toy", "--config", "ner", "--seed", "0", "--max-steps", "2",
        "--set", "training.eval_frequency=1"]


@pytest.mark.slow
def test_benchmark_run_trains_records_and_resumes(project):
    first = _invoke(*TINY)
    assert first.exit_code == 0, first.output
    assert "Training 1 runs" in first.output and "[1/1 trained] toy ner seed 0: macro-F1" in first.output
    record = srsly.read_json(project / "metrics" / "toy" / "ner-s0.json")
    # named as the run (summaries pool its seeds), with what resuming compares
    assert record["name"] == "ner" and record["corpus"] == "toy" and record["config"] == "ner" and record["seed"] == 0
    assert record["max_steps"] == 2 and record["budget"] == "steps" and record["overrides"] == {"training.eval_frequency": "1"}
    assert record["train_steps"] == 2 and [step for step, _ in record["dev_curve"]] == [0, 1, 2]
    # where, when and how it ran, in full, with this command and the run's overrides
    assert missing_fields(record["provenance"]) == []
    assert record["provenance"]["command"]["overrides"] == {"training.eval_frequency": "1"}
    assert (project / "training" / "toy" / "ner-s0" / "model-best").is_dir()
    summary = (project / "metrics" / "toy" / "summary.md").read_text(encoding="utf8")
    # one run, which the step cap ended with dev at its best (†)
    assert summary.startswith("| system | runs | macro-F1 |") and "| ner† | 1 |" in summary

    second = _invoke(*TINY)
    assert second.exit_code == 0, second.output
    # fresh: nothing trains, the record is left as it was
    assert "[1/1] toy ner seed 0: done before with this config, skipped (metrics/toy/ner-s0.json)" in second.output
    assert "Training" not in second.output and "trained" not in second.output
    assert srsly.read_json(project / "metrics" / "toy" / "ner-s0.json") == record


@pytest.mark.parametrize(
    "args, named",
    [
        (["--baseline", "spancat"], "--baseline spancat is not one of the --config values (ner)"),
        (["--seed", "a"], "--seed"),
        (["--seed", ","], "expected at least one seed"),
        (["--set", "no-equals"], "expected KEY=VALUE, got 'no-equals'"),
        (["--set", "a=1", "--set", "a=2"], "a is set twice"),
        (["--max-steps", "0"], "--max-steps must be in [1, inf], got 0"),
        (["--jobs", "0"], "--jobs must be in [1, inf], got 0"),
    ],
)
def test_benchmark_run_names_a_bad_option(project, args, named):
    result = _invoke("benchmark", "run", "--corpus", "toy", "--config", "ner", *args)
    _assert_failed(result, named)
    assert not (project / "metrics").exists() and not (project / "training").exists()


def test_benchmark_run_names_a_config_or_corpus_its_folders_lack(project):
    result = _invoke("benchmark", "run", "--corpus", "toy", "--corpus", "mine", "--config", "ner", "--config", "vectors/ner")
    _assert_failed(result, "Not found: --config vectors/ner (configs/vectors/ner.cfg); --corpus mine (corpus/mine)", "--configs-dir")
    # another folder of configs: the same name resolves there
    (project / "elsewhere").mkdir()
    result = _invoke("benchmark", "run", "--corpus", "toy", "--config", "ner", "--configs-dir", "elsewhere")
    _assert_failed(result, "--config ner (elsewhere/ner.cfg)")
    assert not (project / "metrics").exists()


def test_benchmark_only_selecting_nothing_returns_at_once(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    result = _invoke("benchmark", "run", "--corpus", "c", "--config", "ner", "--only", "nothing")
    assert result.exit_code == 0 and result.output == "--only nothing: no run of this benchmark is selected\n"
    assert not (tmp_path / "metrics").exists()


def test_benchmark_tune_names_a_run_that_has_not_finished(project):
    result = _invoke("benchmark", "tune", "--corpus", "toy", "--config", "ner", "--seed", "0")
    _assert_failed(result, "no finished run ner seed 0 on toy")
    _assert_failed(_invoke("benchmark", "tune", "--corpus", "toy", "--config", "ner", "--step", "1.5"), "--step must be in (0, 1), got 1.5")


def test_benchmark_speed_and_table_name_a_bad_option(project):
    _assert_failed(_invoke("benchmark", "speed", "--corpus", "toy", "--config", "ner", "--rounds", "0"), "--rounds must be in [1, inf], got 0")
    _assert_failed(_invoke("benchmark", "speed", "--corpus", "toy", "--config", "nothing"), "--config nothing (configs/nothing.cfg)")
    table = ["benchmark", "table", "t", "--corpus", "toy", "--config", "ner"]
    _assert_failed(_invoke(*table, "--setting", "n50"), "--setting: expected TAG=LABEL, got 'n50'")
    _assert_failed(_invoke(*table, "--setting", "n50=50", "--baseline", "x"), "--baseline x is not among the --config values (ner)")
    _assert_failed(_invoke(*table, "--setting", "n50=50"), "--corpus toy: no records in metrics/toy")


def test_benchmark_table_writes_a_study_from_tagged_runs(project):
    folder = project / "metrics" / "toy"
    folder.mkdir(parents=True)
    for seed, f in ((0, 0.2), (1, 0.4)):
        srsly.write_json(folder / f"ner-n50-s{seed}.json", {"macro": {"f": f, "p": f, "r": f}, "micro": {"f": f / 2}})
    result = _invoke("benchmark", "table", "low", "--corpus", "toy", "--config", "ner", "--setting", "n50=50", "--xlabel", "sentences")
    assert result.exit_code == 0, result.output
    text = (folder / "low.md").read_text(encoding="utf8")
    assert "| ner | 30.0 ± 14.1 |" in text and "| ner | 15.0 ± 7.1 |" in text
    assert "### toy: macro-F1" in _plain(result.output)


@pytest.mark.slow
def test_benchmark_speed_measures_each_phase_in_a_process_of_its_own(project):
    result = _invoke("benchmark", "speed", "--corpus", "toy", "--config", "ner", "--steps", "2", "--warmup", "0",
                     "--batch-words", "50", "--repeats", "1", "--name", "tiny")
    assert result.exit_code == 0, result.output
    written = srsly.read_json(project / "metrics" / "toy" / "tiny.json")
    measured = written["results"]["ner"]
    # each process's own peak, and the words it timed
    assert measured["train_words"] >= 2 * 50 and measured["train_wps"] > 0 and measured["infer_wps"] > 0
    assert measured["train_peak_rss_mib"] > 0 and measured["infer_peak_rss_mib"] > 0
    assert written["settings"]["steps"] == 2 and written["baseline"] == "ner" and missing_fields(written["provenance"]) == []
    assert "| ner |" in (project / "metrics" / "toy" / "tiny.md").read_text(encoding="utf8")
