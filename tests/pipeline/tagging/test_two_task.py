"""The two-task reformulation's pure functions: the output column layout, the
binary targets built from gold entities, Algorithm 1 (``decide``), the decoding
of B/I/O decisions into entities and the type head's span typing."""
import numpy
import pytest
import spacy
from spacy.tokens import Doc
from spacy.training import Example

from spacy_imbalance.pipeline.tagging.two_task import (
    MISSING,
    HeadLayout,
    decide,
    decisions_to_spans,
    token_targets,
    type_spans,
    validate_typing,
)

O, B, I = 0, 1, 2
M = MISSING
THREE_LABELS = ["LOC", "ORG", "PER"]
# Kate Bush is a multi-token entity, Paris a single-token one, visits is O and
# today has no annotation at all.
WORDS = ["Kate", "Bush", "visits", "Paris", "today"]
GOLD_ENTS = ["B-PER", "I-PER", "O", "B-LOC", ""]


@pytest.fixture(scope="module")
def vocab():
    return spacy.blank("en").vocab


@pytest.fixture(scope="module")
def example(vocab):
    return Example(Doc(vocab, words=WORDS), Doc(vocab, words=WORDS, ents=GOLD_ENTS))


# (typing, n_pairs, n_tasks, tasks, types, n_bio, bio, width) with K = 3 types
LAYOUTS = [
    ("untyped", 1, 2, slice(0, 2), slice(2, 2), 3, slice(2, 5), 5),
    ("one_vs_all", 3, 6, slice(0, 6), slice(6, 6), 7, slice(6, 13), 13),
    ("type_head", 1, 2, slice(0, 2), slice(2, 5), 7, slice(5, 12), 12),
]


@pytest.mark.parametrize("typing,n_pairs,n_tasks,tasks,types,n_bio,bio,width", LAYOUTS)
def test_head_layout_columns_with_three_types(typing, n_pairs, n_tasks, tasks, types, n_bio, bio, width):
    layout = HeadLayout(typing, 3)
    assert layout.n_pairs == n_pairs
    assert layout.n_tasks == n_tasks
    assert layout.tasks == tasks
    assert layout.types == types
    assert layout.n_bio == n_bio
    assert layout.bio == bio
    assert layout.width == width


def test_validate_typing_names_the_choices():
    for typing in ("untyped", "one_vs_all", "type_head"):
        validate_typing(typing)
    with pytest.raises(ValueError, match="typing must be one of untyped, one_vs_all, type_head"):
        validate_typing("softmax")


# Per typing (labels LOC=0, ORG=1, PER=2): the task matrix, the type ids and the
# BIO ids (0 O, 1 + 2k B, 2 + 2k I) of Kate Bush visits Paris today.
TARGETS = {
    # columns: en, be
    "untyped": (
        [[1, 1], [1, 0], [0, 0], [1, 1], [M, M]],
        [M, M, M, M, M],
        [1, 2, 0, 1, M],
    ),
    # columns: en_LOC en_ORG en_PER be_LOC be_ORG be_PER
    "one_vs_all": (
        [
            [0, 0, 1, 0, 0, 1],
            [0, 0, 1, 0, 0, 0],
            [0, 0, 0, 0, 0, 0],
            [1, 0, 0, 1, 0, 0],
            [M, M, M, M, M, M],
        ],
        [M, M, M, M, M],
        [5, 6, 0, 1, M],
    ),
    "type_head": (
        [[1, 1], [1, 0], [0, 0], [1, 1], [M, M]],
        [2, 2, M, 0, M],
        [5, 6, 0, 1, M],
    ),
}


@pytest.mark.parametrize("typing", sorted(TARGETS))
def test_token_targets_exact(example, typing):
    tasks, types, bio = token_targets(example, THREE_LABELS, HeadLayout(typing, 3))
    expected_tasks, expected_types, expected_bio = TARGETS[typing]
    assert tasks.tolist() == expected_tasks
    assert types.tolist() == expected_types
    assert bio.tolist() == expected_bio


@pytest.mark.parametrize("typing", ["one_vs_all", "type_head"])
def test_token_targets_unknown_label_is_an_error_when_typed(example, typing):
    with pytest.raises(ValueError, match="'PER' is not among the component's labels"):
        token_targets(example, ["LOC"], HeadLayout(typing, 1))


def test_token_targets_untyped_ignores_the_label(example):
    tasks, _, bio = token_targets(example, ["LOC"], HeadLayout("untyped", 1))
    assert tasks.tolist() == TARGETS["untyped"][0]
    assert bio.tolist() == TARGETS["untyped"][2]


UNTYPED = HeadLayout("untyped", 1)


@pytest.mark.parametrize(
    "en,be,tag",
    [
        (0.9, 0.9, B),  # en & be -> B
        (0.9, 0.1, I),  # en & not be -> I
        (0.1, 0.9, O),  # not en & be: the paper's inconsistent case -> O
        (0.1, 0.1, O),
    ],
)
def test_algorithm_1_truth_table(en, be, tag):
    tags, pairs = decide(numpy.asarray([[en, be]]), UNTYPED, 0.5, 0.5)
    assert tags.tolist() == [tag]
    assert pairs.tolist() == [0]


def test_algorithm_1_on_a_sequence():
    h = numpy.asarray([[0.9, 0.9], [0.9, 0.1], [0.1, 0.9], [0.1, 0.1]])
    tags, _ = decide(h, UNTYPED, 0.5, 0.5)
    assert tags.tolist() == [B, I, O, O]


