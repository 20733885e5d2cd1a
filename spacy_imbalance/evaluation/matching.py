"""Gold matching for decoded dev candidates, vectorised over the whole dev set.

``DevMatcher.totals`` gives the same (labels x tp/fp/fn) table as
``scorers.counts.ents_counts`` on the docs the component would annotate
(``spacy-imbalance.ents_macro_scorer.v1``, the component's scorer), without
building a single ``Span``: the gold is looked up once per candidate, so a
threshold search can score hundreds of decodings. The rules are
``ents_counts``'s: exact (label, start, end) matches against ``doc.ents`` (or
``doc.spans[gold_key]``); docs without entity annotation (without the gold
group) are not scored; a prediction touching a token whose annotation is
missing is not counted. Entities the docs already have (from a component
before this one) are kept and win, as ``keep_preset`` does: they are
predictions, and a decoded span overlapping one is dropped after decoding.

``check_gold`` and ``check_dev_gold`` refuse dev data with no gold to match:
every threshold search (of ``sampled_spancat`` and of ``two_task_ner``) would
score 0 everywhere on it.
"""
from typing import Dict, List, Optional, Sequence, Tuple

import numpy
from spacy.tokens import Doc

from ..scorers.counts import FN, FP, TP
from ..spans.decoding import greedy_non_overlapping
from .predictions import SpanPredictions

Gold = Tuple[str, int, int]  # label, global start, exclusive end


class DevMatcher:
    """What each candidate of ``predictions`` is in the gold of ``gold_docs``.

    labels: the scored labels: the component's, then any other label of the
    gold or of the docs' preset entities (a gold label the component cannot
    predict still counts in macro-F1, with F = 0)."""

    def __init__(self, predictions: SpanPredictions, gold_docs: Sequence[Doc], gold_key: Optional[str] = None) -> None:
        self.predictions = predictions
        golds, unscored = _gold(gold_docs, predictions.doc_starts, gold_key)
        presets = [(e.label_, int(start) + e.start, int(start) + e.end) for doc, start in zip(predictions.docs, predictions.doc_starts) for e in doc.ents]
        extra = sorted({label for label, _, _ in golds + presets} - set(predictions.classes[1:]))
        self.labels: List[str] = [*predictions.classes[1:], *extra]
        index = {label: i for i, label in enumerate(self.labels)}
        n_tokens = predictions.n_tokens
        # class column c >= 1 is label c - 1
        self.label_index = predictions.labels - 1
        self.gold_label = _lookup(golds, index, predictions.starts, predictions.ends, n_tokens)
        self.ignored = _touches(unscored, predictions.starts, predictions.ends)
        preset_tokens = _token_mask([(s, e) for _, s, e in presets], n_tokens)
        self.blocked = _touches(preset_tokens, predictions.starts, predictions.ends)
        self.gold_totals = numpy.bincount([index[label] for label, _, _ in golds], minlength=len(self.labels)).astype("int64")
        self.preset_totals = _preset_totals(presets, golds, unscored, index)

    def totals(self, kept: numpy.ndarray) -> numpy.ndarray:
        """(n_labels, 3) tp, fp, fn when the candidates ``kept`` (indices,
        non-overlapping) are the decoded spans."""
        kept = kept[~(self.blocked[kept] | self.ignored[kept])]
        labels = self.label_index[kept]
        hit = self.gold_label[kept] == labels
        n = len(self.labels)
        totals = self.preset_totals.copy()
        totals[:, TP] += numpy.bincount(labels[hit], minlength=n)
        totals[:, FP] += numpy.bincount(labels[~hit], minlength=n)
        totals[:, FN] = self.gold_totals - totals[:, TP]
        return totals

    def decode(self, predicted: numpy.ndarray) -> numpy.ndarray:
        """Indices of the candidates kept when those of the boolean mask
        ``predicted`` are decoded greedily by probability, as the component
        decodes them (the dev docs' token ranges are disjoint, so one pass
        over the dev set is a pass per doc)."""
        chosen = numpy.flatnonzero(predicted)
        p = self.predictions
        kept = greedy_non_overlapping(p.starts[chosen], p.ends[chosen], p.confidence[chosen])
        return chosen[numpy.asarray(kept, dtype="int64")]


