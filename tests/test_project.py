"""project.yml, written by hand, checked without training:

- it is a valid weasel project, and every command line parses against the
  options of what it runs (the click command typer builds for the script or
  the package command, given the words weasel would run with the vars filled
  in; nothing runs);
- its commands declare what they use (configs, scripts, package sources),
  `all` runs every study and ends with the write-ups;
- every file the docs read from metrics/ is written by a command (a declared
  output, a file written beside one, a table a command line names, the
  records of a table written from a folder of them), or is one of the few
  records no workflow writes (EXTERNAL, each with its reason);
- the docs regenerate from the committed metrics: tests/test_docs.py
  (test_pages_match_their_sources runs the `docs` command's script with --check).

`all` runs end to end in two parts (a temporary copy of the project, tiny step
budgets through --vars overrides, one seed, a few configs per study through
--vars.only, tiny corpora, never writing into the repository's metrics/) only
with RUN_E2E=1: about 20 minutes on two cores. The `demo` workflow runs as a
user runs it in tests/test_demo.py."""
import copy
import importlib
import os
import re
import shlex
import shutil
import subprocess
import sys
from fnmatch import fnmatchcase
from pathlib import Path, PurePosixPath
from typing import Any, Callable, Dict, Iterator, List, Set, Tuple

import click
import pytest
import srsly
import typer

from spacy_imbalance.audit.folds import PLUMBING_ONLY

from .conftest import ROOT
from .test_docs import named_files, source_files

PROJECT = srsly.read_yaml(ROOT / "project.yml")
COMMANDS = {command["name"]: command for command in PROJECT["commands"]}
# outputs of the workflows, not in a fresh checkout
# (the demo workflow itself is tested as a user runs it: tests/test_demo.py)
GENERATED = ("corpus/", "training/", "runs/", "metrics/demo/")
# the end-to-end runs of `all`: on demand, too long for CI's 2 cores
E2E = pytest.mark.skipif(
    os.environ.get("RUN_E2E") != "1",
    reason="runs `spacy project run all` end to end (about 20 minutes on 2 cores): "
           "RUN_E2E=1 bash run.sh test tests/test_project.py",
)
# what a command line that does not parse raises: typer's own click (typer >= 0.2x carries one), or click's
PARSE_ERRORS = (typer.TyperException, click.ClickException)
# the folders of the project's own scripts: `python scripts/X.py ...`, `python dev/X.py ...`
SCRIPT = re.compile(r"(scripts|dev)/(\w+)\.py")


def interpolated_project() -> dict:
    """project.yml with its ${vars.*} filled in, as weasel runs it (weasel's
    own function: load_project_config would also create the project's
    directories in the repository)."""
    from weasel.util.config import substitute_project_variables

    return substitute_project_variables(copy.deepcopy(PROJECT))


INTERPOLATED = {command["name"]: command for command in interpolated_project()["commands"]}


def test_project_is_a_valid_weasel_project():
    from weasel.schemas import ProjectConfigSchema, validate
    from weasel.util.config import validate_project_commands

    assert validate(ProjectConfigSchema, PROJECT) == []
    validate_project_commands(PROJECT)  # exits naming the workflow step that is no command


def test_all_ends_with_the_write_ups_that_tests_test_docs_replays():
    """The replay of the last step without any training: tests/test_docs.py
    (test_pages_match_their_sources) runs the `docs` command's script with
    --check on the committed metrics."""
    assert PROJECT["workflows"]["all"][-1] == "docs"
    (line,) = COMMANDS["docs"]["script"]
    assert shlex.split(line)[:2] == ["python", "scripts/write_docs.py"]


def command_lines() -> Iterator[Tuple[str, str, List[str]]]:
    """(command name, line, its words) of every script line, vars filled in."""
    for name, command in INTERPOLATED.items():
        for line in command.get("script", []):
            yield name, line, shlex.split(line)


def _subcommand(group, name: str, args: List[str]) -> Tuple[Any, str, List[str]]:
    """The command of a group (nested groups followed) that ``args`` name, its name and its own arguments."""
    while hasattr(group, "list_commands") and args:
        sub = group.get_command(typer.Context(group, info_name=name), args[0])
        if sub is None:
            raise typer.BadParameter(f"no command {args[0]!r} in {name}")
        group, name, args = sub, f"{name} {args[0]}", args[1:]
    return group, name, args


