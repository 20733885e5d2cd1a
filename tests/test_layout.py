"""The repository's shape: role folders without loose modules, tests that
mirror the package, and benchmark write-ups that match metrics/."""
import subprocess
import sys
from pathlib import Path

from .conftest import ROOT

PACKAGE = ROOT / "spacy_imbalance"
# the only modules allowed at the top of the package
TOP_LEVEL = {"__init__.py", "__main__.py"}


def test_package_has_no_loose_modules():
    loose = sorted(p.name for p in PACKAGE.glob("*.py") if p.name not in TOP_LEVEL)
    assert loose == [], f"modules outside a role folder: {loose}"


def test_every_package_folder_is_a_package():
    for folder in PACKAGE.rglob("*"):
        if folder.is_dir() and folder.name != "__pycache__" and any(folder.glob("*.py")):
            assert (folder / "__init__.py").exists(), f"{folder.relative_to(ROOT)} has modules but no __init__.py"


def test_tests_mirror_the_package():
    """Every test folder names a package folder, so a module's tests are where its code is."""
    tests = ROOT / "tests"
    for folder in tests.rglob("*"):
        if folder.is_dir() and folder.name != "__pycache__":
            mirrored = PACKAGE / folder.relative_to(tests)
            assert mirrored.is_dir(), f"tests/{folder.relative_to(tests)} mirrors no folder of spacy_imbalance/"
    # every role folder with code has its tests
    for folder in PACKAGE.iterdir():
        if folder.is_dir() and folder.name != "__pycache__" and any(folder.glob("*.py")):
            assert list((tests / folder.name).rglob("test_*.py")), f"spacy_imbalance/{folder.name} has no tests in tests/{folder.name}"


def test_benchmark_write_ups_match_metrics():
    result = subprocess.run([sys.executable, str(ROOT / "scripts" / "write_docs.py"), "--check"], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr


def test_write_docs_names_a_missing_include(tmp_path):
    sys.path.insert(0, str(ROOT / "scripts"))
    try:
        import write_docs
    finally:
        sys.path.pop(0)
    source = tmp_path / "docs" / "benchmarks" / "src" / "study.md"
    source.parent.mkdir(parents=True)
    (tmp_path / "metrics").mkdir()
    (tmp_path / "metrics" / "table.md").write_text("| a |\n| --- |\n| 1 |\n")
    source.write_text("# Study\n\nprose\n\n<!-- include: metrics/table.md -->\n")
    pages = write_docs.render_all(tmp_path)
    text = pages[tmp_path / "docs" / "benchmarks" / "study.md"]
    assert "prose\n\n| a |\n| --- |\n| 1 |\n" in text
    assert "include:" not in text
    source.write_text("# Study\n\n<!-- include: metrics/missing.md -->\n")
    try:
        write_docs.render_all(tmp_path)
    except FileNotFoundError as err:
        assert "study.md:3" in str(err) and "metrics/missing.md" in str(err)
    else:
        raise AssertionError("a missing include must be an error")
