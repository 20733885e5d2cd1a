"""Constrained Viterbi for tag sequences (``token_ner``, ``two_task_ner``):
the highest-scoring *valid* tag sequence. (Scored spans are decoded in
``spacy_imbalance.spans.decoding``.)

A per-token argmax can emit ``O I-PER`` or ``B-LOC I-PER``; reading entities
off such a sequence needs guesses. Instead the decoder maximises the sum of
per-token log-probabilities over the sequences allowed by the tag scheme's
transition masks (``spacy_imbalance.pipeline.tagging.tags.transition_masks``). It runs on the
whole batch at once through ``ops.xp`` (NumPy or CuPy): docs are padded to
the longest, and a padded position carries every path unchanged.
"""
from functools import lru_cache
from typing import List, Sequence, Tuple, cast

import numpy
from thinc.api import Ops
from thinc.types import Floats1d, Floats2d, Ints1d

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
    (tokens x tags); ``start``/``trans``/``end`` are the boolean masks.

    On a GPU the only copy back is the paths, once per batch; the masks are
    uploaded once per ops and mask set (``_penalties``)."""
    lengths = [len(lp) for lp in log_probs]
    if not lengths or max(lengths) == 0:
        # host int32 paths, as below (all empty: no doc has a token)
        return [cast(Ints1d, numpy.zeros((n,), dtype="int32")) for n in lengths]
    xp = ops.xp
    n_docs, max_len, n_tags = len(lengths), max(lengths), int(trans.shape[0])
    # one padded copy (zeros past each doc's end) instead of a copy per doc
    scores = ops.asarray3f(ops.pad(list(log_probs), round_to=1))
    start_penalty, penalty, end_penalty = _penalties(ops, _MaskKey(start, trans, end))
    length_arr = ops.asarray1i(lengths)
    # where a doc has ended, every tag points back at itself
    itself = xp.arange(n_tags, dtype="int32")[None, :]
    best = scores[:, 0] + start_penalty
    back = xp.zeros((n_docs, max_len, n_tags), dtype="int32")
    for t in range(1, max_len):
        # (docs, from, 1) + (from, to): every path extended by every transition
        candidates = ops.reshape3f(best, n_docs, n_tags, 1) + penalty
        prev = ops.asarray2i(candidates.argmax(axis=1))  # (docs, to): the best tag to come from
        step = xp.take_along_axis(candidates, ops.reshape3i(prev, n_docs, 1, n_tags), axis=1)[:, 0] + scores[:, t]
        active = (t < length_arr)[:, None]
        # past a doc's end, keep its scores and point every tag at itself
        best = xp.where(active, step, best)
        back[:, t] = xp.where(active, prev, itself)
    last = (best + end_penalty).argmax(axis=1).astype("int32")
    paths = xp.zeros((n_docs, max_len), dtype="int32")
    paths[:, max_len - 1] = last
    for t in range(max_len - 1, 0, -1):
        paths[:, t - 1] = xp.take_along_axis(back[:, t], paths[:, t, None], axis=1)[:, 0]
    host = ops.to_numpy(paths)
    return [host[d, : lengths[d]].copy() for d in range(n_docs)]


class _MaskKey:
    """The three boolean masks, hashable by content (they are small: n_tags^2)."""

    def __init__(self, start: numpy.ndarray, trans: numpy.ndarray, end: numpy.ndarray) -> None:
        self.masks = (start, trans, end)
        self._key = tuple((m.shape, numpy.asarray(m, dtype=bool).tobytes()) for m in self.masks)

    def __hash__(self) -> int:
        return hash(self._key)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, _MaskKey) and self._key == other._key


@lru_cache(maxsize=32)
def _penalties(ops: Ops, masks: _MaskKey) -> Tuple[Floats1d, Floats2d, Floats1d]:
    """The start, transition and end penalties (0 or _FORBIDDEN) on the ops'
    device, in one upload, kept for the next batch: a component decodes with
    the same masks every time."""
    start, trans, end = masks.masks
    n_tags = trans.shape[0]
    table = numpy.vstack([start[None, :], trans, end[None, :]])
    # a 2-d float32 numpy array, which Floats2d describes
    device = ops.asarray2f(cast(Floats2d, numpy.where(table, 0.0, _FORBIDDEN).astype("float32")))
    return device[0], device[1 : n_tags + 1], device[n_tags + 1]
