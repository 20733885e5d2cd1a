"""spacy-imbalance calibrate: an alias of tune-thresholds that says so in one
line, then does the same (the command itself: tests/cli/test_tune_thresholds*.py)."""
import re

import spacy
from typer.testing import CliRunner

from spacy_imbalance.cli import app

from .test_tune_thresholds_spancat import NAME, dev_path, model_dir  # noqa: F401  (model_dir: the fixture)

ALIAS_LINE = "`calibrate` is an alias of `tune-thresholds`"


def invoke(*args):
    result = CliRunner().invoke(app, [*map(str, args)])
    return result.exit_code, result.output


def test_calibrate_says_it_is_an_alias_then_tunes_as_tune_thresholds(model_dir, tmp_path):  # noqa: F811
    settings = (dev_path(model_dir), "--no-shared", "--min-gain", "0")
    code, alias_output = invoke("calibrate", model_dir, "-o", tmp_path / "by-alias", *settings)
    assert code == 0, alias_output
    code, output = invoke("tune-thresholds", model_dir, "-o", tmp_path / "by-name", *settings)
    assert code == 0, output
    first, rest = alias_output.split("\n", 1)
    assert ALIAS_LINE in first and ALIAS_LINE not in output
    assert rest.replace("by-alias", "by-name") == output
    assert spacy.load(tmp_path / "by-alias").get_pipe(NAME).thresholds == spacy.load(tmp_path / "by-name").get_pipe(NAME).thresholds == {"LOC": 0.05}


def test_calibrate_fails_as_tune_thresholds_does(tmp_path):
    code, alias_output = invoke("calibrate", tmp_path / "no-model", tmp_path / "no-data.spacy", "--step", "0.25")
    assert code == 1 and ALIAS_LINE in alias_output.splitlines()[0]
    assert "--output DIR" in alias_output and "--in-place" in alias_output


def test_calibrate_takes_the_options_of_tune_thresholds():
    def options(command):
        code, output = invoke(command, "--help")
        assert code == 0, output
        return sorted(set(re.findall(r"--[a-z][a-z-]*", output)))

    assert options("calibrate") == options("tune-thresholds")
    assert "--report" in options("calibrate") and "--plot" in options("calibrate")
