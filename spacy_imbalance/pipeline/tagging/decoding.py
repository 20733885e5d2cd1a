"""Decoders: constrained Viterbi for tag sequences (``token_ner``,
``two_task_ner``) and greedy non-overlapping spans (``sampled_spancat``).

Constrained Viterbi finds the highest-scoring *valid* tag sequence.

A per-token argmax can emit ``O I-PER`` or ``B-LOC I-PER``; reading entities
off such a sequence needs guesses. Instead the decoder maximises the sum of
per-token log-probabilities over the sequences allowed by the tag scheme's
transition masks (``spacy_imbalance.pipeline.tagging.tags.transition_masks``). It runs on the
whole batch at once through ``ops.xp`` (NumPy or CuPy): docs are padded to
the longest, and a padded position carries every path unchanged.
"""
from typing import List, Sequence

import numpy
from thinc.api import Ops
from thinc.types import Floats2d, Ints1d

# finite, so that 0 * penalty and penalty - penalty stay defined
_FORBIDDEN = -1e30


def constrained_viterbi(
    ops: Ops,
    log_probs: Sequence[Floats2d],
    start: numpy.ndarray,
    trans: numpy.ndarray,
    end: numpy.ndarray,
) -> List[Ints1d]:
    """Best valid tag ids per doc (NumPy int32 arrays). ``log_probs[d]`` is
    (tokens x tags); ``start``/``trans``/``end`` are the boolean masks."""
    lengths = [len(lp) for lp in log_probs]
    if not lengths or max(lengths) == 0:
        return [numpy.zeros((n,), dtype="int32") for n in lengths]
    xp = ops.xp
    n_docs, max_len, n_tags = len(lengths), max(lengths), int(trans.shape[0])
    # one padded copy (zeros past each doc's end) instead of a copy per doc
    scores = ops.pad(list(log_probs), round_to=1).astype("float32", copy=False)
    penalty = ops.asarray(numpy.where(trans, 0.0, _FORBIDDEN).astype("float32"))
    start_penalty = ops.asarray(numpy.where(start, 0.0, _FORBIDDEN).astype("float32"))
    end_penalty = ops.asarray(numpy.where(end, 0.0, _FORBIDDEN).astype("float32"))
    length_arr = ops.asarray(numpy.asarray(lengths, dtype="int32"))
    best = scores[:, 0] + start_penalty
    back = xp.zeros((n_docs, max_len, n_tags), dtype="int32")
    for t in range(1, max_len):
        candidates = best[:, :, None] + penalty[None]  # (docs, from, to)
        prev = candidates.argmax(axis=1).astype("int32")
        step = xp.take_along_axis(candidates, prev[:, None, :], axis=1)[:, 0] + scores[:, t]
        active = (t < length_arr)[:, None]
        # past a doc's end, keep its scores and point every tag at itself
        best = xp.where(active, step, best)
        back[:, t] = xp.where(active, prev, xp.arange(n_tags, dtype="int32")[None, :])
    last = (best + end_penalty).argmax(axis=1).astype("int32")
    paths = xp.zeros((n_docs, max_len), dtype="int32")
    paths[:, max_len - 1] = last
    for t in range(max_len - 1, 0, -1):
        paths[:, t - 1] = xp.take_along_axis(back[:, t], paths[:, t, None], axis=1)[:, 0]
    host = ops.to_numpy(paths)
    return [host[d, : lengths[d]].copy() for d in range(n_docs)]


def greedy_non_overlapping(starts: numpy.ndarray, ends: numpy.ndarray, scores: numpy.ndarray) -> List[int]:
    """Spans (token ``starts``, exclusive ``ends``) kept greedily by descending
    score, each only when it overlaps no span kept before it (Li et al. 2021,
    Sec. 2.3). Returns their indices in text order. Ties keep the earlier
    index, so the result does not depend on the sort's stability."""
    if len(starts) == 0:
        return []
    order = numpy.lexsort((numpy.arange(len(scores)), -numpy.asarray(scores)))
    taken = numpy.zeros(int(numpy.max(ends)), dtype=bool)
    kept = []
    for i in order:
        start, end = int(starts[i]), int(ends[i])
        if not taken[start:end].any():
            taken[start:end] = True
            kept.append(int(i))
    return sorted(kept, key=lambda i: int(starts[i]))
