"""Facts of bench/facts.py computed from hand-made records: what the docs say
of the scale and audit-workers benchmarks."""
import pytest

from bench.facts import audit_workers, scale


def test_scale_gives_the_marginal_cost_of_each_further_thousand_sentences():
    rows = [
        {"factor": 5, "sentences": 5000, "train": {"seconds": 50.0, "peak_mb": 600.0}, "audit": {"seconds": 200.0, "peak_mb": 700.0}},
        {"factor": 1, "sentences": 1000, "train": {"seconds": 10.0, "peak_mb": 500.0}, "audit": {"seconds": 40.0, "peak_mb": 600.0}},
        {"factor": 10, "sentences": 10000, "train": {"seconds": 80.0, "peak_mb": 650.0}, "audit": {"seconds": 400.0, "peak_mb": 900.0}},
    ]
    out = scale({"rows": rows})
    # sorted by size: 1,000 -> 5,000 -> 10,000 sentences
    # train: (50 - 10) / 4 = 10 s, then (80 - 50) / 5 = 6 s per 1,000; memory 25, then 10 MB per 1,000
    assert out["train"]["marginal_min"] == pytest.approx(6.0) and out["train"]["marginal_max"] == pytest.approx(10.0)
    assert out["train"]["mb_marginal"] == pytest.approx([25.0, 10.0])
    # audit: 160 / 4 = 40 s, 200 / 5 = 40 s: linear; memory 25, then 40 MB per 1,000 (steeper)
    assert out["audit"]["marginal_min"] == pytest.approx(40.0) == out["audit"]["marginal_max"]
    assert out["audit"]["mb_marginal"] == pytest.approx([25.0, 40.0])
    assert (out["audit"]["peak_mb_first"], out["audit"]["peak_mb_last"]) == (600.0, 900.0)
    assert (out["largest_sentences"], out["largest_factor"]) == (10000, 10)


def test_audit_workers_keys_each_ratio_by_folds_and_steps():
    rows = [{"folds": 4, "steps": 600, "ratio": 0.75, "same_outputs": True},
            {"folds": 5, "steps": 2000, "ratio": 0.7, "same_outputs": False}]
    out = audit_workers({"rows": rows})
    assert out["ratio"] == {"k4-600": 0.75, "k5-2000": 0.7}
    assert out["all_same"] is False and out["steps"] == 2000
