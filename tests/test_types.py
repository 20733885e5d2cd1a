"""The package's type hints are its config schema: mypy checks them with thinc's plugin
(setup.cfg's [mypy]) on every run of the suite. A test rather than a step before it: the
suite's last unit (tests/conftest.py), it fills the time a worker would wait at the end."""
import os
import subprocess
import sys

import pytest

from .conftest import ROOT


@pytest.mark.skipif(os.environ.get("RUN_MYPY", "1") == "0", reason="RUN_MYPY=0 skips the type check")
def test_the_package_type_checks_with_thincs_plugin():
    result = subprocess.run([sys.executable, "-m", "mypy", "spacy_imbalance"], cwd=ROOT, capture_output=True, text=True)
    assert result.returncode == 0, (result.stdout + result.stderr)[-6000:]
    assert "Success: no issues found" in result.stdout
