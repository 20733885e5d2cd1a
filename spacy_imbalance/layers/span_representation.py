"""The span representation layer of ``spacy-imbalance.SpanScorer.v1``: span
vectors from the flattened token vectors and each span's first and last token.

* ``"endpoints_width"``: [h_i; h_j; f(j - i + 1)] with a learned width
  embedding f (Top-Neg, Eq. 1);
* ``"endpoints_product"``: [h_i; h_j; h_i - h_j; h_i * h_j] (Li et al., Eq. 2);
* ``"endpoints_mean_max"``: [h_i; h_j; mean_t h_t; max_t h_t; f(j - i + 1)],
  the first, last, mean and max of spaCy's ``mean_max_reducer.v1`` (what
  ``spancat_singlelabel`` scores) with the learned width embedding: the
  gradient reaches every token of a span, not only its two ends.

``span_projector``/``project_spans`` apply an affine layer to the span
vectors of every candidate without building them: the representation is
linear in each of its blocks (but h_i * h_j and the max), so its product
with W is a sum of per-token projections (one gemm over the n tokens) and a
per-width row, gathered per span, instead of one gemm over the n·L
concatenated span vectors; the blocks that are not (the product, the
mean and max) are built for one run of candidates at a time.
"""
from typing import Callable, Literal, NamedTuple, Optional, Tuple, cast

import numpy
from thinc.api import Model, Ops, glorot_uniform_init
from thinc.types import Floats1d, Floats2d, Ints1d, Ints2d

from ..spans.candidates import Candidates

Representation = Literal["endpoints_width", "endpoints_product", "endpoints_mean_max"]
REPRESENTATIONS = ("endpoints_width", "endpoints_product", "endpoints_mean_max")
# the representations with a width embedding (nV rows: the widest span they take)
WIDTH_REPRESENTATIONS = ("endpoints_width", "endpoints_mean_max")
InT = Tuple[Floats2d, Ints1d, Ints1d]  # flattened token vectors, first and last token of each span
OutT = Floats2d
SpanInput = InT


def build_span_representation(representation: Representation, width_embedding: int) -> Model[SpanInput, Floats2d]:
    """Span vectors from the flattened token vectors and each span's first and
    last token. Dims: nI (token width), nV (max span width, set by the
    component), nE (width embedding size), nO (output width)."""
    return Model(
        f"span_repr_{representation}",
        _repr_forward,
        init=_repr_init,
        dims={"nI": None, "nO": None, "nV": None, "nE": width_embedding},
        params={"E": None},
        attrs={"representation": representation},
    )


def _repr_init(model: Model, X: Optional[SpanInput] = None, Y: Optional[Floats2d] = None) -> None:
    if X is not None and not model.has_dim("nI"):
        model.set_dim("nI", X[0].shape[1])
    nI = model.get_dim("nI")
    if model.attrs["representation"] in WIDTH_REPRESENTATIONS:
        model.set_dim("nO", _repr_width(model, nI))
        if not model.has_dim("nV"):
            raise ValueError("SpanScorer.v1: the width embedding needs nV (the max span width) before initialize")
        model.set_param("E", glorot_uniform_init(model.ops, (model.get_dim("nV"), model.get_dim("nE"))))
    else:
        model.set_dim("nO", 4 * nI)
        model.set_param("E", model.ops.alloc2f(0, 0))


