"""Applying reviewed decisions to hand-built Docs (issue 34): the exact
entities and span groups that come out, the counts, and every refusal
naming the file and line."""
import pytest
from spacy.tokens import Doc, Span
from spacy.vocab import Vocab

from spacy_imbalance.review.apply import LabelCounts, Overlaps, ReviewConflict, apply_decisions, check_labels
from spacy_imbalance.review.decisions import Decision

# characters: Alice 0-5, visited 6-13, New 14-17, York 18-22, "." 22-23
A = "Alice visited New York."
# characters: Bob 0-3, likes 4-9, Rome 10-14
B = "Bob likes Rome"
CORPUS = "corpus.spacy"


def _docs():
    vocab = Vocab()
    a = Doc(vocab, words=["Alice", "visited", "New", "York", "."], spaces=[True, True, True, False, False],
            ents=["B-PER", "O", "B-LOC", "I-LOC", "O"])
    b = Doc(vocab, words=["Bob", "likes", "Rome"], spaces=[True, True, False], ents=["O", "O", "O"])
    assert (a.text, b.text) == (A, B)
    return [a, b]


def _d(line, text, start, end, label, answer="accept", doc=None, source="review.jsonl"):
    return Decision(source, line, doc, text, start, end, label, answer)


def _apply(docs, decisions, **kwargs):
    return apply_decisions(docs, decisions, corpus=CORPUS, **kwargs)


def _ents(doc):
    return [(e.text, e.label_) for e in doc.ents]


def _group(doc, key="incorrect_spans"):
    return [(s.start, s.end, s.text, s.label_) for s in doc.spans[key]]


def _iob(doc):
    return [t.ent_iob_ + ("-" + t.ent_type_ if t.ent_type_ else "") for t in doc]


def test_apply_accept_reject_ignore():
    docs = _docs()
    result = _apply(docs, [
        _d(1, B, 0, 3, "PER"),
        _d(2, A, 6, 13, "EVENT", "reject"),
        _d(3, B, 4, 9, "VERB", "ignore"),
        _d(4, B, 10, 14, "LOC", doc=1),
    ])
    a, b = result.docs
    assert _ents(b) == [("Bob", "PER"), ("Rome", "LOC")]
    assert _iob(b) == ["B-PER", "O", "B-LOC"]
    assert _ents(a) == [("Alice", "PER"), ("New York", "LOC")]
    assert _group(a) == [(1, 2, "visited", "EVENT")]
    assert "incorrect_spans" not in b.spans
    assert result.counts == {
        "EVENT": LabelCounts(rejected=1),
        "LOC": LabelCounts(accepted=1),
        "PER": LabelCounts(accepted=1),
        "VERB": LabelCounts(ignored=1),
    }
    # the documents given are left as they were
    assert _ents(docs[1]) == [] and "incorrect_spans" not in docs[0].spans


def test_apply_existing_entities_and_repeats_change_nothing():
    # a manual-NER task accepts the entity it shows ("source": "annotation")
    # with the new span; the same decision twice counts once
    result = _apply(_docs(), [
        _d(1, A, 0, 5, "PER"),
        _d(1, A, 6, 13, "EVENT"),
        _d(2, A, 6, 13, "EVENT", source="second.jsonl"),
        _d(3, B, 4, 9, "X", "reject"),
        _d(4, B, 4, 9, "X", "reject"),
    ])
    assert _ents(result.docs[0]) == [("Alice", "PER"), ("visited", "EVENT"), ("New York", "LOC")]
    assert _group(result.docs[1]) == [(1, 2, "likes", "X")]
    assert result.counts == {
        "EVENT": LabelCounts(accepted=1, unchanged=1),
        "PER": LabelCounts(unchanged=1),
        "X": LabelCounts(rejected=1, unchanged=1),
    }


def test_apply_rejects_join_an_existing_group():
    docs = _docs()
    docs[0].spans["incorrect_spans"] = [Span(docs[0], 0, 1, "LOC")]
    result = _apply(docs, [_d(1, A, 0, 5, "LOC", "reject"), _d(2, A, 14, 22, "PER", "reject")])
    assert _group(result.docs[0]) == [(0, 1, "Alice", "LOC"), (2, 4, "New York", "PER")]
    assert result.counts == {"LOC": LabelCounts(unchanged=1), "PER": LabelCounts(rejected=1)}
    assert _group(docs[0]) == [(0, 1, "Alice", "LOC")]  # the given document as it was


