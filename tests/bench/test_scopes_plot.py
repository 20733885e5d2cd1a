"""bench/scopes_plot.py and its script: the bars of each split read the right runs, the best
built-in is the one with the higher mean on that split's merge, and the
command writes its figure or names a missing run."""
import json

import typer
from typer.testing import CliRunner

from bench.facts import scope_files
from bench.scopes_plot import bars, seed_scores
from scripts.scopes_plot import main


def run(corpus, system, f):
    return {"corpus": corpus, "config": system, "macro": {"f": f}}


def synthetic():
    """Seeds of each (corpus, system): on the even merge ner is the better
    built-in (mean 0.2 against 0.15), on the uneven one spancat_singlelabel."""
    runs = []
    for corpus, values in {
        "wnut17-even": {"ner": (0.1, 0.3), "spancat_singlelabel": (0.15, 0.15), "sampled_spancat_uniform": (0.2, 0.2),
                        "sampled_spancat_uniform_scoped": (0.3, 0.4)},
        "wnut17-uneven": {"ner": (0.1, 0.1), "spancat_singlelabel": (0.2, 0.2), "sampled_spancat_uniform": (0.25, 0.25),
                          "sampled_spancat_uniform_scoped": (0.3, 0.3)},
        "wnut17": {"ner": (0.5, 0.6), "spancat_singlelabel": (0.4, 0.4), "sampled_spancat_uniform": (0.45, 0.45)},
    }.items():
        runs += [run(corpus, system, f) for system, fs in values.items() for f in fs]
    return runs


def test_bars_take_the_best_built_in_of_each_merge_and_its_ceiling():
    by_split = bars(seed_scores(synthetic()))
    assert by_split["even"] == [
        ("ner, merge", [10.0, 30.0]), ("ours, merge", [20.0, 20.0]), ("ours with scopes", [30.0, 40.0]),
        ("ner, complete train set", [50.0, 60.0]),
    ]
    assert [label for label, _ in by_split["uneven"]][0] == "spancat_singlelabel, merge"
    assert by_split["uneven"][3] == ("spancat_singlelabel, complete train set", [40.0, 40.0])


def test_the_command_writes_the_figure_and_names_a_missing_run(tmp_path):
    app = typer.Typer()
    app.command()(main)
    runs = [path for path in scope_files("cnn") if not path.endswith("-paired.json")]
    missing = CliRunner().invoke(app, ["cnn", str(tmp_path / "x.png"), "--root", str(tmp_path)])
    assert missing.exit_code == 1 and runs[0] in " ".join(missing.output.split()) and "ENCODER" not in missing.output
    for path in runs:
        corpus, name = path.split("/")[1], path.rsplit("/", 1)[-1].rsplit("-s", 1)[0]
        (tmp_path / path).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / path).write_text(json.dumps(run(corpus, name, 0.1 + 0.01 * len(name))), encoding="utf8")
    result = CliRunner().invoke(app, ["cnn", str(tmp_path / "x.png"), "--root", str(tmp_path)])
    assert result.exit_code == 0, result.output
    assert (tmp_path / "x.png").read_bytes().startswith(b"\x89PNG")
    bad = CliRunner().invoke(app, ["bert", str(tmp_path / "y.png")])
    assert bad.exit_code == 2 and "give cnn or features" in bad.output and not (tmp_path / "y.png").exists()
