"""A learned mix of a frozen transformer's last hidden states, per spaCy token.

``Y = gamma * sum_l softmax(s)_l * H_l`` (the scalar mix of ELMo, Peters et
al. 2018), where ``H_l`` are the cached features of ``FrozenTransformerShim``
and ``s`` and ``gamma`` are the only parameters. The documents get no
gradient: the transformer is frozen.
"""
from typing import Callable, List, Tuple, cast

import numpy
from spacy.tokens import Doc
from thinc.api import Model
from thinc.types import Floats2d, Floats3d, Ints1d

from .frozen_transformer import FrozenTransformerShim


def transformer_mix(shim: FrozenTransformerShim) -> Model[List[Doc], List[Floats2d]]:
    """``nO`` is the transformer's hidden size, known once it is loaded (at
    initialize, or when a saved pipeline is read)."""
    return Model(
        "transformer_mix",
        forward,
        init=init,
        shims=[shim],
        params={"mix": None, "gamma": None},
        dims={"nL": shim.layers, "nO": None},
        attrs={"name": shim.name},
    )


def init(model: Model, X=None, Y=None) -> None:
    shim = _shim(model)
    shim.load()
    model.set_dim("nO", shim.hidden_size)
    _init_params(model)


def _init_params(model: Model) -> None:
    if not model.has_param("mix"):
        # an even mix, at the transformer's own scale
        model.set_param("mix", model.ops.alloc1f(model.get_dim("nL")))
        model.set_param("gamma", model.ops.asarray1f([1.0]))


def forward(
    model: Model[List[Doc], List[Floats2d]], docs: List[Doc], is_train: bool
) -> Tuple[List[Floats2d], Callable]:
    ops = model.ops
    xp = ops.xp
    shim = _shim(model)
    if not model.has_dim("nO"):
        # used without initialize (e.g. a component added to a loaded pipeline)
        init(model)
    host = shim.features([[token.text for token in doc] for doc in docs])
    # on the host, where unflatten reads them
    lengths = cast(Ints1d, numpy.asarray([len(doc) for doc in docs], dtype="int32"))
    n_layers = model.get_dim("nL")
    n_out = model.get_dim("nO")
    # one upload for the batch: (n_tokens, layers, hidden)
    if lengths.sum():
        H = ops.asarray3f(cast(Floats3d, numpy.concatenate(host, axis=0)))
    else:
        H = ops.alloc3f(0, n_layers, n_out)
    s = model.get_param("mix")
    gamma = model.get_param("gamma")
    w = ops.softmax(s.reshape((1, -1))).reshape((-1,))
    mixed = xp.tensordot(H, w, axes=([1], [0]))  # (n_tokens, hidden)
    Y = gamma[0] * mixed
    outputs = ops.unflatten(Y, lengths)

    def backprop(dYs: List[Floats2d]) -> List[Doc]:
        dY = ops.flatten(dYs) if len(dYs) else ops.alloc2f(0, n_out)
        # a_l = <dY, H_l>: everything the parameters' gradients need
        a = xp.tensordot(H, dY, axes=([0, 2], [0, 1]))  # (layers,)
        d_w = gamma[0] * a
        model.inc_grad("gamma", (mixed * dY).sum().reshape((1,)))
        model.inc_grad("mix", w * (d_w - (w * d_w).sum()))
        return []

    return outputs, backprop


def _shim(model: Model) -> FrozenTransformerShim:
    # transformer_mix's only shim
    return cast(FrozenTransformerShim, model.shims[0])
