"""The audit's gates and words (issue 43): a dev set of no type of the
corpus is refused before any fold, the audit records the corpus it audited
(advise --audit checks it), the folds, not trials, train one after another
without Ray, and the headline's suspects and estimate agree."""
import json
from types import SimpleNamespace

import pytest
from spacy.tokens import Span

from spacy_imbalance.audit import run as audit_run
from spacy_imbalance.audit.estimate import Calibration
from spacy_imbalance.audit.folds import corpus_fingerprint
from spacy_imbalance.audit.run import (
    CORPUS_FILE, DEFAULT_CONFIG, AuditSettings, check_audited_corpus, folds_on_ray, headline, run_audit, write_corpus_record,
)
from spacy_imbalance.corpus.docs_io import load_docs

from ._audit import audit_command, plain, summary_headline

SMALL = {"training.max_steps": 1}
def _relabelled(docs, rename):
    out = []
    for doc in docs:
        copy = doc.copy()
        copy.ents = [Span(copy, e.start, e.end, rename(e.label_)) for e in doc.ents]
        out.append(copy)
    return out


# --- a dev set of no type of the corpus --------------------------------------

def test_a_dev_set_of_no_type_of_the_corpus_is_refused_before_any_fold(tmp_path, toy_corpus, init_only_trainer):
    train = load_docs(toy_corpus / "train.spacy")
    dev = _relabelled(load_docs(toy_corpus / "dev.spacy")[:5], lambda label: "THING")
    with pytest.raises(ValueError) as err:
        run_audit(train, dev, tmp_path, config=DEFAULT_CONFIG, overrides=SMALL, settings=AuditSettings(folds=2),
                  trainer=init_only_trainer, train_source="train.spacy", dev_source="dev.spacy")
    assert str(err.value).startswith(
        "--dev dev.spacy shares no entity type with train.spacy: dev.spacy annotates THING; train.spacy annotates "
        "company, facility, geo-loc, movie, musicartist, other, person, product, sportsteam, tvshow."
    )
    assert not init_only_trainer.calls and not (tmp_path / "folds").exists()


# --- the corpus record (M10) ---------------------------------------------------

def test_an_audit_records_its_corpus_and_refuses_another_of_the_same_size(tmp_path, toy_corpus):
    train = load_docs(toy_corpus / "train.spacy")
    # what write_corpus_record reads of an AuditResult (the command's test below runs a whole audit)
    result = SimpleNamespace(info={"n_docs": 60, "corpus_fingerprint": corpus_fingerprint(train)}, labels=["person"])
    path = write_corpus_record(tmp_path, result, "train.spacy")
    record = json.loads(path.read_text(encoding="utf8"))
    assert path == tmp_path / CORPUS_FILE and record["corpus"] == "train.spacy" and record["n_docs"] == 60
    check_audited_corpus(tmp_path, load_docs(toy_corpus / "train.spacy"), "mine.spacy")  # the same corpus: no error
    # 60 documents too, but not these: their words, or one entity's type
    others = load_docs(toy_corpus / "dev.spacy") * 3
    relabelled = _relabelled(train[:1], lambda label: "X") + train[1:]
    for other in (others, relabelled):
        assert len(other) == 60
        with pytest.raises(ValueError) as err:
            check_audited_corpus(tmp_path, other, "mine.spacy")
        assert str(err.value) == (
            f"--audit {tmp_path} audited another corpus than mine.spacy: {path} records train.spacy (60 documents), "
            "whose words or entities differ from the 60 documents of mine.spacy. Run the audit on mine.spacy"
        )