@pytest.mark.parametrize(
    "start,end,label,described",
    [(14, 17, "LOC", "'New' (LOC, characters 14-17)"), (14, 22, "GPE", "'New York' (GPE, characters 14-22)"),
     (6, 17, "EVENT", "'visited New' (EVENT, characters 6-17)")],
)
def test_apply_refuses_an_accept_overlapping_an_entity(start, end, label, described):
    with pytest.raises(ReviewConflict) as err:
        _apply(_docs(), [_d(1, B, 0, 3, "PER"), _d(4, A, start, end, label)])
    assert str(err.value) == (
        f"review.jsonl, line 4 accepts {described}, which overlaps the entity 'New York' (LOC, characters 14-22) "
        f"of document 0 of {CORPUS}: give --overlaps replace to let the reviewed span win, or --overlaps keep "
        "to keep the entity and skip the decision"
    )


def test_apply_overlaps_replace_drops_the_entity():
    result = _apply(_docs(), [_d(4, A, 6, 17, "EVENT")], overlaps=Overlaps.REPLACE)
    a = result.docs[0]
    assert _ents(a) == [("Alice", "PER"), ("visited New", "EVENT")]
    # York, left of the old entity, is no entity now
    assert _iob(a) == ["B-PER", "B-EVENT", "I-EVENT", "O", "O"]
    assert result.counts == {"EVENT": LabelCounts(accepted=1), "LOC": LabelCounts(replaced=1)}


def test_apply_overlaps_replace_relabels():
    result = _apply(_docs(), [_d(4, A, 14, 22, "GPE")], overlaps=Overlaps.REPLACE)
    assert _ents(result.docs[0]) == [("Alice", "PER"), ("New York", "GPE")]
    assert result.counts == {"GPE": LabelCounts(accepted=1), "LOC": LabelCounts(replaced=1)}


def test_apply_overlaps_keep_skips_the_decision():
    result = _apply(_docs(), [_d(4, A, 14, 17, "LOC"), _d(5, B, 0, 3, "PER")], overlaps=Overlaps.KEEP)
    assert _ents(result.docs[0]) == [("Alice", "PER"), ("New York", "LOC")]
    assert _ents(result.docs[1]) == [("Bob", "PER")]
    assert result.counts == {"LOC": LabelCounts(skipped=1), "PER": LabelCounts(accepted=1)}


def test_apply_reject_of_an_entity():
    decisions = [_d(7, A, 14, 22, "LOC", "reject")]
    with pytest.raises(ReviewConflict) as err:
        _apply(_docs(), decisions)
    assert str(err.value) == (
        f"review.jsonl, line 7 rejects 'New York' (LOC, characters 14-22), which is the entity of document 0 of "
        f"{CORPUS}: give --overlaps replace to remove it, or --overlaps keep to keep it and skip the decision"
    )
    replaced = _apply(_docs(), decisions, overlaps=Overlaps.REPLACE)
    assert _ents(replaced.docs[0]) == [("Alice", "PER")]
    assert _iob(replaced.docs[0]) == ["B-PER", "O", "O", "O", "O"]
    assert _group(replaced.docs[0]) == [(2, 4, "New York", "LOC")]
    assert replaced.counts == {"LOC": LabelCounts(rejected=1, replaced=1)}
    kept = _apply(_docs(), decisions, overlaps=Overlaps.KEEP)
    assert _ents(kept.docs[0]) == [("Alice", "PER"), ("New York", "LOC")]
    assert "incorrect_spans" not in kept.docs[0].spans
    assert kept.counts == {"LOC": LabelCounts(skipped=1)}
    # the same boundaries under another label are no entity: rejected freely
    other = _apply(_docs(), [_d(7, A, 14, 22, "ORG", "reject")])
    assert _ents(other.docs[0]) == [("Alice", "PER"), ("New York", "LOC")]
    assert _group(other.docs[0]) == [(2, 4, "New York", "ORG")]


@pytest.mark.parametrize("overlaps", list(Overlaps))
def test_apply_refuses_an_accept_and_a_reject_of_one_span(overlaps):
    with pytest.raises(ReviewConflict) as err:
        _apply(_docs(), [_d(7, B, 0, 3, "PER", "reject", source="b.jsonl"), _d(2, B, 0, 3, "PER", source="a.jsonl")], overlaps=overlaps)
    assert str(err.value) == (
        f"a.jsonl, line 2 accepts 'Bob' (PER, characters 0-3) and b.jsonl, line 7 rejects it "
        f"(document 1 of {CORPUS}): decide it once"
    )


