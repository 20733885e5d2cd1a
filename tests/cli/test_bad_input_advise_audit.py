"""advise, audit, calibrate and tune-thresholds given bad input (issue 31,
round 2): a clear message naming the setting or file, exit code 1, nothing
written where nothing should be, and no recommendation of untrained models."""
import hashlib
import importlib
import json
import os
import re
import shutil

import numpy
import pytest

from spacy_imbalance.corpus.conll import conll_to_docs
from spacy_imbalance.corpus.default_corpus import default_corpus_path
from spacy_imbalance.corpus.docs_io import load_docs, write_docbin
from spacy_imbalance.scorers.counts import MatchCounts
from ._cli import _assert_failed, _invoke, _plain


def _digest(path):
    return hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.fixture(scope="module")
def entity_docs():
    docs, _ = conll_to_docs(default_corpus_path())
    return [doc for doc in docs if doc.ents]


@pytest.fixture
def corpora(tmp_path, entity_docs):
    """A 30-sentence TRAIN and a 10-sentence DEV."""
    write_docbin(entity_docs[:30], tmp_path / "train.spacy")
    write_docbin(entity_docs[30:40], tmp_path / "dev.spacy")
    return tmp_path / "train.spacy", tmp_path / "dev.spacy"


# --- advise: every number bounded before anything is written (M1) ----------

@pytest.mark.parametrize("option, value", [
    ("--budget", "inf"), ("--budget", "nan"), ("--budget", "-1"), ("--budget", "0"), ("--budget", "1e9"),
    ("--max-steps", "0"), ("--max-steps", "100000000"), ("--workers", "0"), ("--workers", "100000"),
    ("--seeds", "1"), ("--seeds", "1000"), ("--gpu-id", "-2"),
])
def test_advise_refuses_a_number_out_of_range_before_writing(tmp_path, corpora, option, value):
    out = tmp_path / "advice"
    result = _invoke("advise", *corpora, "-o", out, option, value)
    _assert_failed(result, option)
    assert re.search(r"must be .*in [(\[]-?\d+, \d+[)\]]", _plain(result.output))  # the range is in the message
    assert not out.exists()


def test_advise_refuses_a_language_spacy_lacks_before_writing(tmp_path, corpora):
    # issue 31 L5: refused only after OUT/corpus and OUT/configs were written
    out = tmp_path / "advice"
    _assert_failed(_invoke("advise", *corpora, "-o", out, "--lang", "zz"), "--lang", "'zz'")
    assert not out.exists()


# --- advise: TRAIN as DEV (M2) ----------------------------------------------

def test_advise_refuses_train_as_dev_by_path_or_by_content(tmp_path, corpora):
    train, _ = corpora
    out = tmp_path / "advice"
    _assert_failed(_invoke("advise", train, train, "-o", out), "is TRAIN")
    copy = tmp_path / "copy.spacy"
    shutil.copyfile(train, copy)
    _assert_failed(_invoke("advise", train, copy, "-o", out), "the same 30 sentences as TRAIN")
    assert not out.exists()


# --- advise: no recommendation of untrained trials (M2) --------------------

N_DEV = 40


def _report(found, curve, seconds, budget_step=None):
    """A trial's report: the system finds the entity of the first ``found``
    of 40 dev sentences; its dev curve, training seconds and budget stop."""
    table = numpy.zeros((N_DEV, 1, 3), dtype="int64")
    table[:found, 0, 0] = 1
    table[found:, 0, 2] = 1
    report = {"macro": {"f": 2 * found / (found + N_DEV)}, "counts": MatchCounts(["X"], table).to_sparse(),
              "dev_curve": curve, "train_seconds": seconds, "stopped_by_budget": budget_step is not None}
    if budget_step is not None:
        report["steps_trained"] = budget_step
    return report


def _fake_trials(monkeypatch, reports_of):
    """advise's trials replaced by ``reports_of(candidate name)``: the
    ranking and the report as they are, in a second."""
    module = importlib.import_module("spacy_imbalance.cli.advise")

    def run_candidates(planned, settings, out, on_done=None):
        reports = {}
        for candidate, seed, trial in planned:
            report = reports_of(candidate.name)[seed]
            reports.setdefault(candidate.name, []).append(report)
            if on_done is not None:
                on_done(trial, report, len(reports), len(planned))
        return reports

    monkeypatch.setattr(module, "run_candidates", run_candidates)


