"""The label scopes of a batch of span candidates (``spacy_imbalance.corpus.scopes``):
which documents annotate only some entity types, and what the loss needs to
know of the candidates it trains on.

A candidate of a scoped document that is not annotated as an entity (a
sampled negative, a masked entity drawn as one) may be "no entity" or any
type outside the scope: ``sampled_spancat`` trains it towards their summed
probability (``losses.scoped.scoped_loss``). A gold span is its own class
alone, and a known negative (a reviewer's rejection) stays "no entity"
whatever the scope. The columns outside each document's scope
(``SpanTargets.out_of_scope``) come from ``losses.partial.scope_rows``.
"""
from typing import FrozenSet, Iterable, List, Optional, Sequence, Set, Tuple, cast

import numpy
from spacy.training import Example
from thinc.api import Ops
from thinc.types import Ints1d

from ..corpus.scopes import get_label_scope, scope_problem
from .gold import SpanTargets

__all__ = ["batch_scopes", "training_scopes", "selected_rows"]


def batch_scopes(examples: Sequence[Example], gold_key: Optional[str], owner: str) -> List[Optional[FrozenSet[str]]]:
    """The label scope of each example's reference (None: every type
    annotated). A gold span of a type outside its document's scope (in
    doc.ents, or in doc.spans[gold_key]) is a ValueError naming ``owner``,
    the example of the batch and the span: the document contradicts its
    scope, which ``ScopedCorpus.v1`` refuses too, and training either way
    would be a guess."""
    scopes: List[Optional[FrozenSet[str]]] = []
    for i, eg in enumerate(examples):
        scope = get_label_scope(eg.reference)
        problem = None if scope is None else scope_problem(eg.reference, scope, gold_key)
        if problem is not None:
            raise ValueError(f"{owner}: example {i} of the batch: {problem}")
        scopes.append(scope)
    return scopes


def training_scopes(examples: Iterable[Example]) -> Set[FrozenSet[str]]:
    """The distinct label scopes of the references of ``examples``."""
    scopes = (get_label_scope(eg.reference) for eg in examples)
    return {scope for scope in scopes if scope is not None}


def selected_rows(ops: Ops, targets: SpanTargets, selected: Ints1d) -> Tuple[Ints1d, Optional[numpy.ndarray], numpy.ndarray]:
    """On the host, for the candidates ``selected`` (an update's, in the
    order of its logits' rows): their gold classes, whether each is a known
    negative (None: no example has any) and their columns outside the scope
    (``targets.out_of_scope``, which must be set). One copy from the device."""
    if targets.out_of_scope is None:
        raise ValueError("selected_rows needs targets whose out_of_scope is set (a batch with a scope that leaves a type out)")
    xp = ops.xp
    parts = [selected.astype("int32"), targets.classes[selected].astype("int32")]
    if targets.known is not None:
        parts.append(targets.known[selected].astype("int32"))
    host = ops.to_numpy(xp.stack(parts))
    known = host[2].astype(bool) if targets.known is not None else None
    # the classes: a 1-d int32 array on the host, which Ints1d describes
    return cast(Ints1d, host[1]), known, targets.out_of_scope[host[0]]

