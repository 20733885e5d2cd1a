"""Thresholds tuned on finished runs (spacy_imbalance/benchmark/tuning.py)."""
import pytest
import srsly

from spacy_imbalance.benchmark.layout import Layout
from spacy_imbalance.benchmark.tuning import is_tuned, write_summary


def test_tune_runs_skips_only_the_same_training_run(tmp_path):
    model = tmp_path / "model-best"
    run = {"config_sha256": "x", "max_steps": 10, "overrides": {}, "train_seconds": 12.5, "seed": 0}
    tuned = {**run, "tuned_from": str(model)}
    assert is_tuned(tuned, run, model)
    assert not is_tuned(tuned, run, tmp_path / "other")
    # the run was trained again into the same folder (another budget)
    assert not is_tuned(tuned, {**run, "max_steps": 2, "train_seconds": 1.0}, model)


def test_tune_runs_summary_keeps_only_fresh_pairs(tmp_path):
    folder = tmp_path / "metrics" / "c"
    folder.mkdir(parents=True)
    run = {"config_sha256": "x", "max_steps": 10, "overrides": {}, "train_seconds": 12.5, "seed": 0}
    model = tmp_path / "training" / "c" / "a-s0" / "model-best"
    srsly.write_json(folder / "a-s0.json", run)
    # tuned from an earlier training run of the same name: not paired with this one
    srsly.write_json(folder / "a-tuned-s0.json", {**run, "max_steps": 2, "tuned_from": str(model)})
    output = write_summary(Layout.at(tmp_path), "c", ["a", "b"], [0, 1], "cal", None)
    assert output.read_text(encoding="utf8") == "No tuned run yet of a, b on c (seeds 0, 1).\n"


def test_a_tuned_record_carries_the_evaluations_provenance_and_this_command(tmp_path, monkeypatch):
    import sys

    from spacy_imbalance.benchmark import tuning
    from spacy_imbalance.sweeps import run_provenance
    from spacy_imbalance.sweeps.provenance import missing_fields

    model = tmp_path / "training" / "c" / "two_task_bce-s0" / "model-best"
    model.mkdir(parents=True)
    srsly.write_json(model / "meta.json", {"pipeline": ["two_task_ner"]})
    (tmp_path / "metrics" / "c").mkdir(parents=True)
    srsly.write_json(tmp_path / "metrics" / "c" / "two_task_bce-s0.json", {"macro": {"f": 0.4}, "seed": 0})

    measured = run_provenance(-1)  # measured before subprocess.run (the module's, which git needs) is replaced

    def run(command, check, stdout):
        # what tune-thresholds and evaluate write (evaluate records its own provenance)
        out = command[command.index("--output") + 1]
        if "evaluate" in command:
            srsly.write_json(out, {"macro": {"f": 0.5}, "provenance": measured})
        else:
            (model.parent / "model-tuned" / "two_task_ner").mkdir(parents=True)
            srsly.write_json(f"{out}/two_task_ner/cfg", {"en_threshold": 0.25, "be_threshold": 0.5})

    monkeypatch.setattr(tuning.subprocess, "run", run)
    monkeypatch.setattr(sys, "argv", ["spacy-imbalance", "benchmark", "tune", "--corpus", "c"])
    tuning.tune_one(Layout.at(tmp_path), "c", "two_task_bce", 0, 0.05, -1)
    written = srsly.read_json(tmp_path / "metrics" / "c" / "two_task_bce-tuned-s0.json")
    assert written["thresholds"] == {"en": 0.25, "be": 0.5}
    assert missing_fields(written["provenance"]) == []
    assert written["provenance"]["command"]["argv"] == ["spacy-imbalance", "benchmark", "tune", "--corpus", "c"]


def test_spacys_spancat_singlelabel_is_tuned_on_dev_and_scored_on_test_like_ours(tmp_path, capsys):
    from spacy.tokens import DocBin

    from spacy_imbalance.benchmark import tuning
    from spacy_imbalance.evaluation.thresholds.builtin import builtin_matcher
    from spacy_imbalance.evaluation.thresholds.grid import default_grid
    from spacy_imbalance.evaluation.thresholds.spans import score_thresholds, search_thresholds
    from spacy_imbalance.scorers.evaluation import evaluate_pipeline
    from spacy_imbalance.sweeps.provenance import missing_fields

    from ..evaluation.thresholds.test_builtin import gold_docs, trained

    nlp = trained(True)
    docs = gold_docs(nlp)
    for doc in docs:
        doc.ents = list(doc.spans["sc"])
    dev, test = docs[::2], docs[1::2]
    corpus = tmp_path / "corpus" / "c"
    corpus.mkdir(parents=True)
    DocBin(docs=dev, store_user_data=True).to_disk(corpus / "dev.spacy")
    DocBin(docs=test, store_user_data=True).to_disk(corpus / "test.spacy")
    model = tmp_path / "training" / "c" / "ssl-s0" / "model-best"
    model.parent.mkdir(parents=True)
    nlp.to_disk(model)
    (tmp_path / "metrics" / "c").mkdir(parents=True)
    untuned = {**evaluate_pipeline(nlp, test, n_resamples=10), "seed": 0, "config_sha256": "x", "max_steps": 4, "name": "ssl"}
    srsly.write_json(tmp_path / "metrics" / "c" / "ssl-s0.json", untuned)
    layout = Layout.at(tmp_path)

    tuning.tune_one(layout, "c", "ssl", 0, 0.05, -1)
    written = srsly.read_json(tmp_path / "metrics" / "c" / "ssl-tuned-s0.json")
    # searched on dev alone, scored on test: as the library does it, with the run's fields kept
    search = search_thresholds(builtin_matcher(nlp, "spancat_singlelabel", dev, floor=0.05), {}, default_grid(0.05))
    assert written["thresholds"] == pytest.approx(search.best) and search.best  # srsly reads 0.3 back as 0.30000000000000004
    on_test = builtin_matcher(nlp, "spancat_singlelabel", test, floor=0.05)
    assert written["macro"]["f"] == pytest.approx(score_thresholds(on_test, search.best)[0])
    assert written["macro"]["f"] != pytest.approx(untuned["macro"]["f"])  # the thresholds changed the test decision
    assert written["counts"] and written["name"] == "ssl-tuned" and written["config_sha256"] == "x"
    assert missing_fields(written["provenance"]) == []
    assert not (model.parent / "model-tuned").exists()  # a score, not a pipeline
    tuning.tune_one(layout, "c", "ssl", 0, 0.05, -1)
    assert "tuned before, skipped" in capsys.readouterr().out
    # a table of ours tuned pairs it with the built-in tuned alike, beside untuned
    srsly.write_json(tmp_path / "metrics" / "c" / "ours-s0.json", {**untuned, "name": "ours"})
    ours_model = str(tmp_path / "training" / "c" / "ours-s0" / "model-best")
    srsly.write_json(tmp_path / "metrics" / "c" / "ours-tuned-s0.json", {**written, "name": "ours-tuned", "tuned_from": ours_model})
    text = tuning.write_summary(layout, "c", ["ours"], [0], "cal", "ssl").read_text(encoding="utf8")
    assert "against `ssl` untuned" in text and "against `ssl` tuned alike" in text
