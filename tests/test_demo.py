"""The README's demo as a new user meets it (issue 44): in a fresh clone it
trains both systems, whatever the committed reference run under
metrics/demo/ records, writes the user's runs to runs/demo/ (ignored by git),
prints the time it took with the machine, and ends with commands that work
on the user's own CoNLL file.

`bash run.sh demo` installs, then runs `python -m spacy project run demo .`
with the environment's interpreter: the tests run that command with this
environment's interpreter (installing again would repoint it), on the full
embedded corpus, with a few training steps."""
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path
from typing import Dict, List

import pytest
import srsly

from .conftest import ROOT

STEPS = 10
SYSTEMS = ("ner-m50", "sampled_spancat_uniform-m50")
# the demo's line of run.sh, after its install
RUN_SH_DEMO = '"$VENV/bin/python" -m spacy project run demo . "$@"'


def fresh_clone(folder: Path) -> Path:
    """The files a clone of this working tree holds (tracked, or new and not
    ignored), without what earlier runs left (corpus/, training/, runs/)."""
    listed = subprocess.run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        cwd=ROOT, capture_output=True, check=True,
    ).stdout.decode("utf8").split("\0")
    clone = folder / "spacy-imbalance"
    for name in filter(None, listed):
        source = ROOT / name
        if source.is_file():  # a tracked file deleted in the working tree is not in a clone of it
            target = clone / name
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(source.read_bytes())
    return clone


def committed_demo(root: Path) -> Dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted((root / "metrics" / "demo").rglob("*")) if p.is_file()}


@pytest.fixture(scope="module")
def demo(tmp_path_factory):
    """The clone and what `spacy project run demo` printed there."""
    clone = fresh_clone(tmp_path_factory.mktemp("user"))
    env = {key: value for key, value in os.environ.items() if not key.endswith("CONFIG_OVERRIDES")}
    result = subprocess.run(
        [sys.executable, "-m", "spacy", "project", "run", "demo", ".", "--vars.demo_steps", str(STEPS)],
        cwd=clone, env=env, capture_output=True, text=True, timeout=1800,
    )
    assert result.returncode == 0, (result.stdout + result.stderr)[-6000:]
    return clone, result.stdout


def test_run_sh_demo_is_the_project_workflow():
    text = (ROOT / "run.sh").read_text(encoding="utf8")
    demo = text.split("  demo)", 1)[1].split(";;", 1)[0]
    assert RUN_SH_DEMO in demo


@pytest.mark.slow
def test_the_demo_trains_both_systems_in_the_users_folder(demo):
    clone, out = demo
    assert "done before with this config, skipped" not in out
    for name in SYSTEMS:
        # the evaluation table and the line of each run trained
        assert re.search(rf"^[= ]*{name} on \S+test\.spacy", out, re.MULTILINE), out[-6000:]
        assert re.search(rf"^\[[12]/2 trained\] wnut16 {name} seed 0: macro-F1 \d+\.\d, micro-F1", out, re.MULTILINE), out[-6000:]
        record = srsly.read_json(clone / "runs" / "demo" / "wnut16" / f"{name}-s0.json")
        assert record["max_steps"] == STEPS
        assert record["overrides"]["corpora.train.@readers"] == "spacy-imbalance.MaskedCorpus.v1"
        assert (clone / "runs" / "demo" / "training" / "wnut16" / f"{name}-s0" / "model-best" / "meta.json").exists()
    assert (clone / "runs" / "demo" / "wnut16" / "demo.md").exists()
    assert "Paired bootstrap against `ner-m50`" in out
    # the committed reference run is left as it was, and what the user's run wrote is ignored by git
    assert committed_demo(clone) == committed_demo(ROOT)
    ignored = subprocess.run(["git", "check-ignore", "-q", "runs/demo/wnut16/ner-m50-s0.json"], cwd=ROOT)
    assert ignored.returncode == 0


@pytest.mark.slow
def test_the_demo_prints_its_time_with_the_machine(demo):
    _, out = demo
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    line = re.search(r"^2 runs trained and scored in (?:\d+ min )?\d+ s on this machine: CPU, (.+)$", out, re.MULTILINE)
    assert line, out[-3000:]
    # "(1 core)" where the run may use one (taskset -c 0), as benchmark.records.device_words writes it
    assert line.group(1).endswith(f"({cores} {'core' if cores == 1 else 'cores'})")


def next_commands(out: str) -> List[List[str]]:
    """The commands the demo ends with, as argument lists."""
    tail = out.split("Next, on your own data", 1)[1]
    return [shlex.split(line) for line in tail.splitlines() if line.startswith("  ")]


@pytest.mark.slow
def test_the_demo_ends_with_commands_that_work_on_the_users_data(demo, tmp_path, monkeypatch):
    """Run as printed on a small CoNLL file (the training cut to two steps).
    spaCy's train and our evaluate each in a new interpreter, as a user runs
    them: there only the entry points register our components. convert and
    init-config through our command line in this process: ``python -m
    spacy_imbalance`` imports every command of it before it runs one (evaluate
    shows that it starts), so a process of their own would differ only by
    the seconds its start and imports of spaCy and torch take."""
    from typer.testing import CliRunner

    from spacy_imbalance.cli import app
    from spacy_imbalance.corpus.default_corpus import default_corpus_path

    _, out = demo
    assert out.rstrip().splitlines()[-1].startswith("  ")  # the commands are the last thing printed
    commands = next_commands(out)
    assert [c[1:4] for c in commands] == [
        ["-m", "spacy_imbalance", "convert"], ["-m", "spacy_imbalance", "init-config"],
        ["-m", "spacy", "train"], ["-m", "spacy_imbalance", "evaluate"], ["-m", "spacy_imbalance", "advise"],
    ]
    assert {c[0] for c in commands} == {sys.executable}
    text = Path(default_corpus_path()).read_text(encoding="utf8")
    sentences = [block for block in re.split(r"\n\s*\n", text) if block.strip()]
    (tmp_path / "mine.conll").write_text("\n\n".join(sentences[:80]) + "\n\n", encoding="utf8")
    # advise trains for minutes: its arguments are checked by its own tests
    convert, init_config, train, evaluate, _ = commands
    monkeypatch.chdir(tmp_path)
    for command in (convert, init_config):
        run = CliRunner().invoke(app, command[3:])
        assert run.exit_code == 0, f"{shlex.join(command)}\n{run.output[-3000:]}\n{run.exception!r}"
    for command in (train + ["--training.max_steps", "2"], evaluate):
        result = subprocess.run(command, cwd=tmp_path, capture_output=True, text=True)
        assert result.returncode == 0, f"{shlex.join(command)}\n{(result.stdout + result.stderr)[-3000:]}"
    assert "macro" in result.stdout
