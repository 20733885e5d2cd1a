"""Threshold tuning of two_task_ner: the grid search and the CLI command."""
import numpy
import pytest
import spacy
from spacy.tokens import DocBin
from spacy.training import Example
from spacy.util import fix_random_seed
from typer.testing import CliRunner

import spacy_imbalance.pipeline.two_task_ner  # noqa: F401  (registers the factory in-process)
from spacy_imbalance.cli import app
from spacy_imbalance.pipeline.tagging.thresholds import default_grid, search_thresholds

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


def test_default_grid():
    assert default_grid(0.25) == [0.25, 0.5, 0.75]
    assert len(default_grid()) == 19
    with pytest.raises(ValueError, match="grid step"):
        default_grid(0.7)


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


def test_cli_missing_data_is_a_clear_error(trained_dir, tmp_path):
    result = CliRunner().invoke(app, ["tune-thresholds", str(trained_dir), str(tmp_path / "nope.spacy")])
    assert result.exit_code == 1
    assert "nope.spacy" in result.output