def test_thresholds_are_inclusive():
    h = numpy.asarray([[0.5, 0.5], [0.5, 0.25], [0.25, 0.5]])
    tags, _ = decide(h, UNTYPED, 0.5, 0.5)
    assert tags.tolist() == [B, I, O]
    # just below the threshold is a no
    below = numpy.nextafter(0.5, 0.0)
    tags, _ = decide(numpy.asarray([[below, 0.5], [0.5, below]]), UNTYPED, 0.5, 0.5)
    assert tags.tolist() == [O, I]


def test_thresholds_are_configurable():
    h = numpy.asarray([[0.9, 0.9], [0.3, 0.3], [0.3, 0.2]])
    assert decide(h, UNTYPED, 0.5, 0.5)[0].tolist() == [B, O, O]
    assert decide(h, UNTYPED, 0.25, 0.25)[0].tolist() == [B, B, I]
    assert decide(h, UNTYPED, 0.95, 0.5)[0].tolist() == [O, O, O]
    assert decide(h, UNTYPED, 0.5, 0.95)[0].tolist() == [I, O, O]


def test_decide_on_no_tokens():
    tags, pairs = decide(numpy.zeros((0, 2)), UNTYPED, 0.5, 0.5)
    assert tags.shape == (0,) and pairs.shape == (0,)


TWO_TYPES = HeadLayout("one_vs_all", 2)
PAIR_LABELS = ["LOC", "PER"]
# columns: en_LOC en_PER be_LOC be_PER
ONE_VS_ALL_H = numpy.asarray(
    [
        [0.1, 0.2, 0.9, 0.9],  # 0: O (no entity score above 0.5; the begin scores don't matter)
        [0.9, 0.1, 0.1, 0.9],  # 1: I-LOC after O: opens a LOC entity (be_PER is not LOC's)
        [0.8, 0.3, 0.2, 0.2],  # 2: I-LOC continues it
        [0.3, 0.7, 0.9, 0.2],  # 3: I-PER after LOC: opens a PER entity
        [0.1, 0.9, 0.1, 0.8],  # 4: B-PER right after PER: a new, adjacent entity
        [0.6, 0.7, 0.9, 0.1],  # 5: both above threshold, PER is higher: I-PER continues
        [0.2, 0.1, 0.1, 0.1],  # 6: O
        [0.7, 0.2, 0.6, 0.1],  # 7: B-LOC, open at the end of the doc
    ]
)


def test_one_vs_all_decisions_take_the_highest_entity_score():
    tags, pairs = decide(ONE_VS_ALL_H, TWO_TYPES, 0.5, 0.5)
    assert tags.tolist() == [O, I, I, I, B, I, O, B]
    entity = tags > 0
    assert pairs[entity].tolist() == [0, 0, 1, 1, 1, 0]


def test_one_vs_all_decoding(vocab):
    doc = Doc(vocab, words=[f"w{i}" for i in range(len(ONE_VS_ALL_H))])
    tags, pairs = decide(ONE_VS_ALL_H, TWO_TYPES, 0.5, 0.5)
    spans = decisions_to_spans(doc, tags, pairs, PAIR_LABELS)
    assert spans == [(1, 3, "LOC"), (3, 4, "PER"), (4, 6, "PER"), (7, 8, "LOC")]


@pytest.mark.parametrize(
    "tags,pairs,expected",
    [
        ([O, O, O], [0, 0, 0], []),
        ([I, I, I], [0, 0, 0], [(0, 3, "LOC")]),
        ([B, B, B], [1, 1, 1], [(0, 1, "PER"), (1, 2, "PER"), (2, 3, "PER")]),
        ([I, O, I], [1, 0, 1], [(0, 1, "PER"), (2, 3, "PER")]),
        ([B, I, I], [0, 1, 0], [(0, 1, "LOC"), (1, 2, "PER"), (2, 3, "LOC")]),
        ([O, B, I], [1, 1, 1], [(1, 3, "PER")]),
    ],
)
def test_decisions_to_spans_cases(vocab, tags, pairs, expected):
    doc = Doc(vocab, words=["a", "b", "c"])
    assert decisions_to_spans(doc, numpy.asarray(tags), numpy.asarray(pairs), PAIR_LABELS) == expected


def test_type_spans_sums_log_probabilities():
    labels = ["LOC", "PER"]
    probs = numpy.asarray(
        [
            [0.9, 0.1],  # span 1: two tokens lean LOC (so the per-token majority,
            [0.9, 0.1],  # the first token and the summed probabilities say LOC)
            [0.0001, 0.9999],  # but one token all but rules LOC out
            [0.7, 0.3],  # span 2: LOC
            [0.000001, 0.999999],  # outside every span: must not count
        ]
    )
    log_probs = numpy.log(probs)
    spans = [(0, 3, "ENTITY"), (3, 4, "ENTITY")]
    # the alternatives would pick LOC for the first span
    assert probs[0:3].argmax(axis=1).tolist() == [0, 0, 1]
    assert probs[0:3].sum(axis=0).argmax() == 0
    assert type_spans(spans, log_probs, labels) == [(0, 3, "PER"), (3, 4, "LOC")]


def test_type_spans_keeps_the_boundaries_and_no_spans():
    log_probs = numpy.log(numpy.full((3, 2), 0.5))
    assert type_spans([], log_probs, ["LOC", "PER"]) == []
    assert [(s, e) for s, e, _ in type_spans([(1, 3, "X")], log_probs, ["LOC", "PER"])] == [(1, 3)]
