"""Running the fine-tuning trials (bench/transformer/trials.py)."""
from bench.transformer.trials import kept_config, trial_config


def test_a_trials_config_is_shipped_or_kept_in_training(tmp_path):
    assert trial_config(tmp_path, "t", {"config": "transformer/ner"}) == tmp_path / "configs" / "transformer" / "ner.cfg"
    kept = kept_config(tmp_path, "t", "[nlp]\n")
    assert kept == tmp_path / "training" / "transformer_trials" / "t.cfg" and kept.read_text(encoding="utf8") == "[nlp]\n"
