"""The report of one audit validation setting (bench/audit/validate.py):
its steps are the audit's and training's (tested on their own), here replaced
by stand-ins, so that what the report records is checked in a second."""
import sys

import pytest

from bench.audit import validate as module
from bench.audit.setting import Setting
from spacy_imbalance.corpus import docs_io
from spacy_imbalance.sweeps.provenance import missing_fields


@pytest.fixture
def setting(tmp_path, monkeypatch):
    for name, value in [("check_work_folder", None), ("mask_step", tmp_path / "masked.spacy"), ("audit_step", tmp_path / "audit"),
                        ("read_scored_spans", []), ("cleanlab_step", ([], 0)), ("prune", None), ("restore", ([], 0)),
                        ("restore_runs", []), ("realised_rates", {}), ("selection_scores", {"exact": {"r": 0.5}}),
                        ("method_scores", {"selected": {}}), ("recall_by_label", {}), ("restoring_scores", {"macro_f": {}}),
                        ("read_json", {"labels": {}}), ("estimate_errors", {"total": {"estimate": 0.25}}),
                        ("review_step", {"k": 2, "macro_f": 0.5})]:
        monkeypatch.setattr(module, name, lambda *args, value=value, **kwargs: value)
    monkeypatch.setattr(docs_io, "load_docs", lambda path: [])
    monkeypatch.setattr(docs_io, "write_docbin", lambda docs, path: None)
    monkeypatch.setattr(sys, "argv", ["scripts/audit_validation.py", "--corpus", "c", "--p", "0.3"])
    return Setting("c", 0.3, 1, 5, 10, 0.5, "v", 10, 5, None, None, 10, -1, tmp_path / "work")


def test_a_validation_report_records_where_when_and_how_it_ran(setting):
    report = module.validate(setting)
    assert report["corpus"] == "c" and report["p"] == 0.3 and report["estimate"]["total"]["estimate"] == 0.25
    assert missing_fields(report["provenance"]) == []
    assert report["provenance"]["command"]["argv"] == ["scripts/audit_validation.py", "--corpus", "c", "--p", "0.3"]


def test_a_review_report_records_where_when_and_how_it_ran(setting):
    report = module.review(setting)
    assert report["k"] == 2 and report["seed"] == 1
    assert missing_fields(report["provenance"]) == [] and report["provenance"]["device"] == "cpu"
