"""Threshold tuning of two_task_ner: the grid search of its threshold pair
(evaluation.thresholds.two_task) and the tune-thresholds command on it."""
import hashlib
import shutil

import numpy
import pytest
import spacy
from spacy.tokens import DocBin
from spacy.training import Example
from spacy.util import fix_random_seed, load_config, load_model_from_config
from typer.testing import CliRunner

import spacy_imbalance.pipeline.two_task_ner  # noqa: F401  (registers the factory in-process)
from spacy_imbalance.cli import app
from spacy_imbalance.evaluation.thresholds.two_task import search_thresholds

TRAIN_DATA = [
    ("I like London and Paris .", [(7, 13, "LOC"), (18, 23, "LOC")]),
    ("Kate Bush sings in New York .", [(0, 9, "PER"), (19, 27, "LOC")]),
    ("Nothing to see here .", []),
    ("Talk to Kate .", [(8, 12, "PER")]),
]


@pytest.fixture(scope="module")
def trained_dir(tmp_path_factory):
    fix_random_seed(0)
    nlp = spacy.blank("en")
    nlp.add_pipe("two_task_ner", config={"loss_mode": "auc"})
    examples = [Example.from_dict(nlp.make_doc(t), {"entities": e}) for t, e in TRAIN_DATA]
    optimizer = nlp.initialize(lambda: examples)
    for _ in range(60):
        nlp.update(examples, sgd=optimizer)
    # a deliberately bad entity threshold: almost nothing is an entity
    nlp.get_pipe("two_task_ner").set_thresholds(0.99999, 0.5)
    path = tmp_path_factory.mktemp("two_task") / "model"
    nlp.to_disk(path)
    gold = DocBin(docs=[eg.reference for eg in examples])
    gold.to_disk(path.parent / "dev.spacy")
    return path


def gold_docs(nlp, path):
    return list(DocBin().from_disk(path).get_docs(nlp.vocab))


def test_search_finds_the_macro_f_maximum(trained_dir):
    nlp = spacy.load(trained_dir)
    docs = gold_docs(nlp, trained_dir.parent / "dev.spacy")
    search = search_thresholds(nlp, "two_task_ner", docs, grid=[0.1, 0.5, 0.9], progress=False)
    assert search.macro_f.shape == (3, 3)
    assert search.best_macro_f == pytest.approx(search.macro_f.max())
    assert search.best_macro_f == pytest.approx(1.0)  # the model overfits its training data
    i, j = (search.grid.index(t) for t in search.best)
    assert search.macro_f[i, j] == search.macro_f.max()
    # the scores do not depend on which thresholds the pipeline carries
    nlp.get_pipe("two_task_ner").set_thresholds(0.5, 0.5)
    again = search_thresholds(nlp, "two_task_ner", docs, grid=[0.1, 0.5, 0.9], progress=False)
    assert numpy.array_equal(again.macro_f, search.macro_f)


def test_search_scores_the_current_thresholds(trained_dir):
    nlp = spacy.load(trained_dir)
    docs = gold_docs(nlp, trained_dir.parent / "dev.spacy")
    search = search_thresholds(nlp, "two_task_ner", docs, grid=[0.1, 0.5, 0.9], progress=False)
    assert search.current == (0.99999, 0.5)
    assert search.current_macro_f < search.best_macro_f and search.improves
    # a pair of the grid is scored as in the grid; a tie keeps the current one
    nlp.get_pipe("two_task_ner").set_thresholds(*search.best)
    again = search_thresholds(nlp, "two_task_ner", docs, grid=[0.1, 0.5, 0.9], progress=False)
    assert again.current_macro_f == search.best_macro_f and not again.improves


def test_search_refuses_docs_without_entities(trained_dir):
    nlp = spacy.load(trained_dir)
    no_ents = [nlp.make_doc("Nothing to see here .")]
    for docs in (no_ents, []):
        with pytest.raises(ValueError, match=f"the dev docs has no gold entities \\({len(docs)} docs\\)"):
            search_thresholds(nlp, "two_task_ner", docs, progress=False)


def test_search_errors_name_the_component(trained_dir):
    nlp = spacy.load(trained_dir)
    with pytest.raises(ValueError, match="no component 'ner'"):
        search_thresholds(nlp, "ner", [], progress=False)
    other = spacy.blank("en")
    other.add_pipe("sentencizer")
    with pytest.raises(ValueError, match="not a two_task_ner component"):
        search_thresholds(other, "sentencizer", [], progress=False)