def _repr_forward(model: Model, X: SpanInput, is_train: bool) -> Tuple[Floats2d, Callable]:
    tokens, starts, ends = X
    ops = model.ops
    xp = ops.xp
    representation = model.attrs["representation"]
    first, last = tokens[starts], tokens[ends]
    if representation in WIDTH_REPRESENTATIONS:
        width_ids = ends - starts
        E = cast(Floats2d, model.get_param("E"))
        _check_widths_on_host(width_ids, E.shape[0])
    if representation == "endpoints_width":
        output = xp.hstack([first, last, E[width_ids]])
    elif representation == "endpoints_mean_max":
        pooled = _mean_max(ops, tokens, starts, ends, E.shape[0])
        output = xp.hstack([first, last, pooled.mean, pooled.max, E[width_ids]])
    else:
        output = xp.hstack([first, last, first - last, first * last])
    nI = tokens.shape[1]

    def backprop(d_output: Floats2d) -> SpanInput:
        # scatter_add's fast CPU kernel needs contiguous rows (column slices
        # are not); otherwise NumpyOps falls back to numpy.add.at
        d_first = xp.ascontiguousarray(d_output[:, :nI])
        d_last = xp.ascontiguousarray(d_output[:, nI : 2 * nI])
        d_tokens = ops.alloc2f(*tokens.shape)
        if representation in WIDTH_REPRESENTATIONS:
            d_E = ops.alloc2f(*E.shape)
            ops.scatter_add(d_E, width_ids, xp.ascontiguousarray(d_output[:, -E.shape[1] :]))
            model.inc_grad("E", d_E)
        if representation == "endpoints_mean_max":
            pooled.backprop(d_tokens, d_output[:, 2 * nI : 3 * nI], d_output[:, 3 * nI : 4 * nI])
        elif representation == "endpoints_product":
            d_diff = d_output[:, 2 * nI : 3 * nI]
            d_prod = d_output[:, 3 * nI :]
            d_first = d_first + d_diff + d_prod * last
            d_last = d_last - d_diff + d_prod * first
        ops.scatter_add(d_tokens, starts, d_first)
        ops.scatter_add(d_tokens, ends, d_last)
        return (d_tokens, starts, ends)

    return output, backprop


class MeanMax:
    """The mean and the max of each span's token vectors, and the backward
    pass that adds their gradients into the token gradients."""

    def __init__(self, ops: Ops, starts: Ints1d, ends: Ints1d, widest: int, widths: Floats2d, mean: Floats2d, max_: Floats2d, argmax: Ints2d) -> None:
        self.ops, self.starts, self.ends, self.widest = ops, starts, ends, widest
        self.widths = widths  # a column: each span's width as a float
        self.mean, self.max = mean, max_
        self.argmax = argmax  # per span and feature, the offset from the first token of its max

    def backprop(self, d_tokens: Floats2d, d_mean: Floats2d, d_max: Floats2d) -> None:
        ops, xp = self.ops, self.ops.xp
        d_mean = d_mean / self.widths
        for offset in range(self.widest):
            rows = xp.minimum(self.starts + offset, self.ends)
            inside = (self.starts + offset <= self.ends)[:, None]
            d_row = xp.where(inside, d_mean, 0.0) + xp.where(self.argmax == offset, d_max, 0.0)
            ops.scatter_add(d_tokens, rows, xp.ascontiguousarray(d_row, dtype=d_tokens.dtype))


def _mean_max(ops: Ops, tokens: Floats2d, starts: Ints1d, ends: Ints1d, widest: int) -> MeanMax:
    """A pass per offset from the spans' first tokens, ``widest`` (no span
    wider; a host int: reading it off device arrays would wait for the
    device): exact sums, no prefix sums to lose float precision over long
    batches. A span past its last token reads that token again, which
    leaves its max unchanged and is masked out of its sum."""
    xp = ops.xp
    widths = ends - starts + 1
    width_column = ops.reshape2f(cast(Floats1d, widths.astype("float32")), widths.shape[0], 1)
    total = tokens[starts].copy()
    max_ = tokens[starts].copy()
    argmax = xp.zeros(max_.shape, dtype="int32")
    for offset in range(1, widest):
        inside = (starts + offset <= ends)[:, None]
        values = tokens[xp.minimum(starts + offset, ends)]
        total += xp.where(inside, values, 0.0).astype(total.dtype)
        larger = values > max_
        max_ = xp.where(larger, values, max_)
        argmax = xp.where(larger, offset, argmax).astype("int32")
    return MeanMax(ops, starts, ends, widest, width_column, total / width_column, max_, argmax)


