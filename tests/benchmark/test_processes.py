"""A command measured in a process of its own (spacy_imbalance/benchmark/processes.py)."""
import sys

import pytest

from spacy_imbalance.benchmark.processes import measured

# holds 64 MB for a fifth of a second, then says so
HOLD = "import time; block = bytearray(64 * 2**20); time.sleep(0.2); print('held')"


def test_measured_times_the_command_and_its_peak_memory(tmp_path):
    log = tmp_path / "run.log"
    result = measured([sys.executable, "-c", HOLD], log=str(log))
    assert result["seconds"] >= 0.2
    # the child's resident set held the block; the probe's own memory is not counted
    assert 64 <= result["peak_mb"] < 1024
    assert log.read_text().startswith("held\n")


def test_a_failing_command_ends_the_script_with_its_output():
    with pytest.raises(SystemExit, match="no such thing"):
        measured([sys.executable, "-c", "import sys; sys.exit('no such thing')"])
