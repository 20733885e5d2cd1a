"""Running one "never worse" trial (dev/never_worse/trials.py)."""
from pathlib import Path

import srsly

import spacy_imbalance.sweeps
from dev.never_worse import trials
from spacy_imbalance.sweeps import run_provenance
from spacy_imbalance.sweeps.provenance import missing_fields

from ...conftest import ROOT


def test_a_trials_record_carries_where_when_and_how_it_ran(tmp_path, monkeypatch):
    """The record keeps the trial's provenance (run_trial measures it: tests/sweeps)
    with this command and the overrides the trial trained with."""
    (tmp_path / "configs" / "features").mkdir(parents=True)
    (tmp_path / "configs" / "features" / "ner.cfg").write_text((ROOT / "configs" / "ner.cfg").read_text(encoding="utf8"), encoding="utf8")
    seen = []

    def run_trial(trial):
        seen.append(trial)
        Path(trial.metrics).parent.mkdir(parents=True, exist_ok=True)  # as run_trial makes it
        return {"macro": {"f": 0.5}, "micro": {"f": 0.5}, "train_seconds": 60.0, "provenance": run_provenance(trial.gpu_id)}

    monkeypatch.setattr(spacy_imbalance.sweeps, "run_trial", run_trial)
    monkeypatch.setattr(trials, "rescore", lambda model, dev: [])
    trials.run(tmp_path, "f-ner-m50", {"config": "features/ner", "masked": True}, tmp_path / "corpus", tmp_path / "metrics")
    written = srsly.read_json(tmp_path / "metrics" / "f-ner-m50.json")
    assert missing_fields(written["provenance"]) == []
    assert written["provenance"]["command"]["overrides"] == seen[0].overrides
    assert seen[0].overrides["corpora.train.p"] == "0.5" and seen[0].overrides["training.patience"] == "1000"
