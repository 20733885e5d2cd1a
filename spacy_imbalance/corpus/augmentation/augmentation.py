"""Simple data augmentation for NER (Dai & Adel, "An analysis of simple data
augmentation for named entity recognition", COLING 2020).

Each augmented copy of a training sentence is made by one of:

- ``label_wise_token_replacement`` (LwTR): every token, with probability p,
  is replaced by a token of the training set with the same BIO tag;
- ``mention_replacement`` (MR): every mention, with probability p, is
  replaced by a mention of the same type from the training set (its length
  may change);
- ``shuffle_within_segments`` (SiS): the sentence is cut into segments (each
  mention, each run of O tokens, each run of tokens with missing annotation)
  and every segment, with probability p, has its tokens shuffled; the labels
  keep their positions;
- ``all``: LwTR, then MR, then SiS, giving one copy (the combination of the
  paper).

The fourth augmentation of the paper, synonym replacement, is not
implemented: it needs WordNet, which this package does not depend on.

Tokens whose NER annotation is missing are never put into a pool, never
drawn from one and never replaced.
"""
import random
import warnings
from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any, Dict, Iterable, List, Literal, Optional, Sequence, Set, Tuple, Union

from spacy.tokens import Doc, Span, SpanGroup

from ..sentences import (
    MISSING, TaggedSentence, keep_label_scope, mention_bounds, mirrored_span_keys, sentence_to_doc, tagged_sentence,
)
from ..stats import gold_spans

# Dai & Adel generate a handful of copies per sentence; the copies of the
# whole corpus are held in memory before they are written (or yielded), so
# an unbounded count grows until the process is killed. 100 copies already
# make a corpus 101 times its size.
MAX_COPIES = 100

AugmentMethod = Literal["label_wise_token_replacement", "mention_replacement", "shuffle_within_segments", "all"]
METHODS: Tuple[str, ...] = ("label_wise_token_replacement", "mention_replacement", "shuffle_within_segments", "all")


@dataclass
class AugmentationPools:
    """What the replacements draw from, gathered over the whole training set.

    tokens (Dict[str, List[str]]): the words of every token, by BIO tag.
    mentions (Dict[str, List[Tuple[str, ...]]]): the words of every mention, by type.
    """

    # lists, not sets: a word is drawn as often as it occurs in the corpus
    tokens: Dict[str, List[str]] = field(default_factory=dict)
    mentions: Dict[str, List[Tuple[str, ...]]] = field(default_factory=dict)

    @classmethod
    def from_sentences(cls, sentences: Iterable[TaggedSentence]) -> "AugmentationPools":
        """Collect the pools of a corpus.

        sentences (Iterable[TaggedSentence]): the gold training sentences.
        RETURNS (AugmentationPools): the tokens by tag and mentions by type.
        """
        tokens: Dict[str, List[str]] = defaultdict(list)
        mentions: Dict[str, List[Tuple[str, ...]]] = defaultdict(list)
        for sentence in sentences:
            for word, tag in zip(sentence.words, sentence.tags):
                if tag != MISSING:
                    tokens[tag].append(word)
            for start, end, label in mention_bounds(sentence.tags):
                mentions[label].append(tuple(sentence.words[start:end]))
        return cls(tokens=dict(tokens), mentions=dict(mentions))

    @classmethod
    def from_docs(cls, docs: Iterable[Doc], spans_key: Optional[str] = None) -> "AugmentationPools":
        """Collect the pools of a corpus of gold Docs.

        docs (Iterable[Doc]): the gold training docs.
        spans_key (Optional[str]): gold from doc.spans[spans_key] instead of doc.ents.
        RETURNS (AugmentationPools): the tokens by tag and mentions by type.
        """
        return cls.from_sentences(tagged_sentence(doc, spans_key) for doc in docs)


def validate_settings(method: str, p: float, n_copies: int) -> None:
    """Raise a ValueError naming the first invalid setting.

    method (str): one of METHODS.
    p (float): the probability of each replacement or shuffle, in [0, 1].
    n_copies (int): augmented copies per sentence, in [1, MAX_COPIES].
    """
    if method not in METHODS:
        raise ValueError(f"Unknown augmentation method {method!r}; choose one of {', '.join(METHODS)}")
    if isinstance(p, bool) or not isinstance(p, (int, float)) or not 0.0 <= p <= 1.0:
        raise ValueError(f"The augmentation probability p must be a number in [0, 1], got {p!r}")
    if isinstance(n_copies, bool) or not isinstance(n_copies, int) or not (1 <= n_copies <= MAX_COPIES):
        raise ValueError(
            f"The number of augmented copies n_copies must be an integer in [1, {MAX_COPIES}] (the copies are "
            f"held in memory: {MAX_COPIES} make the corpus {MAX_COPIES + 1} times its size), got {n_copies!r}"
        )


