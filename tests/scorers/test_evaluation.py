"""`evaluate`, `compare` and `summarize` end to end, with rule-based pipelines
whose predictions (and so scores) are known by hand."""
import json
from pathlib import Path

import pytest
import spacy
from spacy.tokens import Doc
from typer.testing import CliRunner

from spacy_imbalance.cli import app
from spacy_imbalance.scorers.evaluation import pipeline_target
from spacy_imbalance.corpus.docs_io import write_docbin

runner = CliRunner()

GOLD = [
    (["Alice", "visited", "Paris", "."], ["B-PER", "O", "B-LOC", "O"]),
    (["Bob", "likes", "Rome"], ["B-PER", "O", "B-LOC"]),
]
# Rules A: Alice -> PER (tp), Rome -> ORG (fp ORG, fn LOC); Bob, Paris missed.
#   PER tp1 fn1: P 1, R 1/2, F 2/3;  LOC fn2: 0;  ORG fp1: 0
#   micro: tp 1, fp 1, fn 3 -> P 1/2, R 1/4, F 1/3;  macro F = (2/3)/3 = 2/9
RULES_A = [{"label": "PER", "pattern": "Alice"}, {"label": "ORG", "pattern": "Rome"}]
RULES_B = [
    {"label": "PER", "pattern": "Alice"},
    {"label": "PER", "pattern": "Bob"},
    {"label": "LOC", "pattern": "Paris"},
    {"label": "LOC", "pattern": "Rome"},
]


@pytest.fixture
def data(tmp_path):
    nlp = spacy.blank("en")
    docs = [Doc(nlp.vocab, words=words, ents=tags) for words, tags in GOLD]
    path = tmp_path / "test.spacy"
    write_docbin(docs, path)
    return path


def ruler_pipeline(tmp_path, name, patterns):
    nlp = spacy.blank("en")
    nlp.add_pipe("entity_ruler").add_patterns(patterns)
    nlp.to_disk(tmp_path / name)
    return str(tmp_path / name)


def test_evaluate_cli_hand_computed(tmp_path, data):
    model = ruler_pipeline(tmp_path, "a", RULES_A)
    out = tmp_path / "metrics" / "a.json"
    result = runner.invoke(app, ["evaluate", model, str(data), "--output", str(out), "--name", "rules", "--n-bootstrap", "200"])
    assert result.exit_code == 0, result.output
    report = json.loads(out.read_text())
    assert report["name"] == "rules" and report["target"] == "ents" and report["n_docs"] == 2
    assert report["micro"] == pytest.approx({"p": 1 / 2, "r": 1 / 4, "f": 1 / 3})
    assert report["macro"] == pytest.approx({"p": 1 / 3, "r": 1 / 6, "f": 2 / 9})
    assert report["per_type"]["PER"] == {"p": 1.0, "r": 0.5, "f": pytest.approx(2 / 3), "tp": 1, "fp": 0, "fn": 1, "support": 2}
    assert report["per_type"]["ORG"]["support"] == 0 and report["per_type"]["LOC"]["fn"] == 2
    low, high = report["ci"]["macro_f"]
    assert low <= 2 / 9 <= high
    # the printed tables hold the macro and micro F in percent
    assert "22.2" in result.output and "33.3" in result.output


def test_compare_cli_paired_difference(tmp_path, data):
    a, b = ruler_pipeline(tmp_path, "a", RULES_A), ruler_pipeline(tmp_path, "b", RULES_B)
    out = tmp_path / "cmp.json"
    result = runner.invoke(app, ["compare", str(data), a, b, "--output", str(out), "--n-bootstrap", "200"])
    assert result.exit_code == 0, result.output
    diff = json.loads(out.read_text())["systems"][b]
    assert diff["macro_f"]["delta"] == pytest.approx(1 - 2 / 9)
    assert diff["micro_f"]["delta"] == pytest.approx(1 - 1 / 3)
    assert diff["micro_f"]["low"] > 0


def test_compare_cli_needs_two_pipelines(tmp_path, data):
    result = runner.invoke(app, ["compare", str(data), ruler_pipeline(tmp_path, "a", RULES_A)])
    assert result.exit_code != 0 and "at least two" in result.output