def cli_of(words: List[str]) -> Tuple[Any, str, List[str]]:
    """The click command a command line runs, its name and its arguments:
    the package's commands (`spacy-imbalance X`, `python -m spacy_imbalance X`),
    spaCy's (`python -m spacy X`), a script of scripts/ or dev/ (its `main`,
    as typer.run runs it)."""
    if words[0] == "spacy-imbalance" or words[:3] == ["python", "-m", "spacy_imbalance"]:
        from spacy_imbalance.cli import app

        return _subcommand(typer.main.get_command(app), "spacy-imbalance", words[1 if words[0] != "python" else 3:])
    if words[:3] == ["python", "-m", "spacy"]:
        from spacy.cli import app as spacy_app

        return _subcommand(typer.main.get_command(spacy_app), "spacy", words[3:])
    match = SCRIPT.fullmatch(words[1]) if words[0] == "python" and len(words) > 1 else None
    if not match:
        raise typer.BadParameter(f"not a command of the project: {words[0]}")
    if not (ROOT / words[1]).is_file():
        raise typer.BadParameter(f"no such script: {words[1]}")
    module = importlib.import_module(f"{match.group(1)}.{match.group(2)}")
    app = typer.Typer(add_completion=False)
    app.command()(module.main)
    return typer.main.get_command(app), words[1], words[2:]


def _written_before(value: str, outputs: Set[str]) -> bool:
    """A path a command declares as an output, or a folder holding one."""
    value = value.rstrip("/")
    return value in outputs or any(out.startswith(value + "/") for out in outputs)


@pytest.fixture
def workflow_paths(tmp_path) -> Callable[[List[str]], List[str]]:
    """The arguments of a command line with each path a command of the
    project writes, and that is not there yet (corpus/wnut16/train.spacy,
    training/.../model-best, the vectors), replaced by a file or folder that
    is: by the time the line runs, its workflow has written it. An exists
    check passes for those paths, and still fails for any other."""
    outputs = {out for command in INTERPOLATED.values() for out in command.get("outputs", [])}
    (tmp_path / "folder").mkdir()
    (tmp_path / "file").touch()

    def replace(args: List[str]) -> List[str]:
        def placeholder(word: str) -> str:
            if (ROOT / word).exists() or not _written_before(word, outputs):
                return word
            is_file = word in outputs and PurePosixPath(word).suffix
            return str(tmp_path / ("file" if is_file else "folder"))

        return [placeholder(word) for word in args]

    return replace


def test_every_command_line_parses_against_its_options(workflow_paths, monkeypatch):
    """Each line of each command is parsed as its command would parse it
    (options, types, choices, required arguments; nothing runs), so a script
    or package command that renames or drops an option fails here, not hours
    into `spacy project run all`."""
    monkeypatch.chdir(ROOT)
    failures = []
    parsed = 0
    for name, line, words in command_lines():
        if words[0] == "rm":  # clean: a shell command
            continue
        try:
            command, info_name, args = cli_of(words)
            command.make_context(info_name, workflow_paths(args))
            parsed += 1
        except PARSE_ERRORS as err:
            failures.append(f"{name}: {line}\n    {err.format_message()}")
    assert not failures, "command lines that do not parse:\n" + "\n".join(failures)
    assert parsed >= 80


