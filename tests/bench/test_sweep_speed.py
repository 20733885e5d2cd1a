"""The trials of the sweep-speed benchmark (bench/sweep_speed.py)."""
from bench.sweep_speed import trials_for


def test_sweep_speed_trials_are_configs_by_seeds(tmp_path):
    trials = trials_for(tmp_path, "wnut16", ["ner", "token_ner"], [0, 1], 300, tmp_path / "out")
    assert [trial.name for trial in trials] == ["ner seed 0", "ner seed 1", "token_ner seed 0", "token_ner seed 1"]
    first = trials[0]
    assert first.config == str(tmp_path / "configs" / "ner.cfg") and first.max_steps == 300 and first.seed == 0
    assert first.train == str(tmp_path / "corpus" / "wnut16" / "train.spacy") and first.metrics == str(tmp_path / "out" / "ner-s0.json")
