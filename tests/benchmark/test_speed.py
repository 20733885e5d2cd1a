"""The speed benchmark's table (spacy_imbalance/benchmark/speed_table.py)."""

import json
import os

from spacy_imbalance.benchmark.speed_table import Settings, table_lines, write_results
from spacy_imbalance.sweeps.provenance import missing_fields

# 10 timed steps of ~100 words after 1 warm-up; inference in batches of 8, one pass; seed 0, the CPU
SETTINGS = Settings(steps=10, warmup=1, batch_words=100, batch_size=8, repeats=1, seed=0, gpu_id=-1)


def test_speed_table_gives_ratios_against_the_first_config(tmp_path):
    results = {
        "a": {"train_wps": 100.0, "infer_wps": 300.0, "train_peak_rss_mib": 500.0, "infer_peak_rss_mib": 400.0},
        "b": {"train_wps": 150.0, "infer_wps": 200.0, "train_peak_rss_mib": 700.0, "infer_peak_rss_mib": 300.0},
    }
    lines = write_results(results, ["a", "b", "not measured"], "c", SETTINGS, {}, tmp_path, "speed")
    assert lines[0].startswith("Speed and memory on corpus/c, CPU (10 training steps of ~100 words after 1 warm-up;")
    # the cores this process may run on (one where a run is pinned with taskset)
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    assert "ratios against a. Ran on " in lines[0] and lines[0].endswith(f"({cores} {'core' if cores == 1 else 'cores'}).")
    assert lines[4:] == ["| a | 100 | 1.00 | 300 | 1.00 | 500 | 1.00 | 400 | 1.00 |", "| b | 150 | 1.50 | 200 | 0.67 | 700 | 1.40 | 300 | 0.75 |"]
    assert (tmp_path / "speed.md").read_text().splitlines() == lines
    written = json.loads((tmp_path / "speed.json").read_text())
    assert written["baseline"] == "a" and written["results"]["b"]["ratios"]["train_wps"] == 1.5
    assert written["provenance"]["device"] == "cpu"
    # in full (commit, time, machine, libraries, command), with the overrides the configs ran with
    assert missing_fields(written["provenance"]) == [] and written["provenance"]["command"]["overrides"] == {}


def test_gpu_table_has_a_header_cell_for_every_column():
    """On a GPU two memory columns are added: the header once lost its last cell to them, and a
    renderer then showed each training peak under the inference header."""
    results = {"a": {"train_wps": 100.0, "infer_wps": 300.0, "train_peak_rss_mib": 500.0, "infer_peak_rss_mib": 400.0,
                     "train_peak_gpu_mib": 110.0, "infer_peak_gpu_mib": 86.0}}
    lines, _, device = table_lines(results, ["a"], "c", Settings(gpu_id=0))
    table = lines[2:]
    assert device == "GPU 0" and {line.count("|") for line in table} == {12}
    assert table[0].endswith("| ratio | peak GPU train (MiB) | peak GPU inference (MiB) |")
    assert table[2].endswith("| 400 | 1.00 | 110 | 86 |")


def _measure(train: float, infer: float) -> dict:
    return {"train_wps": train, "infer_wps": infer, "train_peak_rss_mib": 500.0, "infer_peak_rss_mib": 400.0, "train_off_gpu": []}


def test_rounds_give_the_median_of_each_rounds_ratio_and_its_range(tmp_path):
    from spacy_imbalance.benchmark.speed_table import combine_rounds

    # round 2 ran on a slower machine state: both sides slowed, its ratio is still 2
    rounds = {"a": [_measure(100, 300), _measure(50, 150), _measure(100, 300)],
              "b": [_measure(150, 300), _measure(100, 300), _measure(300, 300)]}
    results = combine_rounds(rounds, "a")
    assert results["b"]["ratios"]["train_wps"] == 2.0  # median of 1.5, 2, 3
    assert results["b"]["ratio_ranges"]["train_wps"] == [1.5, 3.0]
    assert results["b"]["ratios"]["infer_wps"] == 1.0 and results["b"]["ratio_ranges"]["infer_wps"] == [1.0, 2.0]
    assert results["b"]["train_wps"] == 150 and results["b"]["train_off_gpu"] == [] and len(results["b"]["rounds"]) == 3
    lines = write_results(results, ["a", "b"], "c", SETTINGS, {}, tmp_path, "speed")
    assert "each the median of 3 interleaved rounds (range in brackets)." in lines[0]
    assert lines[5].startswith("| b | 150 | 2.00 [1.50, 3.00] | 300 | 1.00 [1.00, 2.00] |")
    settings = json.loads((tmp_path / "speed.json").read_text())["settings"]
    assert settings == {"steps": 10, "warmup": 1, "batch_words": 100, "batch_size": 8, "repeats": 1, "seed": 0,
                        "device": "CPU", "overrides": {}, "rounds": 3}


def test_a_config_without_a_baseline_round_beside_it_waits_for_one():
    from spacy_imbalance.benchmark.speed_table import combine_rounds

    # the run stopped after b's first round, before a's: no ratio for b yet
    results = combine_rounds({"a": [], "b": [_measure(150, 300)]}, "a")
    assert "ratios" not in results["b"] and "a" not in results
