"""The speed benchmark's table (bench/speed.py)."""
import json

from bench.speed import write_results


def test_speed_table_gives_ratios_against_the_first_config(tmp_path):
    results = {
        "a": {"train_wps": 100.0, "infer_wps": 300.0, "train_peak_rss_mib": 500.0, "infer_peak_rss_mib": 400.0},
        "b": {"train_wps": 150.0, "infer_wps": 200.0, "train_peak_rss_mib": 700.0, "infer_peak_rss_mib": 300.0},
    }
    lines = write_results(results, ["a", "b", "not measured"], "c", 10, 1, 100, 8, 1, 0, -1, {}, tmp_path, "speed")
    assert lines[0].startswith("Speed and memory on corpus/c, CPU (10 training steps of ~100 words after 1 warm-up;")
    assert "ratios against a. Ran on " in lines[0] and "cores)." in lines[0]
    assert lines[4:] == ["| a | 100 | 1.00 | 300 | 1.00 | 500 | 1.00 | 400 | 1.00 |", "| b | 150 | 1.50 | 200 | 0.67 | 700 | 1.40 | 300 | 0.75 |"]
    assert (tmp_path / "speed.md").read_text().splitlines() == lines
    written = json.loads((tmp_path / "speed.json").read_text())
    assert written["baseline"] == "a" and written["results"]["b"]["ratios"]["train_wps"] == 1.5
    assert written["provenance"]["device"] == "cpu"