def label_wise_token_replacement(
    sentence: TaggedSentence, pools: AugmentationPools, p: float, rng: random.Random
) -> TaggedSentence:
    """Replace each token, with probability p, by a pool token of the same
    tag (arguments as for ``augment_sentence``).

    RETURNS (TaggedSentence): the copy; tags and spaces as in ``sentence``.
    """
    words = list(sentence.words)
    for i, tag in enumerate(sentence.tags):
        if tag == MISSING:
            continue
        # drawn for every token, so that a token's fate does not depend on the pools
        if rng.random() < p and pools.tokens.get(tag):
            words[i] = rng.choice(pools.tokens[tag])
    return TaggedSentence(words=words, spaces=list(sentence.spaces), tags=list(sentence.tags))


def mention_replacement(
    sentence: TaggedSentence, pools: AugmentationPools, p: float, rng: random.Random
) -> TaggedSentence:
    """Replace each mention, with probability p, by a pool mention of the
    same type (arguments as for ``augment_sentence``).

    RETURNS (TaggedSentence): the copy; a new mention is tagged B-T, I-T, ...
    """
    words: List[str] = []
    spaces: List[bool] = []
    tags: List[str] = []
    position = 0
    for start, end, label in mention_bounds(sentence.tags):
        words.extend(sentence.words[position:start])
        spaces.extend(sentence.spaces[position:start])
        tags.extend(sentence.tags[position:start])
        if rng.random() < p and pools.mentions.get(label):
            new = list(rng.choice(pools.mentions[label]))
            words.extend(new)
            # the mention's own spacing is unknown here; its last word keeps the gap to what follows
            spaces.extend([True] * (len(new) - 1) + [sentence.spaces[end - 1]])
            tags.extend([f"B-{label}"] + [f"I-{label}"] * (len(new) - 1))
        else:
            words.extend(sentence.words[start:end])
            spaces.extend(sentence.spaces[start:end])
            tags.extend(sentence.tags[start:end])
        position = end
    words.extend(sentence.words[position:])
    spaces.extend(sentence.spaces[position:])
    tags.extend(sentence.tags[position:])
    return TaggedSentence(words=words, spaces=spaces, tags=tags)


def segments(tags: Sequence[str]) -> List[Tuple[int, int]]:
    """Cut a sentence into the segments that SiS shuffles.

    tags (Sequence[str]): BIO tags, MISSING for tokens without annotation.
    RETURNS (List[Tuple[int, int]]): (start, end) of each mention, each maximal
        run of O tokens and each maximal run of MISSING tokens, in order.
    """
    bounds: List[Tuple[int, int]] = []
    mentions = {start: end for start, end, _ in mention_bounds(tags)}
    i = 0
    while i < len(tags):
        if i in mentions:
            end = mentions[i]
        else:
            end = i + 1
            while end < len(tags) and tags[end] == tags[i] and end not in mentions:
                end += 1
        bounds.append((i, end))
        i = end
    return bounds


def shuffle_within_segments(sentence: TaggedSentence, p: float, rng: random.Random) -> TaggedSentence:
    """Shuffle the tokens of each segment with probability p (arguments as
    for ``augment_sentence``).

    RETURNS (TaggedSentence): the copy; tags and spaces stay at their positions.
    """
    words = list(sentence.words)
    for start, end in segments(sentence.tags):
        if rng.random() < p:
            part = words[start:end]
            rng.shuffle(part)
            words[start:end] = part
    return TaggedSentence(words=words, spaces=list(sentence.spaces), tags=list(sentence.tags))


def augment_sentence(
    sentence: TaggedSentence, method: AugmentMethod, pools: AugmentationPools, p: float, rng: random.Random
) -> TaggedSentence:
    """One augmented copy of a sentence.

    sentence (TaggedSentence): the sentence to augment (not changed).
    method (AugmentMethod): one of METHODS; "all" applies LwTR, MR, then SiS.
    pools (AugmentationPools): what the replacements draw from: tokens by
        tag, mentions by type.
    p (float): the probability of each replacement (of a token, of a
        mention) or shuffle (of a segment).
    rng (random.Random): the source of randomness.
    RETURNS (TaggedSentence): the augmented copy.
    """
    if method not in METHODS:
        raise ValueError(f"Unknown augmentation method {method!r}; choose one of {', '.join(METHODS)}")
    if method in ("label_wise_token_replacement", "all"):
        sentence = label_wise_token_replacement(sentence, pools, p, rng)
    if method in ("mention_replacement", "all"):
        sentence = mention_replacement(sentence, pools, p, rng)
    if method in ("shuffle_within_segments", "all"):
        sentence = shuffle_within_segments(sentence, p, rng)
    return sentence


