"""The repository's shape: role folders without loose modules and tests that
mirror the package (the generated docs: tests/test_docs.py)."""

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