def test_a_line_with_a_wrong_option_fails_to_parse(workflow_paths, monkeypatch):
    """What the parse check catches; a path only a workflow writes passes."""
    monkeypatch.chdir(ROOT)
    for words in ("spacy-imbalance benchmark run --corpus wnut16 --config ner --max-steps 2000",
                  "python -m spacy_imbalance stats corpus/wnut16/train.spacy",
                  "python -m spacy train configs/ner.cfg --output training/x --paths.train corpus/wnut16/train.spacy"):
        command, name, args = cli_of(shlex.split(words))
        command.make_context(name, workflow_paths(args))
    for words, message in [
        ("spacy-imbalance benchmark run --corpus wnut16 --config ner --max-step 2000", "No such option: --max-step"),
        ("spacy-imbalance benchmark run --corpus wnut16 --config ner --max-steps many", "Invalid value for '--max-steps'"),
        ("python -m spacy train configs/nowhere.cfg", "'configs/nowhere.cfg' does not exist"),
        ("python -m spacy_imbalance no-such-command", "no command 'no-such-command' in spacy-imbalance"),
        ("bash run.sh", "not a command of the project: bash"),
        ("python scripts/nowhere.py --corpus wnut16", "no such script: scripts/nowhere.py"),
    ]:
        with pytest.raises(PARSE_ERRORS) as err:
            command, name, args = cli_of(shlex.split(words))
            command.make_context(name, workflow_paths(args))
        assert message in err.value.format_message()


# Records the docs read that no workflow writes, each with where it comes from.
EXTERNAL = {
    "metrics/demo/*": "the demo's committed reference run: demo-masked writes the same files to runs/demo/ (ignored by git)",
    "metrics/*/gpu/*": "runs on a lent GPU machine, collected by dev/gpu/collect.py and dev/gpu/evaluations.py (docs/gpu.md)",
    "metrics/wnut17/never_worse_trials.md": "issue 42's dev trials (dev/never_worse_trials.py)",
    "metrics/wnut17/never_worse_choice.md": "issue 42's choice of defaults from its dev trials (dev/never_worse_trials.py)",
    "metrics/wnut17/never_worse_errors.md": "issue 42's dev trials' false positives by kind (dev/never_worse_trials.py --errors)",
    "metrics/wnut17/never_worse/*": "issue 42's dev trials' records (dev/never_worse_trials.py; --from-run where a grid run trained the trial)",
    "metrics/wnut17/scope_trials.md": "issue 47's dev trials of scope_o_weight (dev/scope_trials.py)",
    "metrics/wnut17/scope_trials_features_4000.md": "issue 47's dev trials of scope_o_weight on frozen features (dev/scope_trials.py --encoder features)",
    "metrics/wnut16/low_resource_n1000_tuned.json": "a one-off `benchmark tune` call, quoted in docs/benchmarks/src/two_task.md",
    "metrics/wnut17/paired-bootstrap-seed0.json": "a one-off `spacy-imbalance compare`, quoted in docs/benchmarks/src/baselines.md",
    "metrics/wnut17/transformer/ner_minilm-150steps.json": "a one-off run, its commands in docs/benchmarks/src/transformer.md",
    "metrics/wnut17/transformer_cpu_s0.md": "issue 30's fine-tuned runs of seed 0 on the CPU (docs/benchmarks/src/fine_tuning.md)",
}
# what a script writes beside a table or record NAME.md / NAME.json (summaries, paired bootstraps, plots)
BESIDE = (".md", ".json", ".png", "-paired.json", "-dev-choice.json", "_per_type_f1.png")
# what writes the table its first argument names in metrics/<corpus>/ (a script, or the package's command)
TABLE = re.compile(r"(?:scripts/(?:study|headline)_table\.py|\bbenchmark table) (?!-)(\S+)")
# what writes <run>-tuned-s<seed>.json records beside the runs it tunes
TUNE = re.compile(r"scripts/tune_runs\.py|\bbenchmark tune\b")


def _options(words: List[str]) -> Dict[str, List[str]]:
    """``--key value`` pairs of a command line, each key's values in order."""
    options: Dict[str, List[str]] = {}
    for i, word in enumerate(words):
        if word.startswith("-") and i + 1 < len(words) and not words[i + 1].startswith("--"):
            options.setdefault(word, []).append(words[i + 1])
    return options


