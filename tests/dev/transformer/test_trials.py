"""Running the fine-tuning trials (dev/transformer/trials.py)."""
from pathlib import Path

from dev.transformer.trials import kept_config, trial_config


def test_a_trials_config_is_shipped_or_kept_in_training(tmp_path):
    assert trial_config(tmp_path, "t", {"config": "transformer/ner"}) == tmp_path / "configs" / "transformer" / "ner.cfg"
    kept = kept_config(tmp_path, "t", "[nlp]\n")
    assert kept == tmp_path / "training" / "transformer_trials" / "t.cfg" and kept.read_text(encoding="utf8") == "[nlp]\n"


def test_a_trials_record_carries_where_when_and_how_it_ran(tmp_path, monkeypatch):
    """The record keeps the trial's provenance (run_trial measures it: tests/sweeps)
    with this command and the overrides the trial trained with."""
    import srsly

    import spacy_imbalance.sweeps
    from dev.transformer import trials
    from spacy_imbalance.sweeps import run_provenance
    from spacy_imbalance.sweeps.provenance import missing_fields

    from ...conftest import ROOT

    (tmp_path / "configs").mkdir()
    (tmp_path / "configs" / "ner.cfg").write_text((ROOT / "configs" / "ner.cfg").read_text(encoding="utf8"), encoding="utf8")
    seen = []

    def run_trial(trial):
        seen.append(trial)
        Path(trial.metrics).parent.mkdir(parents=True, exist_ok=True)  # as run_trial makes it
        return {"macro": {"f": 0.5}, "micro": {"f": 0.5}, "train_seconds": 60.0, "provenance": run_provenance(trial.gpu_id)}

    monkeypatch.setattr(spacy_imbalance.sweeps, "run_trial", run_trial)
    monkeypatch.setattr(trials, "steps_per_epoch", lambda config, train, overrides: 2)
    spec = {"config": "ner", "set": {"training.dropout": 0.2}}
    trials.run(tmp_path, "t", spec, {"epochs": 1, "seed": 0}, tmp_path / "corpus", tmp_path / "metrics")
    written = srsly.read_json(tmp_path / "metrics" / "t.json")
    assert missing_fields(written["provenance"]) == []
    assert written["provenance"]["command"]["overrides"] == seen[0].overrides == {
        "training.dropout": "0.2", "training.eval_frequency": "2", "training.patience": "0"}
