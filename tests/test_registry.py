"""Entry points and registered names agree, checked in a fresh interpreter
(catalogue reads entry points once, at import)."""
import configparser
import importlib
import json
import pkgutil
import subprocess
import sys
from pathlib import Path

import pytest

import spacy_imbalance

from .conftest import ROOT

# entry-point group -> spaCy/thinc registry name
GROUPS = {
    "spacy_architectures": "architectures",
    "spacy_factories": "factories",
    "spacy_misc": "misc",
    "spacy_readers": "readers",
    "spacy_augmenters": "augmenters",
    "spacy_scorers": "scorers",
    "spacy_callbacks": "callbacks",
    "spacy_loggers": "loggers",
    "thinc_layers": "layers",
    "thinc_losses": "losses",
    "thinc_optimizers": "optimizers",
    "thinc_schedules": "schedules",
}


def declared_entry_points():
    parser = configparser.ConfigParser()
    parser.read(ROOT / "setup.cfg")
    entries = []
    for group, lines in parser["options.entry_points"].items():
        if group == "console_scripts":
            continue
        assert group in GROUPS, f"setup.cfg declares the entry-point group {group!r}, unknown to this test"
        for line in filter(None, (x.strip() for x in lines.splitlines())):
            name, _, target = (part.strip() for part in line.partition("="))
            entries.append((group, name, target))
    return entries


DECLARED = declared_entry_points()


def test_registry_declares_something():
    assert {group for group, _, _ in DECLARED} >= {"spacy_scorers", "spacy_misc"}


@pytest.fixture(scope="module")
def resolved_in_fresh_interpreter():
    """Every declared name resolved from its entry point alone, by one fresh interpreter that never
    imports spacy_imbalance itself (one for all: an interpreter costs seconds)."""
    names = [[GROUPS[group], name] for group, name, _ in DECLARED]
    code = (
        "import json, sys\n"
        "from spacy.util import registry\n"
        "resolved = {}\n"
        "for reg_name, name in json.loads(sys.argv[1]):\n"
        # the entry point itself, not registry.get: that falls back to names an earlier entry
        # point's import registered as a side effect, which would hide a missing entry point
        # (spaCy reads factories' entry points through a registry of their own)
        "    reg = registry._entry_point_factories if reg_name == 'factories' else getattr(registry, reg_name)\n"
        "    func = reg.get_entry_point(name)\n"
        "    resolved[reg_name + ' ' + name] = func and f'{func.__module__}:{func.__name__}'\n"
        "print(json.dumps(resolved))\n"
    )
    out = subprocess.run([sys.executable, "-c", code, json.dumps(names)], capture_output=True, text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


@pytest.mark.parametrize("group,name,target", DECLARED, ids=[n for _, n, _ in DECLARED])
def test_registry_entry_point_resolves_in_fresh_interpreter(resolved_in_fresh_interpreter, group, name, target):
    assert resolved_in_fresh_interpreter[f"{GROUPS[group]} {name}"] == target


def test_registry_every_registered_name_is_declared():
    for info in pkgutil.walk_packages(spacy_imbalance.__path__, "spacy_imbalance."):
        if info.name != "spacy_imbalance.__main__":
            importlib.import_module(info.name)
    from spacy.util import registry

    declared = {(GROUPS[group], name) for group, name, _ in DECLARED}
    registered = {
        (reg_name, name)
        for reg_name in set(GROUPS.values())
        for name, func in getattr(registry, reg_name).get_all().items()
        if getattr(func, "__module__", "").startswith("spacy_imbalance")
    }
    assert registered, "nothing of spacy_imbalance is registered"
    assert registered == declared, f"registered but not declared: {registered - declared}; declared but not registered: {declared - registered}"


def test_registry_console_script_runs():
    script = Path(sys.executable).parent / "spacy-imbalance"
    out = subprocess.run([str(script), "--help"], capture_output=True, text=True, check=True)
    for command in ("convert", "default-corpus", "stats", "evaluate", "compare", "summarize"):
        assert command in out.stdout
