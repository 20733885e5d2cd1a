"""The label scope of a document: which entity types were annotated in it.

A corpus annotated for people and organisations says nothing about products:
a product in it is unannotated, not "no entity". The scope records that, so
that training can treat an unannotated span or token of a scoped document as
"no entity or any type outside the scope" (``spacy_imbalance.losses.partial``).
No scope means every type was annotated: today's behaviour.

The scope lives in ``doc.user_data[SCOPE_KEY]`` as a sorted list of labels,
which a ``DocBin(store_user_data=True)`` keeps in a ``.spacy`` file (msgpack
gives it back as a tuple). Two things drop it, as they drop all user data:
``Span.as_doc()`` (so spaCy's ``Corpus`` with ``max_length`` or
``gold_preproc``, and sentence splitting) and a ``DocBin`` written without
``store_user_data``. ``ScopedCorpus.v1`` therefore sets the scope on the
examples it yields, last.
"""
from collections import Counter
from typing import AbstractSet, Collection, FrozenSet, Iterable, List, Optional, Tuple

from spacy.tokens import Doc, Span

__all__ = ["SCOPE_KEY", "check_scope_labels", "set_label_scope", "get_label_scope", "out_of_scope_spans", "scope_problem"]

# namespaced: user_data is shared with spaCy's extension attributes and other plugins
SCOPE_KEY = "spacy-imbalance.label_scope"


def check_scope_labels(labels: Iterable[str]) -> FrozenSet[str]:
    """The labels as a scope; a ValueError naming the bad ones when there are
    none, or one is not a non-empty string without spaces (labels become tag
    names like ``B-LABEL``), or one is repeated (a typo a set would hide)."""
    if isinstance(labels, (str, bytes)):
        # a bare "PER" would iterate to the scope {"P", "E", "R"}
        raise ValueError(f"a label scope is a list of labels, got the string {labels!r}: write [{labels!r}]")
    given: List[object] = list(labels)
    if not given:
        raise ValueError("a label scope needs at least one label, got none")
    bad = [label for label in given if not isinstance(label, str) or not label or label != label.strip() or " " in label]
    if bad:
        raise ValueError(f"a label is a non-empty string without spaces, got {', '.join(repr(b) for b in bad)}")
    names = [label for label in given if isinstance(label, str)]  # all of them, checked above
    repeated = sorted(label for label, count in Counter(names).items() if count > 1)
    if repeated:
        raise ValueError(f"a label scope names each label once, got {', '.join(repr(r) for r in repeated)} more than once")
    return frozenset(names)


def set_label_scope(doc: Doc, labels: Collection[str]) -> None:
    """Record that ``doc`` annotates the entity types ``labels`` (checked by
    ``check_scope_labels``), replacing any scope it had."""
    doc.user_data[SCOPE_KEY] = sorted(check_scope_labels(labels))


def get_label_scope(doc: Doc) -> Optional[FrozenSet[str]]:
    """The entity types annotated in ``doc``, or None when it has no scope
    (every type annotated). A stored value that is no scope (a damaged or
    foreign ``.spacy`` file) is a ValueError, not a guess."""
    stored = doc.user_data.get(SCOPE_KEY)
    if stored is None:
        return None
    if not isinstance(stored, (list, tuple)):
        raise ValueError(f"doc.user_data[{SCOPE_KEY!r}] holds {stored!r}, not a label scope (a list of labels)")
    try:
        return check_scope_labels(stored)
    except ValueError as err:
        raise ValueError(f"doc.user_data[{SCOPE_KEY!r}] holds {list(stored)!r}, not a label scope: {err}") from None


def out_of_scope_spans(doc: Doc, scope: AbstractSet[str], spans_key: Optional[str] = None) -> List[Tuple[str, Span]]:
    """The annotated entities of ``doc`` whose type is outside ``scope``, each
    with where it is ("doc.ents" or "doc.spans[KEY]"): in ``doc.ents``, and in
    ``doc.spans[spans_key]`` when a key is given (the gold of span
    components). Either contradicts the scope."""
    annotated = [("doc.ents", span) for span in doc.ents]
    if spans_key is not None and spans_key in doc.spans:
        annotated += [(f"doc.spans[{spans_key!r}]", span) for span in doc.spans[spans_key]]
    return [(where, span) for where, span in annotated if span.label_ not in scope]


def scope_problem(doc: Doc, scope: AbstractSet[str], spans_key: Optional[str] = None) -> Optional[str]:
    """Why ``doc`` cannot take ``scope``, or None: an annotated entity of a
    type outside it, or a different (or damaged) scope already stored in
    the doc (a scope is never overwritten silently)."""
    try:
        stored = get_label_scope(doc)
    except ValueError as err:
        return str(err)  # the caller names the file and the document
    if stored is not None and stored != scope:
        return f"it already has the label scope {sorted(stored)}, not {sorted(scope)}"
    outside = out_of_scope_spans(doc, scope, spans_key)
    if not outside:
        return None
    where, span = outside[0]
    more = f" (and {len(outside) - 1} more)" if len(outside) > 1 else ""
    return (
        f"the entity {span.text!r} (tokens {span.start}-{span.end}, in {where}) has the label {span.label_!r}, "
        f"outside the label scope {sorted(scope)}{more}; add the label to the scope or remove the entity"
    )
