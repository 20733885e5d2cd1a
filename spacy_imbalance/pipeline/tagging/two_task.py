"""The NER two-task reformulation (AUC maximization paper, Fig. 2 and
Algorithm 1): which output column is which head, the targets built from
gold entities (``TwoTaskTargets``), the sigmoid of the task scores and the
decoding of entity/begin decisions into entities.

Typing (``typing``):

* ``"untyped"`` - the paper's 2T: one entity-token task and one begin-token
  task; every entity gets the single label of the component.
* ``"one_vs_all"`` - an entity/begin pair per type (tasks ``en_1..en_K``,
  ``be_1..be_K``). A token is an entity token of the type with the highest
  entity score among those at or above the threshold.
* ``"type_head"`` - untyped 2T plus a softmax type head trained with cross
  entropy on entity tokens; a decoded entity takes the type with the highest
  summed log-probability over its tokens.
"""
from dataclasses import dataclass
from typing import Any, List, Literal, NamedTuple, Sequence, Tuple

import numpy
from spacy.tokens import Doc, Span
from spacy.training import Example

Typing = Literal["untyped", "one_vs_all", "type_head"]
TYPINGS: Tuple[str, ...] = ("untyped", "one_vs_all", "type_head")
MISSING = -1


@dataclass(frozen=True)
class HeadLayout:
    """Column ranges of the output layer: binary tasks (entity tasks first,
    then begin tasks), the type head and the BIO head."""

    typing: str
    n_types: int

    @property
    def n_pairs(self) -> int:
        return self.n_types if self.typing == "one_vs_all" else 1

    @property
    def n_tasks(self) -> int:
        return 2 * self.n_pairs

    @property
    def tasks(self) -> slice:
        return slice(0, self.n_tasks)

    @property
    def types(self) -> slice:
        width = self.n_types if self.typing == "type_head" else 0
        return slice(self.n_tasks, self.n_tasks + width)

    @property
    def n_bio(self) -> int:
        # O plus B-/I- per label the component writes
        return 1 + 2 * (1 if self.typing == "untyped" else self.n_types)

    @property
    def bio(self) -> slice:
        return slice(self.types.stop, self.types.stop + self.n_bio)

    @property
    def width(self) -> int:
        return self.bio.stop


class TwoTaskTargets(NamedTuple):
    """One doc's targets per token (``token_targets``)."""

    tasks: numpy.ndarray  # n_tokens x n_tasks: 1/0, MISSING where the gold is missing
    types: numpy.ndarray  # the gold type of entity tokens, else MISSING
    bio: numpy.ndarray  # 0 for O, 1 + 2k for B, 2 + 2k for I (k = 0 untyped); MISSING where missing

    def all_missing(self) -> "TwoTaskTargets":
        """The same shapes, every target missing (a held-out doc's)."""
        return TwoTaskTargets(*(numpy.full_like(t, MISSING) for t in self))


def sigmoid(xp: Any, x: Any) -> Any:
    """The tasks' scores from their logits, with ``xp`` the logits' module."""
    # the tanh form never overflows, unlike 1 / (1 + exp(-x)) for x < -88
    return 0.5 * (1.0 + xp.tanh(0.5 * x))


def validate_typing(typing: str) -> None:
    if typing not in TYPINGS:
        raise ValueError(f"typing must be one of {', '.join(TYPINGS)}, got {typing!r}")


def token_targets(example: Example, labels: Sequence[str], layout: HeadLayout) -> TwoTaskTargets:
    """Targets per token of ``example.predicted``:

    * tasks (n_tokens x n_tasks): 1/0, ``MISSING`` where the gold is missing;
    * type ids (n_tokens): the gold type of entity tokens, else ``MISSING``;
    * BIO ids (n_tokens): 0 for O, 1 + 2k for B, 2 + 2k for I (k = 0 untyped).
    """
    n = len(example.predicted)
    tasks = numpy.full((n, layout.n_tasks), MISSING, dtype="int32")
    types = numpy.full(n, MISSING, dtype="int32")
    bio = numpy.full(n, MISSING, dtype="int32")
    type_index = {label: k for k, label in enumerate(labels)}
    for i, tag in enumerate(example.get_aligned_ner()):
        if tag is None or tag in ("-", ""):
            continue
        tasks[i] = 0
        if tag == "O":
            bio[i] = 0
            continue
        label = tag[2:]
        if label not in type_index and layout.typing != "untyped":
            raise ValueError(
                f"Gold entity label {label!r} is not among the component's labels "
                f"({', '.join(labels)}); pass every label to initialize."
            )
        k = type_index.get(label, 0)
        pair = k if layout.typing == "one_vs_all" else 0
        begins = tag[0] in "BU"
        tasks[i, pair] = 1
        tasks[i, layout.n_pairs + pair] = int(begins)
        if layout.typing == "type_head":
            types[i] = k
        bio_type = 0 if layout.typing == "untyped" else k
        bio[i] = 1 + 2 * bio_type + (0 if begins else 1)
    return TwoTaskTargets(tasks, types, bio)


def decide(h: numpy.ndarray, layout: HeadLayout, en_threshold: float, be_threshold: float) -> Tuple[numpy.ndarray, numpy.ndarray]:
    """Algorithm 1 per token: (tag, pair) where tag is 0 = O, 1 = B, 2 = I.
    en & be -> B, en & not be -> I, otherwise O. With several entity tasks
    (one-vs-all) the token belongs to the pair with the highest entity score
    among those at or above ``en_threshold``."""
    en = h[:, : layout.n_pairs]
    be = h[:, layout.n_pairs : layout.n_tasks]
    pair = en.argmax(axis=1) if len(h) else numpy.zeros(0, dtype="int64")
    rows = numpy.arange(len(h))
    is_entity = en[rows, pair] >= en_threshold
    begins = be[rows, pair] >= be_threshold
    tag = numpy.where(is_entity, numpy.where(begins, 1, 2), 0)
    return tag.astype("int32"), pair.astype("int32")


def decisions_to_spans(doc: Doc, tags: numpy.ndarray, pairs: numpy.ndarray, pair_labels: Sequence[str]) -> List[Tuple[int, int, str]]:
    """Entities from per-token B/I/O decisions: B opens an entity; I continues
    the open entity of its type, and otherwise opens one (an I after O is read
    as in conlleval/seqeval's default mode, not dropped)."""
    spans: List[Tuple[int, int, str]] = []
    start, label = -1, ""
    for i, (tag, pair) in enumerate(zip(tags.tolist(), pairs.tolist())):
        current = pair_labels[pair] if tag else ""
        if tag == 2 and label == current:
            continue
        if label:
            spans.append((start, i, label))
        start, label = (i, current) if tag else (-1, "")
    if label:
        spans.append((start, len(tags), label))
    return spans


def type_spans(spans: List[Tuple[int, int, str]], type_log_probs: numpy.ndarray, labels: Sequence[str]) -> List[Tuple[int, int, str]]:
    """The type head's label for each untyped span: the highest summed
    log-probability over the span's tokens."""
    return [(s, e, labels[int(type_log_probs[s:e].sum(axis=0).argmax())]) for s, e, _ in spans]


def make_spans(doc: Doc, spans: List[Tuple[int, int, str]]) -> List[Span]:
    return [Span(doc, s, e, label=label) for s, e, label in spans]
