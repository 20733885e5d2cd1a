"""Which metrics files `summarize` pools (issue 43, M11): a run given twice
under another format, and runs scored on other labels, are refused, naming
the files; runs that differ only where seeds differ still pool."""
import json

import numpy
import pytest
from typer.testing import CliRunner

from spacy_imbalance.cli import app
from spacy_imbalance.scorers.counts import MatchCounts
from spacy_imbalance.scorers.pooling import gold_labels, pooling_problem, run_identity

runner = CliRunner()

COUNTS = MatchCounts(["location", "person"], numpy.array([[[1, 0, 1], [0, 1, 0]], [[0, 0, 0], [2, 0, 1]]]))


def _scores(f):
    return {"p": f, "r": f, "f": f}


def _record(seed=0, location_f=0.236, **fields):
    """A benchmark run's record as bench/runs.py writes it now."""
    return {
        "name": "ner", "macro": _scores(0.3), "micro": _scores(0.4),
        "per_type": {
            "location": {**_scores(location_f), "tp": 1, "fp": 0, "fn": 1, "support": 2},
            "person": {**_scores(0.5), "tp": 2, "fp": 1, "fn": 1, "support": 3},
        },
        "target": "ents", "model": f"/work/q/training/wnut16/ner-s{seed}/model-best", "data": "/work/q/corpus/wnut16/test.spacy",
        "data_sha256": "c" * 64, "corpus": "wnut16", "config": "ner", "config_sha256": "a" * 64, "seed": seed,
        "max_steps": 1000, "budget": "steps", "train_steps": 1000, "overrides": {}, "counts": COUNTS.to_sparse(),
        "bootstrap": {"n_resamples": 1000, "seed": 0, "level": 0.95}, "train_seconds": 100.0 + seed, **fields,
    }


def _older_format(record):
    """The same run as an older benchmark wrote it: the counts as a list of
    [example, label, tp, fp, fn] rows, no train_steps, budget, overrides or
    data_sha256, and its timings as measured then."""
    older = {k: v for k, v in record.items() if k not in ("train_steps", "budget", "overrides", "data_sha256")}
    table = MatchCounts.from_sparse(record["counts"]).table
    rows = [[int(i), int(j), *map(int, table[i, j])] for i, j in numpy.argwhere(table.any(axis=2))]
    older["counts"] = {"labels": record["counts"]["labels"], "n_examples": int(table.shape[0]), "rows": rows}
    older["train_seconds"] = 97.5
    return older


def _write(tmp_path, name, record, indent=None):
    path = tmp_path / name
    path.write_text(json.dumps(record, indent=indent), encoding="utf8")
    return path


def _summarize(*paths, output=None):
    args = ["summarize", *map(str, paths)] + (["--output", str(output)] if output else [])
    result = runner.invoke(app, args)
    return result, " ".join(result.output.split())


def test_an_older_format_copy_of_a_run_is_the_same_run(tmp_path):
    record = _record()
    (tmp_path / "old").mkdir()
    new, old = _write(tmp_path, "ner-s0.json", record), _write(tmp_path, "old/ner-s0.json", _older_format(record), indent=1)
    table = tmp_path / "summary.md"
    result, out = _summarize(new, old, output=table)
    # before: pooled as two runs, "30.0 ± 0.0", the spread of one run
    assert result.exit_code == 1 and isinstance(result.exception, SystemExit), out
    # the older file's run, once its format is read: the steps it trained, the default budget and overrides
    assert run_identity(json.loads(old.read_text())) == {k: v for k, v in run_identity(record).items() if k != "data_sha256"}
    assert (
        f"{new} and {old} hold the same run of 'ner' (corpus 'wnut16', config 'ner', config SHA-256 'aaaaaaaaaaaa...', "
        "seed 0, steps 1000, budget 'steps', overrides {}, target 'ents'), perhaps one in an older format: a mean would "
        "count it twice. Give each run once"
    ) in out
    assert not table.exists()


