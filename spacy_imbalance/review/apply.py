"""Reviewed decisions applied to a corpus: each decision is matched to its
document, and the accepted spans become entities while the rejected ones
go to a span group of known-wrong spans (spaCy's ``incorrect_spans_key``).

Pure functions on Docs: the documents given are left as they are, and the
new ones come back with the counts per label. A decision the corpus cannot
take raises a ``ReviewConflict`` naming the file and line (or task).

A span group that mirrors the entities (holds exactly the spans of
``doc.ents`` in every document, as ``convert --spans-key`` and ``mask``
keep "sc") is kept equal to them, so that a spancat trained on it trains on
the reviewed gold; any other group but ``spans_key`` and ``rejected_key``
is left as it was, and the result says why it is no mirror.
"""
import difflib
from collections import Counter, defaultdict
from dataclasses import dataclass, field, fields
from enum import Enum
from typing import Dict, Iterable, List, Optional, Sequence, Set, Tuple

from spacy.tokens import Doc, Span, SpanGroup, Token

from .decisions import Decision

REJECTED_KEY = "incorrect_spans"

# a span of a document in token indices: (start, end exclusive, label)
SpanKey = Tuple[int, int, str]


class Overlaps(str, Enum):
    """What an accepted span that overlaps an existing entity (or a rejected
    span identical to one) does: stop with a message, drop the entity, or
    leave the entity and skip the decision."""

    REFUSE = "refuse"
    REPLACE = "replace"
    KEEP = "keep"


class ReviewConflict(ValueError):
    """A decision that does not fit the corpus or another decision."""


@dataclass
class LabelCounts:
    """What the decisions of one label did. ``accepted``: new entities;
    ``unchanged``: decisions that changed nothing (the entity or rejected
    span was there already, or a decision given twice); ``rejected``: new
    known-wrong spans; ``ignored``: decisions the reviewer skipped;
    ``replaced``: entities (and rejected spans) of the corpus that a
    decision removed, under their own label; ``skipped``: decisions that
    ``Overlaps.KEEP`` set aside for an existing entity."""

    accepted: int = 0
    unchanged: int = 0
    rejected: int = 0
    ignored: int = 0
    replaced: int = 0
    skipped: int = 0


COUNT_COLUMNS = tuple(f.name for f in fields(LabelCounts))


@dataclass
class ReviewResult:
    """The reviewed documents and what the decisions did, per label.
    ``mirrors``: the span groups kept equal to ``doc.ents``; ``left_alone``:
    the other span groups (but ``spans_key`` and ``rejected_key``), left as
    they were, each with why it is no mirror of the entities."""

    docs: List[Doc]
    counts: Dict[str, LabelCounts]
    mirrors: List[str] = field(default_factory=list)
    left_alone: Dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class Matched:
    """A decision and its span in tokens of the document it matched."""

    decision: Decision
    span: SpanKey


def apply_decisions(
    docs: Sequence[Doc],
    decisions: Sequence[Decision],
    *,
    corpus: str,
    overlaps: Overlaps = Overlaps.REFUSE,
    spans_key: Optional[str] = None,
    rejected_key: str = REJECTED_KEY,
) -> ReviewResult:
    """Copies of ``docs`` with the accepted spans in ``doc.ents`` (and in
    ``doc.spans[spans_key]`` when given) and the rejected ones added to
    ``doc.spans[rejected_key]``; every other span group that mirrors the
    entities (see ``entity_mirrors``) is set to the new ``doc.ents``.
    ``corpus`` names the documents' file in messages. Ignored decisions are
    only counted. The labels are taken as they are: ``check_labels`` refuses
    those the corpus lacks (apply-review calls it first; a caller whose
    corpus lost a label on purpose, as a masked one may, need not)."""
    counts: Dict[str, LabelCounts] = defaultdict(LabelCounts)
    for decision in decisions:
        if decision.answer == "ignore":
            counts[decision.label].ignored += 1
    matched = match_decisions(docs, [d for d in decisions if d.answer != "ignore"], corpus=corpus)
    # told before any change: a group is a mirror of the entities the corpus came with
    mirrors, left_alone = entity_mirrors(docs, corpus=corpus, exclude=[key for key in (spans_key, rejected_key) if key is not None])
    output = []
    for i, doc in enumerate(docs):
        if i not in matched:
            output.append(doc.copy())
            continue
        review = _DocReview(doc, f"document {i} of {corpus}", overlaps, spans_key, rejected_key, mirrors, counts)
        output.append(review.apply(matched[i]))
    return ReviewResult(output, dict(sorted(counts.items())), mirrors, left_alone)