def _check_widths_on_host(width_ids: Ints1d, n_widths: int) -> None:
    """Out-of-range rows of E would be read silently on GPU (cupy clips fancy
    indices). Checked here only for host arrays, where it costs no device
    sync; device callers validate on the host before upload: SpanScorer.v1
    checks its max_span_width against nV, and its candidates never exceed it."""
    if isinstance(width_ids, numpy.ndarray) and width_ids.shape[0] and int(width_ids.max()) >= n_widths:
        raise ValueError(f"SpanScorer.v1: a span of width {int(width_ids.max()) + 1} exceeds the width embedding's {n_widths}")


class SpanProjector(NamedTuple):
    """An affine map of a batch's span vectors, ready to apply to any run of
    candidates (``rows``): a table of per-token rows (2t: token t seen as a
    span's first token, 2t + 1: as its last) and per-width rows, and per
    candidate the indices of the three rows it sums. ``interior``: the
    blocks that are not a sum of per-token terms, built per run (the
    h_i * h_j of ``endpoints_product``, the mean and max of
    ``endpoints_mean_max``)."""

    ops: Ops
    table: Floats2d
    indices: Ints2d
    interior: Optional["Interior"]

    def rows(self, start: int, end: int) -> Floats2d:
        """The projections of candidates start..end - 1."""
        if end <= start:
            return self.ops.alloc2f(0, self.table.shape[1])
        projected = self.ops.gather_add(self.table, self.indices[start:end])
        if self.interior is not None:
            projected += self.interior.project(self.ops, start, end)
        return projected


class Interior(NamedTuple):
    """The blocks of a representation built from the spans' tokens for one
    run of candidates, and the block of W that projects them."""

    representation: Representation
    tokens: Floats2d
    starts: Ints1d
    ends: Ints1d
    W_block: Floats2d
    widest: int

    def project(self, ops: Ops, start: int, end: int) -> Floats2d:
        starts, ends = self.starts[start:end], self.ends[start:end]
        if self.representation == "endpoints_product":
            vectors = self.tokens[starts] * self.tokens[ends]
        else:
            pooled = _mean_max(ops, self.tokens, starts, ends, self.widest)
            vectors = ops.xp.hstack([pooled.mean, pooled.max])
        return ops.gemm(vectors, self.W_block, trans2=True)


def project_spans(model: Model[SpanInput, Floats2d], tokens: Floats2d, candidates: Candidates, W: Floats2d, b: Floats1d) -> Floats2d:
    """``model.predict((tokens, candidates.starts, candidates.ends)) @ W.T + b``,
    one row per candidate (W of shape (nH, model's nO)), without building the
    span vectors: the same values up to float rounding."""
    return span_projector(model, tokens, candidates, W, b).rows(0, len(candidates))


def span_projector(model: Model[SpanInput, Floats2d], tokens: Floats2d, candidates: Candidates, W: Floats2d, b: Floats1d) -> SpanProjector:
    """The projection of the span vectors of ``candidates`` by W, b as a
    ``SpanProjector``: O(n·nI·nH) for the table of n tokens, then O(nH) per
    candidate (``endpoints_width``) instead of O(nO·nH)."""
    ops = model.ops
    if len(candidates) == 0:
        return SpanProjector(ops, ops.alloc2f(0, W.shape[0]), ops.alloc2i(0, 3), None)
    nI = tokens.shape[1]
    if W.shape[1] != _repr_width(model, nI):
        raise ValueError(f"SpanScorer.v1: a projection of width {W.shape[1]} does not fit span vectors of width {_repr_width(model, nI)}")
    if model.attrs["representation"] in WIDTH_REPRESENTATIONS:
        return _width_projector(model, tokens, candidates, W, b)
    return _product_projector(ops, tokens, candidates, W, b)


