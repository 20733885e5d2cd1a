"""The repository's shape: role folders without loose modules, tests that
mirror the package and the benchmark harness (bench/), and scripts that
import both as packages (the generated docs: tests/test_docs.py)."""
import ast
import re
from pathlib import Path
from typing import Iterator, List

from .conftest import ROOT

PACKAGE = ROOT / "spacy_imbalance"
BENCH = ROOT / "bench"
# the only modules allowed at the top of the package
TOP_LEVEL = {"__init__.py", "__main__.py"}
# loading project files by path instead of importing them: sys.path edits, importlib's file loading
PATH_LOADING = re.compile(r"sys\.path\.(?:insert|append|extend)|sys\.path\s*(?:\+?=|\[)|spec_from_file_location\(")


def code_folders(root: Path) -> Iterator[Path]:
    for folder in [root, *root.rglob("*")]:
        if folder.is_dir() and folder.name != "__pycache__" and any(folder.glob("*.py")):
            yield folder


def test_package_has_no_loose_modules():
    loose = sorted(p.name for p in PACKAGE.glob("*.py") if p.name not in TOP_LEVEL)
    assert loose == [], f"modules outside a role folder: {loose}"


def test_every_package_folder_is_a_package():
    for folder in [*code_folders(PACKAGE), *code_folders(BENCH)]:
        assert (folder / "__init__.py").exists(), f"{folder.relative_to(ROOT)} has modules but no __init__.py"


def test_tests_mirror_the_package():
    """Every test folder names a package folder, so a module's tests are where
    its code is: tests/bench/ mirrors bench/, tests/dev/ dev/, every other one spacy_imbalance/."""
    tests = ROOT / "tests"
    tops = {"bench": BENCH, "dev": ROOT / "dev"}
    for folder in tests.rglob("*"):
        if folder.is_dir() and folder.name != "__pycache__":
            relative = folder.relative_to(tests)
            top = tops.get(relative.parts[0])
            mirrored = top.joinpath(*relative.parts[1:]) if top is not None else PACKAGE / relative
            assert mirrored.is_dir(), f"tests/{relative} mirrors no folder of {mirrored.relative_to(ROOT).parts[0]}/"
    # every role folder with code has its tests
    for folder in PACKAGE.iterdir():
        if folder.is_dir() and folder.name != "__pycache__" and any(folder.glob("*.py")):
            assert list((tests / folder.name).rglob("test_*.py")), f"spacy_imbalance/{folder.name} has no tests in tests/{folder.name}"
    for folder in code_folders(BENCH):
        relative = folder.relative_to(ROOT)
        assert list((tests / relative).glob("test_*.py")), f"{relative} has no tests in tests/{relative}"


def test_scripts_and_tests_import_project_files_as_packages():
    """No sys.path edits and no loading by file path: bench and the package are
    importable packages (the package installed, bench from the clone root run.sh
    puts on the path), scripts/ a folder of the root."""
    found = []
    for path in sorted([*ROOT.glob("scripts/**/*.py"), *ROOT.glob("tests/**/*.py")]):
        name = path.relative_to(ROOT).as_posix()
        if path == Path(__file__):
            continue
        found += [f"{name}: {match}" for match in PATH_LOADING.findall(path.read_text(encoding="utf8"))]
    assert found == [], found


def imported_names(path: Path) -> List[str]:
    """Every module and name an import statement of ``path`` names, dotted."""
    names = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf8"))):
        if isinstance(node, ast.Import):
            names += [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names += [f"{node.module}.{alias.name}" for alias in node.names]
    return names


def test_bench_and_scripts_use_only_public_names_of_the_package():
    private = []
    for path in sorted([*BENCH.rglob("*.py"), *ROOT.glob("scripts/**/*.py")]):
        for name in imported_names(path):
            if name.startswith("spacy_imbalance.") and any(part.startswith("_") for part in name.split(".")):
                private.append(f"{path.relative_to(ROOT)}: {name}")
    assert private == [], private


def test_bench_stands_apart_from_its_location_and_from_the_package():
    """bench may be installed away from the project (the GPU machine installs
    it with --target), so it never finds the project from its own file; and
    the package never needs its benchmark harness."""
    for path in BENCH.rglob("*.py"):
        assert "__file__" not in path.read_text(encoding="utf8"), f"{path.relative_to(ROOT)}: the project root is passed in"
    for path in PACKAGE.rglob("*.py"):
        assert not [name for name in imported_names(path) if name.split(".")[0] == "bench"], path.relative_to(ROOT)


def mapped_folders(text: str) -> List[str]:
    """The folders the layout block of docs/src/development.md names, as paths
    (``spacy_imbalance/corpus/masking``): an entry's indent (two spaces a
    level) puts it under the last entry one level up."""
    block = text.split("```", 2)[1]
    stack: List[str] = []
    paths = []
    for line in block.splitlines():
        match = re.match(r"^( *)([\w.-]+(?:/[\w.-]+)*)/(?:\s|$)", line)
        if not match:
            continue
        level = len(match.group(1)) // 2
        stack = stack[:level] + [match.group(2)]
        paths.append("/".join(stack))
    return paths


def test_development_map_names_every_package_folder():
    """docs/development.md's map names every folder of the package and of
    bench/ under its parent, and no folder that is gone."""
    named = set(mapped_folders((ROOT / "docs" / "src" / "development.md").read_text(encoding="utf8")))
    folders = {
        str(folder.relative_to(ROOT))
        for root in (PACKAGE, BENCH)
        for folder in [root, *root.rglob("*")]
        if folder.is_dir() and folder.name != "__pycache__" and (folder / "__init__.py").exists()
    }
    assert folders - named == set(), f"package folders the map leaves out: {sorted(folders - named)}"
    gone = {path for path in named if path.startswith(("spacy_imbalance", "bench")) and not (ROOT / path).is_dir()}
    assert gone == set(), f"folders the map names that do not exist: {sorted(gone)}"


def test_mapped_folders_reads_nesting_from_the_indent():
    text = "```\npkg/   a\n  sub/   b\n    deep/  c\n  other/ d\ntop/ e\n```"
    assert mapped_folders(text) == ["pkg", "pkg/sub", "pkg/sub/deep", "pkg/other", "top"]