def test_cli_saves_the_tuned_thresholds(trained_dir, tmp_path):
    out = tmp_path / "tuned"
    plot = tmp_path / "grid.png"
    result = CliRunner().invoke(
        app,
        ["tune-thresholds", str(trained_dir), str(trained_dir.parent / "dev.spacy"), "--output", str(out), "--step", "0.25", "--plot", str(plot)],
    )
    assert result.exit_code == 0, result.output
    tuned = spacy.load(out).get_pipe("two_task_ner")
    assert (tuned.cfg["en_threshold"], tuned.cfg["be_threshold"]) != (0.99999, 0.5)
    assert tuned.cfg["en_threshold"] in (0.25, 0.5, 0.75)
    # the original pipeline is left alone when --output is given
    assert spacy.load(trained_dir).get_pipe("two_task_ner").cfg["en_threshold"] == 0.99999
    texts = [t for t, _ in TRAIN_DATA]
    gold = [[(s, e, lab) for s, e, lab in ents] for _, ents in TRAIN_DATA]
    assert [[(e.start_char, e.end_char, e.label_) for e in d.ents] for d in spacy.load(out).pipe(texts)] == gold
    assert plot.exists() and plot.stat().st_size > 0


def test_cli_saved_config_shows_the_tuned_thresholds(trained_dir, tmp_path):
    """The thresholds used to change in the component's cfg only, so that
    config.cfg (what `spacy assemble` or further training builds from) kept
    the old ones."""
    out = tmp_path / "tuned"
    result = CliRunner().invoke(app, ["tune-thresholds", str(trained_dir), str(trained_dir.parent / "dev.spacy"), "-o", str(out), "--step", "0.25"])
    assert result.exit_code == 0, result.output
    tuned = spacy.load(out).get_pipe("two_task_ner")
    thresholds = (tuned.cfg["en_threshold"], tuned.cfg["be_threshold"])
    assert thresholds != (0.99999, 0.5)
    config = load_config(out / "config.cfg")
    assert (config["components"]["two_task_ner"]["en_threshold"], config["components"]["two_task_ner"]["be_threshold"]) == thresholds
    # a pipeline built from the saved config alone carries them
    built = load_model_from_config(config, auto_fill=True).get_pipe("two_task_ner")
    assert (built.cfg["en_threshold"], built.cfg["be_threshold"]) == thresholds
    # and the reloaded pipeline predicts with them
    texts = [t for t, _ in TRAIN_DATA] + ["Kate and Paris ."]
    original = spacy.load(trained_dir)
    before = [[(e.start, e.end, e.label_) for e in d.ents] for d in original.pipe(texts)]
    original.get_pipe("two_task_ner").set_thresholds(*thresholds)
    expected = [[(e.start, e.end, e.label_) for e in d.ents] for d in original.pipe(texts)]
    assert [[(e.start, e.end, e.label_) for e in d.ents] for d in spacy.load(out).pipe(texts)] == expected != before


def digest(path):
    """The contents of every file under ``path``."""
    return {str(f.relative_to(path)): hashlib.sha256(f.read_bytes()).hexdigest() for f in sorted(path.rglob("*")) if f.is_file()}


def test_cli_needs_output_or_in_place(trained_dir, tmp_path):
    """Without --output the pipeline used to be overwritten in place."""
    before = digest(trained_dir)
    dev = str(trained_dir.parent / "dev.spacy")
    result = CliRunner().invoke(app, ["tune-thresholds", str(trained_dir), dev, "--step", "0.25"])
    assert result.exit_code == 1
    assert "--output DIR" in result.output and "--in-place" in result.output
    result = CliRunner().invoke(app, ["tune-thresholds", str(trained_dir), dev, "--in-place", "-o", str(tmp_path / "x")])
    assert result.exit_code == 1 and "exclude each other" in result.output
    result = CliRunner().invoke(app, ["tune-thresholds", str(trained_dir), dev, "-o", f"{trained_dir}/../{trained_dir.name}"])
    assert result.exit_code == 1 and "is MODEL itself: use --in-place" in " ".join(result.output.split())
    result = CliRunner().invoke(app, ["tune-thresholds", str(trained_dir), dev, "-o", str(tmp_path / "x"), "--plot", dev])
    assert result.exit_code == 1 and "writing it would destroy the input" in " ".join(result.output.split())
    assert digest(trained_dir) == before and not (tmp_path / "x").exists()


def test_cli_in_place(trained_dir, tmp_path):
    model = tmp_path / "model"
    shutil.copytree(trained_dir, model)
    result = CliRunner().invoke(app, ["tune-thresholds", str(model), str(trained_dir.parent / "dev.spacy"), "--in-place", "--step", "0.25"])
    assert result.exit_code == 0, result.output
    tuned = spacy.load(model).get_pipe("two_task_ner")
    assert tuned.cfg["en_threshold"] in (0.25, 0.5, 0.75)
    assert load_config(model / "config.cfg")["components"]["two_task_ner"]["en_threshold"] == tuned.cfg["en_threshold"]


