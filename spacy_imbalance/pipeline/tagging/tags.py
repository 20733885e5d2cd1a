"""Token tag schemes (BIO, BILUO) for token-classification NER: the tag
inventory, which tag may follow which, gold tag ids from an ``Example`` and
entity spans from decoded tag ids.

Tag id 0 is always ``O``, the majority class: the losses of
``spacy_imbalance.losses`` (MoM, focal's alpha) rely on that convention.
"""
from typing import Dict, List, Literal, Sequence, Tuple, Union

import numpy
from spacy.tokens import Doc, Span
from spacy.training import Example
from thinc.types import Ints1d

TagScheme = Literal["BIO", "BILUO"]
TAG_SCHEMES: Tuple[str, ...] = ("BIO", "BILUO")
MISSING = -1


def validate_scheme(scheme: str) -> None:
    if scheme not in TAG_SCHEMES:
        raise ValueError(f"tag_scheme must be one of {', '.join(TAG_SCHEMES)}, got {scheme!r}")


def check_label(label: str, component: str) -> None:
    """A label becomes part of tag names like ``B-LABEL``: no spaces, not empty."""
    if not isinstance(label, str) or not label or label != label.strip() or " " in label:
        raise ValueError(f"{component!r}: a label is a non-empty string without spaces, got {label!r}")


def tag_names(labels: Sequence[str], scheme: TagScheme) -> List[str]:
    """``["O", "B-A", "I-A", "B-B", ...]`` (BIO) or with ``L-``/``U-`` (BILUO)."""
    validate_scheme(scheme)
    prefixes = "BI" if scheme == "BIO" else "BILU"
    return ["O"] + [f"{p}-{label}" for label in labels for p in prefixes]


def transition_masks(tags: Sequence[str], scheme: TagScheme) -> Tuple[numpy.ndarray, numpy.ndarray, numpy.ndarray]:
    """Boolean masks of valid sequences: ``start[j]`` (tag j may open a
    sentence), ``trans[i, j]`` (tag j may follow tag i) and ``end[i]`` (tag i
    may close one). In BIO an ``I-X`` only continues ``B-X``/``I-X``; in BILUO
    an entity opened by ``B-X`` must run through ``I-X`` to ``L-X``."""
    validate_scheme(scheme)
    prefix = numpy.array([t[0] for t in tags])
    label = numpy.array([t[2:] for t in tags])
    same_label = label[:, None] == label[None, :]
    if scheme == "BIO":
        is_inside = prefix == "I"
        # I-X only after B-X or I-X; anything else may follow anything
        may_continue = numpy.isin(prefix, ["B", "I"])[:, None] & same_label
        trans = numpy.where(is_inside[None, :], may_continue, True)
        return ~is_inside, trans, numpy.ones(len(tags), dtype=bool)
    is_open = numpy.isin(prefix, ["B", "I"])  # an entity is running after these
    is_continuation = numpy.isin(prefix, ["I", "L"])
    trans = numpy.where(
        is_open[:, None], is_continuation[None, :] & same_label, ~is_continuation[None, :]
    )
    return ~is_continuation, trans, ~is_open


def gold_tag_ids(example: Example, tag_index: Dict[str, int], scheme: TagScheme) -> numpy.ndarray:
    """One tag id per token of ``example.predicted``; ``MISSING`` (-1) where the
    reference has no annotation (``ent_iob`` unset) or its tokens do not align.
    A label the component does not know is an error, not a silent ``O``."""
    ids = numpy.full(len(example.predicted), MISSING, dtype="int32")
    for i, tag in enumerate(example.get_aligned_ner()):
        if tag is None or tag in ("-", ""):
            continue
        if scheme == "BIO" and tag[0] in "LU":
            tag = ("I-" if tag[0] == "L" else "B-") + tag[2:]
        if tag not in tag_index:
            raise ValueError(
                f"Gold entity label {tag[2:]!r} is not among the component's labels "
                f"({', '.join(sorted({t[2:] for t in tag_index if t != 'O'}))}); "
                "pass every label to initialize (e.g. [initialize.components.token_ner.labels])."
            )
        ids[i] = tag_index[tag]
    return ids


def tag_spans(doc: Doc, tag_ids: Union[Ints1d, Sequence[int]], tags: Sequence[str]) -> List[Span]:
    """Entity spans of a valid tag sequence (as produced by the constrained
    decoder). A mention starts at ``B-``/``U-`` and ends before the next tag
    that does not continue it."""
    spans: List[Span] = []
    start, current = -1, ""
    for i, tag_id in enumerate(tag_ids):
        tag = tags[int(tag_id)]
        if tag[0] in "IL" and current == tag[2:]:
            continue
        if current:
            spans.append(Span(doc, start, i, label=current))
        start, current = (i, tag[2:]) if tag != "O" else (-1, "")
    if current:
        spans.append(Span(doc, start, len(tag_ids), label=current))
    return spans
