"""A run's provenance: package, commit, CPU and cores, torch, and on a GPU
what the GPU is (or why it could not be read)."""
import os

from spacy_imbalance import __version__
from spacy_imbalance.sweeps import run_provenance
from spacy_imbalance.sweeps.provenance import _cuda_version, git_dirty, missing_fields

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


def test_a_record_says_when_with_what_and_by_which_command_it_ran(monkeypatch):
    import sys
    from datetime import datetime, timedelta, timezone
    from importlib import metadata

    monkeypatch.setattr(sys, "argv", ["scripts/benchmark.py", "--corpus", "wnut16"])
    record = run_provenance(-1, ROOT, overrides={"corpora.train.p": "0.5"})
    assert missing_fields(record) == []
    when = datetime.fromisoformat(record["time_utc"])
    assert when.tzinfo == timezone.utc and abs(datetime.now(timezone.utc) - when) < timedelta(minutes=1)
    assert record["git_dirty"] in (True, False, None)
    assert record["cpu_count"] == os.cpu_count() and record["cpu_cores"] <= record["cpu_count"]
    for name in ("spacy", "thinc", "numpy", "torch"):
        assert record["libraries"][name] == metadata.version(name)
    assert record["command"] == {"argv": ["scripts/benchmark.py", "--corpus", "wnut16"], "executable": sys.executable,
                                 "overrides": {"corpora.train.p": "0.5"}}
    # no overrides given: none recorded (the writer had none), not an empty guess
    assert "overrides" not in run_provenance(-1, ROOT)["command"]


def _git(folder, *args):
    import subprocess

    subprocess.run(["git", *args], cwd=folder, check=True, capture_output=True)


def test_the_commit_is_dirty_when_code_differs_but_not_for_records_written_since(tmp_path):
    _git(tmp_path, "init", "-q")
    (tmp_path / "metrics").mkdir()
    (tmp_path / "code.py").write_text("a = 1\n")
    (tmp_path / "metrics" / "run.json").write_text("{}\n")
    _git(tmp_path, "add", ".")
    _git(tmp_path, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "-m", "c")
    assert git_dirty(tmp_path) is False
    (tmp_path / "metrics" / "run.json").write_text('{"macro": 1}\n')  # a benchmark writing its records
    (tmp_path / "untracked.py").write_text("")
    assert git_dirty(tmp_path) is False
    (tmp_path / "code.py").write_text("a = 2\n")
    assert git_dirty(tmp_path) is True
    assert git_dirty(tmp_path.parent / "nowhere") is None


def test_missing_fields_names_what_a_provenance_block_lacks():
    full = run_provenance(-1, ROOT)
    assert missing_fields(full) == []
    assert missing_fields(None) == missing_fields({}) == ["provenance"]
    # a record of the first provenance blocks: no time, libraries, command
    old = {key: value for key, value in full.items() if key not in ("time_utc", "libraries", "command", "git_dirty")}
    assert missing_fields(old) == ["git_dirty", "time_utc", "libraries", "command"]
    assert missing_fields({**full, "libraries": {"spacy": "3.8.0"}}) == ["libraries.thinc", "libraries.numpy"]
    assert missing_fields({**full, "command": {"executable": "python"}}) == ["command.argv"]
    # on a GPU the GPU's name, driver, CUDA, CuPy and torch are part of it
    gpu = {**full, "device": "gpu", "gpu": "H100", "driver": "580.1", "cuda_runtime": "13.0", "cupy": "13.6.0"}
    assert missing_fields(gpu) == []
    assert missing_fields({key: value for key, value in gpu.items() if key != "driver"}) == ["driver"]