def test_cli_keeps_thresholds_that_the_grid_does_not_beat(trained_dir, tmp_path):
    """At 0.5/0.5 the model is already perfect on dev: the grid ties at best,
    so nothing is saved into the model, and --output gets it unchanged."""
    model = tmp_path / "model"
    nlp = spacy.load(trained_dir)
    nlp.get_pipe("two_task_ner").set_thresholds(0.5, 0.5)
    nlp.to_disk(model)
    before = digest(model)
    dev = str(trained_dir.parent / "dev.spacy")
    result = CliRunner().invoke(app, ["tune-thresholds", str(model), dev, "--in-place", "--step", "0.25"])
    assert result.exit_code == 0, result.output
    assert "No threshold pair of the grid beats the current thresholds (entity 0.5, begin 0.5: dev macro-F1 100.0)" in " ".join(result.output.split())
    assert f"{model} is left unchanged" in " ".join(result.output.split())
    assert digest(model) == before
    out = tmp_path / "copy"
    result = CliRunner().invoke(app, ["tune-thresholds", str(model), dev, "-o", str(out), "--step", "0.25"])
    assert result.exit_code == 0, result.output
    assert f"Saved an unchanged copy of {model} to {out}" in " ".join(result.output.split())
    copy = spacy.load(out).get_pipe("two_task_ner")
    assert (copy.cfg["en_threshold"], copy.cfg["be_threshold"]) == (0.5, 0.5)


def test_cli_refuses_dev_data_without_entities(trained_dir, tmp_path):
    """Such data gives macro-F1 0 at every pair, and 0.05/0.05 (the first
    pair) used to be saved into the pipeline."""
    before = digest(trained_dir)
    empty, no_ents = tmp_path / "empty.spacy", tmp_path / "no_ents.spacy"
    DocBin().to_disk(empty)
    DocBin(docs=[spacy.blank("en")("Nothing to see here .")]).to_disk(no_ents)
    for path, n_docs in ((empty, 0), (no_ents, 1)):
        out = tmp_path / f"out-{path.stem}"
        result = CliRunner().invoke(app, ["tune-thresholds", str(trained_dir), str(path), "-o", str(out)])
        assert result.exit_code == 1
        assert f"{path} has no gold entities ({n_docs} docs)" in " ".join(result.output.split())
        assert not out.exists()
        result = CliRunner().invoke(app, ["tune-thresholds", str(trained_dir), str(path), "--in-place"])
        assert result.exit_code == 1
    assert digest(trained_dir) == before


@pytest.mark.parametrize("step", ["1e-4", "0", "0.6", "nan"])
def test_cli_step_is_validated_first(trained_dir, tmp_path, step):
    result = CliRunner().invoke(app, ["tune-thresholds", str(tmp_path / "no-model"), str(tmp_path / "no-data.spacy"), "-o", str(tmp_path / "out"), "--step", step])
    assert result.exit_code == 1
    assert "--step must be in [0.005, 0.5], at most 199 thresholds per axis" in " ".join(result.output.split())


def test_cli_missing_data_is_a_clear_error(trained_dir, tmp_path):
    result = CliRunner().invoke(app, ["tune-thresholds", str(trained_dir), str(tmp_path / "nope.spacy"), "-o", str(tmp_path / "out")])
    assert result.exit_code == 1
    assert "nope.spacy" in result.output


@pytest.mark.parametrize("command", ["calibrate", "tune-thresholds"])
def test_a_subnormal_step_is_refused_before_the_model_loads(tmp_path, command):
    """Found by the property test: --step 5e-324 raised OverflowError while
    default_grid built its message (math.ceil(1 / step) of inf; the grid's
    own test: tests/spans/thresholds/test_grid.py)."""
    dev = tmp_path / "dev.conll"
    dev.write_text("Ann\tB-PER\nsings\tO\n", encoding="utf8")
    # MODEL does not exist: the step is refused before it would be loaded
    result = CliRunner().invoke(app, [command, str(tmp_path / "no-model"), str(dev), "--in-place", "--step", "5e-324"])
    assert result.exit_code == 1 and isinstance(result.exception, SystemExit), result.exception
    output = " ".join(result.output.split())
    assert "--step must be in [0.005, 0.5], at most 199 thresholds per axis, got 5e-324" in output and "no-model" not in output


def test_cli_finds_the_two_task_ner_and_refuses_the_options_of_sampled_spancat(trained_dir, tmp_path):
    """One command for both kinds: --component is found when left out, and
    an option of the other kind is an error, never silently ignored."""
    before = digest(trained_dir)
    dev = str(trained_dir.parent / "dev.spacy")
    for option, name in ((["--report", str(tmp_path / "report")], "--report"), (["--min-gain", "1"], "--min-gain"), (["--no-shared"], "--shared/--no-shared")):
        result = CliRunner().invoke(app, ["tune-thresholds", str(trained_dir), dev, "-o", str(tmp_path / "x"), *option])
        assert result.exit_code == 1
        assert f"{name} does not apply to the two_task_ner 'two_task_ner'; see --help" in " ".join(result.output.split())
    assert digest(trained_dir) == before and not (tmp_path / "x").exists() and not (tmp_path / "report").exists()
