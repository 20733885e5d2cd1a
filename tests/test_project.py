"""project.yml: its commands declare what they use, and the `demo` and `all`
workflows run end to end in a temporary copy of the project (tiny step
budgets through --vars overrides, one seed, a few configs per study through
--vars.only, tiny corpora), never writing into the repository's metrics/."""
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Tuple

import pytest
import srsly

from spacy_imbalance.audit.folds import PLUMBING_ONLY

from .conftest import ROOT

PROJECT = srsly.read_yaml(ROOT / "project.yml")
COMMANDS = {command["name"]: command for command in PROJECT["commands"]}
# outputs of the workflows, not in a fresh checkout
# (the demo workflow itself is tested as a user runs it: tests/test_demo.py)
GENERATED = ("corpus/", "training/", "runs/", "metrics/demo/")


def copy_project(tmp_path: Path) -> Path:
    """The project files in a fresh folder, with the package and bench/ linked
    in (the commands depend on their sources, as in the repository root)."""
    project = tmp_path / "project"
    project.mkdir()
    shutil.copy(ROOT / "project.yml", project)
    for folder in ("configs", "scripts", "docs"):
        shutil.copytree(ROOT / folder, project / folder, ignore=shutil.ignore_patterns("__pycache__"))
    # the package and the benchmark harness, which commands list as dependencies
    for package in ("spacy_imbalance", "bench"):
        (project / package).symlink_to(ROOT / package, target_is_directory=True)
    # the GPU records come from scripts/gpu/collect.py on a GPU machine, not from a
    # workflow: the write-ups include them as they are
    for records in ROOT.glob("metrics/*/gpu"):
        shutil.copytree(records, project / records.relative_to(ROOT))
    return project


def run_project(project: Path, name: str, *overrides: str) -> subprocess.CompletedProcess:
    """`spacy project run NAME` in ``project``, with --vars.* overrides."""
    env = {key: value for key, value in os.environ.items() if not key.endswith("CONFIG_OVERRIDES")}
    # the studies train a few steps: audit and advise go on from models that learned nothing
    env[PLUMBING_ONLY] = "1"
    return subprocess.run(
        [sys.executable, "-m", "spacy", "project", "run", name, str(project), *overrides],
        capture_output=True, text=True, env=env, cwd=project,
    )


def fake_wnut17(folder: Path, sizes=(("train", 700), ("dev", 40), ("test", 40))) -> Path:
    """WNUT-2017-like CoNLL files cut from the embedded corpus (the same
    two-column format), for machines without ../shared/corpora/wnut17 and to
    keep the runs short."""
    from spacy_imbalance.corpus.default_corpus import default_corpus_path

    text = Path(default_corpus_path()).read_text(encoding="utf8")
    sentences = [block for block in re.split(r"\n\s*\n", text) if block.strip()]
    folder.mkdir(parents=True)
    start = 0
    for split, n in sizes:
        (folder / f"{split}.conll").write_text("\n\n".join(sentences[start:start + n]) + "\n\n", encoding="utf8")
        start += n
    return folder


def shrink_default_corpus(project: Path, sizes=(("train", 200), ("dev", 40), ("test", 40))) -> dict:
    """Run corpus-wnut16, cut its splits to a few sentences and record them in
    project.lock as that command's outputs, so the workflows keep them; the
    sizes of the splits as converted."""
    import spacy
    from spacy.tokens import DocBin
    from weasel.cli.run import update_lockfile
    from weasel.util import load_project_config, working_dir

    result = run_project(project, "corpus-wnut16")
    assert result.returncode == 0, result.stdout + result.stderr
    vocab = spacy.blank("en").vocab
    converted = {}
    for split, n in sizes:
        path = project / "corpus" / "wnut16" / f"{split}.spacy"
        docs = list(DocBin().from_disk(path).get_docs(vocab))
        converted[split] = len(docs)
        DocBin(docs=docs[:n], store_user_data=True).to_disk(path)
    config = load_project_config(project)
    command = next(c for c in config["commands"] if c["name"] == "corpus-wnut16")
    with working_dir(project) as cwd:
        update_lockfile(cwd, command)
    return converted


