"""Restoring the suspects (audit/validation/restoring.py)."""
from pathlib import Path

import pytest
import spacy
from spacy.tokens import Doc, Span

from spacy_imbalance.audit.validation import restoring as restoring_module
from spacy_imbalance.audit.validation.restoring import corpus_runs, recovered_share, restore
from spacy_imbalance.audit.validation.setting import Restoring, Setting
from spacy_imbalance.audit.validation.steps import Timer
from spacy_imbalance.benchmark.runs import expected_record
from spacy_imbalance.init_config import config_fingerprint
from spacy_imbalance.sweeps import write_record


def test_audit_validation_recovered_share():
    assert recovered_share(full=0.40, masked=0.30, restored=0.35) == pytest.approx(0.5)
    assert recovered_share(full=0.40, masked=0.30, restored=0.28) == pytest.approx(-0.2)
    assert recovered_share(full=0.30, masked=0.30, restored=0.35) is None  # masking lost nothing


def test_audit_validation_restore_never_overlaps():
    nlp = spacy.blank("en")
    doc = Doc(nlp.vocab, words=["Ann", "met", "Bob", "in", "New", "York", "today"])
    doc.ents = [Span(doc, 0, 1, label="PER")]
    suspects = [
        ((0, 0, 2, "ORG"), 0.9),  # overlaps the kept Ann: skipped
        ((0, 4, 6, "LOC"), 0.8),
        ((0, 5, 7, "LOC"), 0.7),  # overlaps the more probable New York: skipped
        ((0, 2, 3, "PER"), 0.6),
    ]
    restored, n = restore([doc], suspects)
    assert n == 2
    assert [(e.start, e.end, e.label_) for e in restored[0].ents] == [(0, 1, "PER"), (2, 3, "PER"), (4, 6, "LOC")]
    assert [(e.start, e.end) for e in doc.ents] == [(0, 1)]  # the input is not changed


def _setting(tmp_path, config, steps=30, limit=None):
    restoring = Restoring(config, Path("test.spacy"), steps=steps, patience=7, reference=str(tmp_path / "ref-s{seed}.json"))
    return Setting(Path("train.spacy"), Path("dev.spacy"), "c", 0.3, 0, tmp_path / "work", vectors="v", limit=limit, restoring=restoring)


def test_the_complete_corpus_run_is_the_reference_where_that_one_is_fresh(tmp_path, monkeypatch):
    config = tmp_path / "x.cfg"
    config.write_text("[training]\npatience = 10\n", encoding="utf8")
    trained = []

    def train(setting, key, train, folder, overrides, timer):
        trained.append((key, train, dict(overrides)))
        return {"trained": key}

    monkeypatch.setattr(restoring_module, "_train", train)
    monkeypatch.setattr(restoring_module, "train_corpus", lambda setting: Path("sample.spacy") if setting.limit else setting.train)
    base = {"training.patience": "7", "paths.vectors": "v"}
    # a finished run of the config on the complete corpus, with this budget and these overrides
    sha = config_fingerprint(config.read_text(encoding="utf8"))
    write_record(tmp_path / "ref-s0.json", {**expected_record(sha, 30, "steps", base), "counts": [], "reference": True})
    timer = Timer(tmp_path / "seconds.json")
    reports = corpus_runs(_setting(tmp_path, config), {"masked": Path("m.spacy")}, timer)
    assert reports["full"]["reference"] is True and reports["masked"] == {"trained": "masked"}
    assert trained == [("masked", Path("m.spacy"), {**base, "paths.train": "m.spacy"})]
    # another budget: the reference is stale, the complete corpus is trained (no paths.train: the whole corpus)
    trained.clear()
    reports = corpus_runs(_setting(tmp_path, config, steps=31), {}, timer)
    assert trained == [("full", Path("train.spacy"), base)] and reports["full"] == {"trained": "full"}
    # a --limit sample is never the reference's corpus
    trained.clear()
    corpus_runs(_setting(tmp_path, config, limit=5), {}, timer)
    assert trained == [("full", Path("sample.spacy"), {**base, "paths.train": "sample.spacy"})]