def test_advise_recommends_nothing_when_no_trial_trained(tmp_path, corpora, monkeypatch):
    # the issue's --budget 0.01 --max-steps 2: every trial scored at step 0,
    # and still "Recommended: ... better than spaCy's spancat_singlelabel"
    scores = {"ner": 5, "spancat_singlelabel": 6, "sampled_spancat": 30, "token_ner_wce2": 7}
    _fake_trials(monkeypatch, lambda name: [_report(scores[name] + seed, [[0, 0.1]], 14.0) for seed in range(2)])
    out = tmp_path / "advice"
    result = _invoke("advise", *corpora, "-o", out, "--budget", "0.01", "--max-steps", "2")
    _assert_failed(result, "No trial trained past its first update", "nothing is recommended", "--budget or --max-steps")
    assert "Recommended" not in _plain(result.output)
    assert not (out / "advice.md").exists() and not (out / "recommended.cfg").exists()


def test_advise_leaves_untrained_methods_out_and_says_how_long_each_trained(tmp_path, corpora, monkeypatch):
    trained = lambda found: [_report(found + seed, [[0, 0.0], [200, 0.3], [400, 0.4]], 90.0 + 6 * seed) for seed in range(2)]
    reports = {
        "ner": trained(10), "spancat_singlelabel": trained(12), "token_ner_wce2": trained(14),
        # the best dev score of all, but from its first update: the time budget stopped it before step 200
        "sampled_spancat": [_report(35, [[0, 0.9]], 60.0, budget_step=150) for _ in range(2)],
    }
    _fake_trials(monkeypatch, lambda name: reports[name])
    out = tmp_path / "advice"
    result = _invoke("advise", *corpora, "-o", out, "--budget", "4", "--max-steps", "400")
    assert result.exit_code == 0, result.output
    said = _plain(result.output)
    assert "sampled_spancat is not ranked: no dev evaluation after step 0 (150 steps in 1.0 minutes)" in said
    # steps and minutes from the trials' own reports: the last evaluation and train_seconds
    assert "Recommended: token_ner_wce2 (trained 400 steps, 1.5–1.6 min per seed)" in said
    advice = json.loads((out / "advice.json").read_text(encoding="utf8"))
    assert advice["recommended"] == "token_ner_wce2"
    assert "sampled_spancat" not in {r["name"] for r in advice["ranking"]}
    assert advice["untrained"][0][0] == "sampled_spancat"
    md = (out / "advice.md").read_text(encoding="utf8")
    assert "| 400 steps, 1.5–1.6 min |" in md and "- sampled_spancat: trained, but not ranked" in md
    # the budget is said as a budget, not as what each trained
    assert "Each trained" not in md and "or its 400 steps (--max-steps) ran out" in md


# --- advise: the output folder (H1) -----------------------------------------

def test_advise_refuses_an_output_folder_that_cannot_be_one_before_any_work(tmp_path, corpora):
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    _assert_failed(_invoke("advise", *corpora, "-o", fifo), "--output", "is not a folder")
    assert fifo.is_fifo()
    afile = tmp_path / "afile"
    afile.write_text("mine", encoding="utf8")
    _assert_failed(_invoke("advise", *corpora, "-o", afile / "advice"), "--output", "cannot be made", "is a file")
    assert afile.read_text(encoding="utf8") == "mine"
    dangling = tmp_path / "dangling"
    dangling.symlink_to(tmp_path / "nowhere")
    _assert_failed(_invoke("advise", *corpora, "-o", dangling), "--output", "does not exist")
    assert not (tmp_path / "nowhere").exists()


# --- audit ------------------------------------------------------------------

@pytest.mark.parametrize("key", ["", "  "])
def test_audit_refuses_a_blank_spans_key(tmp_path, corpora, key):
    # issue 31 L4: --spans-key '' wrote doc.spans['']
    out = tmp_path / "audit"
    _assert_failed(_invoke("audit", corpora[0], "-o", out, "--spans-key", key), "--spans-key must name a span group")
    assert not out.exists()


def test_audit_refuses_an_output_folder_that_cannot_be_one_before_any_work(tmp_path, corpora):
    afile = tmp_path / "afile"
    afile.write_text("mine", encoding="utf8")
    _assert_failed(_invoke("audit", corpora[0], "-o", afile / "audit"), "--output", "cannot be made")
    _assert_failed(_invoke("audit", corpora[0], "-o", "/dev/null"), "--output", "is not a folder")
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    _assert_failed(_invoke("audit", corpora[0], "-o", fifo), "--output", "is not a folder")
    assert fifo.is_fifo() and afile.read_text(encoding="utf8") == "mine"