def test_summarize_cli_mean_std_and_plot(tmp_path, data):
    paths = []
    for name, rules in (("a", RULES_A), ("b", RULES_B)):
        out = tmp_path / f"{name}.json"
        runner.invoke(app, ["evaluate", ruler_pipeline(tmp_path, name, rules), str(data), "-o", str(out), "--name", "rules", "--n-bootstrap", "10"])
        paths.append(str(out))
    table, plot = tmp_path / "summary.md", tmp_path / "plot.png"
    result = runner.invoke(app, ["summarize", *paths, "--output", str(table), "--plot", str(plot)])
    assert result.exit_code == 0, result.output
    summary = json.loads(table.with_suffix(".json").read_text())["rules"]
    # macro-F1 100 * 2/9 and 100: mean 61.1, sample std |100 - 22.2| / sqrt(2) = 55.0
    assert summary["runs"] == 2
    assert summary["macro_f"]["mean"] == pytest.approx((100 * 2 / 9 + 100) / 2)
    assert summary["macro_f"]["std"] == pytest.approx((100 - 100 * 2 / 9) / 2**0.5)
    assert "61.1 ± 55.0" in table.read_text()
    assert plot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    # each run says where it ran and how long scoring took
    from spacy_imbalance import __version__

    run = json.loads(Path(paths[0]).read_text())
    assert run["provenance"]["package_version"] == __version__ and run["provenance"]["device"] == "cpu"
    assert run["eval_seconds"] > 0


def test_summarize_cli_rejects_other_json(tmp_path):
    other = tmp_path / "other.json"
    other.write_text("{}")
    result = runner.invoke(app, ["summarize", str(other)])
    assert result.exit_code == 1 and "other.json" in result.output.replace("\n", "")


@pytest.mark.parametrize(
    "content,message",
    [
        ("{bad", "not valid JSON (Expecting property name enclosed in double quotes: line 1 column 2 (char 1))"),
        ("", "not valid JSON"),
        ("3", "not a metrics file of `spacy-imbalance evaluate` (a JSON int, not an object)"),
        ('["macro", "micro", "per_type"]', "not a metrics file of `spacy-imbalance evaluate` (a JSON list, not an object)"),
        ('{"macro": {}, "micro": {}, "per_type": {}}', "not a metrics file of `spacy-imbalance evaluate` (no 'name')"),
    ],
    ids=["syntax", "empty", "number", "list", "no-name"],
)
def test_summarize_cli_bad_json_names_the_file(tmp_path, data, content, message):
    good = tmp_path / "a.json"
    assert runner.invoke(app, ["evaluate", ruler_pipeline(tmp_path, "a", RULES_A), str(data), "-o", str(good)]).exit_code == 0
    bad = tmp_path / "bad.json"
    bad.write_text(content)
    result = runner.invoke(app, ["summarize", str(good), str(bad)])
    assert result.exit_code == 1 and isinstance(result.exception, SystemExit)
    assert f"{bad}: {message}" in " ".join(result.output.split())


@pytest.mark.parametrize("command", ["evaluate", "compare"])
def test_evaluation_cli_pipeline_without_ner_is_named(tmp_path, data, command):
    blank = tmp_path / "blank"
    spacy.blank("en").to_disk(blank)
    rules = ruler_pipeline(tmp_path, "a", RULES_A)
    args = ["evaluate", str(blank), str(data)] if command == "evaluate" else ["compare", str(data), rules, str(blank)]
    result = runner.invoke(app, args)
    assert result.exit_code == 1 and isinstance(result.exception, SystemExit)
    assert (
        f"The pipeline {blank} has no NER component, nothing to score: no component assigns doc.ents "
        "(as ner and entity_ruler do) or has a spans_key (as spancat does); its components: none. "
        "Pass --spans-key" in " ".join(result.output.split())
    )


@pytest.mark.parametrize("option", ["--output", "--plot", "json-beside-output"])
def test_summarize_cli_refuses_to_overwrite_a_metrics_file(tmp_path, data, option):
    metrics = tmp_path / "a.json"
    assert runner.invoke(app, ["evaluate", ruler_pipeline(tmp_path, "a", RULES_A), str(data), "-o", str(metrics)]).exit_code == 0
    before = metrics.read_bytes()
    # --output a.md also writes a.json beside it
    target = tmp_path / "a.md" if option == "json-beside-output" else metrics
    args = ["summarize", str(metrics), "--plot" if option == "--plot" else "--output", str(target)]
    result = runner.invoke(app, args)
    assert result.exit_code == 1 and isinstance(result.exception, SystemExit)
    written = metrics if option == "json-beside-output" else target
    assert f"The output {written} is the input {metrics}" in " ".join(result.output.split())
    assert metrics.read_bytes() == before and not (tmp_path / "a.md").exists()


