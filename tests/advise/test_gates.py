"""advise's gates before and after training (issue 43): a DEV of other
entity types is refused before any trial, a ranking of zeros recommends
nothing, an audit of another corpus is refused, and the plan's time is said
from the settings that bound it (--max-steps too)."""
import json
import re

import numpy
import pytest
from spacy.tokens import Span
from typer.testing import CliRunner

from spacy_imbalance.advise import AdviseSettings, Candidate, rank
from spacy_imbalance.advise.run import check_labels, plan_text
from spacy_imbalance.audit.folds import corpus_fingerprint
from spacy_imbalance.audit.run import CORPUS_FILE
from spacy_imbalance.cli import app
from spacy_imbalance.corpus.conll import conll_to_docs
from spacy_imbalance.corpus.default_corpus import default_corpus_path
from spacy_imbalance.corpus.docs_io import write_docbin
from spacy_imbalance.scorers.counts import MatchCounts

ANSI = re.compile(r"\x1b\[[0-9;]*m")
BOX = re.compile(r"[│╭╮╰╯─]")


def _plain(output):
    return " ".join(BOX.sub(" ", ANSI.sub("", output)).split())


@pytest.fixture(scope="module")
def entity_docs():
    docs, _ = conll_to_docs(default_corpus_path())
    return [doc for doc in docs if doc.ents]


def _relabelled(docs, rename):
    """Copies of ``docs`` with each entity's type renamed (None: dropped)."""
    out = []
    for doc in docs:
        copy = doc.copy()
        copy.ents = [Span(copy, e.start, e.end, rename(e.label_)) for e in doc.ents if rename(e.label_) is not None]
        out.append(copy)
    return out


class _Trained(Exception):
    """advise got past every gate to its trials."""


@pytest.fixture
def no_training(monkeypatch):
    def run_candidates(*args, **kwargs):
        raise _Trained()

    monkeypatch.setattr("spacy_imbalance.cli.advise.run_candidates", run_candidates)


def _advise(*args):
    return CliRunner().invoke(app, ["advise", *[str(a) for a in args]])


# --- M9: DEV of no TRAIN type, refused before any trial ----------------------

def test_check_labels_refuses_a_dev_that_shares_no_type_naming_both_files_and_types(entity_docs):
    train = entity_docs[:30]
    dev = _relabelled(entity_docs[30:40], lambda label: "X")
    with pytest.raises(ValueError) as err:
        check_labels(train, dev, "train.spacy", "dev.spacy")
    assert str(err.value).startswith(
        "DEV dev.spacy shares no entity type with TRAIN train.spacy: TRAIN annotates company, facility, geo-loc, "
        "movie, other, person, product, sportsteam, tvshow; DEV annotates X. Every method would score 0 on DEV"
    )


def test_check_labels_warns_of_the_types_one_side_lacks(entity_docs):
    train = _relabelled(entity_docs[:30], lambda label: None if label == "movie" else label)
    dev = _relabelled(entity_docs[30:40], lambda label: "EXTRA" if label == "tvshow" else label)
    warnings = check_labels(train, dev, "train.spacy", "dev.spacy")
    assert len(warnings) == 2
    assert warnings[0].startswith("DEV dev.spacy has types TRAIN train.spacy never annotates: EXTRA. No method can learn them")
    assert warnings[1].startswith(
        "TRAIN train.spacy has types DEV dev.spacy never annotates: product, sportsteam, tvshow. The methods are ranked without them"
    )
    assert check_labels(entity_docs[:30], entity_docs[:30], "a", "b") == []


def test_advise_refuses_a_dev_of_other_types_before_writing_or_training(tmp_path, entity_docs, no_training):
    # issue 43 M9: 8 trials ran, all at 0.0 macro-F1, and "Recommended: ner"
    write_docbin(entity_docs[:30], tmp_path / "train.spacy")
    write_docbin(_relabelled(entity_docs[30:40], lambda label: label.upper()), tmp_path / "dev.spacy")
    out = tmp_path / "advice"
    result = _advise(tmp_path / "train.spacy", tmp_path / "dev.spacy", "-o", out)
    said = _plain(result.output)
    assert result.exit_code == 1 and isinstance(result.exception, SystemExit), said
    assert f"DEV {tmp_path / 'dev.spacy'} shares no entity type with TRAIN {tmp_path / 'train.spacy'}" in said
    assert "DEV annotates COMPANY, FACILITY, GEO-LOC, OTHER, PERSON, TVSHOW" in said
    assert not out.exists()


