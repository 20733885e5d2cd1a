"""A pipeline's evaluation report as a library function: what cannot be
scored raises EvaluationError with the message a user reads (no exit, no
CLI), and a report says what was scored; the device and the provenance are
the caller's (``spacy-imbalance evaluate``: tests/cli)."""
import pytest
import spacy
import srsly
from spacy.tokens import DocBin, Span

from spacy_imbalance.evaluation.evaluate import EvaluationError, check_gold_key, evaluate_model, print_report, write_report


@pytest.fixture
def gold_path(tmp_path):
    nlp = spacy.blank("en")
    docs = []
    for text, ents in (("Ann met Bob .", [(0, 1, "PER"), (2, 3, "PER")]), ("Oslo is cold .", [(0, 1, "LOC")])):
        doc = nlp(text)
        doc.ents = [Span(doc, s, e, label=label) for s, e, label in ents]
        docs.append(doc)
    path = tmp_path / "gold.spacy"
    DocBin(docs=docs).to_disk(path)
    return path


@pytest.fixture
def ruler_path(tmp_path):
    nlp = spacy.blank("en")
    nlp.add_pipe("entity_ruler").add_patterns([{"label": "PER", "pattern": "Ann"}, {"label": "LOC", "pattern": "Oslo"}])
    nlp.to_disk(tmp_path / "ruler")
    return tmp_path / "ruler"


def test_a_report_says_what_was_scored_and_leaves_provenance_to_the_caller(gold_path, ruler_path):
    report = evaluate_model(str(ruler_path), gold_path, name="ruler", n_resamples=10)
    assert (report["name"], report["model"], report["data"], report["target"]) == ("ruler", str(ruler_path), str(gold_path), "ents")
    assert len(report["data_sha256"]) == 64 and report["eval_seconds"] > 0
    assert "provenance" not in report
    # Ann and Oslo found, Bob missed: PER 1 of 2, LOC 1 of 1
    assert report["micro"]["p"] == 1.0 and report["micro"]["r"] == pytest.approx(2 / 3)


def test_what_cannot_be_scored_is_an_error_that_names_it(gold_path, ruler_path, tmp_path):
    with pytest.raises(EvaluationError, match=r"No such corpus file: .*missing\.spacy"):
        evaluate_model(str(ruler_path), tmp_path / "missing.spacy")
    with pytest.raises(EvaluationError, match=r"MODEL '.*nowhere' cannot be loaded as a spaCy pipeline: "):
        evaluate_model(str(tmp_path / "nowhere"), gold_path)
    empty = spacy.blank("en")
    empty.to_disk(tmp_path / "empty")
    with pytest.raises(EvaluationError, match=r"The pipeline .*empty has no NER component"):
        evaluate_model(str(tmp_path / "empty"), gold_path)
    with pytest.raises(EvaluationError, match=r"no document has spans under --spans-key 'sc'; no document has spans under any key"):
        evaluate_model(str(ruler_path), gold_path, spans_key="sc")


def test_a_gold_key_is_checked_before_any_prediction(gold_path):
    docs = list(DocBin().from_disk(gold_path).get_docs(spacy.blank("en").vocab))
    with pytest.raises(EvaluationError, match=r"--spans-key must name a span group, got ' '"):
        check_gold_key(docs, " ", "gold.spacy")
    with pytest.raises(EvaluationError, match=r"^gold.spacy: no document has spans under the key 'sc'"):
        check_gold_key(docs, "sc", "gold.spacy", option="the key")


def test_a_report_prints_its_tables_and_is_written_whole(gold_path, ruler_path, tmp_path, capsys):
    report = evaluate_model(str(ruler_path), gold_path, name="ruler", n_resamples=10)
    print_report(report, "ruler on gold")
    printed = capsys.readouterr().out
    assert "ruler on gold" in printed and "F 95% CI" in printed
    assert sorted(line.split()[:2] for line in printed.splitlines() if line.split()[:1] in (["LOC"], ["PER"])) == [["LOC", "100.0"], ["PER", "100.0"]]
    path = tmp_path / "metrics" / "ruler.json"
    write_report(path, report, indent=0)
    assert path.read_text(encoding="utf8") == srsly.json_dumps(report, indent=0)
    # a folder is not replaced by the file: an error naming it
    with pytest.raises(ValueError, match=rf"{tmp_path} is a folder"):
        write_report(tmp_path, report)