@pytest.mark.parametrize("command", ["evaluate", "compare"])
def test_evaluation_cli_refuses_to_overwrite_the_data(tmp_path, data, command):
    before = data.read_bytes()
    rules = ruler_pipeline(tmp_path, "a", RULES_A)
    args = ["evaluate", rules, str(data)] if command == "evaluate" else ["compare", str(data), rules, rules]
    result = runner.invoke(app, [*args, "--output", str(data)])
    assert result.exit_code == 1 and isinstance(result.exception, SystemExit)
    assert f"The output {data} is the input {data}" in " ".join(result.output.split())
    assert data.read_bytes() == before


def test_evaluation_pipeline_target():
    nlp = spacy.blank("en")
    with pytest.raises(ValueError, match="--spans-key"):
        pipeline_target(nlp)
    nlp.add_pipe("spancat", config={"spans_key": "mine"})
    assert pipeline_target(nlp) == "mine"
    assert pipeline_target(nlp, "other") == "other"
    nlp.add_pipe("ner")
    assert pipeline_target(nlp) is None


@pytest.mark.parametrize("command", ["evaluate", "compare"])
def test_evaluation_cli_missing_model_is_a_clear_error(tmp_path, data, command):
    missing = str(tmp_path / "no-such-model")
    args = [command, missing, str(data)] if command == "evaluate" else [command, str(data), missing, missing]
    result = runner.invoke(app, args)
    assert result.exit_code == 1
    assert result.exception is None or isinstance(result.exception, SystemExit)
    assert "no-such-model" in result.output.replace("\n", "")


def test_evaluation_cli_malformed_data_is_a_clear_error(tmp_path):
    bad = tmp_path / "bad.conll"
    bad.write_text("Paris\tX-LOC\n")
    result = runner.invoke(app, ["evaluate", ruler_pipeline(tmp_path, "a", RULES_A), str(bad)])
    assert result.exit_code == 1 and isinstance(result.exception, SystemExit)
    # wasabi wraps the message at the terminal width, wherever the temporary path ends
    assert "line 1" in " ".join(result.output.split())


def test_summarize_cli_missing_file_is_a_clear_error(tmp_path):
    result = runner.invoke(app, ["summarize", str(tmp_path / "gone.json")])
    assert result.exit_code == 1 and isinstance(result.exception, SystemExit)
    assert "gone.json" in result.output.replace("\n", "")


def test_evaluation_spancat_allow_overlap_read_from_component():
    from spacy_imbalance.scorers.evaluation import spans_allow_overlap

    nlp = spacy.blank("en")
    nlp.add_pipe("spancat_singlelabel", config={"spans_key": "sc", "allow_overlap": False})
    assert spans_allow_overlap(nlp, "sc") is False
    assert spans_allow_overlap(nlp, "other") is True


def _scores(value):
    return {"p": value, "r": value, "f": value}


@pytest.mark.parametrize(
    "change,message",
    [
        ({"macro": "high"}, "'macro' must be an object with p, r and f, got a string ('high')"),
        ({"macro": _scores("high")}, "'macro.p' must be a score in [0, 1], got 'high'"),
        ({"micro": {"p": 0.5}}, "'micro' has no 'r'"),
        ({"per_type": ["PER"]}, "'per_type' must be an object of labels, got a list (['PER'])"),
        ({"per_type": {"PER": 0.5}}, "'per_type.PER' must be an object with p, r and f, got a number (0.5)"),
        ({"name": ["x"]}, "'name' must be a string, got a list (['x'])"),
        ({"macro": _scores(1e308)}, "'macro.p' must be a score in [0, 1], got 1e+308"),
        ({"micro": _scores(True)}, "'micro.p' must be a score in [0, 1], got True"),
        ({"size_factor": "big"}, "'size_factor' must be a finite number > 0, got 'big'"),
    ],
    ids=["macro-text", "score-text", "no-r", "per-type-list", "per-type-number", "name-list", "huge", "bool", "size-factor"],
)
def test_summarize_cli_malformed_metrics_file_names_the_field(tmp_path, data, change, message):
    """Found by the property test: load_report checked only that the keys
    exist, and summarize died with TypeError/KeyError/AttributeError, or
    printed a table of inf for a score of 1e308."""
    good = tmp_path / "a.json"
    assert runner.invoke(app, ["evaluate", ruler_pipeline(tmp_path, "a", RULES_A), str(data), "-o", str(good)]).exit_code == 0
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({**json.loads(good.read_text()), "name": "other", **change}))
    result = runner.invoke(app, ["summarize", str(good), str(bad)])
    assert result.exit_code == 1 and isinstance(result.exception, SystemExit), result.exception
    assert f"{bad}: not a metrics file of `spacy-imbalance evaluate` ({message})" in " ".join(result.output.split())
    # the file as evaluate wrote it still summarizes
    assert runner.invoke(app, ["summarize", str(good)]).exit_code == 0


