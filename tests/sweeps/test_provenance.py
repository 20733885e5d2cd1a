"""A run's provenance: package, commit, CPU and cores, torch, and on a GPU
what the GPU is (or why it could not be read)."""
import os

from spacy_imbalance import __version__
from spacy_imbalance.sweeps import run_provenance
from spacy_imbalance.sweeps.provenance import _cuda_version

from ..conftest import ROOT


def test_a_cpu_run_records_the_package_commit_and_cores():
    record = run_provenance(-1, ROOT)
    assert record["package_version"] == __version__
    assert record["device"] == "cpu" and "gpu" not in record
    assert record["cpu_cores"] == len(os.sched_getaffinity(0))
    assert record["torch"].split("+")[0].count(".") == 2
    # a checkout records its commit; a wheel install records None
    assert record["git_commit"] is None or len(record["git_commit"]) == 40


def test_a_gpu_run_without_a_gpu_says_why_instead_of_inventing_one(monkeypatch):
    import sys

    monkeypatch.setitem(sys.modules, "cupy", None)  # import cupy fails
    record = run_provenance(0, ROOT)
    assert record["device"] == "gpu" and record["gpu_id"] == 0
    assert "gpu" not in record and record["gpu_error"].startswith(("ImportError", "ModuleNotFoundError"))


def test_cuda_versions_are_decoded():
    assert _cuda_version(13000) == "13.0" and _cuda_version(12040) == "12.4"
