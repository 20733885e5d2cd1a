"""Span candidates of a batch: every span of width 1..max_width of every doc,
enumerated with array ops (no Python loop over spans; O(n·L) memory for n
tokens and width limit L, never O(n²)).

A batch's docs are laid end to end, as ``ops.flatten`` lays their token
vectors, so a candidate is a pair of *global* token indices (first and last
token, inclusive). Candidates are ordered by doc, then start, then width,
which makes the index of a span computable from its start and width
(``Candidates.index``) without searching.
"""
import math
from dataclasses import dataclass
from typing import List, Optional, Sequence, Tuple, Union, cast

import numpy
from thinc.api import Ops
from thinc.types import Array1d, Ints1d


# a frozen dataclass, not a NamedTuple: a tuple's own ``index`` (a value's
# position) would clash with ``Candidates.index``
@dataclass(frozen=True)
class Candidates:
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


# The widest candidate a component may be configured with. Its width
# embedding has a row per width, and prediction projects every row (a
# max_span_width of 1,000,000 asked for 2.86 GiB to predict 10-token texts);
# 256 is twice the widest this project uses (Li et al.'s every-span pool at
# 128, above the longest WNUT-17 sentence, 105 tokens) and far beyond any
# entity (tens of tokens at most), while its table stays below a MiB.
MAX_SPAN_WIDTH = 256


# A width read from the data (``covering_width``) covers this share of the
# training set's gold spans, and stays within [1, MAX_DATA_WIDTH]: the rare
# longer entity costs a candidate per token for every sentence, and widths
# 4-8 are more than half of the candidates of width <= 8 on WNUT-2017 but a
# few percent of its entities.
WIDTH_COVERAGE = 0.99
MAX_DATA_WIDTH = 16


def covering_width(widths: Sequence[int], coverage: float = WIDTH_COVERAGE, high: int = MAX_DATA_WIDTH) -> int:
    """The smallest width w (in [1, high]) such that at least ``coverage`` of
    the spans of ``widths`` are at most w tokens wide; 1 without spans."""
    if not widths:
        return 1
    ordered = sorted(int(w) for w in widths)
    # the ceil(coverage · n)-th smallest width, counted without float overshoot
    rank = max(1, math.ceil(coverage * len(ordered) - 1e-9))
    return max(1, min(high, ordered[rank - 1]))


def check_max_width(max_width: int, setting: str = "max_span_width", high: Optional[int] = None) -> None:
    """A ValueError naming ``setting`` unless ``max_width`` is an integer in
    [1, high] (no upper end when ``high`` is None)."""
    too_wide = high is not None and isinstance(max_width, int) and max_width > high
    if isinstance(max_width, bool) or not isinstance(max_width, int) or max_width < 1 or too_wide:
        limit = f"in [1, {high}]" if high is not None else ">= 1"
        raise ValueError(f"{setting} must be an integer {limit} (the widest candidate span, in tokens), got {max_width!r}")


def enumerate_candidates(ops: Ops, doc_lengths: Sequence[int], max_width: int) -> Candidates:
    """All spans of width 1..max_width of docs of the given lengths.

    One n_tokens x max_width mask says which (start, width) pairs fit in
    their doc; its non-zero entries, read row by row, are the candidates in
    (doc, start, width) order. The mask is built on the host, where its
    size is known without asking the device, and the four index arrays go
    to the device in one upload (``update`` and ``predict`` call this for
    every batch).
    """
    check_max_width(max_width)
    lengths = numpy.asarray(doc_lengths, dtype="int64")
    counts = [n_candidates(int(n), max_width) for n in lengths]
    host = _host_candidates(lengths, max_width)
    starts, ends, doc_ids, first = _split_upload(ops, host)
    return Candidates(starts, ends, doc_ids, first, counts, [int(n) for n in lengths], max_width)


def _host_candidates(lengths: numpy.ndarray, max_width: int) -> List[numpy.ndarray]:
    """starts, ends, doc ids (per candidate) and first (per token), int32 on the host."""
    n_tokens = int(lengths.sum())
    # no span is wider than its doc: the mask needs no more columns than the
    # longest doc has tokens, whatever max_width is
    max_width = min(max_width, int(lengths.max()) if len(lengths) else 0)
    doc_of_token = numpy.repeat(numpy.arange(len(lengths)), lengths)
    doc_start = numpy.concatenate([[0], numpy.cumsum(lengths)[:-1]]).astype("int64")
    token = numpy.arange(n_tokens)
    # tokens from this one to the end of its doc: the widest span starting here
    room = lengths[doc_of_token] - (token - doc_start[doc_of_token])
    fits = numpy.arange(1, max_width + 1)[None, :] <= room[:, None]
    starts, width_ids = numpy.nonzero(fits)
    n_fit = numpy.minimum(room, max_width)
    first = numpy.cumsum(n_fit) - n_fit
    return [a.astype("int32") for a in (starts, starts + width_ids, doc_of_token[starts], first)]


def _split_upload(ops: Ops, arrays: List[numpy.ndarray]) -> List[Ints1d]:
    """The 1-d int32 ``arrays`` on the ops' device, in one transfer (views of it)."""
    # the arrays are 1-d int32 (_host_candidates), which Ints1d describes
    device = ops.asarray1i(cast(Ints1d, numpy.concatenate(arrays)))
    bounds = numpy.cumsum([len(a) for a in arrays]).tolist()
    return [device[start:end] for start, end in zip([0, *bounds[:-1]], bounds)]


def touching(ops: Ops, candidates: Candidates, token_mask: Union[numpy.ndarray, Array1d]) -> Array1d:
    """Per candidate: whether any of its tokens is set in ``token_mask``
    (bools, one per token of the batch, on the host or the ops' device),
    from prefix sums on the ops' device."""
    xp = ops.xp
    mask = xp.asarray(token_mask).astype("int64")
    counts = xp.concatenate([xp.zeros((1,), dtype="int64"), xp.cumsum(mask)])
    return (counts[candidates.ends + 1] - counts[candidates.starts]) > 0


def split_by_doc(values: numpy.ndarray, candidates: Candidates) -> List[numpy.ndarray]:
    """Host array with one row per candidate -> one array per doc."""
    return numpy.split(values, numpy.cumsum(candidates.doc_counts)[:-1]) if candidates.doc_counts else []


def doc_offsets(doc_lengths: Sequence[int]) -> Tuple[int, ...]:
    """Global index of each doc's first token."""
    return tuple(int(x) for x in numpy.concatenate([[0], numpy.cumsum(doc_lengths)[:-1]])) if len(doc_lengths) else ()
