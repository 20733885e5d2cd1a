"""What Ray buys the audit (audit/validation/workers.py): the measurements
kept and skipped, and their table."""
import json

from spacy_imbalance.audit.validation import workers as module
from spacy_imbalance.audit.validation.workers import Timing, measure_all, workers_table

ROW = {"folds": 4, "steps": 600, "workers": 2, "sequential": {"seconds": 110.1, "peak_mb": 752.3},
       "ray": {"seconds": 82.8, "peak_mb": 663.5}, "ratio": 0.752, "same_outputs": True,
       "suspects": {"sequential": 44, "ray": 44, "shared": 44}}


def test_a_fold_count_measured_before_is_skipped_and_the_rest_added_in_order(tmp_path, monkeypatch):
    record = tmp_path / "workers.json"
    record.write_text(json.dumps({"rows": [ROW], "provenance": {}}), encoding="utf8")
    measured = []

    def measure(timing, k):
        measured.append(k)
        return {**ROW, "folds": k, "same_outputs": False, "suspects": {"sequential": 10, "ray": 9, "shared": 8}}

    monkeypatch.setattr(module, "measure", measure)
    timing = Timing(tmp_path / "train.spacy", tmp_path / "dev.spacy", tmp_path / "work", steps=600, workers=2)
    records = measure_all(timing, [5, 4, 3], record)
    assert measured == [5, 3]
    assert [r["folds"] for r in records["rows"]] == [3, 4, 5] and json.loads(record.read_text(encoding="utf8")) == records
    table = workers_table({**records, "provenance": {"device": "cpu", "cpu": "AMD EPYC", "cpu_cores": 2}}, "my corpus", 0.3)
    lines = table.splitlines()
    assert lines[0] == ("`audit` of my corpus (30 % of its entities removed) on AMD EPYC (2 cores), one fold after another "
                        "and on Ray, timed side by side:")
    assert lines[4:] == ["| 3 | 600 | 110 | 83 (2) | 0.75x | 10 | no (8 of 10 shared) |", "| 4 | 600 | 110 | 83 (2) | 0.75x | 44 | yes |",
                         "| 5 | 600 | 110 | 83 (2) | 0.75x | 10 | no (8 of 10 shared) |"]
