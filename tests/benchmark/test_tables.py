"""Markdown table lines (spacy_imbalance/benchmark/tables.py)."""
import pytest

from spacy_imbalance.benchmark.tables import head, row


def test_table_head_and_rows():
    assert head(["system", "macro-F1", "types at 0"], "lrl") == ["| system | macro-F1 | types at 0 |", "| --- | --: | --- |"]
    assert row(["ner", "20.0 ± 1.0"]) == "| ner | 20.0 ± 1.0 |"
    with pytest.raises(ValueError, match="2 columns but 3"):
        head(["a", "b"], "lrr")
