"""The commands of README.md and docs/ run on a fresh clone as written (issue 44).

Nothing is run: each command is checked against the command lines themselves
(their typer apps, project.yml, run.sh, setup.cfg) and against the files of a
fresh clone, so the whole check takes a second. What is checked:

- every shell command of a ```bash, ```sh or ```shell block, and every ``$ ``
  line of a ```console block, of the generated pages (README.md, docs/*.md,
  docs/benchmarks/*.md), in page order (a trailing ``\\`` continues a line);
- inline code in the prose that starts with a command (`spacy-imbalance mask
  --p 0.5`): a mention, not a recipe, so only its command, options, project
  names, scripts and packages, not its arguments or the files it reads.

What a command must get right:

- ``spacy-imbalance SUB`` (or ``python -m spacy_imbalance SUB``) and ``spacy
  SUB`` (or ``python -m spacy SUB``, read from spaCy's own app): SUB exists,
  every option is one of SUB's (or a ``--section.key`` override where SUB
  takes them), an option with choices gets one of them, the positional
  arguments fit, the required options are given, and no ``[--option]``
  synopsis is left in (the shell would pass it on as it is); ``init-config``
  never writes a config the page wrote before (it refuses without --force);
- ``spacy project run NAME``: NAME is a command or workflow of project.yml and
  every ``--vars.X`` a var of it; ``spacy train CONFIG``: every
  ``--section.key`` override names a setting of CONFIG when CONFIG is a file
  of the clone;
- ``python scripts/X.py`` and ``bash FILE``: the file is in the clone;
  ``bash run.sh WHAT``: WHAT is one of run.sh's commands;
- ``pip install``/``pip wheel``: this package from its folder, never by name
  (it is not on PyPI; ``/path/to/spacy-imbalance`` stands for the reader's
  clone), with extras that setup.cfg declares.

A file a recipe reads (a path argument or option, the config of ``spacy
train``, a ``--paths.*`` override) must be, by this convention:

1. in a fresh clone: a file git tracks or would add (not ignored);
2. written by an earlier command of the same page (an output argument or
   option); what lies under an output folder counts, e.g. an audit's
   ``audit/review-*.jsonl``;
3. an output of a project command or workflow that the page names before it
   (``spacy project run corpus-wnut17``, in a block or inline), with
   ``spacy project assets`` named first when that command converts the
   downloaded assets;
4. the reader's own: a *bare* file name of USER_FILES (no folder: the reader's
   corpus in the folder they run the commands from), or a pipeline package of
   PACKAGES (``python -m spacy download NAME``).

Every relative link of the pages, too, names a file of the clone, and with
``#anchor`` a heading of it. A failure names page and line: fix the source in
docs/src/ or docs/benchmarks/src/, then run ``python scripts/write_docs.py``.
"""
import configparser
import enum
import re
import shlex
import subprocess
import typing
from dataclasses import dataclass, field
from fnmatch import fnmatchcase
from functools import lru_cache
from pathlib import Path, PurePosixPath
from typing import Any, Dict, List, Optional, Set, Tuple

import pytest
import srsly
import typer
from confection import Config

from .conftest import ROOT

# the reader's own files: bare names only, so that a repository path is never mistaken for one
USER_FILES = {
    "train.spacy": "the reader's training corpus (`spacy-imbalance convert` makes one from CoNLL)",
    "dev.spacy": "the reader's dev corpus",
    "test.spacy": "the reader's test corpus",
}
# pipelines a command may take by package name, installed with `python -m spacy download NAME`
PACKAGES = {"en_core_web_sm", "en_core_web_md", "en_core_web_lg"}
# what the install commands write for the reader's clone
CLONE = "/path/to/spacy-imbalance"
DISTRIBUTION = "spacy-imbalance"
SHELL_BLOCKS = {"bash", "sh", "shell", "console"}
# inline code that is a command
INLINE_COMMANDS = ("spacy-imbalance ", "spacy ", "python -m ", "python scripts/", "bash ", "pip ")
# parameters of our commands that name what they write; every other path parameter is read
OUTPUTS = {"output", "output_dir", "plot", "report"}
# parameters that take a pipeline: a package name or a folder
PIPELINES = {"model", "models", "vectors", "base"}
# the `spacy train --paths.*` overrides that take a pipeline; the other --paths.* name files
PIPELINE_SETTINGS = {"paths.vectors"}
CONTROL = {"&&", "||", ";", "|", "&"}