def tiny_vectors(path: Path) -> Path:
    """A pipeline with 4-d vectors for a few words, where the workflows expect
    en_core_web_md."""
    import numpy
    import spacy

    nlp = spacy.blank("en")
    for i, word in enumerate(["the", "to", "a", "I", "London", "Obama"]):
        nlp.vocab.set_vector(word, numpy.full((4,), i / 10, dtype="float32"))
    # a tok2vec, as en_core_web_md has, for the configs that add ours to it (existing-pipelines)
    nlp.add_pipe("tok2vec")
    nlp.initialize()
    nlp.to_disk(path)
    return path


# one or two configs per study, and one setting of each study with settings
QUICK = ",".join([
    "ner",  # benchmark-baselines, and the baseline of resampling
    "ner_sC",  # resampling
    "token_ner",  # losses, and wnut17-200 (with ner)
    "two_task_bce",  # auc: two-task benchmark and tuned thresholds
    "two_task_bce-n50", "two_task_bce-p5",  # auc: low-resource and imbalance studies
    "sampled_spancat_uniform",  # negatives: speed (and missampling curves, which always run)
    "sampled_spancat_uniform-m50",  # negatives: masking study
    "sampled_spancat_top_v2-ds50",  # fidelity: Top-Neg v2 on distant labels
    "two_task_auc_type_head-fitted",  # fidelity: two_task_ner's fitted thresholds
    "token_ner_mom_v2-l50",  # fidelity: the MoM sweep
    "vectors/sampled_spancat_uniform",  # pretrained: the headline with vectors, and masking's p = 0
    "vectors/ner",  # pretrained: the best built-in of the headline
    "vectors/sampled_spancat_uniform-m50",  # pretrained: masking with vectors
    "vectors/two_task_bce-fitted",  # pretrained: low resource (and the headline's two-task runs)
    "audit/p30-s0",  # audit: the validation at p = 0.3 on both corpora, seed 0 (calibration: vectors/sampled_spancat_uniform)
    # pretrained, frozen features: none (each run computes MiniLM features; they
    # train in tests/models/test_transformer_features.py); the feature-cache benchmark runs, shrunk
    # transformer: none (its command runs, and selects no run; the MiniLM configs
    # train in tests/test_configs.py, and each run here would take half a minute)
])


# `all` in two parts, each in its own copy of the project, so that the two test
# workers of CI (bash run.sh test) take one each: the studies without pretrained
# representations, then from the vectors on (the corpora converted again first)
ALL = PROJECT["workflows"]["all"]
SETUP = ["corpus-wnut16", "corpus-wnut17", "corpus-wnut17-200"]
SECOND_PART = ALL.index("vectors-en-md")
# each part ends with the write-ups (`docs`), rebuilt from what it ran
PARTS = {"first": ALL[:SECOND_PART] + ["docs"], "second": SETUP + ALL[SECOND_PART:]}


def run_all_part(tmp_path: Path, part: str) -> Tuple[Path, subprocess.CompletedProcess]:
    """One part of `all` as a workflow of a fresh copy of the project, shrunk:
    a few sentences, a few steps, one seed, the QUICK runs; the copy's folder
    and the run."""
    project = copy_project(tmp_path)
    wnut17 = fake_wnut17(tmp_path / "wnut17")
    shrink_default_corpus(project)
    config = srsly.read_yaml(project / "project.yml")
    config["workflows"][f"all-{part}"] = PARTS[part]
    srsly.write_yaml(project / "project.yml", config)
    vectors = tiny_vectors(tmp_path / "vectors")  # fetch_vectors.py finds them there and downloads nothing
    steps = [f"--vars.{var}" for var in ("max_steps", "low_resource_steps", "masking_steps", "speed_steps", "headline_steps")]
    result = run_project(
        project, f"all-{part}", *[arg for var in steps for arg in (var, "2")],
        "--vars.seeds", "0", "--vars.jobs", "1", "--vars.missampling_seeds", "1", "--vars.only", QUICK, "--vars.wnut17_dir", str(wnut17),
        "--vars.vectors", str(vectors), "--vars.cache_epochs", "2", "--vars.finetune_steps", "1",
        "--vars.audit_steps", "2", "--vars.audit_folds", "2", "--vars.scale_factors", "1",
        # the quick pass trains a few runs of each study: most numbers of the pages have no file
        "--vars.docs_missing", "allow-missing",
    )
    assert result.returncode == 0, result.stdout[-20000:] + result.stderr[-20000:]
    return project, result