def test_advise_warns_of_dev_types_train_lacks_and_goes_on(tmp_path, entity_docs, no_training):
    write_docbin(entity_docs[:30], tmp_path / "train.spacy")
    write_docbin(_relabelled(entity_docs[30:40], lambda label: "EXTRA" if label == "tvshow" else label), tmp_path / "dev.spacy")
    result = _advise(tmp_path / "train.spacy", tmp_path / "dev.spacy", "-o", tmp_path / "advice")
    assert isinstance(result.exception, _Trained), _plain(result.output)
    assert f"DEV {tmp_path / 'dev.spacy'} has types TRAIN {tmp_path / 'train.spacy'} never annotates: EXTRA." in _plain(result.output)


# --- M9: no recommendation from trials that learned nothing -----------------

def _report(found, n=40):
    table = numpy.zeros((n, 1, 3), dtype="int64")
    table[:found, 0, 0] = 1
    table[found:, 0, 2] = 1
    f = 2 * found / (found + n)
    # the checkpoint score rose above step 0's, so the trial counts as trained (ranking.trained; issue 44),
    # whatever its dev macro-F1: these gates are about trained trials that scored 0
    curve = [[0, 0.0], [200, max(f, 0.01)]]
    return {"macro": {"f": f}, "counts": MatchCounts(["X"], table).to_sparse(), "dev_curve": curve}


CANDIDATES = [Candidate("ner", "ner"), Candidate("spancat_singlelabel", "spancat_singlelabel"),
              Candidate("sampled_spancat_uniform", "sampled_spancat", sampler="uniform")]


def test_rank_recommends_nothing_when_every_trial_scored_zero():
    reports = {c.name: [_report(0), _report(0)] for c in CANDIDATES}
    with pytest.raises(ValueError) as err:
        rank(CANDIDATES, reports, [0, 1])
    assert str(err.value).startswith(
        "Every trained method scored 0.0 dev macro-F1 on every seed (ner, spancat_singlelabel, sampled_spancat_uniform), "
        "so nothing is recommended"
    )
    # one method above 0 is a ranking
    reports["sampled_spancat_uniform"] = [_report(0), _report(3)]
    assert rank(CANDIDATES, reports, [0, 1]).recommended == "sampled_spancat_uniform"


def test_advise_says_nothing_learned_instead_of_recommending(tmp_path, entity_docs, monkeypatch):
    def run_candidates(planned, settings, out, on_done=None):
        reports = {}
        for candidate, _, trial in planned:
            reports.setdefault(candidate.name, []).append(_report(0))
        return reports

    monkeypatch.setattr("spacy_imbalance.cli.advise.run_candidates", run_candidates)
    write_docbin(entity_docs[:30], tmp_path / "train.spacy")
    write_docbin(entity_docs[30:40], tmp_path / "dev.spacy")
    out = tmp_path / "advice"
    result = _advise(tmp_path / "train.spacy", tmp_path / "dev.spacy", "-o", out, "--budget", "1")
    said = _plain(result.output)
    assert result.exit_code == 1 and "so nothing is recommended: no method learned to find the dev entities" in said
    assert "Recommended" not in said and not (out / "advice.md").exists() and not (out / "recommended.cfg").exists()


# --- M10: an audit of another corpus of the same size ------------------------

def _audit_folder(path, docs, source, n_docs=None):
    path.mkdir()
    total = {"label": "total", "rate": 0.3, "rate_low": 0.2, "rate_high": 0.4}
    (path / "summary.json").write_text(json.dumps({"n_docs": n_docs or len(docs), "labels": [total]}), encoding="utf8")
    if source is not None:
        record = {"corpus": source, "n_docs": len(docs), "fingerprint": corpus_fingerprint(docs)}
        (path / CORPUS_FILE).write_text(json.dumps(record), encoding="utf8")
    return path