FENCE = re.compile(r"^\s*```\s*(\S*)")
CODE_SPAN = re.compile(r"`([^`]+)`")
LINK = re.compile(r"\]\(([^)\s]+)\)")
URL = re.compile(r"^[a-z][a-z+.-]*:")
GLOB = re.compile(r"[*?\[]")
ENV = re.compile(r"^\w+=")
CASE_LABEL = re.compile(r"^\s*([\w-]+(?:\|[\w-]+)*)\)\s*$", re.M)


def pages() -> List[Path]:
    return [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md")), *sorted((ROOT / "docs" / "benchmarks").glob("*.md"))]


@lru_cache(maxsize=1)
def clone_files() -> Tuple[Set[str], Set[str]]:
    """The files and folders of a fresh clone: what git tracks, and what it would add."""
    result = subprocess.run(["git", "ls-files", "--cached", "--others", "--exclude-standard"], cwd=ROOT, capture_output=True, text=True)
    if result.returncode != 0:
        pytest.skip("not a git checkout: a fresh clone's files are unknown")
    files = set(result.stdout.splitlines())
    folders = {parent.as_posix() for name in files for parent in PurePosixPath(name).parents}
    return files, folders


def normal(path: str) -> str:
    """A path as the clone lists it: no ./, no trailing /, "." for the root."""
    return PurePosixPath(path).as_posix() if path not in ("", "./") else "."


def in_clone(path: str) -> bool:
    files, folders = clone_files()
    if GLOB.search(path):
        return any(fnmatchcase(name, path) for name in files)
    return path in files or path in folders


def related(path: str, made: typing.Iterable[str]) -> bool:
    """The path is what was made, lies under it (a folder written), or above it."""
    return any(path == out or path.startswith(out + "/") or out.startswith(path + "/") for out in made)


# --- the command lines -----------------------------------------------------------------------------


@lru_cache(maxsize=None)
def cli(program: str) -> Any:
    """The click group of ``spacy-imbalance`` or ``spacy``, as typer builds it."""
    if program == "spacy-imbalance":
        from spacy_imbalance.cli import app
    else:
        from spacy.cli import app
    return typer.main.get_command(app)


@lru_cache(maxsize=1)
def project() -> Dict[str, Any]:
    return srsly.read_yaml(ROOT / "project.yml")


def project_outputs(name: str) -> Tuple[List[str], bool]:
    """What `spacy project run NAME` writes, and whether it reads the downloaded assets."""
    spec = project()
    commands = {command["name"]: command for command in spec["commands"]}
    names = spec.get("workflows", {}).get(name, [name])
    asset_folders = {normal(str(PurePosixPath(asset["dest"]).parent)) for asset in spec.get("assets", [])}

    def fill(text: str) -> str:
        return re.sub(r"\$\{vars\.(\w+)\}", lambda m: str(spec["vars"][m.group(1)]), text)

    outputs = [normal(fill(out)) for n in names for out in commands[n].get("outputs", [])]
    scripts = " ".join(fill(line) for n in names for line in commands[n].get("script", []))
    return outputs, any(folder in scripts.split() for folder in asset_folders)


@lru_cache(maxsize=1)
def extras() -> Set[str]:
    parser = configparser.ConfigParser()
    parser.read(ROOT / "setup.cfg")
    return set(parser["options.extras_require"])


@lru_cache(maxsize=1)
def run_sh_commands() -> Set[str]:
    return {name for labels in CASE_LABEL.findall((ROOT / "run.sh").read_text(encoding="utf8")) for name in labels.split("|") if name != "*"}


@lru_cache(maxsize=None)
def config(path: str) -> Dict[str, Any]:
    return Config().from_disk(ROOT / path, interpolate=False)


def annotation(param: Any) -> Any:
    descriptor = getattr(param, "type_descriptor", None)
    return descriptor.annotation if descriptor is not None else None


def is_path(hint: Any) -> bool:
    return hint is Path or any(is_path(arg) for arg in typing.get_args(hint))


def choices(param: Any) -> Optional[List[str]]:
    hint = annotation(param)
    if isinstance(hint, type) and issubclass(hint, enum.Enum):
        return [str(member.value) for member in hint]
    return None


def takes_value(param: Any) -> bool:
    return not (getattr(param, "is_flag", False) or getattr(param, "count", False))


@dataclass
class Parsed:
    """A command's words by parameter: (param, value) pairs and --section.key overrides."""

    values: List[Tuple[Any, str]] = field(default_factory=list)
    overrides: Dict[str, str] = field(default_factory=dict)
    problems: List[str] = field(default_factory=list)


def parse(command: Any, name: str, words: List[str], inline: bool) -> Parsed:
    """The words as click would bind them to ``command``'s parameters."""
    parsed = Parsed()
    options = {opt: p for p in command.params if p.param_type_name == "option" for opt in [*p.opts, *p.secondary_opts]}
    overrides = command.context_settings.get("allow_extra_args") and command.context_settings.get("ignore_unknown_options")
    positional: List[str] = []
    given: Set[str] = set()
    i = 0
    while i < len(words):
        word = words[i]
        if word.startswith("["):
            parsed.problems.append(f"{word} is a synopsis, not a command (the shell passes it on as it is): write the option out, or name it in the prose")
            while not words[i].endswith("]") and i + 1 < len(words):
                i += 1
        elif word.startswith("-") and word != "-" and not re.fullmatch(r"-[\d.]+", word):
            key, equals, value = word.partition("=")
            param = options.get(key)
            if param is None and overrides and key.startswith("--") and "." in key:
                parsed.overrides[key[2:]] = value if equals else (words[i + 1] if i + 1 < len(words) else "")
                i += 1 if equals or i + 1 == len(words) else 2
                continue
            if param is None:
                known = ", ".join(sorted(opt for opt in options if opt.startswith("--")))
                parsed.problems.append(f"{key} is not an option of `{name}` (its options: {known})")
            elif takes_value(param) and not equals:
                if i + 1 == len(words):
                    if not inline:
                        parsed.problems.append(f"{key} needs a value")
                else:
                    parsed.values.append((param, words[i + 1]))
                    i += 1
                given.add(param.name)
            else:
                parsed.values.append((param, value if equals else key))
                given.add(param.name)
        else:
            positional.append(word)
        i += 1
    # inline mentions leave arguments out: their positionals are bound (a project command's
    # name), but their count is not checked
    counted: List[str] = []
    parsed.values += bind(command, name, positional, counted)
    if not inline:
        parsed.problems += counted
        missing = [p.opts[0] for p in command.params if p.param_type_name == "option" and p.required and p.name not in given]
        parsed.problems += [f"needs {opt}, a required option of `{name}`" for opt in missing]
    return parsed


def bind(command: Any, name: str, positional: List[str], problems: List[str]) -> List[Tuple[Any, str]]:
    """The positional words by argument (one argument may take many: nargs -1)."""
    arguments = [p for p in command.params if p.param_type_name == "argument"]
    spread = next((i for i, p in enumerate(arguments) if p.nargs == -1), None)
    needed = sum(1 for p in arguments if p.required)
    if spread is None and len(positional) > len(arguments):
        problems.append(f"`{name}` takes at most {len(arguments)} arguments ({', '.join(p.name.upper() for p in arguments)}), not {len(positional)}")
    elif len(positional) < needed:
        problems.append(f"`{name}` needs {needed} arguments ({', '.join(p.name.upper() for p in arguments if p.required)}), not {len(positional)}")
    if spread is None:
        return list(zip(arguments, positional))
    after = len(arguments) - spread - 1
    middle = len(positional) - spread - after
    values = list(zip(arguments[:spread], positional[:spread]))
    values += [(arguments[spread], word) for word in positional[spread : spread + middle]]
    return values + list(zip(arguments[spread + 1 :], positional[spread + middle :]))


# --- a page, command by command ----------------------------------------------------------------------


@dataclass
class Command:
    page: str
    line: int
    words: List[str]
    inline: bool  # a mention in the prose, not a recipe

    def problem(self, text: str) -> str:
        return f"{self.page}:{self.line}: `{' '.join(self.words)}`: {text}"


def split_shell(code: str) -> List[List[str]]:
    """The simple commands of a shell line: comments dropped, split at && ; | (environment assignments kept)."""
    lexer = shlex.shlex(code, posix=True, punctuation_chars=True)
    lexer.whitespace_split = True
    commands: List[List[str]] = [[]]
    for word in lexer:
        if word in CONTROL:
            commands.append([])
        else:
            commands[-1].append(word)
    return [words for words in commands if words]


def page_commands(page: str, text: str) -> List[Command]:
    """The commands of a page in page order: the shell blocks' and the inline mentions."""
    found: List[Command] = []
    language: Optional[str] = None  # inside a fence: its language
    pending, start = "", 0
    for number, line in enumerate(text.splitlines(), start=1):
        fence = FENCE.match(line)
        if fence:
            language = fence.group(1) if language is None else None
            continue
        if language is None:
            for span in CODE_SPAN.findall(line):
                if span.startswith(INLINE_COMMANDS):
                    try:
                        found += [Command(page, number, words, inline=True) for words in [shlex.split(span)] if words]
                    except ValueError:  # unbalanced quotes: prose, not a command
                        pass
            continue
        if language not in SHELL_BLOCKS:
            continue
        code = line.strip()
        if not pending:
            if language == "console":
                if not code.startswith("$ "):
                    continue  # what the command printed
                code = code[2:]
            start = number
        if code.endswith("\\"):
            pending += code[:-1] + " "
            continue
        found += [Command(page, start, words, inline=False) for words in split_shell(pending + code)]
        pending = ""
    return found


@dataclass
class PageState:
    """What the page has made available so far."""

    written: Set[str] = field(default_factory=set)
    # an output of a named project command -> (the command, whether it still needs `spacy project assets`)
    project: Dict[str, Tuple[str, bool]] = field(default_factory=dict)
    assets: bool = False
    configs: Set[str] = field(default_factory=set)  # written by init-config

    def unavailable(self, path: str) -> Optional[str]:
        """Why a recipe cannot read ``path``, or None when it can."""
        path = normal(path)
        if path in USER_FILES or in_clone(path) or related(path, self.written):
            return None
        for out, (name, needs_assets) in self.project.items():
            if related(path, [out]):
                if needs_assets:
                    return f"reads {path}, which `spacy project run {name}` makes from the downloaded assets: name `python -m spacy project assets` before it"
                return None
        return (
            f"reads {path}, which a fresh clone lacks: make it in an earlier command of the page, name the project "
            f"command that makes it (`python -m spacy project run NAME`) before, or use a bare name of the reader's own ({', '.join(USER_FILES)})"
        )

    def pipeline(self, value: str) -> Optional[str]:
        if value in PACKAGES:
            return None
        if "/" not in value and not in_clone(value) and not related(value, self.written):
            return f"{value} is neither a pipeline package ({', '.join(sorted(PACKAGES))}) nor a folder"
        return self.unavailable(value)


def check_app(program: str, command: Command, words: List[str], state: PageState) -> List[str]:
    """``spacy-imbalance ...`` or ``spacy ...``: the (sub)command, its options and arguments, and for
    a recipe what it reads."""
    group, names = cli(program), [program]
    while words and hasattr(group, "commands") and words[0] in group.commands:
        group, names, words = group.commands[words[0]], names + [words[0]], words[1:]
    name = " ".join(names)
    if command.inline and words and words[0].isupper():
        return []  # `spacy-imbalance COMMAND`: a placeholder in the prose
    if hasattr(group, "commands"):
        wanted = words[0] if words else "a command"
        return [command.problem(f"`{name}` has no command {wanted} (its commands: {', '.join(sorted(group.commands))})")]
    parsed = parse(group, name, words, command.inline)
    problems = [command.problem(p) for p in parsed.problems]
    if names[:2] == ["spacy", "project"]:
        return problems + check_project(command, names[2], parsed, state)
    if command.inline:
        return problems
    if names == ["spacy", "train"]:
        return problems + check_train(command, parsed, state)
    if program == "spacy":
        return problems  # spaCy's other commands (download, package): their options only
    return problems + check_files(command, names, parsed, state)


def check_files(command: Command, names: List[str], parsed: Parsed, state: PageState) -> List[str]:
    """What one of our commands reads is there; what it writes is recorded for the rest of the page."""
    problems, written = [], []
    for param, value in parsed.values:
        if param.name in OUTPUTS and is_path(annotation(param)):
            written.append(normal(value))
        elif param.name in PIPELINES:
            problems.append(state.pipeline(value))
        elif is_path(annotation(param)) and value != "-":
            problems.append(state.unavailable(value))
        options = choices(param)
        if options is not None and value not in options:
            problems.append(f"{param.opts[0]} {value}: not one of {', '.join(options)}")
    if names[1:] == ["init-config"]:
        again = [out for out in written if out in state.configs]
        force = any(param.name == "force" for param, _ in parsed.values)
        problems += [f"writes {out} a second time on this page, which init-config refuses without --force: give it another name" for out in again if not force]
        state.configs.update(out for out in written if out != "-")
    state.written.update(written)
    return [command.problem(p) for p in problems if p]


def check_train(command: Command, parsed: Parsed, state: PageState) -> List[str]:
    """``spacy train CONFIG``: the config and the files of ``--paths.*``; overrides that the config has."""
    problems: List[Optional[str]] = []
    config_path = next((normal(value) for param, value in parsed.values if param.name == "config_path"), None)
    for param, value in parsed.values:
        if param.name == "output_path":
            state.written.add(normal(value))
        elif param.name in ("config_path", "code_path"):
            problems.append(state.unavailable(value))
    for key, value in parsed.overrides.items():
        if key in PIPELINE_SETTINGS:
            problems.append(state.pipeline(value))
        elif key.startswith("paths."):
            problems.append(state.unavailable(value))
        if config_path is not None and config_path in clone_files()[0]:
            problems.append(missing_setting(config_path, key))
    return [command.problem(p) for p in problems if p]


def missing_setting(path: str, key: str) -> Optional[str]:
    node: Any = config(path)
    parts = key.split(".")
    for i, part in enumerate(parts):
        if not isinstance(node, dict) or part not in node:
            return f"--{key}: {path} has no setting {'.'.join(parts[: i + 1])}"
        node = node[part]
    return None


def check_project(command: Command, subcommand: str, parsed: Parsed, state: PageState) -> List[str]:
    """``spacy project run NAME``: NAME is in project.yml; its outputs are the page's from here on."""
    if subcommand == "assets":
        state.assets = True
        return []
    if subcommand != "run":
        return []
    spec = project()
    names = {command["name"] for command in spec["commands"]} | set(spec.get("workflows", {}))
    problems = [f"--vars.{key[5:]}: project.yml has no such var" for key in parsed.overrides if key.startswith("vars.") and key[5:] not in spec["vars"]]
    problems += [f"{key}: not a --vars.NAME override" for key in parsed.overrides if not key.startswith("vars.")]
    for param, value in parsed.values:
        if param.name == "project_dir" and normal(value) != ".":
            problems.append(f"{value}: the project is the clone's root (.)")
        if param.name != "subcommand" or value.isupper():  # WORKFLOW: a placeholder in prose
            continue
        if value not in names:
            problems.append(f"project.yml has no command or workflow {value}")
            continue
        outputs, needs_assets = project_outputs(value)
        state.project.update({out: (value, needs_assets and not state.assets) for out in outputs})
    return [command.problem(p) for p in problems]


def check_pip(command: Command, words: List[str]) -> List[str]:
    """This package installed from its folder, with extras that exist."""
    takes_value = {"-w", "--wheel-dir", "-f", "--find-links", "-r", "--requirement", "-c", "--constraint", "-i", "--index-url"}
    problems, i = [], 1
    while i < len(words):
        word = words[i]
        i += 2 if word in takes_value else 1
        if word.startswith("-"):
            continue
        match = re.fullmatch(r"([^\[\]=<>!~;]+)(?:\[([^\]]*)\])?.*", word)
        if match is None:
            continue
        name, wanted = match.group(1), match.group(2)
        is_ours = name in (CLONE, ".") or re.sub(r"[-_.]+", "-", name).lower() == DISTRIBUTION
        if is_ours and name not in (CLONE, "."):
            problems.append(f"{name} is not on PyPI: install it from the clone ({CLONE}[extras], or .[extras] in it)")
        if is_ours and wanted:
            problems += [f"[{extra}] is not an extra of setup.cfg ({', '.join(sorted(extras()))})" for extra in wanted.split(",") if extra.strip() not in extras()]
    return [command.problem(p) for p in problems]


def check_command(command: Command, state: PageState) -> List[str]:
    words = list(command.words)
    while words and ENV.match(words[0]):
        words = words[1:]  # MINUTES=6 bash ...: the environment of the command
    program, args = words[0], words[1:]
    if program == "python" and args[:1] == ["-m"] and len(args) > 1:
        program, args = {"spacy_imbalance": "spacy-imbalance", "spacy": "spacy"}.get(args[1], f"python -m {args[1]}"), args[2:]
    if program in ("spacy-imbalance", "spacy"):
        return check_app(program, command, args, state)
    if program == "pip":
        return check_pip(command, args) if args[:1] in (["install"], ["wheel"]) else []
    if program in ("python", "bash") and args:
        problems = [] if in_clone(normal(args[0])) else [f"{args[0]} is not a file of the clone"]
        if normal(args[0]) == "run.sh" and not command.inline and (len(args) < 2 or args[1] not in run_sh_commands()):
            problems.append(f"run.sh has the commands {', '.join(sorted(run_sh_commands()))}")
        return [command.problem(p) for p in problems]
    return [command.problem(f"{program}: tests/test_doc_commands.py does not know how to check it; teach it")]


def page_problems(page: str, text: str) -> List[str]:
    state = PageState()
    return [problem for command in page_commands(page, text) for problem in check_command(command, state)]


# --- links ------------------------------------------------------------------------------------------


def slug(heading: str) -> str:
    """GitHub's anchor of a heading: lower case, punctuation dropped, spaces as hyphens."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def prose(text: str) -> typing.Iterator[Tuple[int, str]]:
    """(line number, line) outside fenced code."""
    fenced = False
    for number, line in enumerate(text.splitlines(), start=1):
        if FENCE.match(line):
            fenced = not fenced
        elif not fenced:
            yield number, line


def anchors(text: str) -> Set[str]:
    """The anchors of a page's headings; GitHub numbers a repeated one: name, name-1, name-2."""
    found: Set[str] = set()
    counts: Dict[str, int] = {}
    for _, line in prose(text):
        heading = re.match(r"^#{1,6}\s+(.*?)\s*#*\s*$", line)
        if heading:
            name = slug(heading.group(1))
            found.add(name if name not in counts else f"{name}-{counts[name]}")
            counts[name] = counts.get(name, 0) + 1
    return found


def link_problems(page: str, text: str) -> List[str]:
    problems = []
    for number, line in prose(text):
        for target in LINK.findall(CODE_SPAN.sub("", line)):
            if URL.match(target):
                continue
            file, _, anchor = target.partition("#")
            resolved = _collapse(f"{PurePosixPath(page).parent}/{file}") if file else page
            if not in_clone(resolved):
                problems.append(f"{page}:{number}: the link {target} names {resolved}, which is not a file of the clone")
            elif anchor and resolved.endswith(".md") and anchor not in anchors((ROOT / resolved).read_text(encoding="utf8")):
                problems.append(f"{page}:{number}: the link {target}: {resolved} has no heading #{anchor}")
    return problems


def _collapse(path: str) -> str:
    """a/b/../c as a/c, without the file system."""
    parts: List[str] = []
    for part in PurePosixPath(path).parts:
        if part == ".." and parts:
            parts.pop()
        elif part != ".":
            parts.append(part)
    return "/".join(parts) or "."


# --- the tests --------------------------------------------------------------------------------------


def _read(page: Path) -> Tuple[str, str]:
    return page.relative_to(ROOT).as_posix(), page.read_text(encoding="utf8")


FIX = "\n(fix the sources in docs/src/ or docs/benchmarks/src/, then run python scripts/write_docs.py)"


def test_documented_commands_fit_the_command_lines_and_the_clone():
    problems = [problem for page in pages() for problem in page_problems(*_read(page))]
    assert not problems, "\n".join(problems) + FIX


def test_relative_links_name_files_and_headings_of_the_clone():
    problems = [problem for page in pages() for problem in link_problems(*_read(page))]
    assert not problems, "\n".join(problems) + FIX


def test_the_pages_hold_commands_to_check():
    # a parser that found nothing would pass everything
    found = [command for page in pages() for command in page_commands(*_read(page))]
    recipes = [c for c in found if not c.inline]
    assert len(recipes) >= 20 and any(c.words[:2] == ["spacy-imbalance", "init-config"] for c in recipes)


NUMBERS = {"two": 2, "three": 3, "four": 4, "five": 5, "six": 6}


def test_the_encoders_counted_are_the_encoders_listed():
    table = [line for line in (ROOT / "docs" / "encoders.md").read_text(encoding="utf8").splitlines() if line.startswith("| `configs/")]
    assert table, "docs/encoders.md has no table of encoders (| `configs/...` | rows)"
    for page in (ROOT / "README.md", ROOT / "docs" / "encoders.md"):
        counts = re.findall(r"comes in (\w+) encoders", page.read_text(encoding="utf8"))
        assert counts and all(NUMBERS[count] == len(table) for count in counts), (page.name, counts)


# the checker itself, on pages made up to hold one mistake each
def block(*lines: str, language: str = "bash") -> str:
    return f"```{language}\n" + "\n".join(lines) + "\n```\n"


@pytest.mark.parametrize(
    "text,expected",
    [
        (block("spacy-imbalance stat train.spacy"), "`spacy-imbalance` has no command stat"),
        (block("spacy-imbalance stats train.spacy --jsn"), "--jsn is not an option of `spacy-imbalance stats`"),
        (block("spacy-imbalance stats train.spacy dev.spacy"), "`spacy-imbalance stats` takes at most 1 arguments (PATH), not 2"),
        (block("spacy-imbalance mask train.spacy masked.spacy"), "needs --p, a required option of `spacy-imbalance mask`"),
        (block("spacy-imbalance init-config config.cfg -c sampled_spancat [--listen]"), "[--listen] is a synopsis"),
        (
            block("spacy-imbalance audit train.spacy -o audit/", "spacy-imbalance apply-review train.spacy audit/review-a.jsonl -o out.spacy --overlaps maybe"),
            "--overlaps maybe: not one of refuse",
        ),
        (block("spacy-imbalance stats corpus/wnut17/train.spacy"), "reads corpus/wnut17/train.spacy, which a fresh clone lacks"),
        (block("spacy-imbalance stats data/train.spacy"), "reads data/train.spacy, which a fresh clone lacks"),
        (
            "First `python -m spacy project run corpus-wnut17`.\n" + block("spacy-imbalance stats corpus/wnut17/train.spacy"),
            "makes from the downloaded assets: name `python -m spacy project assets` before it",
        ),
        (block("spacy-imbalance audit train.spacy -o audit/ --vectors en_core_web_xx"), "en_core_web_xx is neither a pipeline package"),
        (block("spacy-imbalance init-config a.cfg -c ner", "spacy-imbalance init-config a.cfg -c ner --gpu"), "writes a.cfg a second time on this page"),
        (block("python -m spacy train config.cfg --paths.train train.spacy"), "reads config.cfg, which a fresh clone lacks"),
        (block("python -m spacy train configs/ner.cfg --paths.trian train.spacy"), "--paths.trian: configs/ner.cfg has no setting paths.trian"),
        (block("python -m spacy project run corpus-wnut18"), "project.yml has no command or workflow corpus-wnut18"),
        (block("spacy project run demo . --vars.demo_stepz 4"), "--vars.demo_stepz: project.yml has no such var"),
        (block("pip install spacy-imbalance"), "spacy-imbalance is not on PyPI"),
        ("Install it: `pip install \"spacy-imbalance[ray]\"`.\n", "spacy-imbalance is not on PyPI"),
        (block(f"pip install \"{CLONE}[plot]\""), "[plot] is not an extra of setup.cfg"),
        (block("bash run.sh tests"), "run.sh has the commands demo, test"),
        (block("python scripts/write_doc.py"), "scripts/write_doc.py is not a file of the clone"),
        (block("cd somewhere"), "cd: tests/test_doc_commands.py does not know how to check it"),
        ("Then `spacy-imbalance review audit/ --prot 8000` opens it.\n", "--prot is not an option of `spacy-imbalance review`"),
    ],
)
def test_a_wrong_command_is_named_with_its_page_and_line(text, expected):
    problems = page_problems("docs/x.md", "# A page\n\n" + text)
    assert len(problems) == 1 and problems[0].startswith("docs/x.md:"), problems
    assert expected in problems[0], problems[0]


@pytest.mark.parametrize(
    "text",
    [
        # the reader's own corpus, a package, a folder written before, a project command named before
        block("spacy-imbalance audit train.spacy --dev dev.spacy -o audit/ --vectors en_core_web_md", "spacy-imbalance apply-review train.spacy audit/review-*.jsonl -o reviewed.spacy"),
        block("spacy-imbalance init-config config.cfg -c sampled_spancat", "spacy train config.cfg --output out/ --paths.train train.spacy", "python -m spacy_imbalance evaluate out/model-best test.spacy"),
        block("python -m spacy project assets", "python -m spacy project run corpus-wnut17 .", "spacy-imbalance stats corpus/wnut17/train.spacy"),
        block("spacy-imbalance default-corpus corpus/wnut16", "spacy-imbalance mask corpus/wnut16/train.spacy corpus/wnut16/m.spacy --p 0.5"),
        # a console block: only the $ lines are commands
        block("$ spacy-imbalance stats train.spacy", "tokens   62,730", language="console"),
        block("spacy-imbalance init-config - -c two_task_ner --loss comauc  # to stdout", "MINUTES=6 bash run.sh demo"),
        block(f"pip install \"{CLONE}[transformers,corpora]\" \"spacy[cuda12x]\""),
        # inline mentions: the options, not the arguments
        "`spacy-imbalance apply-review` and `spacy-imbalance init-config --encoder vectors|features` and `python -m spacy project run WORKFLOW`\n",
    ],
)
def test_a_runnable_page_passes(text):
    assert page_problems("docs/x.md", text) == []


@pytest.mark.parametrize(
    "text,expected",
    [
        ("See [the guide](nothing.md).\n", "docs/x.md:1: the link nothing.md names docs/nothing.md, which is not a file of the clone"),
        ("See [the guide](encoders.md#no-such-part).\n", "docs/x.md:1: the link encoders.md#no-such-part: docs/encoders.md has no heading #no-such-part"),
        ("See [the README](../README.md#nothing-here).\n", "docs/x.md:1: the link ../README.md#nothing-here: README.md has no heading #nothing-here"),
    ],
)
def test_a_broken_link_is_named(text, expected):
    assert link_problems("docs/x.md", text) == [expected]


def test_links_that_resolve_pass():
    text = "[a](encoders.md#fine-tuning-a-transformer), [b](../README.md#which-method-for-which-problem), [c](benchmarks/), [d](https://example.org/x.md), `[e](gone.md)`\n"
    assert link_problems("docs/x.md", text) == []