def entity_mirrors(docs: Sequence[Doc], *, corpus: str, exclude: Iterable[str] = ()) -> Tuple[List[str], Dict[str, str]]:
    """The span groups of ``docs`` (but ``exclude``) that mirror the
    entities, and why each other one does not. A group mirrors them when
    every document has exactly the spans of its ``doc.ents`` in it, with
    their labels (a document without the group: when it has no entity);
    decided for the whole corpus, so that one document cannot make a group
    a mirror that the others say is not. A corpus without any entity has no
    mirror: an empty group could be anything."""
    keys = sorted({key for doc in docs for key in doc.spans} - set(exclude))
    if not any(doc.ents for doc in docs):
        return [], {key: f"{corpus} has no entity for it to copy" for key in keys}
    mirrors: List[str] = []
    left_alone: Dict[str, str] = {}
    for key in keys:
        problem = next(filter(None, (_mirror_problem(doc, key, f"document {i} of {corpus}") for i, doc in enumerate(docs))), None)
        if problem is None:
            mirrors.append(key)
        else:
            left_alone[key] = problem
    return mirrors, left_alone


def _mirror_problem(doc: Doc, key: str, place: str) -> Optional[str]:
    """Why ``doc.spans[key]`` is not ``doc.ents``, or None when it is."""
    ents = Counter(_key(ent) for ent in doc.ents)
    if key not in doc.spans:
        return f"{place} has entities and no such group" if ents else None
    group = Counter(_key(span) for span in doc.spans[key])
    if group == ents:
        return None
    missing, extra = sorted(ents - group), sorted(group - ents)
    if missing:
        return f"the entity {_describe_span(doc, missing[0])} of {place} is not in it"
    if extra[0] in ents:
        return f"it holds the entity {_describe_span(doc, extra[0])} of {place} twice"
    return f"its span {_describe_span(doc, extra[0])} of {place} is no entity"


def corpus_labels(docs: Sequence[Doc], spans_key: Optional[str] = None) -> Set[str]:
    """The entity labels of ``docs``: of ``doc.ents``, and of the
    ``spans_key`` group when it is given (the gold the decisions meet)."""
    labels = {ent.label_ for doc in docs for ent in doc.ents}
    if spans_key is not None:
        labels |= {span.label_ for doc in docs if spans_key in doc.spans for span in doc.spans[spans_key]}
    return labels


def check_labels(docs: Sequence[Doc], decisions: Sequence[Decision], *, corpus: str, spans_key: Optional[str] = None) -> None:
    """A ``ReviewConflict`` for the first decision that accepts or rejects a
    span under a label the corpus does not have (exactly: "PERSON" or
    " person" beside "person" would become a new entity type, or a rejection
    of a type no entity has), naming its nearest label. Ignored decisions
    change nothing, and are not checked."""
    labels = corpus_labels(docs, spans_key)
    for decision in decisions:
        if decision.answer != "ignore" and decision.label not in labels:
            raise ReviewConflict(_label_problem(decision, labels, corpus, spans_key))


def _label_problem(decision: Decision, labels: Set[str], corpus: str, spans_key: Optional[str]) -> str:
    where = f"{decision.where}: the label {decision.label!r} (of {decision.text[decision.start:decision.end]!r}) is no label of {corpus}"
    gold = "doc.ents" + (f" or doc.spans[{spans_key!r}]" if spans_key is not None else "")
    if not labels:
        return f"{where}, which has no entity (in {gold}): a review decides on the corpus's entity types, it adds none"
    same = [label for label in sorted(labels) if _folded(label) == _folded(decision.label)]
    near = difflib.get_close_matches(decision.label, sorted(labels), n=1)
    if same:
        hint = f"; did you mean {same[0]!r}? Labels must match exactly (case and spaces count)"
    else:
        hint = f"; the nearest is {near[0]!r}" if near else ""
    listed = ", ".join(map(repr, sorted(labels)))
    return (
        f"{where}{hint}. Its labels (in {gold}): {listed}; a review decides on these entity types, it adds none: "
        "correct the label in the decisions file"
    )


def _folded(label: str) -> str:
    """A label without case or spaces: "PERSON", " person" and "per son"
    are one for the hint, never for the check."""
    return "".join(label.split()).casefold()


def match_decisions(docs: Sequence[Doc], decisions: Sequence[Decision], *, corpus: str) -> Dict[int, List[Matched]]:
    """Each decision's document and token span, by document index: by
    ``meta.doc`` where the decision names one (its text must be that
    document's), else by its text, which must be one document's only."""
    by_text: Dict[str, List[int]] = defaultdict(list)
    for i, doc in enumerate(docs):
        by_text[doc.text].append(i)
    matched: Dict[int, List[Matched]] = defaultdict(list)
    for decision in decisions:
        i = _document_of(decision, docs, by_text, corpus)
        matched[i].append(Matched(decision, _token_span(docs[i], decision, f"document {i} of {corpus}")))
    return matched


