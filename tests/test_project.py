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