@pytest.mark.parametrize("content, message", [
    (None, f"no {CORPUS_FILE} there, so nothing says which corpus it audited"),
    ("{cut", "is not valid JSON"),
    ('{"corpus": "x"}', "is not the corpus record of spacy-imbalance audit (no 'fingerprint')"),
])
def test_an_audit_without_a_readable_record_is_refused(tmp_path, toy_corpus, content, message):
    if content is not None:
        (tmp_path / CORPUS_FILE).write_text(content, encoding="utf8")
    with pytest.raises(ValueError) as err:
        check_audited_corpus(tmp_path, load_docs(toy_corpus / "train.spacy"), "train.spacy")
    assert str(err.value).startswith(f"--audit {tmp_path}") and message in str(err.value)


def test_the_audit_command_writes_the_record_and_a_consistent_headline(tmp_path, toy_corpus, init_only_trainer, monkeypatch):
    result, out = audit_command(tmp_path, load_docs(toy_corpus / "train.spacy")[:12], init_only_trainer, monkeypatch)
    assert result.exit_code == 0, result.output
    train = tmp_path / "train.spacy"
    record = json.loads((out / CORPUS_FILE).read_text(encoding="utf8"))
    assert record["corpus"] == str(train) and record["n_docs"] == 12
    check_audited_corpus(out, load_docs(train), "train.spacy")
    with pytest.raises(ValueError, match="audited another corpus"):
        check_audited_corpus(out, load_docs(toy_corpus / "train.spacy")[12:24], "train.spacy")
    _, expected = summary_headline(out)
    # summary.json rounds to 4 places; the line prints 1
    assert expected in plain(result.output)


# --- the folds, not trials, without Ray (L12) -----------------------------------

def test_workers_without_ray_say_the_folds_train_one_after_another(monkeypatch, capsys):
    monkeypatch.setattr(audit_run, "ray_available", lambda: False)
    assert folds_on_ray(3, None, 5) is False
    said = " ".join(capsys.readouterr().out.split())
    assert "--workers 3 needs Ray (pip install 'spacy-imbalance[ray]'): the 5 folds train one after another in this process" in said
    assert "trial" not in said
    assert folds_on_ray(1, None, 5) is False and capsys.readouterr().out == ""


# --- the headline: suspects and estimate in agreement (L13) --------------------

ROW = {"annotated": 100.0, "missing_low": 90.0, "missing_high": 2000.0, "rate_low": 0.474, "rate_high": 0.952}


@pytest.mark.parametrize("suspects, threshold, estimate, calibration, expected", [
    # issue 43 L13: no suspect with a large estimate says why, not "0 suspected missing entities;
    # estimated miss rate 93.4 %" in one line
    pytest.param(0, 0.5, {"expected_missing": 1415.2, "rate": 0.934}, Calibration.SELF, (
        "No suspected missing entity: no unannotated span reaches a calibrated probability of 0.5 (--threshold). "
        "The estimated miss rate 93.4 % [47.4, 95.2] sums the probabilities of every decoded unannotated span, those "
        "below 0.5 too: 1415.2 expected missing entities, spread over many spans none of which is likely on its own "
        "(self calibration)"
    ), id="no suspect, a large estimate"),
    pytest.param(12, 0.7, {"expected_missing": 30.4, "rate": 0.233}, Calibration.DEV, (
        "12 suspected missing entities (unannotated spans with a calibrated probability >= 0.7); estimated miss rate "
        "23.3 % [47.4, 95.2]: 30.4 expected missing entities, the summed probabilities of every decoded unannotated "
        "span (dev calibration)"
    ), id="suspects"),
    pytest.param(
        0, 0.5, {"expected_missing": 0.0, "rate": 0.0, "rate_low": 0.0, "rate_high": 0.0}, Calibration.DEV,
        "No suspected missing entity; estimated miss rate 0.0 % [0.0, 0.0] (dev calibration)", id="an empty estimate",
    ),
])
def test_the_headline_says_suspects_and_estimate_each_with_its_basis(suspects, threshold, estimate, calibration, expected):
    line = headline(suspects, threshold, {**ROW, **estimate}, calibration)
    assert line == expected
    assert "0 suspected" not in line
