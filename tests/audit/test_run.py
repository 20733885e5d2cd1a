import json

import pytest

from spacy_imbalance.audit.folds import FOLD_FILE
from spacy_imbalance.audit.run import DEFAULT_CONFIG, AuditSettings, run_audit
from spacy_imbalance.corpus.docs_io import load_docs
from spacy_imbalance.corpus.masking.masking import mask_entities

SMALL = {"training.max_steps": 1}


def words(doc):
    return tuple(t.text for t in doc)


@pytest.fixture
def masked(toy_corpus):
    return mask_entities(load_docs(toy_corpus / "train.spacy"), 0.3, seed=0)


@pytest.mark.parametrize("with_dev", [True, False])
def test_no_document_is_scored_by_a_model_that_saw_it(tmp_path, masked, toy_corpus, init_only_trainer, with_dev):
    dev = load_docs(toy_corpus / "dev.spacy") if with_dev else None
    settings = AuditSettings(folds=3, n_resamples=100)
    result = run_audit(masked, dev, tmp_path, config=DEFAULT_CONFIG, overrides=SMALL, settings=settings, trainer=init_only_trainer)
    assert len(init_only_trainer.calls) == 3
    for fold, call in enumerate(init_only_trainer.calls):
        scored = {words(masked[i]) for i in result.plan.scored(fold)}
        seen = set(call["train"]) | (set() if with_dev else set(call["dev"]))
        assert not scored & seen
        assert len(call["train"]) + (0 if with_dev else len(call["dev"])) == len(result.plan.trained(fold))
        record = json.loads((tmp_path / "folds" / f"fold-{fold}" / FOLD_FILE).read_text())
        assert not set(record["trained"]) & set(record["scored"])
        assert record["scored"] == result.plan.scored(fold)
    # every document scored once, by its own fold
    assert sorted(result.info["decoded"]) == list(range(len(masked)))
    assert all(s.fold == result.plan.assignment[s.doc] for s in result.suspects)
    assert result.method == ("dev" if with_dev else "self")


def test_suspects_never_touch_an_annotated_entity(tmp_path, masked, toy_corpus, init_only_trainer):
    settings = AuditSettings(folds=2, n_resamples=0, threshold=0.01)
    result = run_audit(masked, load_docs(toy_corpus / "dev.spacy"), tmp_path, config=DEFAULT_CONFIG, overrides=SMALL, settings=settings, trainer=init_only_trainer)
    assert result.suspects
    for s in result.suspects:
        for ent in masked[s.doc].ents:
            assert s.end <= ent.start or s.start >= ent.end
        assert 0.01 <= s.probability <= 1.0


def test_a_finished_audit_resumes_without_training(tmp_path, masked, toy_corpus, init_only_trainer):
    dev = load_docs(toy_corpus / "dev.spacy")
    settings = AuditSettings(folds=2, n_resamples=100)
    first = run_audit(masked, dev, tmp_path, config=DEFAULT_CONFIG, overrides=SMALL, settings=settings, trainer=init_only_trainer)

    def refuse(*args):
        raise AssertionError("a finished fold was trained again")

    again = run_audit(masked, dev, tmp_path, config=DEFAULT_CONFIG, overrides=SMALL, settings=settings, trainer=refuse)
    assert [(s.doc, s.start, s.end, s.label) for s in again.suspects] == [(s.doc, s.start, s.end, s.label) for s in first.suspects]
    with pytest.raises(ValueError, match="another audit"):
        run_audit(masked, dev, tmp_path, config=DEFAULT_CONFIG, overrides={"training.max_steps": 2}, settings=settings, trainer=refuse)
    # another dev set (its last document changed): the folds picked checkpoints on the old one
    changed = [doc.copy() for doc in dev]
    changed[-1].ents = []
    with pytest.raises(ValueError, match="another audit"):
        run_audit(masked, changed, tmp_path, config=DEFAULT_CONFIG, overrides=SMALL, settings=settings, trainer=refuse)


def test_a_stopped_audit_trains_only_the_folds_it_lacks(tmp_path, masked, toy_corpus, init_only_trainer):
    dev = load_docs(toy_corpus / "dev.spacy")
    settings = AuditSettings(folds=3, n_resamples=0)
    run_audit(masked, dev, tmp_path, config=DEFAULT_CONFIG, overrides=SMALL, settings=settings, trainer=init_only_trainer)
    folds = tmp_path / "folds"
    # stopped while fold 1's record was written, and fold 2's model deleted
    record = folds / "fold-1" / FOLD_FILE
    record.write_text(record.read_text()[:20], encoding="utf8")
    import shutil

    shutil.rmtree(folds / "fold-2" / "model-best")
    again = type(init_only_trainer)()
    run_audit(masked, dev, tmp_path, config=DEFAULT_CONFIG, overrides=SMALL, settings=settings, trainer=again)
    assert [call["output"].name for call in again.calls] == ["fold-1", "fold-2"]