def test_an_evaluation_given_twice_in_two_formats_is_the_same_run(tmp_path):
    """`evaluate --output` reports have no seed: the pipeline, the data and
    the sentence-by-sentence counts tell a run."""
    keys = ("name", "macro", "micro", "per_type", "target", "model", "data", "data_sha256", "bootstrap", "counts")
    record = {k: v for k, v in _record().items() if k in keys}
    older = _older_format(record)
    a, b = _write(tmp_path, "a.json", record), _write(tmp_path, "b.json", older, indent=2)
    result, out = _summarize(a, b)
    assert result.exit_code == 1, out
    assert (
        f"{a} and {b} hold the same run of 'ner' (model '/work/q/training/wnut16/ner-s0/model-best', "
        "data '/work/q/corpus/wnut16/test.spacy', target 'ents', bootstrap {'n_resamples': 1000, 'seed': 0, 'level': 0.95} "
        "and the same match counts)"
    ) in out
    # another pipeline's predictions (other counts) are another run, and so is another bootstrap
    other = dict(record, counts=MatchCounts(COUNTS.labels, COUNTS.table[::-1].copy()).to_sparse())
    assert pooling_problem([(a, record), (_write(tmp_path, "c.json", other), other)]) is None
    other = dict(record, bootstrap={"n_resamples": 1000, "seed": 1, "level": 0.95})
    assert pooling_problem([(a, record), (_write(tmp_path, "d.json", other), other)]) is None


def test_runs_that_differ_in_what_defines_them_are_pooled(tmp_path):
    def pooled(other):
        return pooling_problem([(_write(tmp_path, "a.json", _record()), _record()), (_write(tmp_path, "b.json", other), other)])

    assert pooled(_record(seed=1)) is None
    # the same seed trained longer, or with other overrides, is another run
    assert pooled(_record(train_steps=2000, max_steps=2000)) is None
    assert pooled(_record(overrides={"corpora.train.p": "0.5"})) is None
    # runs of two names are never one run
    assert pooled(_record(name="ner-copy")) is None


@pytest.mark.parametrize("change", ["empty", "renamed"])
def test_runs_scored_on_other_labels_are_not_pooled(tmp_path, change):
    a = _write(tmp_path, "ner-s0.json", _record(seed=0))
    second = _record(seed=1)
    if change == "renamed":
        second["per_type"]["loc"] = second["per_type"].pop("location")
    else:
        second["per_type"] = {}
    b = _write(tmp_path, "ner-s1.json", second)
    result, out = _summarize(a, b)
    # before: "location" averaged with a missing F = 0, 23.6 -> 11.8
    assert result.exit_code == 1 and "11.8" not in out, out
    lacks = f"{b} lacks 'location'; {a} lacks 'loc'" if change == "renamed" else f"{b} lacks 'location', 'person'"
    assert f"the runs {a} and {b} are both named 'ner' but were scored on other labels: {lacks} (in 'per_type', labels with gold entities)" in out


def test_a_label_only_predicted_does_not_tell_runs_apart(tmp_path):
    """A label no gold entity has scores F = 0 where a run predicted it and
    is absent where it did not: such runs pool, its mean F is 0."""
    a, b = _record(seed=0), _record(seed=1)
    b["per_type"]["product"] = {**_scores(0.0), "tp": 0, "fp": 2, "fn": 0, "support": 0}
    assert gold_labels(a) == gold_labels(b) == {"location", "person"}
    paths = [_write(tmp_path, "a.json", a), _write(tmp_path, "b.json", b)]
    result, out = _summarize(*paths, output=tmp_path / "s.md")
    assert result.exit_code == 0, out
    summary = json.loads((tmp_path / "s.json").read_text())["ner"]
    assert summary["runs"] == 2
    assert summary["per_type_f"] == {"location": pytest.approx(23.6), "person": pytest.approx(50.0), "product": 0.0}


def test_a_metrics_file_with_a_key_twice_is_refused(tmp_path):
    """L10: JSON readers keep the last of two equal keys and say nothing; a
    metrics file whose "f" is given twice is refused, naming the line."""
    text = json.dumps(_record(), indent=1).replace('"f": 0.3', '"f": 0.3,\n  "f": 0.9', 1)
    path = tmp_path / "ner-s0.json"
    path.write_text(text, encoding="utf8")
    line = text.split("\n").index('  "f": 0.9') + 1
    result, out = _summarize(path)
    assert result.exit_code == 1, out
    assert f"{path}, line {line}: the key 'f' is given twice in one object; a JSON reader would keep the last one silently" in out


def test_a_missing_metrics_file_is_named(tmp_path):
    result, out = _summarize(tmp_path / "gone.json")
    assert result.exit_code == 1 and f"No such metrics file: {tmp_path / 'gone.json'}" in out
