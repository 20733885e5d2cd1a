"""The write-up of the fine-tuning trials (dev/transformer/trials_table.py)."""
import pytest
import srsly

from dev.transformer.trials_table import features_table, minutes_to, table


def test_minutes_to_a_dev_score():
    curve = [[0, 0.0], [100, 0.2], [200, 0.4], [400, 0.3]]
    # 600 s over 400 steps: 0.4 first at step 200
    assert minutes_to(curve, 600.0, 0.4) == pytest.approx(5.0)
    assert minutes_to(curve, 600.0, 0.5) is None and minutes_to([], 600.0, 0.1) is None


def test_trials_table_row_per_trial(tmp_path):
    report = {
        "config": "transformer/ner", "revision": None, "overrides": {"training.optimizer.learn_rate.initial_rate": 3.0e-4},
        "epochs": 2, "steps_per_epoch": 100, "macro": {"f": 0.3}, "micro": {"f": 0.4}, "train_seconds": 600.0,
        "dev_curve": [[0, 0.0], [100, 0.25], [200, 0.3]],
    }
    srsly.write_json(tmp_path / "a.json", report)
    lines = table(["a", "b"], tmp_path).splitlines()
    assert lines[1] == "| --- | --- | --- | --: | --: | --: | --: | --- | --: |"
    assert lines[2] == "| a | transformer/ner | learn_rate = 0.0003 | 2 | 30.0 | 40.0 | 2 | 25 30 | 10 |"
    assert lines[3] == "| b | | not run yet | | | | | | |"
    # no frozen-features run of the same system: no comparison
    assert features_table(tmp_path, ["a"], tmp_path, "wnut17") == ""
