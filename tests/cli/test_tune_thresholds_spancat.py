"""spacy-imbalance tune-thresholds on a sampled_spancat: tuned per-label
thresholds saved only where they help and never over the inputs, and the
report (``calibrate``, its alias: tests/cli/test_calibrate.py).

The pipeline's output layer is set to give every candidate the same
probabilities, (O, LOC, PER) = (0.6, 0.3, 0.1), so every score is known:
argmax predicts nothing (dev macro-F1 0); a LOC threshold <= 0.3 makes every
token a one-token LOC (decoding keeps the first of equal candidates), which
finds London and Paris among 10 predictions: LOC F1 4/12, PER 0, macro 1/6."""
import hashlib
import json
import shutil

import numpy
import pytest
import spacy
from spacy.tokens import DocBin
from spacy.training import Example
from spacy.util import load_config
from typer.testing import CliRunner

from spacy_imbalance.cli import app
from spacy_imbalance.evaluation.thresholds.spans import set_span_thresholds

DEV = [("I like London and Paris .", [(7, 13, "LOC"), (18, 23, "LOC")]), ("Talk to Kate .", [(8, 12, "PER")])]
NAME = "sampled_spancat"


@pytest.fixture(scope="module")
def model_dir(tmp_path_factory):
    nlp = spacy.blank("en")
    nlp.add_pipe(NAME, config={"model": {"hidden_width": 16, "tok2vec": {"width": 16, "depth": 1, "embed_size": 100}}})
    examples = [Example.from_dict(nlp.make_doc(text), {"entities": ents}) for text, ents in DEV]
    nlp.initialize(lambda: examples)
    output_layer = nlp.get_pipe(NAME).model.get_ref("output_layer")
    output_layer.set_param("W", numpy.zeros_like(output_layer.get_param("W")))
    output_layer.set_param("b", numpy.log(numpy.asarray([0.6, 0.3, 0.1], dtype="float32")))
    folder = tmp_path_factory.mktemp("calibrate")
    nlp.to_disk(folder / "model")
    DocBin(docs=[eg.reference for eg in examples]).to_disk(folder / "dev.spacy")
    return folder / "model"


def dev_path(model_dir):
    return str(model_dir.parent / "dev.spacy")


def run(*args):
    result = CliRunner().invoke(app, ["tune-thresholds", *map(str, args)])
    return result.exit_code, " ".join(result.output.split())


def digest(path):
    return {str(f.relative_to(path)): hashlib.sha256(f.read_bytes()).hexdigest() for f in sorted(path.rglob("*")) if f.is_file()}


def ents(nlp):
    return [[(e.text, e.label_) for e in doc.ents] for doc in nlp.pipe([text for text, _ in DEV])]


def test_spancat_saves_improving_thresholds_to_output(model_dir, tmp_path):
    before = digest(model_dir)
    out = tmp_path / "tuned"
    code, output = run(model_dir, dev_path(model_dir), "-o", out, "--no-shared", "--min-gain", "0")
    assert code == 0, output
    assert "LOC 2 argmax 0.05 0.0 33.3" in output and "macro 0.0 16.7" in output
    assert f"Saved the pipeline with tuned thresholds to {out}" in output
    tuned = spacy.load(out)
    assert tuned.get_pipe(NAME).thresholds == {"LOC": 0.05}
    assert load_config(out / "config.cfg")["components"][NAME]["thresholds"] == {"LOC": 0.05}
    assert ents(tuned) == [[(w, "LOC") for w in "I like London and Paris .".split()], [(w, "LOC") for w in "Talk to Kate .".split()]]
    assert digest(model_dir) == before and ents(spacy.load(model_dir)) == [[], []]


def test_spancat_in_place(model_dir, tmp_path):
    model = tmp_path / "model"
    shutil.copytree(model_dir, model)
    code, output = run(model, dev_path(model_dir), "--in-place", "--step", "0.1", "--no-shared", "--min-gain", "0")
    assert code == 0, output
    assert spacy.load(model).get_pipe(NAME).thresholds == {"LOC": 0.1}
    assert load_config(model / "config.cfg")["components"][NAME]["thresholds"] == {"LOC": 0.1}


