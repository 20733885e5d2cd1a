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


def test_finetuned_vs_features_pairs_seeds_and_keeps_each_devices_minutes(tmp_path):
    import srsly

    from bench.facts import FINE_TUNED, finetuned_vs_features

    from .headline.test_table import headline_run

    runs = []
    for system in FINE_TUNED:
        for encoder, found in (("features", {"A": 2}), ("transformer", {"A": 4})):
            for seed in range(3):
                device = "cpu" if encoder == "features" or seed == 0 else "gpu"
                seconds = {"features": 300.0, "cpu": 3000.0, "gpu": 360.0 + 60 * seed}[device if encoder == "transformer" else "features"]
                headline_run(tmp_path, f"{encoder}-{system}", seed, found, seconds=seconds)
                path = tmp_path / f"{encoder}-{system}-s{seed}.json"
                runs.append({**srsly.read_json(path), "provenance": {"device": device}})
    out = finetuned_vs_features(*runs)
    assert set(out) == set(FINE_TUNED)
    ner = out["ner"]
    # every fine-tuned run finds all 4 entities, every features run the first 2: F 1 against 2/3
    assert ner["macro_f"]["delta"] == pytest.approx(1 / 3)
    # a resample of the found sentences alone ties (F 1 both): the interval touches 0, never crosses it
    assert ner["macro_f"]["low"] == 0.0 and ner["macro_f"]["high"] == pytest.approx(1.0)
    assert ner["minutes_features"] == pytest.approx(5.0)
    # seed 0 on the CPU (50 min), seeds 1 and 2 on the GPU (7 and 8 min): never averaged together
    assert ner["minutes_fine_tuned"] == {"cpu": pytest.approx(50.0), "gpu": pytest.approx(7.5)}
