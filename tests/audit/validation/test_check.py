"""The report of one check (audit/validation/check.py): its steps are the
audit's and training's (tested on their own), here replaced by stand-ins,
so that what the report records, and which extras ran, is checked in a
second."""
import sys
from pathlib import Path

import pytest

from spacy_imbalance.audit.validation import check as module
from spacy_imbalance.audit.validation.setting import Restoring, Setting
from spacy_imbalance.corpus import docs_io
from spacy_imbalance.sweeps.provenance import missing_fields


@pytest.fixture
def calls(tmp_path, monkeypatch):
    """Stand-ins for every step; the names of those that ran."""
    ran = []
    for name, value in [("check_work_folder", None), ("mask_step", tmp_path / "masked.spacy"), ("audit_step", tmp_path / "audit"),
                        ("read_scored_spans", []), ("cleanlab_step", ([], 0)), ("prune", None), ("restore", ([], 0)),
                        ("corpus_runs", {}), ("realised_rates", {}), ("selection_scores", {"exact": {"r": 0.5}}),
                        ("method_scores", {"selected": {}}), ("recall_by_label", {}), ("restoring_scores", {"macro_f": {}}),
                        ("read_json", {"labels": {}}), ("estimate_errors", {"total": {"estimate": 0.25}}),
                        ("review_step", {"k": 2, "macro_f": 0.5})]:
        monkeypatch.setattr(module, name, lambda *args, name=name, value=value, **kwargs: ran.append(name) or value)
    monkeypatch.setattr(docs_io, "load_docs", lambda path: [])
    monkeypatch.setattr(docs_io, "write_docbin", lambda docs, path: None)
    monkeypatch.setattr(sys, "argv", ["spacy-imbalance", "audit-check", "run", "train.spacy", "--p", "0.3"])
    return ran


def setting(tmp_path, **extras):
    return Setting(Path("train.spacy"), Path("dev.spacy"), "c", 0.3, 1, tmp_path / "work", 5, 10, 0.5, "v", **extras)


def test_a_check_report_records_where_when_and_how_it_ran(tmp_path, calls):
    report = module.validate(setting(tmp_path))
    assert report["corpus"] == "c" and report["p"] == 0.3 and report["estimate"]["total"]["estimate"] == 0.25
    assert report["settings"]["encoder"] == "vectors" and report["settings"]["vectors"] == "v"
    assert missing_fields(report["provenance"]) == []
    assert report["provenance"]["command"]["argv"] == ["spacy-imbalance", "audit-check", "run", "train.spacy", "--p", "0.3"]
    # no extra asked for: none ran, none reported
    assert "cleanlab" not in report and "restoring" not in report
    assert not {"cleanlab_step", "restore", "corpus_runs"} & set(calls)


def test_the_extras_run_when_asked_for_and_are_reported(tmp_path, calls):
    restoring = Restoring(Path("x.cfg"), Path("test.spacy"))
    report = module.validate(setting(tmp_path, cleanlab=Path("token_ner.cfg"), restoring=restoring))
    assert report["cleanlab"] == {"selected": {}, "flagged_tokens": 0} and report["restoring"] == {"macro_f": {}}
    assert {"cleanlab_step", "restore", "corpus_runs", "restoring_scores"} <= set(calls)


def test_a_review_report_records_where_when_and_how_it_ran(tmp_path, calls):
    report = module.review(setting(tmp_path, restoring=Restoring(Path("x.cfg"), Path("test.spacy"))))
    assert report["k"] == 2 and report["seed"] == 1 and report["settings"]["restore_config"] == "x.cfg"
    assert missing_fields(report["provenance"]) == [] and report["provenance"]["device"] == "cpu"


def test_the_result_names_what_the_audit_found_per_label():
    at = {"n": 3, "exact": {"p": 0.5, "r": 0.25}, "overlap": {"p": 0.75, "r": 0.5}}
    report = {
        "masking": {"removed": 4, "kept": 6},
        "audit": {"selected": at, "at_k": {"k": 4, "exact": {"p": 0.5}, "overlap": {"p": 0.75}}, "recall_by_label": {"PER": 0.5}},
        "estimate": {"total": {"estimate": 0.3, "low": 0.2, "high": 0.5, "true": 0.4, "error": -0.1, "covered": True},
                     "labels": {"PER": {"estimate": 0.1, "low": 0.0, "high": 0.2, "true": 0.5, "error": -0.4, "covered": False}}},
    }
    lines = module.result_lines(report)
    assert lines[:2] == ["hidden 4, kept 6", "audit:    3 suspects, P 50.0 R 25.0 (overlap P 75.0 R 50.0), P@4 50.0 (overlap 75.0)"]
    assert lines[2] == "miss rate: estimated 30.0 [20.0, 50.0], true 40.0, error -10.0 points, inside the interval"
    assert lines[3] == ("  PER: recall 50.0 of its hidden entities; miss rate estimated 10.0 [0.0, 20.0], true 50.0, "
                        "error -40.0 points, outside the interval")
    assert len(lines) == 4  # neither cleanlab nor restoring ran