def test_project_all_parts_are_all_in_its_order():
    assert PARTS["first"][:len(SETUP)] == SETUP and PARTS["first"][:-1] + PARTS["second"][len(SETUP):] == ALL
    # the second part needs nothing of the first but the corpora it converts again (a dep is a file or a
    # folder); only the write-ups read every study's metrics, and each part rebuilds them from its own
    first_outputs = {out for step in PARTS["first"] if step not in SETUP + ["docs"] for out in COMMANDS[step].get("outputs", [])}
    for step in PARTS["second"]:
        for dep in COMMANDS[step].get("deps", []):
            read = {out for out in first_outputs if out == dep or out.startswith(dep.rstrip("/") + "/")}
            assert not read or step == "docs", f"{step} reads {sorted(read)[0]}, which the first part writes"


# two classes: under --dist loadscope each is a unit of its own, on its own worker
class TestAllFirstPart:
    @pytest.mark.slow
    def test_the_studies_without_pretrained_representations_run_and_write_their_tables(self, tmp_path):
        before = srsly.read_json(ROOT / "metrics" / "wnut16" / "ner-s0.json")["max_steps"]
        project, result = run_all_part(tmp_path, "first")
        metrics = project / "metrics"
        # every study wrote its tables, from the selected runs only
        for path in (
            "wnut16/summary.md", "wnut17/summary.md", "wnut16/resampling.md", "wnut17/losses.md",
            "wnut17-200/losses.md", "wnut17/two_task.md", "wnut17/two_task_tuned.md", "wnut16/low_resource.md",
            "wnut17/imbalance.md", "wnut16/missampling.json", "wnut17/speed.md", "wnut17/masking.md",
            "wnut17/mom_sweep.md", "wnut16/two_task_defaults.md", "wnut16/distant.md", "wnut17/masking_v2.md",
            "wnut16/resampling_epochs.md",
        ):
            assert (metrics / path).exists(), path
        for run in ("wnut16/ner-s0", "wnut17/ner_sC-s0", "wnut17-200/token_ner-s0", "wnut17/two_task_bce-tuned-s0",
                    "wnut16/two_task_bce-n50-s0", "wnut17/two_task_bce-p5-s0", "wnut16/sampled_spancat_uniform-m50-s0",
                    "wnut16/sampled_spancat_top_v2-ds50-s0", "wnut17/two_task_auc_type_head-fitted-s0",
                    "wnut16/token_ner_mom_v2-l50-s0"):
            assert (metrics / f"{run}.json").exists(), run
        assert not (metrics / "wnut16" / "spancat-s0.json").exists()  # not selected
        assert not (metrics / "wnut16" / "ner-m50-s0.json").exists() and not (metrics / "wnut17" / "ner-p5-s0.json").exists()
        assert srsly.read_json(metrics / "wnut16" / "ner-s0.json")["max_steps"] == 2
        # the write-ups were rebuilt from the copy's metrics
        written = (project / "docs" / "benchmarks" / "negative_sampling.md").read_text(encoding="utf8")
        assert (metrics / "wnut17" / "masking.md").read_text(encoding="utf8").strip() in written
        # the repository's own results are untouched
        assert srsly.read_json(ROOT / "metrics" / "wnut16" / "ner-s0.json")["max_steps"] == before != 2


