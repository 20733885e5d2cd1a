"""A benchmark as one sweep on the shared runner (spacy_imbalance/benchmark/sweep.py):
what is fresh is skipped and said to be, what is stale trains, and each
record is completed with its run's fields; trained here by a stand-in."""
import shutil

import pytest
import srsly

from spacy_imbalance.benchmark.layout import Layout
from spacy_imbalance.benchmark.sweep import Benchmark, summarize, train
from spacy_imbalance.sweeps import run_provenance, write_record
from spacy_imbalance.sweeps import runner as runner_module

from ..conftest import ROOT


@pytest.fixture
def layout(tmp_path, toy_corpus):
    (tmp_path / "corpus" / "toy").mkdir(parents=True)
    for split in ("train", "dev"):
        shutil.copy(toy_corpus / f"{split}.spacy", tmp_path / "corpus" / "toy" / f"{split}.spacy")
    return Layout(ROOT / "configs", tmp_path / "corpus", tmp_path / "metrics", tmp_path / "training")


@pytest.fixture
def trained(monkeypatch):
    """run_trial replaced by one that writes a report as a trial does, and remembers the trial."""
    ran = []
    measured = run_provenance(-1)

    def run_trial(trial, on_evaluation=None):
        ran.append((trial.name, trial.max_steps, trial.overrides))
        write_record(trial.metrics, {"name": trial.name, "macro": {"f": 0.3, "p": 0.3, "r": 0.3}, "micro": {"f": 0.4, "p": 0.4, "r": 0.4},
                                     "per_type": {"PER": {"p": 0.3, "r": 0.3, "f": 0.3}}, "train_seconds": 1.0, "train_steps": trial.max_steps,
                                     "dev_curve": [[0, 0.1]], "provenance": measured})
        return srsly.read_json(trial.metrics)

    monkeypatch.setattr(runner_module, "run_trial", run_trial)
    return ran


def test_a_benchmark_trains_what_is_stale_and_completes_each_record(layout, trained):
    benchmark = Benchmark(["toy"], ["ner"], [0, 1], 5, {"training.dropout": "0.{seed}"}, tag="t")
    said = []
    assert train(benchmark, layout, say=said.append) == 2
    # each run's own seed in its overrides, the step budget as given
    assert trained == [("toy ner-t seed 0", 5, {"training.dropout": "0.0"}), ("toy ner-t seed 1", 5, {"training.dropout": "0.1"})]
    assert said[0] == "Training 2 runs" and said[1].startswith("[1/2 trained] toy ner-t seed 0: macro-F1 30.0, micro-F1 40.0, size x1.00")
    record = srsly.read_json(layout.record("toy", "ner-t", 1))
    assert record["name"] == "ner-t" and record["seed"] == 1 and record["max_steps"] == 5 and record["budget"] == "steps"
    assert record["overrides"] == {"training.dropout": "0.{seed}"} and record["provenance"]["command"]["overrides"] == {"training.dropout": "0.1"}
    assert record["train_sentences"] == 60 and record["size_factor"] == 1.0

    trained.clear()
    said.clear()
    assert train(benchmark, layout, say=said.append) == 0 and trained == []
    assert said == [f"[{i + 1}/2] toy ner-t seed {i}: done before with this config, skipped ({layout.record('toy', 'ner-t', i)})" for i in (0, 1)]
    # a comparison needs per-sentence counts, which these records lack: both train again
    assert train(Benchmark(["toy"], ["ner"], [0, 1], 5, {"training.dropout": "0.{seed}"}, tag="t", baseline="ner"), layout, say=said.append) == 2
    # and another budget is another run
    trained.clear()
    assert train(Benchmark(["toy"], ["ner"], [0], 6, {"training.dropout": "0.{seed}"}, tag="t"), layout, say=said.append) == 1


def test_a_benchmark_summary_pools_the_seeds_of_each_run(layout, trained):
    benchmark = Benchmark(["toy"], ["ner"], [0, 1], 5)
    train(benchmark, layout, say=lambda line: None)
    shown = []
    summarize(benchmark, layout, "s", plots=False, say=shown.append)
    table = (layout.metrics / "toy" / "s.md").read_text(encoding="utf8")
    assert table == shown[0] and "| ner | 2 | 30.0 ± 0.0 | 40.0 ± 0.0 | 30.0 ± 0.0 | 30.0 ± 0.0 |" in table
    assert srsly.read_json(layout.metrics / "toy" / "s.json")["ner"]["runs"] == 2
    assert not (layout.metrics / "toy" / "s_per_type_f1.png").exists()