@pytest.mark.parametrize("overlaps", list(Overlaps))
def test_apply_refuses_two_accepts_that_overlap(overlaps):
    with pytest.raises(ReviewConflict) as err:
        _apply(_docs(), [_d(3, B, 0, 9, "PER"), _d(5, B, 4, 14, "LOC", doc=1)], overlaps=overlaps)
    assert str(err.value) == (
        f"review.jsonl, line 3 accepts 'Bob likes' (PER, characters 0-9) and review.jsonl, line 5 accepts "
        f"'likes Rome' (LOC, characters 4-14), which overlap (document 1 of {CORPUS}): an entity has one span "
        "and one label, so accept one of them"
    )
    # nor two labels on one span
    with pytest.raises(ReviewConflict, match="line 3 accepts 'Bob' \\(PER.*line 4 accepts 'Bob' \\(ORG"):
        _apply(_docs(), [_d(3, B, 0, 3, "PER"), _d(4, B, 0, 3, "ORG")], overlaps=overlaps)


def test_apply_accept_of_a_span_marked_wrong():
    docs = _docs()
    docs[1].spans["incorrect_spans"] = [Span(docs[1], 2, 3, "LOC"), Span(docs[1], 0, 1, "ORG")]
    decisions = [_d(9, B, 10, 14, "LOC")]
    with pytest.raises(ReviewConflict) as err:
        _apply(docs, decisions)
    assert str(err.value).startswith(
        f"review.jsonl, line 9 accepts 'Rome' (LOC, characters 10-14), which doc.spans['incorrect_spans'] of "
        f"document 1 of {CORPUS} marks as wrong: give --overlaps replace to drop it from that group"
    )
    result = _apply(docs, decisions, overlaps=Overlaps.REPLACE)
    assert _ents(result.docs[1]) == [("Rome", "LOC")]
    assert _group(result.docs[1]) == [(0, 1, "Bob", "ORG")]
    assert result.counts == {"LOC": LabelCounts(accepted=1, replaced=1)}


def test_apply_with_spans_key():
    docs = _docs()
    # the gold group holds a span that doc.ents cannot (it overlaps an entity)
    docs[0].spans["sc"] = [Span(docs[0], 0, 1, "PER"), Span(docs[0], 2, 4, "LOC"), Span(docs[0], 1, 3, "ODD")]
    with pytest.raises(ReviewConflict, match=r"line 2 accepts 'visited' \(EVENT, characters 6-13\), which overlaps the span "
                       r"of doc.spans\['sc'\] 'visited New' \(ODD, characters 6-17\) of document 0"):
        _apply(docs, [_d(2, A, 6, 13, "EVENT")], spans_key="sc")
    result = _apply(docs, [_d(1, B, 0, 3, "PER"), _d(2, A, 14, 17, "LOC")], spans_key="sc", overlaps=Overlaps.REPLACE)
    a, b = result.docs
    assert _ents(a) == [("Alice", "PER"), ("New", "LOC")]
    assert _group(a, "sc") == [(0, 1, "Alice", "PER"), (2, 3, "New", "LOC")]
    assert _ents(b) == [("Bob", "PER")]
    assert _group(b, "sc") == [(0, 1, "Bob", "PER")]
    assert result.counts == {"LOC": LabelCounts(accepted=1, replaced=1), "ODD": LabelCounts(replaced=1), "PER": LabelCounts(accepted=1)}


def test_apply_rejected_key():
    result = _apply(_docs(), [_d(1, B, 0, 3, "LOC", "reject")], rejected_key="wrong")
    assert _group(result.docs[1], "wrong") == [(0, 1, "Bob", "LOC")]
    assert "incorrect_spans" not in result.docs[1].spans


def test_apply_matches_by_meta_doc_when_texts_repeat():
    docs = _docs()
    vocab = docs[0].vocab
    docs.append(Doc(vocab, words=["Bob", "likes", "Rome"], spaces=[True, True, False]))
    with pytest.raises(ReviewConflict) as err:
        _apply(docs, [_d(6, B, 0, 3, "PER")])
    assert str(err.value) == (
        f"review.jsonl, line 6: the text 'Bob likes Rome' is the text of 2 documents of {CORPUS} (1, 2): "
        'add "meta": {"doc": INDEX} to the task to say which'
    )
    result = _apply(docs, [_d(6, B, 0, 3, "PER", doc=2)])
    assert [_ents(doc) for doc in result.docs] == [[("Alice", "PER"), ("New York", "LOC")], [], [("Bob", "PER")]]