def test_advise_refuses_an_audit_of_another_corpus_of_the_same_size(tmp_path, entity_docs, no_training):
    write_docbin(entity_docs[:30], tmp_path / "train.spacy")
    write_docbin(entity_docs[30:40], tmp_path / "dev.spacy")
    audit = _audit_folder(tmp_path / "audit", entity_docs[100:130], "other.spacy")
    out = tmp_path / "advice"
    result = _advise(tmp_path / "train.spacy", tmp_path / "dev.spacy", "-o", out, "--audit", audit)
    said = _plain(result.output)
    assert result.exit_code == 1 and isinstance(result.exception, SystemExit), said
    assert (
        f"--audit {audit} audited another corpus than {tmp_path / 'train.spacy'}: {audit / CORPUS_FILE} records "
        f"other.spacy (30 documents), whose words or entities differ from the 30 documents of {tmp_path / 'train.spacy'}"
    ) in said
    assert not out.exists()
    # the same words with one entity changed is another corpus too
    changed = entity_docs[:30]
    changed = _relabelled(changed[:1], lambda label: "X") + list(changed[1:])
    audit2 = _audit_folder(tmp_path / "audit2", changed, "changed.spacy")
    result = _advise(tmp_path / "train.spacy", tmp_path / "dev.spacy", "-o", out, "--audit", audit2)
    assert result.exit_code == 1 and "audited another corpus than" in _plain(result.output)


def test_advise_refuses_an_audit_that_records_no_corpus(tmp_path, entity_docs, no_training):
    write_docbin(entity_docs[:30], tmp_path / "train.spacy")
    write_docbin(entity_docs[30:40], tmp_path / "dev.spacy")
    audit = _audit_folder(tmp_path / "audit", entity_docs[:30], None)
    result = _advise(tmp_path / "train.spacy", tmp_path / "dev.spacy", "-o", tmp_path / "advice", "--audit", audit)
    said = _plain(result.output)
    assert result.exit_code == 1, said
    assert f"--audit {audit}: no {CORPUS_FILE} there, so nothing says which corpus it audited" in said
    assert f"Re-run spacy-imbalance audit on {tmp_path / 'train.spacy'} with --output {audit}" in said


def test_advise_takes_an_audit_of_its_own_train(tmp_path, entity_docs, no_training):
    write_docbin(entity_docs[:30], tmp_path / "train.spacy")
    write_docbin(entity_docs[30:40], tmp_path / "dev.spacy")
    audit = _audit_folder(tmp_path / "audit", entity_docs[:30], "train.conll")
    result = _advise(tmp_path / "train.spacy", tmp_path / "dev.spacy", "-o", tmp_path / "advice", "--audit", audit)
    assert isinstance(result.exception, _Trained), _plain(result.output)
    assert "entities missing (the audit's estimate)" in _plain(result.output)


# --- L12: the plan's time from the settings that bound it --------------------

def test_the_plan_names_max_steps_and_gives_its_time_as_an_upper_bound():
    # issue 43 L12: --budget 1 --max-steps 4 said "the trials take about 10 minutes"
    settings = AdviseSettings(budget_minutes=1, max_steps=4)
    info, warning = plan_text(settings, 4, 0.5, on_ray=False)
    assert info == "4 methods x 2 seeds, each trained for 0.5 minutes or 4 steps (--max-steps), whichever ends first (one after another):"
    assert warning == (
        "--budget 1 is too short for 8 trials: each trains for 0.5 minutes (the shortest worth ranking) unless "
        "--max-steps 4 ends it first, and takes about 0.8 minutes more to start and be evaluated, so the trials may "
        "take up to about 10 minutes, less where --max-steps ends them first"
    )
    # a budget that fits: no warning
    assert plan_text(AdviseSettings(budget_minutes=20, workers=2), 4, 4.25, on_ray=True) == (
        "4 methods x 2 seeds, each trained for 4.2 minutes or 20,000 steps (--max-steps), whichever ends first (2 at a time on Ray):",
        None,
    )
