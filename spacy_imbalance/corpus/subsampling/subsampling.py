"""Training subsets for the low-resource and imbalanced settings of Nguyen et
al., "AUC maximization for low-resource NER": a uniform sample of n
sentences (20, 50, ..., 1000), or n sentences whose share of entity tokens
is a chosen one (1, 2, 5, 10, 20 %), the paper's imbalanced data generator."""
import random
from typing import Any, List, Optional, Sequence, Set, Tuple

from spacy.tokens import Doc

from ..stats import gold_spans

# local search budget: tries per selected sentence
_SEARCH_TRIES_PER_SENTENCE = 50


def entity_tokens(doc: Doc, spans_key: Optional[str] = None) -> int:
    """The tokens of a doc covered by at least one gold span."""
    covered: Set[int] = set()
    for span in gold_spans(doc, spans_key):
        covered.update(range(span.start, span.end))
    return len(covered)


def entity_token_share(docs: Sequence[Doc], spans_key: Optional[str] = None) -> float:
    """Entity tokens / all tokens of the docs, a fraction (0.0 when empty)."""
    n_tokens = sum(len(doc) for doc in docs)
    return sum(entity_tokens(doc, spans_key) for doc in docs) / n_tokens if n_tokens else 0.0


def check_subsample_settings(
    n_sentences: int, entity_token_ratio: Optional[float] = None, tolerance: float = 0.005
) -> None:
    """The checks that need no data: n_sentences >= 1, 0 < ratio < 1, 0 < tolerance < 1."""
    if isinstance(n_sentences, bool) or not isinstance(n_sentences, int) or n_sentences < 1:
        raise ValueError(f"n_sentences must be a whole number >= 1, got {n_sentences!r}")
    if entity_token_ratio is not None and not (0.0 < entity_token_ratio < 1.0):
        raise ValueError(
            f"entity_token_ratio must be a fraction in (0, 1) (0.05 for 5 %), got {entity_token_ratio!r}"
        )
    # two shares differ by less than 1: a tolerance of 1 or more (inf too)
    # accepts any selection and makes the target meaningless
    if isinstance(tolerance, bool) or not isinstance(tolerance, (int, float)) or not (0.0 < tolerance < 1.0):
        raise ValueError(
            f"tolerance must be in (0, 1) (a fraction: 0.005 is 0.5 points; 1 or more accepts any share), got {tolerance!r}"
        )


def subsample(docs: Sequence[Doc], n_sentences: int, **settings: Any) -> List[Doc]:
    """The docs ``subsample_indices`` selects (the same arguments), themselves
    (not copies), in corpus order."""
    docs = list(docs)
    return [docs[i] for i in subsample_indices(docs, n_sentences, **settings)]


def subsample_indices(
    docs: Sequence[Doc],
    n_sentences: int,
    *,
    entity_token_ratio: Optional[float] = None,
    seed: int = 0,
    tolerance: float = 0.005,
    spans_key: Optional[str] = None,
) -> List[int]:
    """Select n_sentences sentences, uniformly or with a target share of entity
    tokens, by their positions.

    Without a ratio: a uniform random sample without replacement. With one:
    exactly n_sentences sentences whose entity tokens / all tokens is within
    ``tolerance`` of ``entity_token_ratio``; a ValueError says the closest
    share reached when the target cannot be met.

    docs (Sequence[Doc]): the corpus, one sentence per Doc (as the CLI and the
        readers give them).
    n_sentences (int): how many sentences to keep, 1 to len(docs).
    entity_token_ratio (Optional[float]): the target share of entity tokens, a
        fraction in (0, 1), e.g. 0.05 for 5 %.
    seed (int): seed of ``random.Random``.
    tolerance (float): largest accepted |share - target|, a fraction.
    spans_key (Optional[str]): gold from doc.spans[spans_key] instead of doc.ents.
    RETURNS (List[int]): n_sentences indices into docs, ascending (corpus order).
    """
    check_subsample_settings(n_sentences, entity_token_ratio, tolerance)
    if n_sentences > len(docs):
        raise ValueError(f"n_sentences is {n_sentences:,} but the corpus has only {len(docs):,} sentences")
    rng = random.Random(seed)
    if entity_token_ratio is None:
        return sorted(rng.sample(range(len(docs)), n_sentences))
    counts = [(entity_tokens(doc, spans_key), len(doc)) for doc in docs]
    chosen, reached = _select_by_ratio(counts, n_sentences, entity_token_ratio, tolerance, rng)
    if abs(reached - entity_token_ratio) > tolerance:
        raise ValueError(
            f"cannot select {n_sentences:,} of the corpus' {len(docs):,} sentences with "
            f"{100 * entity_token_ratio:.2f} % entity tokens (+/- {100 * tolerance:.2f} points): "
            f"the closest reached is {100 * reached:.2f} % (whole corpus: "
            f"{100 * entity_token_share(docs, spans_key):.2f} %)"
        )
    return sorted(chosen)


def _select_by_ratio(
    counts: List[Tuple[int, int]], n: int, target: float, tolerance: float, rng: random.Random
) -> Tuple[List[int], float]:
    """Indices of n sentences with entity/all tokens near ``target``, and that share.

    counts holds (entity tokens, tokens) per sentence. First the number k of
    entity-bearing sentences is chosen (the rest entity-free, both drawn in a
    shuffled order) whose share is closest to the target; then random swaps of
    a selected with an unselected sentence are kept when they bring the share
    closer, until it is within tolerance or the tries run out.
    """
    positive = [i for i, (e, _) in enumerate(counts) if e > 0]
    negative = [i for i, (e, _) in enumerate(counts) if e == 0]
    rng.shuffle(positive)
    rng.shuffle(negative)

    def prefix(indices: List[int], which: int) -> List[int]:
        sums = [0]
        for i in indices:
            sums.append(sums[-1] + counts[i][which])
        return sums

    pos_ent, pos_tok, neg_tok = prefix(positive, 0), prefix(positive, 1), prefix(negative, 1)

    def share(ent: int, tok: int) -> float:
        return ent / tok if tok else 0.0

    def gap_of(k: int) -> float:
        return abs(share(pos_ent[k], pos_tok[k] + neg_tok[n - k]) - target)

    # never empty, since n <= len(positive) + len(negative)
    best_k = min(range(max(0, n - len(negative)), min(n, len(positive)) + 1), key=gap_of)
    best_gap = gap_of(best_k)
    chosen = positive[:best_k] + negative[: n - best_k]
    unchosen = positive[best_k:] + negative[n - best_k :]
    ent = sum(counts[i][0] for i in chosen)
    tok = sum(counts[i][1] for i in chosen)
    if best_gap <= tolerance or not unchosen:
        return chosen, share(ent, tok)
    for _ in range(_SEARCH_TRIES_PER_SENTENCE * n):
        a, b = rng.randrange(len(chosen)), rng.randrange(len(unchosen))
        i, j = chosen[a], unchosen[b]
        new_ent = ent - counts[i][0] + counts[j][0]
        new_tok = tok - counts[i][1] + counts[j][1]
        gap = abs(share(new_ent, new_tok) - target)
        if gap < best_gap:
            chosen[a], unchosen[b] = j, i
            ent, tok, best_gap = new_ent, new_tok, gap
            if gap <= tolerance:
                break
    return chosen, share(ent, tok)
