"""project.yml written from studies.yml: every study's benchmark runs,
settings and tables declared once, expanded into weasel commands.

studies.yml holds the project's head (title, description, vars, assets,
workflows: copied as it is, comments included, up to the line `studies:`)
and one entry per command under `studies`, each with `help`, `steps` and
optional `deps` (beyond the ones its steps imply), `outputs` and `no_skip`.
A step is one of

- ``benchmark``: options of scripts/benchmark.py (``corpus``, ``config``,
  ``set`` and ``baseline`` are lists; ``true`` is a bare flag; ``seed``,
  ``only``, ``gpu-id`` and ``jobs`` take the project's vars unless given,
  ``null`` leaves one out). With ``settings`` (``key``: a config setting,
  ``values``: tag -> value, ``labels``: tag -> table label, the value by
  default) it is one benchmark call per setting: ``--tag TAG``, ``--set
  KEY=VALUE`` and ``summary`` with ``{tag}`` filled in;
- ``table``: scripts/study_table.py NAME with its options; ``corpus``,
  ``config`` and ``setting`` default to the study's benchmark corpora,
  configs and settings (``TAG=LABEL``), so a masking rate is typed once;
- ``run``: a command line as it is.

A benchmark step implies scripts/benchmark.py, bench/, the package, its
configs and corpus folders as dependencies; a table step
scripts/study_table.py.
"""
import json
from pathlib import Path
from typing import Any, Dict, Iterator, List, Sequence, Tuple

BENCHMARK = "scripts/benchmark.py"
TABLE = "scripts/study_table.py"
# the benchmark options every study shares unless it says otherwise
BENCHMARK_DEFAULTS = {"seed": "${vars.seeds}", "only": '"${vars.only}"', "gpu-id": "${vars.gpu_id}", "jobs": "${vars.jobs}"}
STEP_KINDS = ("benchmark", "table", "run")
STUDY_KEYS = {"help", "steps", "deps", "outputs", "no_skip"}
SETTINGS_KEYS = {"key", "values", "labels"}
HEAD_END = "studies:"


class StudyError(ValueError):
    pass


# characters after which a value is quoted: the command line is split like a shell's
SHELL_SPECIAL = set(" \t\"'%;&|<>()")


def _quote(value: Any) -> str:
    text = str(value)
    if len(text) > 1 and text[0] == text[-1] == '"':
        return text  # quoted as written: a var that may be empty ("${vars.only}")
    if text == "" or SHELL_SPECIAL & set(text):
        return json.dumps(text, ensure_ascii=False)
    return text


def _options(options: Dict[str, Any]) -> List[str]:
    """``--key value`` words, lists as repeated options, true as a bare flag."""
    words: List[str] = []
    for key, value in options.items():
        if value is None or value is False:
            continue
        values = value if isinstance(value, list) else [value]
        for item in values:
            words.append(f"--{key}" if item is True else f"--{key} {_quote(item)}")
    return words


def benchmark_options(step: Dict[str, Any]) -> List[Dict[str, Any]]:
    """The options of each benchmark call of a step: one, or one per setting."""
    options = {key: value for key, value in step.items() if key != "settings"}
    for key, value in BENCHMARK_DEFAULTS.items():
        options.setdefault(key, value)
    settings = step.get("settings")
    if not settings:
        return [options]
    unknown = set(settings) - SETTINGS_KEYS
    if unknown or "key" not in settings or not settings.get("values"):
        raise StudyError(f"settings need `key` and `values` (and optionally `labels`), got {sorted(settings)}")
    if "{tag}" not in str(options.get("summary", "")):
        raise StudyError(f"a benchmark step with settings needs a summary with {{tag}}, got {options.get('summary')!r}")
    calls = []
    for tag, value in settings["values"].items():
        call = dict(options, tag=str(tag), summary=options["summary"].replace("{tag}", str(tag)))
        call["set"] = [*options.get("set", []), f"{settings['key']}={value}"]
        calls.append(call)
    return calls


def _ordered(options: Dict[str, Any]) -> Dict[str, Any]:
    """corpus and config first, then the rest as written (the order commands were typed in)."""
    first = {key: options[key] for key in ("corpus", "config") if key in options}
    return {**first, **{key: value for key, value in options.items() if key not in first}}


def _study_settings(steps: Sequence[Dict[str, Any]]) -> Tuple[List[str], List[str], List[str]]:
    corpora: List[str] = []
    configs: List[str] = []
    settings: List[str] = []
    for step in steps:
        bench = step.get("benchmark")
        if not bench:
            continue
        corpora += [c for c in bench.get("corpus", []) if c not in corpora]
        configs += [c for c in bench.get("config", []) if c not in configs]
        if bench.get("settings"):
            labels = bench["settings"].get("labels") or {}
            settings += [f"{tag}={labels.get(tag, value)}" for tag, value in bench["settings"]["values"].items()]
    return corpora, configs, settings


