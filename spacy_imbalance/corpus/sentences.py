"""Gold sentences as token-level BIO tags, and Docs rebuilt from them.

The corpus transformations (balanced undersampling, Dai & Adel augmentation)
edit a sentence token by token. They work on a ``TaggedSentence`` (words,
trailing spaces, BIO tags with "" for a token whose annotation is missing)
and turn the result back into a Doc whose entities are set from the tags.
"""
import copy
import warnings
from dataclasses import dataclass
from typing import Dict, List, Optional, Sequence, Tuple

from spacy.tokens import Doc, Span, SpanGroup
from spacy.vocab import Vocab

from .stats import gold_spans

MISSING = ""


@dataclass
class TaggedSentence:
    words: List[str]
    spaces: List[bool]
    tags: List[str]  # "B-T", "I-T", "O", or MISSING

    def __len__(self) -> int:
        return len(self.words)


def bio_tags(doc: Doc, spans_key: Optional[str] = None) -> List[str]:
    """The gold of a doc as BIO tags: from ``doc.ents`` (tokens with missing NER
    annotation get MISSING), or from ``doc.spans[spans_key]`` (every other
    token is O). Overlapping spans cannot be written as tags: ValueError.
    """
    if spans_key is None:
        return [f"{t.ent_iob_}-{t.ent_type_}" if t.ent_iob_ in ("B", "I") else t.ent_iob_ for t in doc]
    tags = ["O"] * len(doc)
    for span in sorted(gold_spans(doc, spans_key), key=lambda s: (s.start, s.end)):
        if any(tag != "O" for tag in tags[span.start : span.end]):
            raise ValueError(
                f"doc.spans[{spans_key!r}] has overlapping spans ({span.text!r}, {span.start}-{span.end}) "
                f"in {doc.text[:60]!r}: token-level transformations need non-overlapping gold spans"
            )
        tags[span.start] = f"B-{span.label_}"
        tags[span.start + 1 : span.end] = [f"I-{span.label_}"] * (len(span) - 1)
    return tags


def tagged_sentence(doc: Doc, spans_key: Optional[str] = None) -> TaggedSentence:
    return TaggedSentence(
        words=[t.text for t in doc], spaces=[bool(t.whitespace_) for t in doc], tags=bio_tags(doc, spans_key)
    )


def mention_bounds(tags: Sequence[str]) -> List[Tuple[int, int, str]]:
    """(start, end, label) of every entity in BIO tags (an I- that does not
    continue an entity of its type starts a new one, as in IOB1)."""
    mentions: List[Tuple[int, int, str]] = []
    for i, tag in enumerate(tags):
        prefix, _, label = tag.partition("-")
        if prefix == "B" or (prefix == "I" and not (mentions and mentions[-1][1] == i and mentions[-1][2] == label)):
            mentions.append((i, i + 1, label))
        elif prefix == "I":
            start, _, _ = mentions[-1]
            mentions[-1] = (start, i + 1, label)
    return mentions


def mirrored_span_keys(doc: Doc) -> List[str]:
    """Keys of the span groups that hold exactly the doc's entities (the
    converter stores them as doc.spans["sc"] for spancat)."""
    ents = {(e.start, e.end, e.label_) for e in doc.ents}
    return [
        key for key, group in doc.spans.items()
        if {(s.start, s.end, s.label_) for s in group} == ents and len(group) == len(ents)
    ]


def sentence_to_doc(
    vocab: Vocab, sentence: TaggedSentence, *, spans_key: Optional[str] = None, mirror_keys: Sequence[str] = ()
) -> Doc:
    """A Doc with the sentence's gold: in ``doc.ents`` (missing tags stay
    missing) or, with ``spans_key``, in ``doc.spans[spans_key]``; the entities
    are also copied to every key in ``mirror_keys``."""
    if spans_key is None:
        doc = Doc(vocab, words=sentence.words, spaces=sentence.spaces, ents=sentence.tags)
        spans = list(doc.ents)
    else:
        doc = Doc(vocab, words=sentence.words, spaces=sentence.spaces)
        spans = [Span(doc, s, e, label=label) for s, e, label in mention_bounds(sentence.tags)]
        doc.spans[spans_key] = SpanGroup(doc, name=spans_key, spans=spans)
    for key in mirror_keys:
        if key != spans_key:
            doc.spans[key] = SpanGroup(doc, name=key, spans=list(spans))
    return doc


