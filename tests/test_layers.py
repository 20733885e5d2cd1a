"""The package's layers: every import of every module (read with ast, so
those under TYPE_CHECKING and inside functions count too) goes down the
declared order, and no modules import each other in a circle.

A folder is one layer: what a component uses while it trains and predicts
sits below ``pipeline/``; the tools that take a trained pipeline
(``evaluation/``) above it; the commands at the top. A lower folder that
imports a higher one has a function in the wrong home."""
import ast
from pathlib import Path
from typing import Dict, Iterable, List, Set, Tuple

from .conftest import ROOT

PACKAGE = ROOT / "spacy_imbalance"

# low -> high; a module may import its own folder and the folders of lower
# layers only, never a folder of its own layer (peers stand apart)
LAYERS: List[Tuple[str, ...]] = [
    ("decisions", "corpus", "plots"),  # the softmax and the threshold rule; data: no model; writing plots
    ("spans",),  # what sampled_spancat trains and predicts with
    ("layers", "losses", "training"),
    ("models", "scorers"),
    ("pipeline",),  # the components, with pipeline/tagging/ for the token taggers
    ("evaluation",),  # tools that take a trained pipeline
    ("calibration", "init_config", "review"),
    ("sweeps",),
    ("benchmark",),  # the benchmark as a library: summaries of runs; sweeps of configs x seeds run on sweeps/
    ("audit",),
    ("advise",),
    ("cli",),
    ("__main__",),  # python -m spacy_imbalance: the commands
]
# old import paths kept for users: each re-exports its new home and nothing
# of the package imports it (the only arrows allowed to point up)
OLD_PATHS: Dict[str, str] = {
    "spacy_imbalance.spans.thresholds.tuning": "spacy_imbalance.evaluation.thresholds.spans",
    "spacy_imbalance.spans.thresholds.grid": "spacy_imbalance.evaluation.thresholds.grid",
}