def study_script(name: str, study: Dict[str, Any]) -> List[str]:
    """The command lines of one study."""
    lines = []
    corpora, configs, settings = _study_settings(study["steps"])
    for step in study["steps"]:
        if len(step) != 1 or next(iter(step)) not in STEP_KINDS:
            raise StudyError(f"studies.yml, {name}: a step is one of {', '.join(STEP_KINDS)}, got {sorted(step)}")
        kind, body = next(iter(step.items()))
        if kind == "run":
            lines.append(str(body))
        elif kind == "benchmark":
            for options in benchmark_options(body):
                lines.append(" ".join(["python", BENCHMARK, *_options(_ordered(options))]))
        else:
            options = dict(body)
            table = options.pop("name")
            options.setdefault("corpus", corpora)
            options.setdefault("config", configs)
            if settings:
                options.setdefault("setting", settings)
            lines.append(" ".join(["python", TABLE, table, *_options(_ordered(options))]))
    return lines


def study_deps(study: Dict[str, Any]) -> List[str]:
    """What a study's steps read, then the deps it lists."""
    deps: List[str] = []
    for step in study["steps"]:
        kind, body = next(iter(step.items()))
        if kind == "benchmark":
            # the whole package: a finished run is skipped by its record anyway (scripts/benchmark.py),
            # so a change anywhere in it costs a rerun of the tables, not of the training
            deps += [BENCHMARK, "bench", "spacy_imbalance"]
            deps += [f"configs/{config}.cfg" for config in body.get("config", [])]
            deps += [f"corpus/{corpus}" for corpus in body.get("corpus", [])]
        elif kind == "table":
            deps.append(TABLE)
    deps += study.get("deps") or []
    return list(dict.fromkeys(deps))


def _flow(key: str, items: Sequence[str], indent: int = 4, width: int = 140) -> Iterator[str]:
    """``key: ["a", "b"]``, wrapped at ``width``."""
    words = [json.dumps(item, ensure_ascii=False) for item in items]
    line = f"{' ' * indent}{key}: ["
    for i, word in enumerate(words):
        piece = word + ("]" if i == len(words) - 1 else ",")
        if len(line) + len(piece) + 1 > width and not line.endswith("["):
            yield line
            line = " " * (indent + 2) + piece
        else:
            line += ("" if line.endswith("[") else " ") + piece
    yield line if words else line + "]"


def render_project(text: str) -> str:
    """project.yml from the text of studies.yml."""
    import yaml

    head, sep, _ = text.partition(f"\n{HEAD_END}\n")
    if not sep:
        raise StudyError(f"studies.yml: no line `{HEAD_END}` after the project's head")
    try:
        studies = (yaml.safe_load(text) or {}).get("studies") or {}
    except yaml.YAMLError as err:
        # the parser's message names the line and column
        raise StudyError(f"studies.yml is not valid YAML: {err}") from None
    out = [
        "# Written by `python scripts/write_project.py` from studies.yml: edit that file, not this one.",
        *head.rstrip("\n").split("\n")[_skip_comment(head):],
        "",
        "commands:",
    ]
    for name, study in studies.items():
        unknown = set(study) - STUDY_KEYS
        if unknown:
            raise StudyError(f"studies.yml, {name}: unknown keys {', '.join(sorted(unknown))} (use {', '.join(sorted(STUDY_KEYS))})")
        out += [f"  - name: {name}", f"    help: {json.dumps(study['help'], ensure_ascii=False)}"]
        script = [json.dumps(line, ensure_ascii=False) for line in study_script(name, study)]
        if len(script) == 1:
            out.append(f"    script: [{script[0]}]")
        else:
            out += ["    script:", *(f"      - {line}" for line in script)]
        deps = study_deps(study)
        if deps:
            out += list(_flow("deps", deps))
        if study.get("outputs"):
            out += list(_flow("outputs", study["outputs"]))
        if study.get("no_skip"):
            out.append("    no_skip: true")
    # no blank line between commands: the file is generated, and "- name:" starts each
    return "\n".join(out).rstrip("\n") + "\n"


def _skip_comment(head: str) -> int:
    """studies.yml's own opening comment (up to the first blank line) is not copied."""
    lines = head.split("\n")
    for i, line in enumerate(lines):
        if not line.startswith("#"):
            return i + (1 if line == "" and i else 0)
    return 0


def write_project(root: Path) -> str:
    return render_project((root / "studies.yml").read_text(encoding="utf8"))
