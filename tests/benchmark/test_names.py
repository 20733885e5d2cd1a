"""Run names in metrics/ and training/ (spacy_imbalance/benchmark/names.py)."""
from pathlib import Path

from spacy_imbalance.benchmark.names import run_name, seed_of


def test_benchmark_run_names():
    assert run_name("ner", "n200") == "ner-n200" and run_name("ner", None) == "ner"
    # the empty tag is the untagged run, as None is
    assert run_name("ner", "") == "ner"


def test_seed_of_a_metrics_file():
    assert seed_of(Path("metrics/c/sampled_spancat-m50-s12.json")) == 12
