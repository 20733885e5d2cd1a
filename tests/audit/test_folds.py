import json

import pytest
from spacy.tokens import Doc
from spacy.vocab import Vocab

from spacy_imbalance.audit.folds import FOLD_FILE, assign_folds, fold_done, held_out_split, prepare_plan


def docs(n, vocab=None):
    vocab = vocab or Vocab()
    out = []
    for i in range(n):
        doc = Doc(vocab, words=["w", str(i), "x"])
        doc.ents = [doc.char_span(0, 1, label="A")] if i % 2 else []
        out.append(doc)
    return out


@pytest.mark.parametrize("n,k", [(10, 3), (7, 7), (100, 5)])
def test_folds_partition_the_documents_evenly(n, k):
    assignment = assign_folds(list(range(n)), k, seed=1)
    sizes = [assignment.count(f) for f in range(k)]
    assert sum(sizes) == n and max(sizes) - min(sizes) <= 1 and min(sizes) >= 1
    assert assign_folds(list(range(n)), k, seed=1) == assignment
    assert assign_folds(list(range(n)), k, seed=2) != assignment or n == k


def test_repeated_texts_share_a_fold():
    keys = ["a", "b", "a", "c", "b", "d", "a"]
    for seed in range(5):
        folds = assign_folds(keys, 2, seed)
        assert folds[0] == folds[2] == folds[6] and folds[1] == folds[4]
    with pytest.raises(ValueError, match="3 distinct documents"):
        assign_folds(["a", "a", "b", "c"], 4, 0)


def test_bad_k_names_the_setting():
    with pytest.raises(ValueError, match="--folds"):
        assign_folds(list(range(10)), 1, 0)
    with pytest.raises(ValueError, match="more than the 3 distinct documents"):
        assign_folds(list(range(3)), 4, 0)


def test_plan_trained_and_scored_are_disjoint_and_cover_the_corpus(tmp_path):
    plan = prepare_plan(tmp_path, docs(11), 4, 0, {"x": 1})
    scored = [i for f in range(4) for i in plan.scored(f)]
    assert sorted(scored) == list(range(11))
    for f in range(4):
        assert not set(plan.trained(f)) & set(plan.scored(f))
        assert sorted(plan.trained(f) + plan.scored(f)) == list(range(11))


def test_a_saved_plan_of_another_audit_is_refused(tmp_path):
    corpus = docs(8)
    prepare_plan(tmp_path, corpus, 2, 0, {"steps": 10})
    assert prepare_plan(tmp_path, corpus, 2, 0, {"steps": 10}).k == 2
    with pytest.raises(ValueError, match="another audit"):
        prepare_plan(tmp_path, corpus, 2, 0, {"steps": 20})
    with pytest.raises(ValueError, match="another audit"):
        prepare_plan(tmp_path, corpus, 3, 0, {"steps": 10})
    changed = docs(8)
    changed[3].ents = []
    with pytest.raises(ValueError, match="another audit"):
        prepare_plan(tmp_path, changed, 2, 0, {"steps": 10})


def test_a_fold_is_done_only_with_a_record_of_this_plan(tmp_path):
    plan = prepare_plan(tmp_path, docs(6), 2, 0, {})
    folder = tmp_path / "fold-0"
    folder.mkdir()
    assert not fold_done(tmp_path, plan, 0)
    record = {"fingerprint": plan.fingerprint, "trained": plan.trained(0)}
    (folder / FOLD_FILE).write_text(json.dumps(record))
    assert not fold_done(tmp_path, plan, 0)  # no model
    (folder / "model-best").mkdir()
    (folder / "model-best" / "config.cfg").write_text("[nlp]\n")
    assert fold_done(tmp_path, plan, 0)
    (folder / FOLD_FILE).write_text(json.dumps({**record, "fingerprint": "other"}))
    assert not fold_done(tmp_path, plan, 0)


def test_held_out_split_keeps_a_tenth_aside():
    split = held_out_split(list(range(50)), seed=3)
    assert len(split["dev"]) == 5 and sorted(split["train"] + split["dev"]) == list(range(50))
    assert held_out_split([4, 7], seed=0)["train"] in ([4], [7])
    with pytest.raises(ValueError, match="--dev"):
        held_out_split([4], seed=0)


def test_empty_documents_are_in_no_fold(tmp_path):
    # issue 31 M10: the empty documents made one group of their own, which a
    # fold could be left to train on alone
    from spacy_imbalance.audit.folds import NO_FOLD

    keys = [(), ("a",), (), ("b",), ("c",), ()]
    for seed in range(5):
        folds = assign_folds(keys, 3, seed)
        assert [f for f, key in zip(folds, keys) if key == ()] == [NO_FOLD] * 3
        assert sorted(f for f, key in zip(folds, keys) if key != ()) == [0, 1, 2]
    vocab = Vocab()
    corpus = [Doc(vocab, words=[]), *docs(4, vocab), Doc(vocab, words=[])]
    plan = prepare_plan(tmp_path, corpus, 2, 0, {})
    assert plan.left_out() == [0, 5]
    for f in range(2):
        assert not {0, 5} & set(plan.trained(f)) and not {0, 5} & set(plan.scored(f))
