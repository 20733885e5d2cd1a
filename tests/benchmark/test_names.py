"""Run names in metrics/ and training/ (spacy_imbalance/benchmark/names.py)."""
from pathlib import Path

from spacy_imbalance.benchmark.names import run_name, seed_of, system_run


def test_benchmark_run_names():
    assert run_name("ner", "n200") == "ner-n200" and run_name("ner", None) == "ner"
    # the empty tag is the untagged run, as None is
    assert run_name("ner", "") == "ner"


def test_seed_of_a_metrics_file():
    assert seed_of(Path("metrics/c/sampled_spancat-m50-s12.json")) == 12


def test_a_study_system_with_a_variant_reads_its_own_tag():
    assert system_run("ner", "nw") == ("ner", "nw") and system_run("ner", "") == ("ner", None)
    # ours trained with an override: its runs carry the setting's tag and the variant
    assert system_run("features/sampled_spancat_uniform@v2", "nw_m50") == ("features/sampled_spancat_uniform", "nw_m50_v2")
    assert system_run("sampled_spancat_uniform@v2", "") == ("sampled_spancat_uniform", "v2")