def check_gold(gold_docs: Sequence[Doc], source: str = "the dev docs") -> None:
    """Thresholds tuned on data without entities are noise: macro-F1 is 0
    (or undefined) at every threshold, and the first of the grid would win."""
    if not any(doc.ents for doc in gold_docs):
        raise ValueError(
            f"{source} has no gold entities ({len(gold_docs)} docs): macro-F1 is 0 at every threshold "
            "pair, so there is nothing to tune on; give dev data with entities"
        )


def check_dev_gold(gold_docs: Sequence[Doc], gold_key: Optional[str], source: str = "the dev docs") -> None:
    """Tuning on dev data without gold entities is noise (macro-F1 0 everywhere)."""
    if gold_key is None:
        check_gold(gold_docs, source)
    elif not any(len(doc.spans.get(gold_key, ())) for doc in gold_docs):
        raise ValueError(
            f"{source} has no gold spans in doc.spans[{gold_key!r}] (the component's gold_key; {len(gold_docs)} docs): "
            "macro-F1 is 0 at every threshold, so there is nothing to tune on; give dev data with that span group"
        )


def _gold(gold_docs: Sequence[Doc], doc_starts: numpy.ndarray, gold_key: Optional[str]) -> Tuple[List[Gold], numpy.ndarray]:
    """The scored gold spans at global positions, and per token whether a
    prediction touching it goes uncounted (unscored doc, missing annotation)."""
    golds: List[Gold] = []
    unscored = numpy.zeros(int(doc_starts[-1]), dtype=bool)
    for doc, start in zip(gold_docs, doc_starts):
        start = int(start)
        if gold_key is None:
            if not doc.has_annotation("ENT_IOB"):
                unscored[start : start + len(doc)] = True
                continue
            unscored[start : start + len(doc)] = [token.ent_iob == 0 for token in doc]
            spans = doc.ents
        else:
            if gold_key not in doc.spans:
                unscored[start : start + len(doc)] = True
                continue
            spans = doc.spans[gold_key]
        # a set: a span group may hold the same span twice, a gold key once
        golds.extend(sorted({(s.label_, start + s.start, start + s.end) for s in spans}, key=lambda g: (g[1], g[2], g[0])))
    return golds, unscored


def _lookup(golds: List[Gold], index: Dict[str, int], starts: numpy.ndarray, ends: numpy.ndarray, n_tokens: int) -> numpy.ndarray:
    """Per candidate, the label index of the gold span at exactly its
    position, or -1."""
    found = numpy.full(len(starts), -1, dtype="int64")
    if not golds or not len(starts):
        return found
    keys = numpy.asarray([s * (n_tokens + 1) + e for _, s, e in golds], dtype="int64")
    labels = numpy.asarray([index[label] for label, _, _ in golds], dtype="int64")
    order = numpy.argsort(keys, kind="stable")
    keys, labels = keys[order], labels[order]
    if (keys[1:] == keys[:-1]).any():
        s, e = divmod(int(keys[1:][keys[1:] == keys[:-1]][0]), n_tokens + 1)
        raise ValueError(
            f"a gold span (tokens {s}-{e} of the dev set laid end to end) has two labels; "
            "sampled_spancat gives each span one class"
        )
    wanted = starts * (n_tokens + 1) + ends
    at = numpy.minimum(numpy.searchsorted(keys, wanted), len(keys) - 1)
    hit = keys[at] == wanted
    found[hit] = labels[at[hit]]
    return found


def _token_mask(spans: List[Tuple[int, int]], n_tokens: int) -> numpy.ndarray:
    mask = numpy.zeros(n_tokens, dtype=bool)
    for start, end in spans:
        mask[start:end] = True
    return mask


def _touches(tokens: numpy.ndarray, starts: numpy.ndarray, ends: numpy.ndarray) -> numpy.ndarray:
    """Per span, whether any of its tokens is set in the boolean ``tokens``."""
    before = numpy.concatenate([[0], numpy.cumsum(tokens, dtype="int64")])
    return before[ends] > before[starts]


def _preset_totals(presets: List[Gold], golds: List[Gold], unscored: numpy.ndarray, index: Dict[str, int]) -> numpy.ndarray:
    """tp and fp of the entities the docs had before the component."""
    totals = numpy.zeros((len(index), 3), dtype="int64")
    gold_set = set(golds)
    for label, start, end in presets:
        if not unscored[start:end].any():
            totals[index[label], TP if (label, start, end) in gold_set else FP] += 1
    return totals