def _document_of(decision: Decision, docs: Sequence[Doc], by_text: Dict[str, List[int]], corpus: str) -> int:
    text = _shorten(decision.text)
    if decision.doc is not None:
        if decision.doc >= len(docs):
            raise ReviewConflict(
                f"{decision.where}: meta.doc {decision.doc} is no document of {corpus}, which has {len(docs)} "
                f"(indices 0-{len(docs) - 1})"
            )
        if docs[decision.doc].text != decision.text:
            raise ReviewConflict(
                f"{decision.where}: its text {text} is not the text of document {decision.doc} of {corpus} "
                f"(its meta.doc), {_shorten(docs[decision.doc].text)}: was the review made on another corpus?"
            )
        return decision.doc
    found = by_text.get(decision.text, [])
    if not found:
        raise ReviewConflict(f"{decision.where}: the text {text} is in no document of {corpus}: was the review made on another corpus?")
    if len(found) > 1:
        listed = ", ".join(map(str, found[:10])) + (" ..." if len(found) > 10 else "")
        raise ReviewConflict(
            f"{decision.where}: the text {text} is the text of {len(found)} documents of {corpus} ({listed}): "
            'add "meta": {"doc": INDEX} to the task to say which'
        )
    return found[0]


def _token_span(doc: Doc, decision: Decision, place: str) -> SpanKey:
    span = doc.char_span(decision.start, decision.end)
    if span is None:
        first, last = _nearest_token(doc, decision.start), _nearest_token(doc, decision.end - 1)
        nearest = f"token is {_describe_token(first)}" if first.i == last.i else f"tokens are {_describe_token(first)} and {_describe_token(last)}"
        raise ReviewConflict(
            f"{decision.where}: characters {decision.start}-{decision.end} "
            f"({decision.text[decision.start:decision.end]!r}) do not fall on token boundaries of {place}; "
            f"the nearest {nearest}"
        )
    return span.start, span.end, decision.label


def _nearest_token(doc: Doc, char: int) -> Token:
    """The token that holds character ``char``, or the closest one."""
    return min(doc, key=lambda t: 0 if t.idx <= char < t.idx + len(t) else min(abs(t.idx - char), abs(t.idx + len(t) - 1 - char)))


def _describe_token(token: Token) -> str:
    return f"{token.text!r} (characters {token.idx}-{token.idx + len(token)})"


def _shorten(text: str, limit: int = 60) -> str:
    return repr(text if len(text) <= limit else text[: limit - 3] + "...")


