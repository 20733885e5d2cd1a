"""The `demo` workflow of project.yml runs end to end (steps limited by
SPACY_CONFIG_OVERRIDES, as in explosion/projects' CI)."""
import os
import shutil
import subprocess
import sys

import pytest
import srsly

from .conftest import ROOT


@pytest.mark.slow
def test_project_demo_workflow(tmp_path):
    project = tmp_path / "project"
    project.mkdir()
    shutil.copy(ROOT / "project.yml", project)
    shutil.copytree(ROOT / "configs", project / "configs")
    shutil.copytree(ROOT / "scripts", project / "scripts")
    # commands depend on the package sources (a change re-runs them), as in the repository root
    (project / "spacy_imbalance").symlink_to(ROOT / "spacy_imbalance", target_is_directory=True)
    env = dict(os.environ, SPACY_CONFIG_OVERRIDES="--training.max_steps=6 --training.eval_frequency=3")
    result = subprocess.run(
        [sys.executable, "-m", "spacy", "project", "run", "demo", str(project)],
        capture_output=True, text=True, env=env, cwd=project,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    for split, n in (("train", 1675), ("dev", 359), ("test", 360)):
        assert (project / "corpus" / "wnut16" / f"{split}.spacy").exists()
    report = srsly.read_json(project / "metrics" / "demo" / "ner.json")
    assert report["n_docs"] == 360 and report["target"] == "ents"
    # the table of macro, micro and per-type scores is printed
    assert "macro" in result.stdout and "micro" in result.stdout and "person" in result.stdout


def test_project_benchmarks_use_existing_configs_and_declare_them():
    """Every --config a command trains exists in configs/ and is among the
    command's deps (so editing it re-runs the command), and every config of
    configs/ is trained by some command."""
    import re

    project = srsly.read_yaml(ROOT / "project.yml")
    used = set()
    for command in project["commands"]:
        script = " ".join(command.get("script", []))
        for config in re.findall(r"--config (\S+)", script):
            used.add(config)
            assert (ROOT / "configs" / f"{config}.cfg").exists(), f"{command['name']}: no configs/{config}.cfg"
            assert f"configs/{config}.cfg" in command["deps"], f"{command['name']}: configs/{config}.cfg not in deps"
        for path in re.findall(r"configs/([\w-]+)\.cfg", script):
            used.add(path)
    shipped = {p.stem for p in (ROOT / "configs").glob("*.cfg")}
    assert shipped <= used, f"configs no command trains: {sorted(shipped - used)}"