@pytest.mark.parametrize(
    "decision,message",
    [
        (_d(3, B, 0, 3, "PER", doc=2),
         f"review.jsonl, line 3: meta.doc 2 is no document of {CORPUS}, which has 2 (indices 0-1)"),
        (_d(3, B, 0, 3, "PER", doc=0),
         f"review.jsonl, line 3: its text 'Bob likes Rome' is not the text of document 0 of {CORPUS} (its meta.doc), "
         "'Alice visited New York.': was the review made on another corpus?"),
        (_d(3, "Bob likes Paris", 0, 3, "PER"),
         f"review.jsonl, line 3: the text 'Bob likes Paris' is in no document of {CORPUS}: was the review made on another corpus?"),
        (_d(3, A, 1, 9, "PER"),
         f"review.jsonl, line 3: characters 1-9 ('lice vis') do not fall on token boundaries of document 0 of {CORPUS}; "
         "the nearest tokens are 'Alice' (characters 0-5) and 'visited' (characters 6-13)"),
        (_d(3, A, 15, 17, "LOC", "reject"),
         f"review.jsonl, line 3: characters 15-17 ('ew') do not fall on token boundaries of document 0 of {CORPUS}; "
         "the nearest token is 'New' (characters 14-17)"),
    ],
)
def test_apply_refuses_a_decision_that_matches_no_document_or_tokens(decision, message):
    with pytest.raises(ReviewConflict) as err:
        _apply(_docs(), [_d(1, B, 0, 3, "PER"), decision])
    assert str(err.value) == message


def test_apply_ignored_decisions_are_not_matched():
    result = _apply(_docs(), [_d(1, "Some other text", 0, 4, "X", "ignore")])
    assert [_ents(doc) for doc in result.docs] == [[("Alice", "PER"), ("New York", "LOC")], []]
    assert result.counts == {"X": LabelCounts(ignored=1)}


# issue 43, M12: a decision's label is one of the corpus's, exactly


@pytest.mark.parametrize(
    "label,hint",
    [
        ("per", "; did you mean 'PER'? Labels must match exactly (case and spaces count)"),
        (" PER", "; did you mean 'PER'? Labels must match exactly (case and spaces count)"),
        ("PERS", "; the nearest is 'PER'"),
        ("EVENT", ""),
    ],
)
def test_check_labels_refuses_a_label_the_corpus_lacks(label, hint):
    decisions = [_d(1, B, 0, 3, "PER"), _d(2, B, 0, 3, label, "reject")]
    with pytest.raises(ReviewConflict) as err:
        check_labels(_docs(), decisions, corpus=CORPUS)
    assert str(err.value) == (
        f"review.jsonl, line 2: the label {label!r} (of 'Bob') is no label of {CORPUS}{hint}. Its labels (in doc.ents): "
        "'LOC', 'PER'; a review decides on these entity types, it adds none: correct the label in the decisions file"
    )


def test_check_labels_takes_the_gold_group_and_leaves_ignored_decisions():
    docs = _docs()
    docs[1].spans["sc"] = [Span(docs[1], 2, 3, "CITY")]
    decisions = [_d(1, B, 10, 14, "CITY"), _d(2, B, 0, 3, "person", "ignore")]
    check_labels(docs, decisions, corpus=CORPUS, spans_key="sc")
    with pytest.raises(ReviewConflict, match=r"line 1: the label 'CITY' \(of 'Rome'\) is no label of corpus.spacy. Its labels \(in doc.ents\)"):
        check_labels(docs, decisions, corpus=CORPUS)
    # a corpus without any entity
    blank = [Doc(Vocab(), words=["Bob", "likes", "Rome"], spaces=[True, True, False])]
    with pytest.raises(ReviewConflict) as err:
        check_labels(blank, decisions, corpus=CORPUS)
    assert str(err.value).endswith("is no label of corpus.spacy, which has no entity (in doc.ents): a review decides on the corpus's entity types, it adds none")


# issue 44, item 4: doc.spans["sc"] kept the old gold (81 entities, 79 "sc" spans)