class _DocReview:
    """The decisions on one document, checked against each other and
    against its annotation, then applied to a copy of it."""

    def __init__(
        self, doc: Doc, place: str, overlaps: Overlaps, spans_key: Optional[str], rejected_key: str, mirrors: List[str],
        counts: Dict[str, LabelCounts],
    ):
        self.doc, self.place, self.overlaps, self.counts = doc, place, overlaps, counts
        self.spans_key, self.rejected_key, self.mirrors = spans_key, rejected_key, mirrors
        # the gold the decisions meet: doc.ents, and the --spans-key group
        self.entities: Dict[SpanKey, str] = {_key(s): "the entity" for s in doc.ents}
        if spans_key is not None and spans_key in doc.spans:
            for span in doc.spans[spans_key]:
                self.entities.setdefault(_key(span), f"the span of doc.spans[{spans_key!r}]")
        self.incorrect: Set[SpanKey] = {_key(s) for s in doc.spans[rejected_key]} if rejected_key in doc.spans else set()
        self.dropped: Set[SpanKey] = set()
        self.added: List[SpanKey] = []
        self.rejected: List[SpanKey] = []

    def apply(self, matched: List[Matched]) -> Doc:
        accepts, rejects = self._unique(matched)
        self._check_accepts_apart(accepts)
        for item in accepts:
            self._accept(item)
        for item in rejects:
            self._reject(item)
        return self._write()

    def _unique(self, matched: List[Matched]) -> Tuple[List[Matched], List[Matched]]:
        """The accepted and the rejected decisions, each span once: a second
        identical decision changes nothing; an accept and a reject of one
        span are refused."""
        first: Dict[SpanKey, Matched] = {}
        for item in matched:
            seen = first.setdefault(item.span, item)
            if seen is item:
                continue
            if seen.decision.answer == item.decision.answer:
                self.counts[item.decision.label].unchanged += 1
                continue
            accept, reject = (seen, item) if seen.decision.answer == "accept" else (item, seen)
            raise ReviewConflict(
                f"{accept.decision.where} accepts {self._describe(accept.span)} and {reject.decision.where} "
                f"rejects it ({self.place}): decide it once"
            )
        unique = list(first.values())
        return [m for m in unique if m.decision.answer == "accept"], [m for m in unique if m.decision.answer == "reject"]

    def _check_accepts_apart(self, accepts: List[Matched]) -> None:
        for n, a in enumerate(accepts):
            for b in accepts[n + 1 :]:
                if _overlap(a.span, b.span):
                    raise ReviewConflict(
                        f"{a.decision.where} accepts {self._describe(a.span)} and {b.decision.where} accepts "
                        f"{self._describe(b.span)}, which overlap ({self.place}): an entity has one span and one "
                        "label, so accept one of them"
                    )

    def _accept(self, item: Matched) -> None:
        label = item.decision.label
        if item.span in self.entities:
            self.counts[label].unchanged += 1
            return
        if item.span in self.incorrect:
            what = f"which doc.spans[{self.rejected_key!r}] of {self.place} marks as wrong"
            if not self._may_override(item, "accepts", what, "to drop it from that group", "to keep it there"):
                return
            self.incorrect.discard(item.span)
            self._drop(item.span)
        overlapping = [e for e in self.entities if _overlap(e, item.span) and e not in self.dropped]
        for entity in overlapping:
            what = f"which overlaps {self.entities[entity]} {self._describe(entity)} of {self.place}"
            if not self._may_override(item, "accepts", what, "to let the reviewed span win", "to keep the entity"):
                return
        for entity in overlapping:
            self._drop(entity)
        self.added.append(item.span)
        self.counts[label].accepted += 1

    def _reject(self, item: Matched) -> None:
        label = item.decision.label
        if item.span in self.entities and item.span not in self.dropped:
            what = f"which is {self.entities[item.span]} of {self.place}"
            if not self._may_override(item, "rejects", what, "to remove it", "to keep it"):
                return
            self._drop(item.span)
        if item.span in self.incorrect:
            self.counts[label].unchanged += 1
            return
        self.rejected.append(item.span)
        self.counts[label].rejected += 1

    def _may_override(self, item: Matched, verb: str, what: str, replace: str, keep: str) -> bool:
        """Whether the decision goes ahead over the corpus's annotation: yes
        with --overlaps replace, no (counted as skipped) with keep; refused
        otherwise."""
        if self.overlaps is Overlaps.REPLACE:
            return True
        if self.overlaps is Overlaps.KEEP:
            self.counts[item.decision.label].skipped += 1
            return False
        raise ReviewConflict(
            f"{item.decision.where} {verb} {self._describe(item.span)}, {what}: give --overlaps replace "
            f"{replace}, or --overlaps keep {keep} and skip the decision"
        )

    def _drop(self, span: SpanKey) -> None:
        if span not in self.dropped:
            self.dropped.add(span)
            self.counts[span[2]].replaced += 1

    def _describe(self, span: SpanKey) -> str:
        return _describe_span(self.doc, span)

    def _write(self) -> Doc:
        doc = self.doc.copy()
        if not (self.added or self.dropped or self.rejected):
            return doc
        added = [Span(doc, start, end, label=label) for start, end, label in self.added]
        covered = {i for span in added for i in range(span.start, span.end)}
        # the tokens of a removed entity that no new one covers are no entity
        freed = sorted({i for ent in doc.ents if _key(ent) in self.dropped for i in range(ent.start, ent.end)} - covered)
        doc.set_ents(added, outside=[doc[i : i + 1] for i in freed], default="unmodified")
        for key in self.mirrors:
            attrs = dict(doc.spans[key].attrs) if key in doc.spans else {}
            doc.spans[key] = SpanGroup(doc, name=key, attrs=attrs, spans=list(doc.ents))
        if self.spans_key is not None and (added or self.spans_key in doc.spans):
            self._rewrite_group(doc, self.spans_key, self.dropped, added)
        if self.rejected or self.rejected_key in doc.spans:
            rejected = [Span(doc, start, end, label=label) for start, end, label in self.rejected]
            self._rewrite_group(doc, self.rejected_key, self.dropped, rejected)
        return doc

    @staticmethod
    def _rewrite_group(doc: Doc, key: str, dropped: Set[SpanKey], new: List[Span]) -> None:
        old = doc.spans[key] if key in doc.spans else SpanGroup(doc, name=key)
        kept = [span for span in old if _key(span) not in dropped]
        doc.spans[key] = SpanGroup(doc, name=key, attrs=dict(old.attrs), spans=kept + new)


def _key(span: Span) -> SpanKey:
    return span.start, span.end, span.label_


def _describe_span(doc: Doc, span: SpanKey) -> str:
    start, end, label = span
    tokens = doc[start:end]
    return f"{tokens.text!r} ({label}, characters {tokens.start_char}-{tokens.end_char})"


def _overlap(a: SpanKey, b: SpanKey) -> bool:
    return a[0] < b[1] and b[0] < a[1]