def written_by_line(words: List[str]) -> Set[str]:
    """The files a command line names as what it writes: a summary table
    (--summary NAME, or a table script's NAME) in each --corpus, an --output,
    its run records (<config>[-<tag>]-s<seed>.json, tune_runs.py's
    <run>-tuned-s<seed>.json), and for the write-ups metrics/facts.json and
    metrics/provenance.json."""
    from scripts import write_docs

    line = " ".join(words)
    options = _options(words)
    metrics = options.get("--metrics-dir", ["metrics"])[0]
    corpora = options.get("--corpus", [])
    tables = options.get("--summary", []) + TABLE.findall(line)
    written = {f"{metrics}/{corpus}/{table}.md" for corpus in corpora for table in tables}
    written |= set(options.get("--output", []) + options.get("-o", []))
    seeds = [seed for value in options.get("--seed", []) for seed in value.split(",")]
    tuned = "-tuned" if TUNE.search(line) else ""
    for config in options.get("--config", []):
        for tag in options.get("--tag", [""]):
            run = f"{config}-{tag}" if tag else config  # a run's name, as the benchmark names it
            written |= {f"{metrics}/{corpus}/{run}{tuned}-s{seed}.json" for corpus in corpora for seed in seeds}
    if words[1:2] == ["scripts/write_docs.py"]:
        written |= {write_docs.FACTS, write_docs.PROVENANCE}
    return written


def written_by_commands() -> Tuple[Set[str], List[str]]:
    """Every file the commands write (declared outputs, what their lines
    name, what is written beside each), and globs of the record folders
    tables are written from (scripts/write_docs.py's FOLDERS)."""
    from scripts.write_docs import FOLDERS

    written: Set[str] = set()
    for command in INTERPOLATED.values():
        written |= set(command.get("outputs", []))
    for _, _, words in command_lines():
        written |= written_by_line(words)
    beside = {str(PurePosixPath(path).with_suffix("")) + suffix for path in written for suffix in BESIDE}
    folders = [str(PurePosixPath(path).parent / FOLDERS[PurePosixPath(path).name]) for path in written
               if PurePosixPath(path).name in FOLDERS]
    return written | beside, folders


def read_by_docs() -> Dict[str, str]:
    """Each file of metrics/ the docs' sources read -> where (source:line)."""
    return {name: f"{path.relative_to(ROOT)}:{number}" for path in source_files()
            for number, name in named_files(path) if name.startswith("metrics/")}


def test_every_file_the_docs_read_is_written_by_a_command():
    """So `spacy project run all` regenerates every published number: each
    table and record a page reads comes from a command of project.yml, or is
    one of EXTERNAL, which names where it comes from instead."""
    written, folders = written_by_commands()
    read = read_by_docs()

    def from_commands(path: str) -> bool:
        # a file written, one of a record folder a table is written from, or one in a folder declared whole
        return path in written or any(fnmatchcase(path, folder) for folder in folders) or any(
            path.startswith(out.rstrip("/") + "/") for out in written)

    external = {path: pattern for path in read for pattern in EXTERNAL if fnmatchcase(path, pattern)}
    orphans = [f"{where}: {path}" for path, where in sorted(read.items()) if not from_commands(path) and path not in external]
    assert not orphans, "files the docs read that no command of project.yml writes:\n" + "\n".join(orphans)
    # EXTERNAL lists only what is still external: a gap a command closes leaves it
    closed = sorted({pattern for path, pattern in external.items() if from_commands(path)})
    assert not closed, f"written by a command now, no longer external: {closed}"
    unused = sorted(set(EXTERNAL) - set(external.values()))
    assert not unused, f"EXTERNAL names files no page reads: {unused}"


def test_written_by_line_names_tables_outputs_and_records():
    words = shlex.split("python scripts/benchmark.py --corpus c --config ner --config x --seed 0,1 --tag m50 --summary s_m50")
    assert written_by_line(words) == {
        "metrics/c/s_m50.md", "metrics/c/ner-m50-s0.json", "metrics/c/ner-m50-s1.json", "metrics/c/x-m50-s0.json",
        "metrics/c/x-m50-s1.json",
    }
    assert written_by_line(shlex.split("python scripts/study_table.py masking --corpus a --corpus b --config ner")) == {
        "metrics/a/masking.md", "metrics/b/masking.md"}
    assert written_by_line(shlex.split("python scripts/tune_runs.py --corpus c --config ner --seed 2 --summary t")) == {
        "metrics/c/t.md", "metrics/c/ner-tuned-s2.json"}
    assert written_by_line(shlex.split("python -m spacy_imbalance missampling x.spacy --output metrics/c/m.json")) == {"metrics/c/m.json"}
    # the package's benchmark commands name them alike
    assert written_by_line(shlex.split("spacy-imbalance benchmark table masking --corpus a --config ner --setting m50=0.5")) == {
        "metrics/a/masking.md"}
    assert written_by_line(shlex.split("spacy-imbalance benchmark tune --corpus c --config ner --seed 2")) == {"metrics/c/ner-tuned-s2.json"}