class TestAllSecondPart:
    @pytest.mark.slow
    def test_the_pretrained_audit_advise_and_transformer_studies_run_and_the_docs_are_rebuilt(self, tmp_path):
        project, result = run_all_part(tmp_path, "second")
        metrics = project / "metrics"
        for path in (
            "wnut16/headline_vectors.md", "wnut17/headline_vectors.md", "wnut17/headline_features.md",
            "wnut17/feature_cache.md", "wnut16/masking_vectors.md", "wnut17-200/low_resource_vectors.md",
            "wnut16/resampling_epochs_vectors.md", "wnut16/audit_validation.md", "wnut17/audit_validation.md",
            "wnut17/calibration_vectors.md", "wnut16/audit_validation_features.md", "wnut16/scale.md",
        ):
            assert (metrics / path).exists(), path
        for run in ("wnut17/vectors/sampled_spancat_uniform-s0", "wnut16/vectors/sampled_spancat_uniform-m50-s0",
                    "wnut16/audit/p30-s0", "wnut17/audit/p30-s0", "wnut17/vectors/sampled_spancat_uniform-tuned-s0"):
            assert (metrics / f"{run}.json").exists(), run
        assert "benchmark-transformer" in result.stdout and "no run of this benchmark is selected" in result.stdout
        # the headline table pairs the selected runs with the best built-in, and the vectors reached the runs
        headline = srsly.read_json(metrics / "wnut17" / "headline_vectors.json")
        assert headline["reference"] == "ner" and "sampled_spancat_uniform" in headline["systems"]
        vectors = str(project.parent / "vectors")
        assert srsly.read_json(metrics / "wnut17" / "vectors" / "ner-s0.json")["overrides"]["paths.vectors"] == vectors
        assert srsly.read_json(metrics / "wnut17" / "feature_cache.json")["same_predictions"] is True
        # the write-ups were rebuilt from the copy's metrics
        written = (project / "docs" / "benchmarks" / "pretrained.md").read_text(encoding="utf8")
        assert (metrics / "wnut17" / "headline_vectors.md").read_text(encoding="utf8").strip() in written


def test_project_benchmarks_use_existing_configs_and_declare_them():
    """Every --config a command trains exists in configs/ and is among the
    command's deps (so editing it re-runs the command), and every config of
    configs/ is trained by some command."""
    used = set()
    for command in PROJECT["commands"]:
        script = " ".join(command.get("script", []))
        for config in re.findall(r"--config (\S+)", script):
            used.add(config)
            assert (ROOT / "configs" / f"{config}.cfg").exists(), f"{command['name']}: no configs/{config}.cfg"
            # the config itself, or its folder (configs/vectors for every vectors variant)
            declared = {f"configs/{config}.cfg", f"configs/{config}.cfg".rsplit("/", 1)[0]} & set(command["deps"])
            assert declared - {"configs"}, f"{command['name']}: configs/{config}.cfg not in deps"
        for path in re.findall(r"configs/([\w-]+)\.cfg", script):
            used.add(path)
    shipped = {p.stem for p in (ROOT / "configs").glob("*.cfg")}
    assert shipped <= used, f"configs no command trains: {sorted(shipped - used)}"


def test_project_deps_exist_and_cover_the_scripts():
    """Every dependency that is not a workflow output exists (package paths
    move when the package is reorganised), and every script a command runs is
    among its deps."""
    outputs = {output for command in PROJECT["commands"] for output in command.get("outputs", [])}
    for command in PROJECT["commands"]:
        deps = command.get("deps", [])
        for dep in deps:
            if dep.startswith(GENERATED) or "${" in dep or dep in outputs:
                continue
            assert (ROOT / dep).exists(), f"{command['name']}: {dep} does not exist"
        for script in re.findall(r"python (scripts/\S+\.py)", " ".join(command.get("script", []))):
            assert script in deps, f"{command['name']}: {script} not in deps"
        if any("spacy_imbalance" in line or "benchmark.py" in line for line in command.get("script", [])):
            assert any(dep.startswith("spacy_imbalance") for dep in deps), f"{command['name']}: no package sources in deps"


def test_project_all_runs_every_study():
    """`all` runs every command of every study workflow, and the write-ups
    last; train/evaluate are the only single-run commands (driven by vars)."""
    workflows = PROJECT["workflows"]
    for name, steps in workflows.items():
        assert set(steps) <= set(COMMANDS), name
    studies = {step for name, steps in workflows.items() if name not in ("all", "demo") for step in steps}
    assert studies <= set(workflows["all"])
    assert set(COMMANDS) - set(workflows["all"]) == {"demo-masked", "train", "evaluate", "clean"}
    assert workflows["all"][-1] == "docs"
    assert not [name for name in COMMANDS if re.match(r"(train|evaluate)-", name)]
    # a step runs after the commands that write its corpus
    order = workflows["all"]
    for step in order:
        for dep in COMMANDS[step].get("deps", []):
            # a dep is a file a command writes, or a folder it writes into (corpus/wnut17-200)
            writers = [
                writer for writer in order if writer != step
                and any(out == dep or out.startswith(dep + "/") for out in COMMANDS[writer].get("outputs", []))
            ]
            for writer in writers:
                assert order.index(writer) < order.index(step), f"{step} reads {dep}, which {writer} writes later"
