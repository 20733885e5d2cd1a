"""A corpus split into parts that each annotate some entity types: the
benchmark of label scopes (issue 47) made from one fully annotated corpus.

Each document goes to one part (shuffled with a seed, dealt in turn, so the
parts differ in size by at most one document); in its part it keeps the
entities of that part's types and loses the others, which become plain text
("no entity"), as in a corpus that was never annotated for them. The parts
carry their scope; their concatenation without scopes is the naive merge
every spaCy pipeline would train on.
"""
import random
from typing import List, Sequence, Tuple

from spacy.tokens import Doc

from ..span_groups import drop_from_span_groups, span_key
from .scopes import SCOPE_KEY, check_scope_labels, set_label_scope

__all__ = ["check_groups", "split_by_types"]


def check_groups(groups: Sequence[Sequence[str]], labels: Sequence[str]) -> List[Tuple[str, ...]]:
    """The groups as sorted tuples; a ValueError naming the problem when a
    group is no scope, a type is in two groups, or a group names a type the
    corpus lacks. Types in no group are dropped from every part (said by the
    caller): a split may study fewer types than the corpus has."""
    if len(groups) < 2:
        raise ValueError(f"a split needs at least two groups of types, got {len(groups)}")
    checked = [tuple(sorted(check_scope_labels(group))) for group in groups]
    seen: dict = {}
    for index, group in enumerate(checked):
        for label in group:
            if label in seen:
                raise ValueError(f"{label!r} is in groups {seen[label] + 1} and {index + 1}: each type belongs to one group")
            seen[label] = index
    unknown = sorted(set(seen) - set(labels))
    if unknown:
        raise ValueError(f"no entity of type {', '.join(repr(u) for u in unknown)} in the corpus (its types: {', '.join(sorted(labels))})")
    return checked


def split_by_types(docs: Sequence[Doc], groups: Sequence[Tuple[str, ...]], seed: int) -> List[List[Doc]]:
    """One list of documents per group: copies of the input documents (never
    changed), dealt after a seeded shuffle, each keeping only its group's
    entities and carrying the group as its label scope."""
    order = list(range(len(docs)))
    random.Random(seed).shuffle(order)
    parts: List[List[Doc]] = [[] for _ in groups]
    for position, index in enumerate(order):
        part = position % len(groups)
        doc = docs[index].copy()
        doc.user_data.pop(SCOPE_KEY, None)
        # as masking does: the removed entities leave every span group too (spancat trains on "sc")
        removed = {span_key(ent) for ent in doc.ents if ent.label_ not in groups[part]}
        # the setter makes every token outside the kept entities "O": unannotated text
        doc.ents = [ent for ent in doc.ents if ent.label_ in groups[part]]
        drop_from_span_groups(doc, removed)
        set_label_scope(doc, groups[part])
        parts[part].append(doc)
    return parts