@pytest.mark.parametrize("settings, named", [
    (AuditSettings(seed=-1), "--seed"), (AuditSettings(n_resamples=5), "--resamples"), (AuditSettings(threshold=1.0), "--threshold"),
])
def test_settings_name_the_bad_option(settings, named):
    with pytest.raises(ValueError, match=named):
        settings.check()


def test_a_corpus_without_entities_is_a_clear_error(tmp_path, masked, init_only_trainer):
    for doc in masked:
        doc.ents = []
    with pytest.raises(ValueError, match="no annotated entity"):
        run_audit(masked, None, tmp_path, config=DEFAULT_CONFIG, overrides=SMALL, settings=AuditSettings(), trainer=init_only_trainer)


def test_a_type_only_dev_annotates_is_named(tmp_path, masked, toy_corpus, init_only_trainer, capsys):
    dev = load_docs(toy_corpus / "dev.spacy")
    dropped = sorted({e.label_ for doc in dev for e in doc.ents})[0]
    for doc in masked:
        doc.ents = [e for e in doc.ents if e.label_ != dropped]
    run_audit(masked, dev, tmp_path, config=DEFAULT_CONFIG, overrides=SMALL, settings=AuditSettings(folds=2, n_resamples=0),
              trainer=init_only_trainer, train_source="train.spacy", dev_source="dev.spacy")
    said = " ".join(capsys.readouterr().out.split())
    assert f"dev.spacy has types train.spacy never annotates: {dropped}" in said


@pytest.mark.parametrize("with_dev", [True, False])
def test_held_out_recall_is_the_share_of_each_folds_annotations_its_decoding_finds(tmp_path, masked, toy_corpus, init_only_trainer, with_dev):
    import spacy

    from spacy_imbalance.audit.suspects import boundary_matches, decode, span_probabilities

    dev = load_docs(toy_corpus / "dev.spacy") if with_dev else None
    settings = AuditSettings(folds=2, n_resamples=0)
    result = run_audit(masked, dev, tmp_path, config=DEFAULT_CONFIG, overrides=SMALL, settings=settings, trainer=init_only_trainer)
    if not with_dev:
        # without dev the decoding recall is measured on the held-out annotations already
        assert result.miss_rate.held_out_recall == [] and result.miss_rate.held_out_rate is None
        return
    for fold in range(2):
        nlp = spacy.load(tmp_path / "folds" / f"fold-{fold}" / "model-best")
        docs = [masked[i] for i in result.plan.scored(fold)]
        found = annotated = 0
        for doc, spans in zip(docs, span_probabilities(nlp, "sampled_spancat", docs)):
            gold = [(e.start, e.end) for e in doc.ents]
            found += boundary_matches(decode(spans), gold).sum()
            annotated += len(gold)
        assert result.miss_rate.held_out_recall[fold] == pytest.approx(found / annotated)


def test_empty_documents_are_in_no_fold_and_the_suspects_keep_their_documents(tmp_path, masked, init_only_trainer, capsys):
    # issue 31 M10: the empty texts were one document of the folds, and a fold
    # left with only them to train on stopped with spaCy's E923
    import spacy

    nlp = spacy.blank("en")
    docs = [nlp.make_doc(""), *masked[:20], nlp.make_doc(""), nlp.make_doc(""), *masked[20:40], nlp.make_doc("")]
    empty = [i for i, doc in enumerate(docs) if not len(doc)]
    settings = AuditSettings(folds=3, n_resamples=0, threshold=0.01)
    result = run_audit(docs, None, tmp_path, config=DEFAULT_CONFIG, overrides=SMALL, settings=settings,
                       trainer=init_only_trainer, train_source="train.spacy")
    assert result.plan.left_out() == empty == [0, 21, 22, 43]
    for fold, call in enumerate(init_only_trainer.calls):
        assert () not in call["train"] and () not in call["dev"]
        assert not set(empty) & set(result.plan.trained(fold)) and not set(empty) & set(result.plan.scored(fold))
    # the documents are the corpus's: every non-empty one scored once, the suspects' spans in their own documents
    assert sorted(result.info["decoded"]) == [i for i in range(len(docs)) if i not in empty]
    assert result.suspects
    for s in result.suspects:
        assert s.doc not in empty and s.end <= len(docs[s.doc])
        for ent in docs[s.doc].ents:
            assert s.end <= ent.start or s.start >= ent.end
    assert result.info["n_docs"] == 44 and result.info["n_empty_docs"] == 4
    said = " ".join(capsys.readouterr().out.split())
    assert "4 of the 44 documents of train.spacy are empty (no tokens): left out of the folds" in said
    assert "documents 0, 21, 22, 43" in said


def test_a_corpus_of_fewer_non_empty_documents_than_folds_is_a_clear_error(tmp_path, masked, init_only_trainer):
    import spacy

    nlp = spacy.blank("en")
    docs = [masked[0], *[nlp.make_doc("") for _ in range(10)]]
    with pytest.raises(ValueError, match=r"--folds 2 is more than the 1 distinct documents of the corpus \(empty ones aside\)"):
        run_audit(docs, None, tmp_path, config=DEFAULT_CONFIG, overrides=SMALL, settings=AuditSettings(folds=2), trainer=init_only_trainer)
