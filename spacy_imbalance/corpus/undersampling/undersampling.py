"""Balanced undersampling (Akkasi, Varoğlu and Dimililer 2018), the
sub-sentence resampling baseline of the sentence-level resampling paper.

Each sentence keeps all its entity tokens plus context that grows around
them, one token to the left and one to the right of every kept block per
round, until the kept tokens reach ``ratio`` times the entity tokens or the
whole sentence; the remaining non-entity tokens are dropped. Sentences
without entities are dropped entirely. With ratio 3 this shrinks a corpus to
about a third (Table 6 of the paper reports a size factor of 0.32).
"""
import math
import numbers
from typing import List, Optional, Sequence, Tuple

from spacy.tokens import Doc

from ..sentences import (
    MISSING, TaggedSentence, keep_label_scope, mirrored_span_keys, remap_span_groups, sentence_to_doc, tagged_sentence,
)


# Kept tokens per entity token: a ratio of 1000 keeps every sentence of up to
# 1000 tokens whole, so a larger one changes nothing but the float range
# (1e308 times the entity tokens overflows to inf)
MAX_RATIO = 1000.0


def check_ratio(ratio: float, name: str = "ratio") -> None:
    """Raise a ValueError naming the setting unless ``ratio`` (kept tokens per
    entity token) is a number in [1, MAX_RATIO]: below 1 would drop entity
    tokens, inf or nan is no number of tokens to keep, and above MAX_RATIO
    every sentence is kept whole."""
    # `not (...)` also rejects NaN, which fails every comparison; a config's
    # `ratio = inf` arrives as the string "inf"
    if not isinstance(ratio, numbers.Real) or not (1.0 <= ratio <= MAX_RATIO):
        raise ValueError(
            f"{name} must be >= 1 and finite (kept tokens per entity token), got {ratio!r}: give a ratio in "
            f"[1, {MAX_RATIO:g}] ({MAX_RATIO:g} already keeps whole every sentence of up to {MAX_RATIO:g} tokens)"
        )


def check_entities(n_kept: int, n_sentences: int, source: str, spans_key: Optional[str]) -> None:
    """Raise a ValueError naming ``source`` when undersampling kept no
    sentence: it keeps only sentences with an entity, and an empty corpus
    is no training set."""
    if n_kept == 0:
        where = "doc.ents" if spans_key is None else f"doc.spans[{spans_key!r}]"
        raise ValueError(
            f"{source}: none of its {n_sentences:,} sentences has an entity in {where}: balanced undersampling "
            "keeps only sentences with entities, so nothing would be left"
        )


def kept_tokens(tags: Sequence[str], ratio: float = 3.0) -> List[int]:
    """Indices of the tokens balanced undersampling keeps, in order; [] when
    the sentence has no entity token.

    tags (Sequence[str]): BIO tags of one sentence ("" for missing annotation).
    ratio (float): kept tokens / entity tokens to reach, finite and >= 1.
    RETURNS (List[int]): the kept token indices, ascending.
    """
    check_ratio(ratio)
    kept = [tag not in ("O", MISSING) for tag in tags]
    n_entity = sum(kept)
    if not n_entity:
        return []
    target = min(len(tags), math.ceil(ratio * n_entity - 1e-9))
    n_kept = n_entity
    while n_kept < target:
        # one round: every block of kept tokens grows by its left, then its right neighbour
        for start, end in _blocks(kept):
            for i in (start - 1, end):
                if n_kept < target and 0 <= i < len(kept) and not kept[i]:
                    kept[i] = True
                    n_kept += 1
    return [i for i, keep in enumerate(kept) if keep]


def _blocks(kept: List[bool]) -> List[Tuple[int, int]]:
    blocks: List[Tuple[int, int]] = []
    for i, keep in enumerate(kept):
        if keep and blocks and blocks[-1][1] == i:
            blocks[-1] = (blocks[-1][0], i + 1)
        elif keep:
            blocks.append((i, i + 1))
    return blocks


def undersample_doc(doc: Doc, ratio: float = 3.0, *, spans_key: Optional[str] = None) -> Tuple[Optional[Doc], int]:
    """Balanced undersampling of one sentence.

    doc (Doc): a gold sentence.
    ratio (float): kept tokens / entity tokens.
    spans_key (Optional[str]): gold from doc.spans[spans_key] instead of doc.ents.
    RETURNS (Tuple[Optional[Doc], int]): the shortened sentence (None when it
        has no entity) and how many spans of other span groups could not be
        kept because some of their tokens were dropped.
    """
    sentence = tagged_sentence(doc, spans_key)
    keep = kept_tokens(sentence.tags, ratio)
    if not keep:
        return None, 0
    kept = set(keep)
    # a dropped gap becomes a space, so that the text still separates the words around it
    spaces = [sentence.spaces[i] or (i + 1 < len(doc) and i + 1 not in kept and i != keep[-1]) for i in keep]
    short = TaggedSentence(
        words=[sentence.words[i] for i in keep], spaces=spaces, tags=[sentence.tags[i] for i in keep]
    )
    mirrors = mirrored_span_keys(doc) if spans_key is None else []
    new = keep_label_scope(doc, sentence_to_doc(doc.vocab, short, spans_key=spans_key, mirror_keys=mirrors))
    skip = [*mirrors, *([spans_key] if spans_key is not None else [])]
    lost = remap_span_groups(doc, new, {old: new_i for new_i, old in enumerate(keep)}, skip=skip)
    return new, lost


def undersample_docs(docs: Sequence[Doc], ratio: float = 3.0, *, spans_key: Optional[str] = None) -> Tuple[List[Doc], int]:
    """Balanced undersampling of a corpus of sentences.

    RETURNS (Tuple[List[Doc], int]): the kept sentences (those with an
        entity), shortened, and how many spans of other span groups were lost.
    """
    out: List[Doc] = []
    lost = 0
    for doc in docs:
        new, n_lost = undersample_doc(doc, ratio, spans_key=spans_key)
        lost += n_lost
        if new is not None:
            out.append(new)
    return out, lost
