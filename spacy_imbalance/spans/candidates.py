"""Span candidates of a batch: every span of width 1..max_width of every doc,
enumerated with array ops (no Python loop over spans; O(n·L) memory for n
tokens and width limit L, never O(n²)).

A batch's docs are laid end to end, as ``ops.flatten`` lays their token
vectors, so a candidate is a pair of *global* token indices (first and last
token, inclusive). Candidates are ordered by doc, then start, then width,
which makes the index of a span computable from its start and width
(``Candidates.index``) without searching.
"""
from typing import List, NamedTuple, Sequence, Tuple

import numpy
from thinc.api import Ops
from thinc.types import Array1d, Ints1d


class Candidates(NamedTuple):
    """Spans of a batch. Arrays live on ``ops``' device except ``doc_counts``
    and ``doc_lengths``, which are host lists for splitting per doc."""

    starts: Ints1d  # global index of the first token
    ends: Ints1d  # global index of the last token (inclusive)
    doc_ids: Ints1d  # which doc of the batch each candidate belongs to
    first: Ints1d  # per token: index of its width-1 candidate
    doc_counts: List[int]  # candidates per doc
    doc_lengths: List[int]  # tokens per doc
    max_width: int

    def __len__(self) -> int:
        return int(self.starts.shape[0])

    @property
    def widths(self) -> Ints1d:
        return self.ends - self.starts + 1

    def index(self, starts: Ints1d, widths: Ints1d) -> Ints1d:
        """Candidate indices of spans given by global start and width (each
        width in 1..max_width and inside its doc)."""
        return self.first[starts] + widths - 1


def n_candidates(n_tokens: int, max_width: int) -> int:
    """Spans of width 1..max_width in a doc of n tokens: sum over widths w of
    (n - w + 1) = m·n - m(m-1)/2 with m = min(max_width, n)."""
    m = min(max_width, n_tokens)
    return m * n_tokens - m * (m - 1) // 2


def check_max_width(max_width: int, setting: str = "max_span_width") -> None:
    if isinstance(max_width, bool) or not isinstance(max_width, int) or max_width < 1:
        raise ValueError(f"{setting} must be an integer >= 1 (the widest candidate span, in tokens), got {max_width!r}")


def enumerate_candidates(ops: Ops, doc_lengths: Sequence[int], max_width: int) -> Candidates:
    """All spans of width 1..max_width of docs of the given lengths.

    One n_tokens x max_width mask says which (start, width) pairs fit in
    their doc; its non-zero entries, read row by row, are the candidates in
    (doc, start, width) order.
    """
    check_max_width(max_width)
    xp = ops.xp
    lengths = numpy.asarray(doc_lengths, dtype="int64")
    n_tokens = int(lengths.sum())
    counts = [n_candidates(int(n), max_width) for n in lengths]
    if n_tokens == 0:
        empty = ops.alloc1i(0)
        return Candidates(empty, empty, empty, empty, counts, [int(n) for n in lengths], max_width)
    # built on the device: only the per-doc lengths cross from the host
    # (cupy.repeat takes its repeats as a list)
    doc_of_token = xp.repeat(xp.arange(len(lengths)), lengths.tolist())
    doc_start = xp.asarray(numpy.concatenate([[0], numpy.cumsum(lengths)[:-1]]))
    token = xp.arange(n_tokens)
    # tokens from this one to the end of its doc: the widest span starting here
    room = xp.asarray(lengths)[doc_of_token] - (token - doc_start[doc_of_token])
    fits = xp.arange(1, max_width + 1)[None, :] <= room[:, None]
    starts, width_ids = xp.nonzero(fits)
    n_fit = xp.minimum(room, max_width)
    first = xp.cumsum(n_fit) - n_fit
    return Candidates(
        starts=starts.astype("int32"),
        ends=(starts + width_ids).astype("int32"),
        doc_ids=doc_of_token[starts].astype("int32"),
        first=first.astype("int32"),
        doc_counts=counts,
        doc_lengths=[int(n) for n in lengths],
        max_width=max_width,
    )


def touching(ops: Ops, candidates: Candidates, token_mask: numpy.ndarray) -> Array1d:
    """Per candidate: whether any of its tokens is set in ``token_mask``
    (host bools, one per token of the batch), from prefix sums."""
    counts = numpy.concatenate([[0], numpy.cumsum(token_mask.astype("int64"))])
    counts = ops.xp.asarray(counts)
    return (counts[candidates.ends + 1] - counts[candidates.starts]) > 0


def split_by_doc(values: numpy.ndarray, candidates: Candidates) -> List[numpy.ndarray]:
    """Host array with one row per candidate -> one array per doc."""
    return numpy.split(values, numpy.cumsum(candidates.doc_counts)[:-1]) if candidates.doc_counts else []


def doc_offsets(doc_lengths: Sequence[int]) -> Tuple[int, ...]:
    """Global index of each doc's first token."""
    return tuple(int(x) for x in numpy.concatenate([[0], numpy.cumsum(doc_lengths)[:-1]])) if len(doc_lengths) else ()