def augmented_copies(
    docs: Sequence[Doc],
    method: AugmentMethod,
    *,
    p: float = 0.3,
    n_copies: int = 1,
    seed: int = 0,
    spans_key: Optional[str] = None,
) -> List[List[Doc]]:
    """The augmented copies of every doc, with pools from all of ``docs``.

    docs (Sequence[Doc]): the gold training sentences.
    method (AugmentMethod): one of METHODS; "all" applies LwTR, MR, then SiS.
    p (float): the probability of each replacement or shuffle, in [0, 1].
    n_copies (int): augmented copies per sentence, at least 1.
    seed (int): the seed of the one random.Random used for the whole call:
        the same docs and seed give the same copies.
    spans_key (Optional[str]): gold from doc.spans[spans_key] instead of doc.ents;
        the copies store their gold in the same place.
    RETURNS (List[List[Doc]]): ``n_copies`` new Docs per input doc, in order.
    """
    validate_settings(method, p, n_copies)
    sentences = [tagged_sentence(doc, spans_key) for doc in docs]
    pools = AugmentationPools.from_sentences(sentences)
    rng = random.Random(seed)
    dropped_keys: Set[str] = set()
    n_dropped = 0
    output: List[List[Doc]] = []
    for doc, sentence in zip(docs, sentences):
        mirror_keys, mirror_ents, others = _gold_copies(doc, spans_key)
        dropped_keys.update(others)
        n_dropped += len(others) * n_copies
        copies = []
        for _ in range(n_copies):
            new = augment_sentence(sentence, method, pools, p, rng)
            # a copy keeps its labels, so it annotates the types its source does
            copy = keep_label_scope(doc, sentence_to_doc(doc.vocab, new, spans_key=spans_key, mirror_keys=mirror_keys))
            if mirror_ents:
                copy.ents = list(copy.spans[spans_key])
            copies.append(copy)
        output.append(copies)
    if n_dropped:
        # a copy's tokens no longer match the source's, so other annotation cannot follow them
        warnings.warn(
            f"Augmentation ({method}): {n_dropped:,} annotation group(s) that are not the gold "
            f"({', '.join(sorted(dropped_keys))}) were not copied to the augmented copies",
            stacklevel=2,
        )
    return output


def augment_docs(docs: Iterable[Doc], method: AugmentMethod, **settings: Any) -> List[Doc]:
    """Every sentence followed by its augmented copies (size x(1 + n_copies)).

    Arguments as for ``augmented_copies`` (here ``docs`` may be any iterable).
    RETURNS (List[Doc]): for each input doc, the doc itself, then its copies.
    """
    docs = list(docs)
    all_copies = augmented_copies(docs, method, **settings)
    output: List[Doc] = []
    for doc, copies in zip(docs, all_copies):
        output.append(doc)
        output.extend(copies)
    return output


def _gold_copies(doc: Doc, spans_key: Optional[str]) -> Tuple[List[str], bool, List[str]]:
    """Where the gold of ``doc`` is stored besides its own place: the span
    groups that hold exactly the gold, whether doc.ents does (spans_key mode),
    and the names of the other annotation that a copy cannot carry."""
    if spans_key is None:
        mirror_keys = mirrored_span_keys(doc)
        return mirror_keys, False, [key for key in doc.spans if key not in mirror_keys]
    gold = _span_set(gold_spans(doc, spans_key))
    mirror_keys = [key for key, group in doc.spans.items() if key != spans_key and _same(group, gold)]
    # a copy's doc.ents marks every token as annotated, so only a fully annotated source may mirror
    mirror_ents = doc.has_annotation("ENT_IOB", require_complete=True) and _same(doc.ents, gold)
    others = [key for key in doc.spans if key != spans_key and key not in mirror_keys]
    if doc.has_annotation("ENT_IOB") and not mirror_ents:
        others.append("doc.ents")
    return mirror_keys, mirror_ents, others


def _span_set(spans: Iterable[Span]) -> Set[Tuple[int, int, str]]:
    return {(s.start, s.end, s.label_) for s in spans}


def _same(spans: Union[Sequence[Span], SpanGroup], gold: Set[Tuple[int, int, str]]) -> bool:
    return len(spans) == len(gold) and _span_set(spans) == gold