def test_apply_keeps_a_group_that_mirrors_the_entities_equal_to_them():
    docs = _docs()
    for doc in docs:
        doc.spans["sc"] = list(doc.ents)
    docs[0].spans["sc"].attrs["source"] = "convert"
    # a group that is no copy of the entities: the masked ones of `mask`
    docs[0].spans["masked"] = [Span(docs[0], 1, 2, "EVENT")]
    result = _apply(docs, [
        _d(1, B, 0, 3, "PER"),
        _d(2, B, 10, 14, "LOC"),
        _d(3, A, 6, 13, "EVENT", "reject"),
        _d(4, A, 14, 22, "LOC", "reject"),
    ], overlaps=Overlaps.REPLACE)
    a, b = result.docs
    assert _ents(a) == [("Alice", "PER")] and _ents(b) == [("Bob", "PER"), ("Rome", "LOC")]
    for doc in result.docs:
        assert _group(doc, "sc") == [(e.start, e.end, e.text, e.label_) for e in doc.ents]
    assert a.spans["sc"].attrs == {"source": "convert"}
    assert _group(a, "masked") == [(1, 2, "visited", "EVENT")]
    assert _group(a) == [(1, 2, "visited", "EVENT"), (2, 4, "New York", "LOC")]
    assert result.mirrors == ["sc"]
    assert result.left_alone == {"masked": f"the entity 'Alice' (PER, characters 0-5) of document 0 of {CORPUS} is not in it"}
    # the documents given are left as they were
    assert _group(docs[1], "sc") == []


@pytest.mark.parametrize(
    "groups,reason",
    [
        ({1: []}, f"document 0 of {CORPUS} has entities and no such group"),
        ({0: [(0, 1, "PER"), (2, 4, "LOC"), (1, 2, "EVENT")]}, f"its span 'visited' (EVENT, characters 6-13) of document 0 of {CORPUS} is no entity"),
        ({0: [(0, 1, "PER"), (2, 4, "LOC"), (2, 4, "LOC")]}, f"it holds the entity 'New York' (LOC, characters 14-22) of document 0 of {CORPUS} twice"),
        ({0: [(0, 1, "PER"), (2, 4, "GPE")]}, f"the entity 'New York' (LOC, characters 14-22) of document 0 of {CORPUS} is not in it"),
    ],
    ids=["absent-where-entities-are", "a-span-more", "an-entity-twice", "another-label"],
)
def test_apply_leaves_a_group_that_is_no_mirror(groups, reason):
    # the group mirrors the entities in the other document: decided for the corpus
    docs = _docs()
    for i, spans in groups.items():
        docs[i].spans["gold"] = [Span(docs[i], start, end, label) for start, end, label in spans]
    result = _apply(docs, [_d(1, B, 0, 3, "PER")])
    assert (result.mirrors, result.left_alone) == ([], {"gold": reason})
    assert _ents(result.docs[1]) == [("Bob", "PER")]
    assert [_group(doc, "gold") if "gold" in doc.spans else None for doc in result.docs] == [
        _group(doc, "gold") if "gold" in doc.spans else None for doc in docs
    ]


def test_apply_mirrors_exclude_the_spans_key_and_rejected_groups_and_need_entities():
    docs = _docs()
    docs[1].spans["sc"] = []  # the --spans-key group, mirroring or not, follows the decisions as gold
    result = _apply(docs, [_d(1, B, 0, 3, "PER", "reject")], spans_key="sc")
    assert (result.mirrors, result.left_alone) == ([], {})
    # a group absent where there is no entity still mirrors
    docs = _docs()
    docs[0].spans["copy"] = list(docs[0].ents)
    result = _apply(docs, [_d(1, B, 0, 3, "PER")])
    assert result.mirrors == ["copy"] and _group(result.docs[1], "copy") == [(0, 1, "Bob", "PER")]
    # without any entity, an empty group mirrors nothing
    blank = [Doc(Vocab(), words=["Bob", "likes", "Rome"], spaces=[True, True, False])]
    blank[0].spans["empty"] = []
    result = _apply(blank, [_d(1, B, 0, 3, "PER")])
    assert (result.mirrors, result.left_alone) == ([], {"empty": f"{CORPUS} has no entity for it to copy"})
    assert _ents(result.docs[0]) == [("Bob", "PER")] and _group(result.docs[0], "empty") == []
