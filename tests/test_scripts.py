"""The scripts of scripts/ are command-line entry points over the bench
package (their library code is tested in tests/bench/): each one starts
from any folder, with bench importable from the clone's root (run.sh puts it on the
environment's path; it is not installed with the package)."""
import subprocess
import sys

import pytest

from .conftest import ROOT

SCRIPTS = sorted(ROOT.glob("scripts/**/*.py"))
# the scripts that import bench: importable through the clone root run.sh adds to the path
BENCH_SCRIPTS = [path for path in SCRIPTS if "from bench" in path.read_text(encoding="utf8")]


def test_the_benchmark_scripts_use_bench():
    names = {path.relative_to(ROOT / "scripts").as_posix() for path in BENCH_SCRIPTS}
    assert {"benchmark.py", "study_table.py", "headline_table.py", "audit_validation.py", "gpu/check_configs.py"} <= names


@pytest.mark.parametrize("script", BENCH_SCRIPTS, ids=lambda path: path.relative_to(ROOT / "scripts").as_posix())
def test_a_script_starts_from_another_folder(script, tmp_path):
    result = subprocess.run([sys.executable, str(script), "--help"], cwd=tmp_path, capture_output=True, text=True)
    assert result.returncode == 0, result.stderr[-2000:]
    assert "Usage:" in result.stdout or "usage:" in result.stdout


def test_benchmark_only_selecting_nothing_returns_at_once(tmp_path):
    result = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "benchmark.py"), "--only", "nothing", "--root", str(tmp_path)],
        cwd=tmp_path, capture_output=True, text=True,
    )
    assert result.returncode == 0, result.stderr[-2000:]
    assert result.stdout == "--only nothing: no run of this benchmark is selected\n"
    assert not (tmp_path / "metrics").exists()
