"""The span representation layer of ``spacy-imbalance.SpanScorer.v1``: span
vectors from the flattened token vectors and each span's first and last token.

* ``"endpoints_width"``: [h_i; h_j; f(j - i + 1)] with a learned width
  embedding f (Top-Neg, Eq. 1);
* ``"endpoints_product"``: [h_i; h_j; h_i - h_j; h_i * h_j] (Li et al., Eq. 2).
"""
from typing import Callable, Literal, Optional, Tuple

from thinc.api import Model, glorot_uniform_init
from thinc.types import Floats2d, Ints1d

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
        # a guard, not a hot-path cost worth saving: out-of-range rows would
        # be read silently on GPU (cupy clips fancy indices)
        if width_ids.shape[0] and int(width_ids.max()) >= E.shape[0]:
            raise ValueError(f"SpanScorer.v1: a span of width {int(width_ids.max()) + 1} exceeds the width embedding's {E.shape[0]}")
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