def remap_span_groups(source: Doc, target: Doc, index_map: Dict[int, int], skip: Sequence[str]) -> int:
    """Copy the span groups of ``source`` (except ``skip``) onto ``target``,
    moving each token i to ``index_map[i]``. A span whose tokens are no longer
    all there, in order and contiguous, cannot be copied: RETURNS how many."""
    lost = 0
    for key, group in source.spans.items():
        if key in skip:
            continue
        spans = []
        for span in group:
            # a zero-length span has no token to move: lost too
            if span.start == span.end or any(i not in index_map for i in range(span.start, span.end)):
                lost += 1
                continue
            new = [index_map[i] for i in range(span.start, span.end)]
            if new != list(range(new[0], new[0] + len(new))):
                lost += 1
                continue
            spans.append(Span(target, new[0], new[-1] + 1, label=span.label_, kb_id=span.kb_id_))
        target.spans[key] = SpanGroup(target, name=key, attrs=group.attrs, spans=spans)
    return lost


def keep_label_scope(source: Doc, target: Doc) -> Doc:
    """``target`` given the label scope of ``source`` (the entity types
    annotated in it, ``corpus.scopes``) when it has one: a doc a reader
    makes from another (a sentence, a shortened or augmented copy)
    annotates the same types. RETURNS ``target``.

    Only the scope, not the rest of ``doc.user_data``: that holds the values
    of extension attributes keyed by character offsets into ``source``,
    which point elsewhere in a sentence or an edited copy, and spaCy's own
    splitting (``Span.as_doc``) drops it all. The value is copied as stored,
    unchecked: ``get_label_scope`` refuses a damaged one where it is read.
    """
    # imported here: the scopes package imports its readers, which import this module
    from .scopes.scopes import SCOPE_KEY

    if SCOPE_KEY in source.user_data:
        target.user_data[SCOPE_KEY] = copy.copy(source.user_data[SCOPE_KEY])
    return target


def sentence_doc(doc: Doc, sent: Span) -> Doc:
    """``sent.as_doc()`` with the doc's span groups and label scope too
    (spaCy's ``as_doc`` leaves ``doc.spans`` and ``doc.user_data`` behind,
    which would lose the "sc" gold of spancat, the "masked" record of
    MaskedCorpus and the types the doc annotates). A span crossing the
    sentence boundary cannot belong to either sentence: it is left out with
    a warning."""
    new = keep_label_scope(doc, sent.as_doc())
    crossing = 0
    for key, group in doc.spans.items():
        inside = [s for s in group if sent.start <= s.start and s.end <= sent.end]
        crossing += sum(1 for s in group if s.start < sent.end and s.end > sent.start) - len(inside)
        new.spans[key] = SpanGroup(
            new,
            name=key,
            attrs=group.attrs,
            spans=[Span(new, s.start - sent.start, s.end - sent.start, label=s.label_, kb_id=s.kb_id_) for s in inside],
        )
    if crossing:
        warnings.warn(
            f"{crossing} span(s) of doc.spans cross the end of the sentence {sent.text[:60]!r} "
            "and are left out of the sentence docs",
            stacklevel=2,
        )
    return new


def sentence_docs(doc: Doc) -> List[Doc]:
    """The sentences of a doc as docs with their span groups; the doc itself
    when it has no sentence boundaries or only one sentence."""
    if not (len(doc) and doc.has_annotation("SENT_START")):
        return [doc]
    sents = list(doc.sents)
    if len(sents) == 1:
        return [doc]
    return [sentence_doc(doc, sent) for sent in sents]
