"""Paired comparisons of runs (spacy_imbalance/benchmark/paired.py)."""
import numpy
import pytest
import srsly
import typer

from spacy_imbalance.benchmark.paired import compare_with_baseline, paired_by_seed
from spacy_imbalance.benchmark.study.markdown import paired_markdown
from spacy_imbalance.scorers.counts import MatchCounts


def counts(tp):
    """One label over len(tp) test sentences, each with one entity, found where tp is 1."""
    table = numpy.array([[[1, 0, 0]] if found else [[0, 0, 1]] for found in tp], dtype="int64")
    return MatchCounts(["X"], table).to_sparse()


def test_study_table_pairs_runs_by_seed(tmp_path):
    folder = tmp_path / "metrics" / "c"
    folder.mkdir(parents=True)
    # 4 test sentences, one label: the baseline finds 2 of 4 entities, the
    # system all 4 (seed 0) or the same 2 (seed 1); seed 2 only has a baseline
    half = counts([1, 1, 0, 0])
    srsly.write_json(folder / "base-p1-s0.json", {"counts": half})
    srsly.write_json(folder / "base-p1-s1.json", {"counts": half})
    srsly.write_json(folder / "base-p1-s2.json", {"counts": half})
    srsly.write_json(folder / "sys-p1-s0.json", {"counts": counts([1, 1, 1, 1])})
    srsly.write_json(folder / "sys-p1-s1.json", {"counts": half})
    diff = paired_by_seed(folder, "sys", "base", "p1")
    assert diff["seeds"] == [0, 1]
    # F1 2/3 -> 1 on seed 0, unchanged on seed 1: mean delta (1 - 2/3) / 2
    assert diff["macro_f"]["delta"] == pytest.approx(1 / 6)
    assert paired_by_seed(folder, "sys", "base", "p2") is None
    text = paired_markdown({("sys", "p1"): diff}, ["base", "sys"], "base", [("p1", "1%"), ("p2", "2%")], "share")
    row = next(line for line in text.splitlines() if line.startswith("| sys |"))
    assert row.startswith("| sys | +16.7 [") and row.endswith(" | – |")
    srsly.write_json(folder / "sys-p1-s1.json", {"macro": {}})
    with pytest.raises(typer.BadParameter, match="sys-p1-s1.json"):
        paired_by_seed(folder, "sys", "base", "p1")


def test_compare_with_baseline_writes_a_row_per_other_system(tmp_path):
    for seed in (0, 1):
        srsly.write_json(tmp_path / f"base-s{seed}.json", {"counts": counts([1, 1, 0, 0])})
        srsly.write_json(tmp_path / f"sys-s{seed}.json", {"counts": counts([1, 1, 1, 1])})
    result, table = compare_with_baseline(tmp_path, ["base", "sys"], [0, 1], "base")
    assert list(result["systems"]) == ["sys"] and result["n_resamples"] == 1000
    # F1 2/3 -> 1: +33.3 points, macro and micro alike (one label), never worse on a resample
    row = next(line for line in table.splitlines() if line.startswith("| sys |"))
    cells = row.strip("| ").split(" | ")
    assert cells[1] == cells[3] == "+33.3" and cells[2] == cells[4] and cells[2].startswith("[+")
    assert cells[5] == f"{result['systems']['sys']['macro_f']['share_not_better']:.3f}"
    assert table.startswith("Paired bootstrap against `base` (mean difference over seeds 0, 1,")