def copy_project(tmp_path: Path) -> Path:
    """The project files in a fresh folder, with the package and bench/ linked
    in (the commands depend on their sources, as in the repository root)."""
    project = tmp_path / "project"
    project.mkdir()
    shutil.copy(ROOT / "project.yml", project)
    for folder in ("configs", "scripts", "dev", "docs"):
        shutil.copytree(ROOT / folder, project / folder, ignore=shutil.ignore_patterns("__pycache__"))
    # the package and the benchmark harness, which commands list as dependencies
    for package in ("spacy_imbalance", "bench"):
        (project / package).symlink_to(ROOT / package, target_is_directory=True)
    # the GPU records come from dev/gpu/collect.py on a GPU machine, not from a
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


# WNUT-2016's types -> WNUT-2017's (None: no entity)
WNUT17_TYPE = {
    "company": "corporation", "facility": "location", "geo-loc": "location", "movie": "creative-work", "musicartist": "group",
    "other": None, "person": "person", "product": "product", "sportsteam": "group", "tvshow": "creative-work",
}


def fake_wnut17(folder: Path, sizes=(("train", 700), ("dev", 40), ("test", 40))) -> Path:
    """WNUT-2017-like CoNLL files cut from the embedded corpus (the same
    two-column format), for machines without ../shared/corpora/wnut17 and to
    keep the runs short."""
    from spacy_imbalance.corpus.default_corpus import default_corpus_path

    text = Path(default_corpus_path()).read_text(encoding="utf8")
    # WNUT-2016's ten types as WNUT-2017's six, which commands such as corpus-wnut17-scopes name
    text = re.sub(r"\t([BI])-([\w-]+)$", lambda m: f"\t{m.group(1)}-{WNUT17_TYPE[m.group(2)]}" if WNUT17_TYPE[m.group(2)] else "\tO", text, flags=re.MULTILINE)
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
    @E2E
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
    @E2E
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
        for system in re.findall(r"--config (\S+)", script):
            config = system.partition("@")[0]  # a study table's CONFIG@VARIANT reads that config's runs
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
        for script in re.findall(r"python ((?:scripts|dev)/\S+\.py)", " ".join(command.get("script", []))):
            assert script in deps, f"{command['name']}: {script} not in deps"
        if any(re.search(r"spacy[-_]imbalance|benchmark\.py", line) for line in command.get("script", [])):
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


def test_the_headline_trains_mom_at_the_lambda_each_corpus_dev_chose():
    """MoM's λ in the vectors headline is the one the MoM sweep chose on that
    corpus's own dev set (never one corpus's choice reused on another), and
    the table reads the runs of that λ."""
    script = [" ".join(line.split()) for line in COMMANDS["headline-vectors"]["script"]]
    trained = {}
    for line in script:
        if "token_ner_mom_v2" in line:
            corpora = re.findall(r"--corpus (\S+)", line)
            lam = float(re.search(r"lambda_=(\S+)", line).group(1))
            tag = re.search(r"--tag (\S+)", line).group(1)
            assert tag == f"l{round(100 * lam)}", line
            trained.update({corpus: tag for corpus in corpora})
    table = next(line for line in script if "headline_table.py" in line)
    assert dict(pair.split("=") for pair in re.findall(r"--mom-tag (\S+)", table)) == trained
    for corpus, tag in trained.items():
        chosen = srsly.read_json(ROOT / "metrics" / corpus / "mom_sweep-dev-choice.json")["token_ner_mom_v2"]["chosen"]
        assert tag == f"l{round(100 * float(chosen))}", f"{corpus}: the headline trains MoM at {tag}, its dev chose λ = {chosen}"
