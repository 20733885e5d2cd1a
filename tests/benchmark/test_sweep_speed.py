"""The trials of the sweep-speed benchmark (spacy_imbalance/benchmark/sweep_speed.py)."""
from spacy_imbalance.benchmark.layout import Layout
from spacy_imbalance.benchmark.sweep_speed import table, trials_for


def test_sweep_speed_trials_are_configs_by_seeds(tmp_path):
    trials = trials_for(Layout.at(tmp_path), "wnut16", ["ner", "token_ner"], [0, 1], 300, tmp_path / "out")
    assert [trial.name for trial in trials] == ["ner seed 0", "ner seed 1", "token_ner seed 0", "token_ner seed 1"]
    first = trials[0]
    assert first.config == str(tmp_path / "configs" / "ner.cfg") and first.max_steps == 300 and first.seed == 0
    assert first.train == str(tmp_path / "corpus" / "wnut16" / "train.spacy") and first.metrics == str(tmp_path / "out" / "ner-s0.json")


def test_sweep_speed_table_gives_each_modes_time_against_the_first():
    result = {"corpus": "c", "configs": ["ner", "x"], "seeds": [0, 1], "max_steps": 300, "same_scores": True, "modes": [
        {"mode": "one after another", "workers": 1, "seconds": 100.0, "trial_seconds": 90.0, "ratio": 1.0},
        {"mode": "Ray, 2 workers", "workers": 2, "seconds": 55.4, "trial_seconds": 96.0, "ratio": 0.554},
    ]}
    lines = table(result).splitlines()
    assert lines[0] == "4 trials (ner, x; seeds 0,1; 300 steps each, one thread per trial) on c, timed side by side on this machine:"
    assert lines[4:6] == ["| one after another | 100 | 1.00 | 90 |", "| Ray, 2 workers | 55 | 0.55 | 96 |"]
    assert lines[-1] == "Test macro-F1 of every trial identical in both modes (same seeds, one thread each)."