def test_spancat_tries_a_shared_threshold_first(model_dir, tmp_path):
    out = tmp_path / "tuned"
    code, output = run(model_dir, dev_path(model_dir), "-o", out)
    assert code == 0, output
    # every label at the lowest grid value: LOC gains as alone, PER changes nothing
    assert spacy.load(out).get_pipe(NAME).thresholds == {"LOC": 0.05, "PER": 0.05}
    code, output = run(model_dir, dev_path(model_dir), "-o", tmp_path / "x", "--min-gain", "101")
    assert code == 1 and "--min-gain" in output


def test_spancat_needs_output_or_in_place_and_never_writes_over_inputs(model_dir, tmp_path):
    before = digest(model_dir)
    dev = dev_path(model_dir)
    code, output = run(model_dir, dev)
    assert code == 1 and "--output DIR" in output and "--in-place" in output
    code, output = run(model_dir, dev, "--in-place", "-o", tmp_path / "x")
    assert code == 1 and "exclude each other" in output
    code, output = run(model_dir, dev, "-o", f"{model_dir}/../{model_dir.name}")
    assert code == 1 and "is MODEL itself: use --in-place" in output
    code, output = run(model_dir, dev, "-o", tmp_path / "x", "--report", model_dir)
    assert code == 1 and "writing it would destroy the input" in output
    code, output = run(model_dir, dev, "-o", tmp_path / "x", "--report", model_dir / "report")
    assert code == 1 and "is inside MODEL" in output
    code, output = run(model_dir, dev, "-o", dev)
    assert code == 1 and "writing it would destroy the input" in output
    (tmp_path / "a_file").write_text("mine")
    code, output = run(model_dir, dev, "-o", tmp_path / "a_file")
    assert code == 1 and "is a file: give a folder" in output and (tmp_path / "a_file").read_text() == "mine"
    assert digest(model_dir) == before and not (tmp_path / "x").exists()


def test_spancat_keeps_thresholds_the_grid_does_not_beat(model_dir, tmp_path):
    model = tmp_path / "model"
    nlp = spacy.load(model_dir)
    set_span_thresholds(nlp, NAME, {"LOC": 0.05})
    nlp.to_disk(model)
    before = digest(model)
    code, output = run(model, dev_path(model_dir), "--in-place")
    assert code == 0, output
    assert "No thresholds of the grid beat the current decision (LOC 0.05: dev macro-F1 16.7); it is kept" in output
    assert f"{model} is left unchanged" in output and digest(model) == before
    out = tmp_path / "copy"
    code, output = run(model, dev_path(model_dir), "-o", out)
    assert code == 0 and f"Saved an unchanged copy of {model} to {out}" in output
    assert spacy.load(out).get_pipe(NAME).thresholds == {"LOC": 0.05}


def test_spancat_writes_the_report(model_dir, tmp_path):
    """Reliability: the 10 one-token spans at p(LOC) = 0.3, 1 - p(O) = 0.4;
    2 have the gold label (London, Paris), 3 a gold span (and Kate): both
    populations fall in one bin, 0.1 from their accuracy."""
    pytest.importorskip("matplotlib")
    report = tmp_path / "report"
    code, output = run(model_dir, dev_path(model_dir), "-o", tmp_path / "tuned", "--report", report, "--no-shared", "--min-gain", "0")
    assert code == 0, output
    data = json.loads((report / "calibration.json").read_text())
    assert data["thresholds"] == {"before": {}, "after": {"LOC": 0.05}, "saved": True}
    assert data["macro_f"] == pytest.approx({"before": 0.0, "after": 1 / 6})
    assert data["per_label"]["LOC"] == pytest.approx({"support": 2, "threshold_before": None, "threshold_after": 0.05, "f_before": 0.0, "f_after": 1 / 3})
    label, entity = data["reliability"]["label"], data["reliability"]["entity"]
    assert (label["n_spans"], entity["n_spans"]) == (10, 10)
    assert label["ece"] == pytest.approx(0.1, abs=1e-6) and entity["ece"] == pytest.approx(0.1, abs=1e-6)
    assert [b["count"] for b in label["bins"]] == [0, 0, 0, 10, 0, 0, 0, 0, 0, 0]
    assert label["bins"][3]["accuracy"] == pytest.approx(0.2) and entity["bins"][3]["accuracy"] == pytest.approx(0.3)
    markdown = (report / "calibration.md").read_text()
    assert "| LOC | 2 | argmax | 0.05 | 0.0 | 33.3 |" in markdown and "![reliability](reliability.png)" in markdown
    assert (report / "reliability.png").read_bytes()[:4] == b"\x89PNG"