def _repr_width(model: Model, nI: int) -> int:
    if model.attrs["representation"] == "endpoints_width":
        return 2 * nI + model.get_dim("nE")
    if model.attrs["representation"] == "endpoints_mean_max":
        return 4 * nI + model.get_dim("nE")
    return 4 * nI


def _width_projector(model: Model, tokens: Floats2d, candidates: Candidates, W: Floats2d, b: Floats1d) -> SpanProjector:
    """[h_i; h_j; E[w]] @ W.T + b = h_i W_i^T + h_j W_j^T + (E[w] W_E^T + b);
    ``endpoints_mean_max`` adds [mean; max] W_mm^T, built per run."""
    ops = model.ops
    E = cast(Floats2d, model.get_param("E"))  # the width embedding, nW x nE
    if candidates.max_width > E.shape[0]:
        # validated on the host: gather_add's CPU bounds check misses the row
        # just past the table's end
        raise ValueError(f"SpanScorer.v1: a span of width {candidates.max_width} exceeds the width embedding's {E.shape[0]}")
    nI, nE = tokens.shape[1], E.shape[1]
    per_width = ops.gemm(E, ops.xp.ascontiguousarray(W[:, W.shape[1] - nE :]), trans2=True) + b
    width_ids = candidates.ends - candidates.starts
    interior = None
    if model.attrs["representation"] == "endpoints_mean_max":
        W_mean_max = ops.xp.ascontiguousarray(W[:, 2 * nI : 4 * nI])
        interior = Interior("endpoints_mean_max", tokens, candidates.starts, candidates.ends, W_mean_max, candidates.max_width)
    return _endpoint_projector(ops, tokens, candidates, (W[:, :nI], W[:, nI : 2 * nI]), per_width, width_ids, interior)


def _product_projector(ops: Ops, tokens: Floats2d, candidates: Candidates, W: Floats2d, b: Floats1d) -> SpanProjector:
    """[h_i; h_j; h_i - h_j; h_i * h_j] @ W.T + b
    = h_i (W_1 + W_3)^T + h_j (W_2 - W_3)^T + b + (h_i * h_j) W_4^T."""
    nI = tokens.shape[1]
    W_first, W_last, W_diff = W[:, :nI], W[:, nI : 2 * nI], W[:, 2 * nI : 3 * nI]
    bias_ids = ops.xp.zeros(len(candidates), dtype="int32")
    product = Interior("endpoints_product", tokens, candidates.starts, candidates.ends, ops.xp.ascontiguousarray(W[:, 3 * nI :]), candidates.max_width)
    return _endpoint_projector(ops, tokens, candidates, (W_first + W_diff, W_last - W_diff), ops.reshape2f(b, 1, b.shape[0]), bias_ids, product)


def _endpoint_projector(
    ops: Ops,
    tokens: Floats2d,
    candidates: Candidates,
    W_endpoints: Tuple[Floats2d, Floats2d],
    extra: Floats2d,
    extra_ids: Ints1d,
    interior: Optional[Interior],
) -> SpanProjector:
    """Rows 2t and 2t + 1 of the table: token t projected by the first and by
    the last token's block of W (one gemm over the tokens, written in place);
    then the rows of ``extra``, which the candidates index by ``extra_ids``."""
    xp = ops.xp
    n_tokens, n_out = tokens.shape[0], extra.shape[1]
    table = ops.alloc2f(2 * n_tokens + extra.shape[0], n_out, zeros=False)
    # (n, 2·nH) rows [first | last] are rows 2t, 2t + 1 of the (2n, nH) table
    ops.gemm(tokens, xp.concatenate(W_endpoints), trans2=True, out=ops.reshape2f(table[: 2 * n_tokens], n_tokens, 2 * n_out))
    table[2 * n_tokens :] = extra
    indices = xp.stack([2 * candidates.starts, 2 * candidates.ends + 1, 2 * n_tokens + extra_ids], axis=1)
    return SpanProjector(ops, table, xp.ascontiguousarray(indices, dtype="int32"), interior)