def test_audit_leaves_empty_documents_out_of_the_folds(tmp_path, entity_docs, capsys, monkeypatch):
    # issue 31 M10: the empty texts were one document of the folds; with
    # --seed 5 the fold scoring both sentences trained on them alone and
    # spaCy stopped with E923
    # a few steps learn nothing: the plumbing, not the refusal (tests/audit/test_untrained.py)
    monkeypatch.setattr("spacy_imbalance.audit.run.check_folds_learned", lambda *args, **kwargs: None)
    import spacy

    nlp = spacy.blank("en")
    first, second = entity_docs[0], entity_docs[1]
    docs = [first, nlp.make_doc(""), nlp.make_doc(""), second, nlp.make_doc("")]
    train = tmp_path / "train.spacy"
    write_docbin(docs, train)
    write_docbin(entity_docs[40:50], tmp_path / "dev.spacy")
    before = _digest(train)
    out = tmp_path / "audit"
    result = _invoke("audit", train, "--dev", tmp_path / "dev.spacy", "-o", out, "--folds", "2", "--seed", "5",
                     "--resamples", "0", "--training.max_steps", "2", "--training.eval_frequency", "2")
    assert result.exit_code == 0, result.output
    said = _plain(result.output + capsys.readouterr().out)
    assert "3 of the 5 documents of" in said and "are empty (no tokens): left out of the folds" in said
    assert "documents 1, 2, 4" in said
    summary = json.loads((out / "summary.json").read_text(encoding="utf8"))
    assert summary["n_docs"] == 5 and summary["n_empty_docs"] == 3
    for fold in range(2):
        record = json.loads((out / "folds" / f"fold-{fold}" / "fold.json").read_text(encoding="utf8"))
        assert set(record["trained"]) | set(record["scored"]) <= {0, 3}
    # every scored span names its own document: the indices are the corpus's
    rows = (out / "scored_spans.tsv").read_text(encoding="utf8").splitlines()[1:]
    for row in rows:
        doc, start, end, *_, text = row.split("\t")
        assert int(doc) in (0, 3) and docs[int(doc)][int(start):int(end)].text == text
    audited = load_docs(out / "audited.spacy")
    assert [doc.text for doc in audited] == [doc.text for doc in docs]
    assert _digest(train) == before


# --- calibrate and tune-thresholds: their outputs (H1) ----------------------

@pytest.fixture
def pipeline_stub(tmp_path):
    """A MODEL folder: the output checks come before it is loaded."""
    model = tmp_path / "model"
    model.mkdir()
    return model


@pytest.mark.parametrize("command", ["calibrate", "tune-thresholds"])
def test_a_pipeline_output_that_cannot_be_a_folder_is_refused_before_loading(tmp_path, corpora, pipeline_stub, command):
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    _assert_failed(_invoke(command, pipeline_stub, corpora[1], "--output", fifo), "--output", "is not a folder")
    assert fifo.is_fifo()
    afile = tmp_path / "afile"
    afile.write_text("mine", encoding="utf8")
    _assert_failed(_invoke(command, pipeline_stub, corpora[1], "--output", afile / "tuned"), "--output", "cannot be made")
    assert afile.read_text(encoding="utf8") == "mine"


def test_calibrate_refuses_a_report_folder_that_is_a_file_before_any_work(tmp_path, corpora, pipeline_stub):
    pytest.importorskip("matplotlib")
    report = tmp_path / "report"
    report.write_text("mine", encoding="utf8")
    result = _invoke("calibrate", pipeline_stub, corpora[1], "--output", tmp_path / "tuned", "--report", report)
    _assert_failed(result, "--report", "is a file: give a folder")
    assert report.read_text(encoding="utf8") == "mine" and not (tmp_path / "tuned").exists()


def test_tune_thresholds_refuses_a_plot_that_is_not_a_regular_file(tmp_path, corpora, pipeline_stub):
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    result = _invoke("tune-thresholds", pipeline_stub, corpora[1], "--output", tmp_path / "tuned", "--plot", fifo)
    _assert_failed(result, "--plot", "is not a regular file")
    assert fifo.is_fifo() and not (tmp_path / "tuned").exists()
    result = _invoke("tune-thresholds", pipeline_stub, corpora[1], "--output", tmp_path / "tuned", "--plot", tmp_path)
    _assert_failed(result, "--plot", "is a folder")