def test_spancat_reads_conll(model_dir, tmp_path):
    conll = tmp_path / "dev.conll"
    conll.write_text("I\tO\nlike\tO\nLondon\tB-LOC\nand\tO\nParis\tB-LOC\n.\tO\n\nTalk\tO\nto\tO\nKate\tB-PER\n.\tO\n")
    code, output = run(model_dir, conll, "-o", tmp_path / "tuned", "--no-shared", "--min-gain", "0")
    assert code == 0, output
    assert "macro 0.0 16.7" in output and spacy.load(tmp_path / "tuned").get_pipe(NAME).thresholds == {"LOC": 0.05}


def test_spancat_names_the_component_option(model_dir, tmp_path):
    code, output = run(model_dir, dev_path(model_dir), "-o", tmp_path / "x", "--component", "ner")
    assert code == 1
    assert "--component ner: the pipeline has no component 'ner'; its components: sampled_spancat" in output
    other = spacy.blank("en")
    other.add_pipe("sentencizer")
    other.to_disk(tmp_path / "other")
    code, output = run(tmp_path / "other", dev_path(model_dir), "-o", tmp_path / "x", "--component", "sentencizer")
    assert code == 1
    assert "--component sentencizer: the component 'sentencizer' is a Sentencizer, not a sampled_spancat" in output
    assert not (tmp_path / "x").exists()


def test_spancat_refuses_dev_data_without_entities(model_dir, tmp_path):
    no_ents = tmp_path / "no_ents.spacy"
    DocBin(docs=[spacy.blank("en")("Nothing to see here .")]).to_disk(no_ents)
    code, output = run(model_dir, no_ents, "-o", tmp_path / "x")
    assert code == 1 and f"{no_ents} has no gold entities (1 docs)" in output
    assert not (tmp_path / "x").exists()


@pytest.mark.parametrize("args,message", [(["--step", "0.6"], "--step must be in [0.005, 0.5]"), (["--batch-size", "0"], "--batch-size must be >= 1")])
def test_spancat_validates_options_first(tmp_path, args, message):
    code, output = run(tmp_path / "no-model", tmp_path / "no-data.spacy", "-o", tmp_path / "out", *args)
    assert code == 1 and message in output


def test_spancat_is_found_without_the_component_option_and_names_the_choices(model_dir, tmp_path):
    """One command for every kind of component: without --component it tunes
    the pipeline's only sampled_spancat or two_task_ner, and says so when
    there is none or more than one."""
    code, output = run(model_dir, dev_path(model_dir), "-o", tmp_path / "tuned", "--no-shared", "--min-gain", "0")
    assert code == 0 and spacy.load(tmp_path / "tuned").get_pipe(NAME).thresholds == {"LOC": 0.05}
    none = spacy.blank("en")
    none.add_pipe("sentencizer")
    none.to_disk(tmp_path / "none")
    code, output = run(tmp_path / "none", dev_path(model_dir), "-o", tmp_path / "x")
    assert code == 1
    assert "the pipeline has no sampled_spancat or two_task_ner component to tune; its components: sentencizer" in output
    two = spacy.load(model_dir)
    two.add_pipe(NAME, name="second", source=spacy.load(model_dir))
    two.to_disk(tmp_path / "two")
    code, output = run(tmp_path / "two", dev_path(model_dir), "-o", tmp_path / "x")
    assert code == 1 and "the pipeline has 2 components to tune (sampled_spancat, second): name one with --component" in output
    assert not (tmp_path / "x").exists()


def test_spancat_refuses_the_options_of_two_task_ner(model_dir, tmp_path):
    code, output = run(model_dir, dev_path(model_dir), "-o", tmp_path / "x", "--plot", tmp_path / "grid.png")
    assert code == 1 and "--plot does not apply to the sampled_spancat 'sampled_spancat'; see --help" in output
    assert not (tmp_path / "x").exists() and not (tmp_path / "grid.png").exists()
