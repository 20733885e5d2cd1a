"""What the command tests share: calling the app, reading its output without
colours or boxes, and the check that a command failed with a clear message."""
import re

from typer.testing import CliRunner

from spacy_imbalance.cli import app

ANSI = re.compile(r"\x1b\[[0-9;]*m")
BOX = re.compile(r"[│╭╮╰╯─]")

# three sentences, two with an entity
CONLL = "Ann\tB-PER\nsings\tO\n\nBob\tB-PER\nLee\tI-PER\nruns\tO\n\nit\tO\nrains\tO\n"


# the settings each transform needs besides INPUT and OUTPUT
TRANSFORMS = {
    "mask": ["--p", "0.5"],
    "resample": [],
    "undersample": [],
    "subsample": ["--n", "1"],
    "augment": [],
}


def _plain(output: str) -> str:
    """CLI output without colours, boxes or line wrapping."""
    return " ".join(BOX.sub(" ", ANSI.sub("", output)).split())


def _invoke(*args):
    return CliRunner().invoke(app, [str(arg) for arg in args])


def _assert_failed(result, *names):
    """Exit code 1 with a message (not a traceback) that names every name."""
    assert result.exit_code == 1, result.output
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    for name in names:
        assert str(name) in _plain(result.output), _plain(result.output)
