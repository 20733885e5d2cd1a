"""Thresholds tuned on finished runs (bench/tuning.py)."""
import srsly

from bench.tuning import is_tuned, write_summary


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
    output = write_summary(tmp_path, "c", ["a", "b"], [0, 1], "cal", None)
    assert output.read_text(encoding="utf8") == "No tuned run yet of a, b on c (seeds 0, 1).\n"
