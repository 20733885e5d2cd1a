"""Running one "never worse" trial (dev/never_worse/trials.py)."""
from pathlib import Path

import pytest
import srsly
from spacy.util import load_config

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


def test_a_trial_from_a_run_is_refused_where_the_run_trained_something_else(tmp_path):
    """A grid run stands for a trial only if it trained the trial's exact
    config: each difference is named, before anything is scored."""
    model = tmp_path / "model-best"
    model.mkdir()
    config = load_config(ROOT / "configs" / "transformer" / "sampled_spancat_uniform.cfg", interpolate=False)
    # the run drew fresh negatives each update (uniform_negatives.v1): not the fixed draw the trial asks
    # for; it masked another share of the entities, with another masking seed
    config["corpora"]["train"].update({"@readers": "spacy-imbalance.MaskedCorpus.v1", "p": 0.3, "seed": 1})
    config.to_disk(model / "config.cfg")
    record = tmp_path / "run.json"
    srsly.write_json(record, {"model": str(model), "config": "transformer/sampled_spancat_uniform", "seed": 0, "max_steps": 1000,
                              "overrides": {"corpora.train.@readers": "spacy-imbalance.MaskedCorpus.v1", "corpora.train.p": "0.3"}})
    spec = {"config": "transformer/sampled_spancat_uniform", "masked": True,
            "set": {"components.sampled_spancat.negatives.@misc": "spacy-imbalance.uniform_negatives.v2"}}
    with pytest.raises(ValueError) as err:
        trials.from_run(ROOT, "t-fixed-m50", spec, record, tmp_path / "corpus", tmp_path)
    message = str(err.value)
    assert "did not train trial t-fixed-m50" in message
    assert "components.sampled_spancat.negatives.@misc = 'spacy-imbalance.uniform_negatives.v1'" in message
    assert "corpora.train.p = 0.3 (the trial: 0.5)" in message
    assert "corpora.train.seed = 1 (the trial: 0)" in message
    assert not (tmp_path / "t-fixed-m50.json").exists()


def test_a_trial_stopped_while_rescoring_is_rescored_not_trained_again(tmp_path, monkeypatch):
    (tmp_path / "configs" / "features").mkdir(parents=True)
    (tmp_path / "configs" / "features" / "ner.cfg").write_text((ROOT / "configs" / "ner.cfg").read_text(encoding="utf8"), encoding="utf8")
    trained = []

    def run_trial(trial):
        trained.append(trial)
        Path(trial.metrics).parent.mkdir(parents=True, exist_ok=True)
        (Path(trial.output) / "model-best").mkdir(parents=True)
        return {"macro": {"f": 0.5}, "micro": {"f": 0.5}, "train_seconds": 60.0, "provenance": run_provenance(trial.gpu_id)}

    def stopped(model, dev):
        raise KeyboardInterrupt  # the session ended while rescoring

    monkeypatch.setattr(spacy_imbalance.sweeps, "run_trial", run_trial)
    monkeypatch.setattr(trials, "rescore", stopped)
    spec = {"config": "features/ner"}
    with pytest.raises(KeyboardInterrupt):
        trials.run(tmp_path, "f-ner-c", spec, tmp_path / "corpus", tmp_path / "metrics")
    assert "decoded" not in srsly.read_json(tmp_path / "metrics" / "f-ner-c.json")
    monkeypatch.setattr(trials, "rescore", lambda model, dev: [{"decoding": "x"}])
    done = trials.run(tmp_path, "f-ner-c", spec, tmp_path / "corpus", tmp_path / "metrics")
    assert len(trained) == 1 and done["decoded"] == [{"decoding": "x"}]
    assert srsly.read_json(tmp_path / "metrics" / "f-ner-c.json")["decoded"] == [{"decoding": "x"}]