def module_files(package: Path) -> Dict[str, Path]:
    """Each module of ``package`` by its dotted name (a folder's __init__.py
    is the folder's name)."""
    modules = {}
    for path in package.rglob("*.py"):
        parts = list(path.relative_to(package.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        modules[".".join(parts)] = path
    return modules


def imports_of(name: str, path: Path, modules: Iterable[str]) -> Set[str]:
    """The package's modules that ``name`` (at ``path``) imports: every
    import statement anywhere in it; ``from X import y`` names the module
    X.y when there is one, else X."""
    known = set(modules)
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found: Set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf8"))):
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                parts = package.split(".")
                base = ".".join(parts[: len(parts) - node.level + 1] + ([node.module] if node.module else []))
            else:
                base = node.module or ""
            targets = [f"{base}.{alias.name}" if f"{base}.{alias.name}" in known else base for alias in node.names]
        else:
            continue
        for target in targets:
            # the module itself, or the package it is in (a name in its __init__)
            while target and target not in known:
                target = target.rpartition(".")[0]
            if target and target != name:
                found.add(target)
    return found


def import_graph(package: Path) -> Dict[str, Set[str]]:
    modules = module_files(package)
    return {name: imports_of(name, path, modules) for name, path in modules.items()}


def cycles(graph: Dict[str, Set[str]]) -> List[List[str]]:
    """The strongly connected components of more than one module (Tarjan),
    each sorted: every one is an import circle."""
    index: Dict[str, int] = {}
    low: Dict[str, int] = {}
    stack: List[str] = []
    on_stack: Set[str] = set()
    found: List[List[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for other in sorted(graph.get(node, ())):
            if other not in index:
                visit(other)
                low[node] = min(low[node], low[other])
            elif other in on_stack:
                low[node] = min(low[node], index[other])
        if low[node] == index[node]:
            component = []
            while True:
                top = stack.pop()
                on_stack.discard(top)
                component.append(top)
                if top == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return sorted(found)


def folder_of(module: str) -> str:
    """The top folder of a module ("" for the package's own __init__)."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else ""


def rank(folder: str) -> int:
    if folder == "":  # the package's __init__: its version, importing nothing
        return -1
    return next(i for i, layer in enumerate(LAYERS) if folder in layer)


def wrong_way(graph: Dict[str, Set[str]]) -> List[str]:
    """Every import of a folder of the same or a higher layer than the
    importing module's own folder, old paths aside."""
    found = []
    for module, targets in sorted(graph.items()):
        if module in OLD_PATHS:
            continue
        for target in sorted(targets):
            here, there = folder_of(module), folder_of(target)
            if here != there and rank(there) >= rank(here):
                found.append(f"{module} -> {target}")
    return found


GRAPH = import_graph(PACKAGE)


def test_every_folder_of_the_package_has_a_layer():
    folders = {folder_of(module) for module in GRAPH} - {""}
    declared = {folder for layer in LAYERS for folder in layer}
    assert folders - declared == set(), f"folders without a layer in LAYERS: {sorted(folders - declared)}"
    assert declared - folders == set(), f"LAYERS names folders that do not exist: {sorted(declared - folders)}"
    assert GRAPH["spacy_imbalance"] == set(), "the package's __init__ imports nothing of it"


def test_no_module_imports_in_a_circle():
    assert cycles(GRAPH) == []


def test_every_import_goes_down_the_layers():
    """No lower folder imports a higher one, no peer imports a peer, and
    no library module imports the commands (cli/ is the top layer)."""
    assert wrong_way(GRAPH) == []


def test_old_paths_only_re_export_their_new_home():
    for old, new in OLD_PATHS.items():
        assert GRAPH[old] == {new}, f"{old} imports {sorted(GRAPH[old])}, not just {new}"
        importers = sorted(module for module, targets in GRAPH.items() if old in targets)
        assert importers == [], f"{old} is an old path for users; the package imports {new}: {importers}"


def test_the_graph_reads_every_kind_of_import(tmp_path):
    """Relative and absolute imports, a name from a package's __init__, and
    imports under TYPE_CHECKING or inside a function are all edges."""
    pkg = tmp_path / "pkg"
    (pkg / "low").mkdir(parents=True)
    (pkg / "high").mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "low" / "__init__.py").write_text("NAME = 1\n")
    (pkg / "low" / "a.py").write_text(
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from ..high.b import B\n\ndef f():\n    import pkg.high.c\n"
    )
    (pkg / "high" / "__init__.py").write_text("")
    (pkg / "high" / "b.py").write_text("from ..low import NAME\nfrom ..low import a\nB = 1\n")
    (pkg / "high" / "c.py").write_text("from pkg.high import b\n")
    graph = import_graph(pkg)
    assert graph["pkg.low.a"] == {"pkg.high.b", "pkg.high.c"}
    assert graph["pkg.high.b"] == {"pkg.low", "pkg.low.a"}
    assert graph["pkg.high.c"] == {"pkg.high.b"}
    # a -> c -> b -> a
    assert cycles(graph) == [["pkg.high.b", "pkg.high.c", "pkg.low.a"]]


def test_the_circle_this_layout_broke_would_be_found():
    """pipeline/sampled_spancat.py -> spans/decoding.py -> spans/scoring.py
    -> (TYPE_CHECKING) pipeline/sampled_spancat.py, as it was: a circle,
    and an arrow up from spans/ to pipeline/."""
    graph = {
        "spacy_imbalance.pipeline.sampled_spancat": {"spacy_imbalance.spans.decoding"},
        "spacy_imbalance.spans.decoding": {"spacy_imbalance.spans.scoring"},
        "spacy_imbalance.spans.scoring": {"spacy_imbalance.pipeline.sampled_spancat"},
        "spacy_imbalance.sweeps.trial": {"spacy_imbalance.cli.evaluate"},
    }
    assert cycles(graph) == [sorted(graph)[:3]]
    assert wrong_way(graph) == [
        "spacy_imbalance.spans.scoring -> spacy_imbalance.pipeline.sampled_spancat",
        "spacy_imbalance.sweeps.trial -> spacy_imbalance.cli.evaluate",
    ]
