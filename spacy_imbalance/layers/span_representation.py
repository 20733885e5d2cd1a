"""The span representation layer of ``spacy-imbalance.SpanScorer.v1``: span
vectors from the flattened token vectors and each span's first and last token.

* ``"endpoints_width"``: [h_i; h_j; f(j - i + 1)] with a learned width
  embedding f (Top-Neg, Eq. 1);
* ``"endpoints_product"``: [h_i; h_j; h_i - h_j; h_i * h_j] (Li et al., Eq. 2).

``span_projector``/``project_spans`` apply an affine layer to the span
vectors of every candidate without building them: the representation is
linear in each of its blocks (but h_i * h_j), so its product with W is a sum
of per-token projections (one gemm over the n tokens) and a per-width row,
gathered per span, instead of one gemm over the n·L concatenated span
vectors.
"""
from typing import Callable, Literal, NamedTuple, Optional, Tuple, cast

import numpy
from thinc.api import Model, Ops, glorot_uniform_init
from thinc.types import Floats1d, Floats2d, Ints1d, Ints2d

from ..spans.candidates import Candidates

Representation = Literal["endpoints_width", "endpoints_product"]
REPRESENTATIONS = ("endpoints_width", "endpoints_product")
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
    if model.attrs["representation"] == "endpoints_width":
        model.set_dim("nO", 2 * nI + model.get_dim("nE"))
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
    first, last = tokens[starts], tokens[ends]
    if model.attrs["representation"] == "endpoints_width":
        width_ids = ends - starts
        E = model.get_param("E")
        _check_widths_on_host(width_ids, E.shape[0])
        output = xp.hstack([first, last, E[width_ids]])
    else:
        output = xp.hstack([first, last, first - last, first * last])
    nI = tokens.shape[1]

    def backprop(d_output: Floats2d) -> SpanInput:
        # scatter_add's fast CPU kernel needs contiguous rows (column slices
        # are not); otherwise NumpyOps falls back to numpy.add.at
        d_first = xp.ascontiguousarray(d_output[:, :nI])
        d_last = xp.ascontiguousarray(d_output[:, nI : 2 * nI])
        if model.attrs["representation"] == "endpoints_width":
            d_E = ops.alloc2f(*E.shape)
            ops.scatter_add(d_E, width_ids, xp.ascontiguousarray(d_output[:, 2 * nI :]))
            model.inc_grad("E", d_E)
        else:
            d_diff = d_output[:, 2 * nI : 3 * nI]
            d_prod = d_output[:, 3 * nI :]
            d_first = d_first + d_diff + d_prod * last
            d_last = d_last - d_diff + d_prod * first
        d_tokens = ops.alloc2f(*tokens.shape)
        ops.scatter_add(d_tokens, starts, d_first)
        ops.scatter_add(d_tokens, ends, d_last)
        return (d_tokens, starts, ends)

    return output, backprop


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
    candidate the indices of the three rows it sums. ``product``: what the
    h_i * h_j block of ``endpoints_product`` needs (token vectors, the
    candidates' first and last tokens, the block of W), as that block is
    not a sum of per-token terms."""

    ops: Ops
    table: Floats2d
    indices: Ints2d
    product: Optional[Tuple[Floats2d, Ints1d, Ints1d, Floats2d]]

    def rows(self, start: int, end: int) -> Floats2d:
        """The projections of candidates start..end - 1."""
        if end <= start:
            return self.ops.alloc2f(0, self.table.shape[1])
        projected = self.ops.gather_add(self.table, self.indices[start:end])
        if self.product is not None:
            tokens, firsts, lasts, W_product = self.product
            span_products = tokens[firsts[start:end]] * tokens[lasts[start:end]]
            projected += self.ops.gemm(span_products, W_product, trans2=True)
        return projected


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
    if model.attrs["representation"] == "endpoints_width":
        return _width_projector(model, tokens, candidates, W, b)
    return _product_projector(ops, tokens, candidates, W, b)


def _repr_width(model: Model, nI: int) -> int:
    if model.attrs["representation"] == "endpoints_width":
        return 2 * nI + model.get_dim("nE")
    return 4 * nI


def _width_projector(model: Model, tokens: Floats2d, candidates: Candidates, W: Floats2d, b: Floats1d) -> SpanProjector:
    """[h_i; h_j; E[w]] @ W.T + b = h_i W_i^T + h_j W_j^T + (E[w] W_E^T + b)."""
    ops = model.ops
    E = cast(Floats2d, model.get_param("E"))  # the width embedding, nW x nE
    if candidates.max_width > E.shape[0]:
        # validated on the host: gather_add's CPU bounds check misses the row
        # just past the table's end
        raise ValueError(f"SpanScorer.v1: a span of width {candidates.max_width} exceeds the width embedding's {E.shape[0]}")
    nI = tokens.shape[1]
    per_width = ops.gemm(E, ops.xp.ascontiguousarray(W[:, 2 * nI :]), trans2=True) + b
    width_ids = candidates.ends - candidates.starts
    return _endpoint_projector(ops, tokens, candidates, (W[:, :nI], W[:, nI : 2 * nI]), per_width, width_ids, None)


def _product_projector(ops: Ops, tokens: Floats2d, candidates: Candidates, W: Floats2d, b: Floats1d) -> SpanProjector:
    """[h_i; h_j; h_i - h_j; h_i * h_j] @ W.T + b
    = h_i (W_1 + W_3)^T + h_j (W_2 - W_3)^T + b + (h_i * h_j) W_4^T."""
    nI = tokens.shape[1]
    W_first, W_last, W_diff = W[:, :nI], W[:, nI : 2 * nI], W[:, 2 * nI : 3 * nI]
    bias_ids = ops.xp.zeros(len(candidates), dtype="int32")
    product = (tokens, candidates.starts, candidates.ends, ops.xp.ascontiguousarray(W[:, 3 * nI :]))
    return _endpoint_projector(ops, tokens, candidates, (W_first + W_diff, W_last - W_diff), ops.reshape2f(b, 1, b.shape[0]), bias_ids, product)


def _endpoint_projector(
    ops: Ops,
    tokens: Floats2d,
    candidates: Candidates,
    W_endpoints: Tuple[Floats2d, Floats2d],
    extra: Floats2d,
    extra_ids: Ints1d,
    product: Optional[Tuple[Floats2d, Ints1d, Ints1d, Floats2d]],
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
    return SpanProjector(ops, table, xp.ascontiguousarray(indices, dtype="int32"), product)
