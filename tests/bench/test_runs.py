"""One benchmark run: the resume check and the record (bench/runs.py)."""
import srsly

from bench.runs import is_done, record_run

from ..conftest import ROOT


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
    record_run(report, "wnut16", "vectors/ner", 2, 100, -1, ROOT, {"corpora.train.p": "0.5"}, trial, size=size, name="vectors/ner-m50")
    written = srsly.read_json(tmp_path / "vectors" / "ner-m50-s2.json")
    # named as the run, so that a summary pools its seeds into one row
    assert written["name"] == "vectors/ner-m50"
    assert written["provenance"]["package_version"] == __version__
    assert written["provenance"]["device"] == "cpu" and written["provenance"]["cpu_cores"] >= 1