@pytest.mark.parametrize("command", ["evaluate", "compare"])
def test_evaluation_cli_spans_key_needs_a_component_that_writes_spans(tmp_path, command):
    """Found by the property test: with --spans-key a pipeline without any
    component passed, and scored F = 0 by construction with exit 0."""
    nlp = spacy.blank("en")
    docs = [Doc(nlp.vocab, words=words, ents=tags) for words, tags in GOLD]
    for doc in docs:
        doc.spans["sc"] = list(doc.ents)
    data = tmp_path / "spans.spacy"
    write_docbin(docs, data)
    args = ["evaluate", "blank:en", str(data)] if command == "evaluate" else ["compare", str(data), "blank:en", "blank:en"]
    result = runner.invoke(app, [*args, "--spans-key", "sc", "--n-bootstrap", "5"])
    assert result.exit_code == 1 and isinstance(result.exception, SystemExit), result.exception
    assert (
        "The pipeline blank:en has no NER component, nothing to score under --spans-key 'sc': no component assigns "
        "doc.ents or doc.spans" in " ".join(result.output.split())
    )
    with pytest.raises(ValueError, match="its components: tok2vec"):
        tok2vec = spacy.blank("en")
        tok2vec.add_pipe("tok2vec")
        pipeline_target(tok2vec, "sc")
    # a component that writes spans without a spans_key setting is scored under --spans-key
    span_ruler = spacy.blank("en")
    span_ruler.add_pipe("span_ruler", config={"spans_key": "sc"})
    assert pipeline_target(span_ruler, "sc") == "sc"


class _ScoredSpans:
    """Writes three overlapping scored LOC spans over "New York City"."""

    cfg = {"spans_key": "sc"}

    def __call__(self, doc):
        from spacy.tokens import SpanGroup

        group = SpanGroup(doc, name="sc", spans=[doc.char_span(0, 8, "LOC"), doc.char_span(0, 13, "LOC"), doc.char_span(4, 8, "LOC")])
        group.attrs["scores"] = [0.9, 0.6, 0.3]
        doc.spans["sc"] = group
        return doc


@spacy.Language.factory("_test_scored_spans")
def _make_scored_spans(nlp, name):
    return _ScoredSpans()


def test_a_span_system_is_scored_on_its_decoded_entities_with_its_spans_beside():
    """Issue 42: every system of a comparison on doc.ents. Greedy by score,
    "New York" (0.9) is kept and the two spans overlapping it are not: 1 tp,
    0 fp; the spans themselves are 1 tp and 2 fp (F = 2·(1/3)·1 / (4/3))."""
    from spacy_imbalance.scorers.evaluation import evaluate_pipeline, pipeline_counts

    nlp = spacy.blank("en")
    nlp.add_pipe("_test_scored_spans")
    gold = nlp.make_doc("New York City .")
    gold.ents = [gold.char_span(0, 8, "LOC")]
    # the gold span group mirrors the entities, as `convert` writes it
    gold.spans["sc"] = list(gold.ents)
    report = evaluate_pipeline(nlp, [gold], n_resamples=10)
    assert report["target"] == "ents decoded from spans:sc"
    assert report["micro"] == {"p": 1.0, "r": 1.0, "f": 1.0}
    assert report["spans"]["key"] == "sc"
    assert report["spans"]["micro"]["p"] == pytest.approx(1 / 3)
    assert report["spans"]["micro"]["f"] == pytest.approx(0.5)
    # compare pairs the same decoded counts; an explicit key scores the spans
    counts, target, _ = pipeline_counts(nlp, [gold])
    assert target is None and counts.totals().tolist() == [[1, 0, 0]]
    counts, target, _ = pipeline_counts(nlp, [gold], spans_key="sc")
    assert target == "sc" and counts.totals().tolist() == [[1, 2, 0]]
