"""The audit of a corpus whose documents annotate only some types (label
scopes, issue 47): a span of a type outside its document's scope is unknown,
not missed. It is listed apart (out of scope), and the estimate counts in
each document only the types it annotates."""
import json

import numpy
import pytest

from spacy_imbalance.audit.export import summary
from spacy_imbalance.audit.run import DEFAULT_CONFIG, AuditSettings, known_outcomes, run_audit
from spacy_imbalance.audit.suspects import Decoded
from spacy_imbalance.corpus.docs_io import load_docs
from spacy_imbalance.corpus.masking.masking import mask_entities
from spacy_imbalance.corpus.scopes.scopes import get_label_scope, set_label_scope

from ._audit import audit_command
from .conftest import InitOnlyTrainer

SMALL = {"training.max_steps": 1}
# every document annotates persons, and the types of its own entities
SHARED = "person"


def _scoped(docs):
    out = []
    for doc in docs:
        doc = doc.copy()
        set_label_scope(doc, {SHARED, *(e.label_ for e in doc.ents)})
        out.append(doc)
    return out


@pytest.fixture
def masked(toy_corpus):
    return mask_entities(load_docs(toy_corpus / "train.spacy"), 0.3, seed=0)


def _audit(docs, dev, out, trainer):
    # threshold 0.01: the init-only fold models make every decoded span a suspect
    settings = AuditSettings(folds=2, n_resamples=0, threshold=0.01)
    return run_audit(docs, dev, out, config=DEFAULT_CONFIG, overrides=SMALL, settings=settings, trainer=trainer)


@pytest.fixture(scope="module")
def audits(toy_corpus, tmp_path_factory):
    """The masked corpus audited without and with scopes (the same folds, calibrated on dev)."""
    masked = mask_entities(load_docs(toy_corpus / "train.spacy")[:30], 0.3, seed=0)
    dev = load_docs(toy_corpus / "dev.spacy")[:10]
    scoped_docs = _scoped(masked)
    out = tmp_path_factory.mktemp("audits")
    plain = _audit(masked, dev, out / "plain", InitOnlyTrainer())
    scoped = _audit(scoped_docs, dev, out / "scoped", InitOnlyTrainer())
    return [get_label_scope(doc) for doc in scoped_docs], plain, scoped


def _key(s):
    return (s.doc, s.start, s.end, s.label, round(s.probability, 9))


def test_spans_of_a_type_outside_the_scope_are_out_of_scope_not_suspects(audits):
    scopes, plain, scoped = audits
    assert scoped.suspects and scoped.out_of_scope
    assert all(s.label in scopes[s.doc] for s in scoped.suspects)
    assert all(s.label not in scopes[s.doc] for s in scoped.out_of_scope)
    # dev calibrates both alike: the same spans, split in two
    assert sorted(map(_key, scoped.suspects + scoped.out_of_scope)) == sorted(map(_key, plain.suspects))
    n = len(scoped.out_of_scope)
    note = next(note for note in scoped.miss_rate.notes if note.startswith("Out of scope"))
    assert note.startswith(
        f"Out of scope: {n} unannotated spans with a calibrated probability >= 0.01 have as their most probable type "
        "one that their document does not annotate (outside its label scope): "
    )
    assert not any(note.startswith("Out of scope") for note in plain.miss_rate.notes)
    rows = {row["label"]: row for row in summary(scoped)["labels"]}
    assert rows["total"]["out_of_scope"] == n and rows["total"]["suspects"] == len(scoped.suspects)
    assert sum(row["out_of_scope"] for label, row in rows.items() if label != "total") == n


def test_the_estimate_counts_only_the_types_each_document_annotates(audits):
    _, plain, scoped = audits
    plain, scoped = plain.miss_rate, scoped.miss_rate
    assert scoped.labels == plain.labels and scoped.annotated == plain.annotated
    shared = plain.labels.index(SHARED)
    # every document annotates persons: their estimate is unchanged
    assert scoped.expected_missing[shared] == pytest.approx(plain.expected_missing[shared])
    # the other types lose the mass of the documents that do not annotate them
    for i, label in enumerate(plain.labels):
        assert scoped.expected_missing[i] <= plain.expected_missing[i] + 1e-9, label
    assert scoped.expected_missing[-1] < plain.expected_missing[-1] - 1.0


def test_other_scopes_are_another_audit(tmp_path, masked, init_only_trainer):
    result = _audit(masked, None, tmp_path, init_only_trainer)
    assert result.out_of_scope == []
    with pytest.raises(ValueError, match="another audit"):
        # the same corpus with scopes: the fold models trained on other data
        _audit(_scoped(masked), None, tmp_path, lambda *args: None)


def test_a_calibration_knows_no_outcome_for_a_span_of_a_type_outside_the_scope():
    # three spans; the label columns are the corpus's labels
    decoded = Decoded(
        starts=numpy.asarray([0, 2, 5], dtype="int32"),
        ends=numpy.asarray([1, 4, 6], dtype="int32"),
        scores=numpy.asarray([0.9, 0.6, 0.3]),
        label_probs=numpy.asarray([[0.7, 0.3], [0.2, 0.8], [0.5, 0.5]]),
    )
    labels = ["PER", "PROD"]
    assert known_outcomes(decoded, labels, None) is decoded
    kept = known_outcomes(decoded, labels, frozenset({"PER"}))
    # span 1's most probable type is PROD, outside the scope; a tie goes to the first column
    assert kept.starts.tolist() == [0, 5] and kept.scores.tolist() == [0.9, 0.3]
    assert len(known_outcomes(decoded, labels, frozenset({"PROD"}))) == 1


def test_an_entity_outside_its_documents_scope_is_refused_before_any_fold(tmp_path, masked, init_only_trainer):
    docs = _scoped(masked)
    first = docs[3].ents[0]
    set_label_scope(docs[3], ["nothing"])
    with pytest.raises(ValueError) as err:
        run_audit(docs, None, tmp_path, config=DEFAULT_CONFIG, overrides=SMALL, settings=AuditSettings(folds=2),
                  trainer=init_only_trainer, train_source="train.spacy")
    assert str(err.value).startswith(
        f"train.spacy: document 3: the entity {first.text!r} (tokens {first.start}-{first.end}, in doc.ents) has the "
        f"label {first.label_!r}, outside the label scope ['nothing']"
    )
    assert not init_only_trainer.calls and not (tmp_path / "folds").exists()


def test_the_audit_command_reads_the_scopes_of_its_corpus_and_keeps_them(tmp_path, masked, init_only_trainer, monkeypatch):
    docs = _scoped(masked[:16])
    result, out = audit_command(tmp_path, docs, init_only_trainer, monkeypatch, "--threshold", "0.01")
    assert result.exit_code == 0, result.output
    summary_data = json.loads((out / "summary.json").read_text(encoding="utf8"))
    assert summary_data["labels"][-1]["out_of_scope"] > 0
    assert any(note.startswith("Out of scope: ") for note in summary_data["notes"])
    # the audited corpus and the folds' training files keep the scopes
    scopes = [get_label_scope(doc) for doc in docs]
    assert [get_label_scope(doc) for doc in load_docs(out / "audited.spacy")] == scopes
    fold_docs = load_docs(out / "folds" / "fold-0" / "train.spacy")
    assert fold_docs and all(get_label_scope(doc) is not None for doc in fold_docs)
