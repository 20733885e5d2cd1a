"""``spacy-imbalance.SpanScorer.v1``/``v2``: tok2vec -> span representations ->
feed-forward scorer -> logits over O plus the entity labels (single-label
softmax, column 0 = O).

Called on docs (``model.predict(docs)``), it scores every candidate of
width 1..``attrs["max_span_width"]`` (``set_max_width``) and returns
``SpanScores``. Called on ``SampledSpans`` (``model.begin_update``, as
spaCy's spancat model takes ``(docs, spans)``), it is the forward of
training with negative sampling: it runs ``tok2vec`` once, lets the
input's ``select`` choose the candidates to train on from what the model
says of every candidate (``CandidateFeatures``: the logits for the weighted
sampler, the span representations for Top-Neg, the hidden layer for
Top-Neg v2, each without gradient), and runs ``head`` (= ``span_repr`` >>
``scorer``) with gradient on those alone (``SampledScores``). The training
keeps the head's own dropout (``attrs["head_dropout"]``) whatever
``[training] dropout`` sets the encoder's.

The layers are refs so that these passes can run them apart: ``scorer`` is
``hidden`` (Maxout, LayerNorm, dropout) >> ``output_layer``. In prediction
mode (and for ``CandidateFeatures``) the Maxout's affine map on the span
vectors is computed from per-token projections summed per span
(``project_spans``): the same values up to float rounding, without one
gemm over all n·L concatenated span vectors. The weights are unchanged:
Maxout's W is split into the blocks acting on h_i, h_j and f(w).

Span representations (``representation``):

* ``"endpoints_width"``: [h_i; h_j; f(j - i + 1)] with a learned width
  embedding f (Top-Neg, Eq. 1);
* ``"endpoints_product"``: [h_i; h_j; h_i - h_j; h_i * h_j] (Li et al., Eq. 2);
* ``"endpoints_mean_max"``: [h_i; h_j; mean; max; f(j - i + 1)], spaCy's
  ``mean_max_reducer.v1`` pooling (first, last, mean, max) with the width
  embedding.
"""
from typing import Callable, List, NamedTuple, Optional, Tuple, Union, cast

import numpy
from spacy.tokens import Doc
from spacy.util import registry
from thinc.api import Dropout, LayerNorm, Linear, Maxout, Model, chain, glorot_uniform_init, set_dropout_rate, zero_init
from thinc.types import Floats2d, Ints1d

from ..layers.span_representation import REPRESENTATIONS, WIDTH_REPRESENTATIONS, Representation, build_span_representation, span_projector
from ..spans.candidates import Candidates, enumerate_candidates

# candidates per run on CPU: a run's pre-activations (1024 x 768 floats at
# hidden_width 256, 3 pieces) stay in cache through the maxout, LayerNorm and
# output layer, where the whole batch's (tens of MiB) would not (-30 % time
# for those steps); on GPU one run is fastest
_CPU_RUN = 1024


class SpanScores(NamedTuple):
    candidates: Candidates
    logits: Floats2d  # one row per candidate; column 0 = O


class SampledScores(NamedTuple):
    """The sampled forward's output: the candidates it scored and their logits."""

    selected: Ints1d  # sorted candidate indices
    logits: Floats2d  # one row per selected candidate; column 0 = O


class SampledSpans(NamedTuple):
    """The sampled forward's input: the docs, their candidates (of the
    model's ``max_span_width``) and ``select``, which returns the sorted
    indices of the candidates to score from what the model says of every
    candidate; none selected: nothing is scored."""

    docs: List[Doc]
    candidates: Candidates
    select: Callable[["CandidateFeatures"], Ints1d]


InT = Union[List[Doc], SampledSpans]


@registry.architectures("spacy-imbalance.SpanScorer.v1")
def build_span_scorer_v1(
    tok2vec: Model[List[Doc], List[Floats2d]],
    representation: Representation = "endpoints_width",
    width_embedding: int = 32,
    hidden_width: int = 256,
    maxout_pieces: int = 3,
    dropout: float = 0.1,
    nO: Optional[int] = None,
) -> Model[List[Doc], SpanScores]:
    """hidden_width 256 is both papers' scoring-layer size; dropout 0.1 that
    of the negative-sampling authors' code (their paper's BERT runs use 0.4,
    too much for a small tok2vec). ``dropout`` is the scoring head's rate in
    training: the sampled forward keeps it (``attrs["head_dropout"]``) when
    ``[training] dropout`` sets the encoder's. ``nO`` (labels + 1) is set by
    the component when null. The output layer starts at zero."""
    return _build_span_scorer(tok2vec, representation, width_embedding, hidden_width, maxout_pieces, dropout, nO, zero_init)


@registry.architectures("spacy-imbalance.SpanScorer.v2")
def build_span_scorer_v2(
    tok2vec: Model[List[Doc], List[Floats2d]],
    representation: Representation = "endpoints_width",
    width_embedding: int = 32,
    hidden_width: int = 256,
    maxout_pieces: int = 3,
    dropout: float = 0.1,
    nO: Optional[int] = None,
) -> Model[List[Doc], SpanScores]:
    """v1 with a random (Glorot) output layer: a zero output layer passes the
    encoder no gradient until its weights grow, which at a fine-tuned
    transformer's rate takes hundreds of updates (issue 30). The fine-tuned
    configs use it."""
    return _build_span_scorer(tok2vec, representation, width_embedding, hidden_width, maxout_pieces, dropout, nO, glorot_uniform_init)


def _build_span_scorer(
    tok2vec: Model[List[Doc], List[Floats2d]], representation: Representation, width_embedding: int,
    hidden_width: int, maxout_pieces: int, dropout: float, nO: Optional[int], init_W,
) -> Model[List[Doc], SpanScores]:
    if representation not in REPRESENTATIONS:
        raise ValueError(f"SpanScorer: representation must be one of {', '.join(REPRESENTATIONS)}, got {representation!r}")
    for setting, value in (("hidden_width", hidden_width), ("maxout_pieces", maxout_pieces), ("width_embedding", width_embedding)):
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise ValueError(f"SpanScorer: {setting} must be an integer >= 1, got {value!r}")
    if not (0.0 <= dropout < 1.0):
        raise ValueError(f"SpanScorer: dropout must be in [0, 1), got {dropout!r}")
    span_repr = build_span_representation(representation, width_embedding)
    output_layer = Linear(nO=nO, nI=hidden_width, init_W=init_W)
    maxout = Maxout(nO=hidden_width, nP=maxout_pieces)
    layer_norm = LayerNorm(nI=hidden_width)
    # the nesting Maxout(normalize=True, dropout=...) builds, by hand so that
    # the fast path can reach the maxout's W and b: saved pipelines keep
    # their node order and parameter names
    hidden = chain(chain(maxout, layer_norm), Dropout(dropout))
    scorer = chain(hidden, output_layer)
    head = chain(span_repr, scorer)
    return Model(
        "span_scorer",
        forward,
        init=init,
        layers=[tok2vec, head],
        refs={
            "tok2vec": tok2vec,
            "head": head,
            "span_repr": span_repr,
            "scorer": scorer,
            "hidden": hidden,
            "maxout": maxout,
            "layer_norm": layer_norm,
            "output_layer": output_layer,
        },
        attrs={"max_span_width": None, "head_dropout": dropout},
    )


def forward(model: Model, X: InT, is_train: bool) -> Tuple[Union[SpanScores, SampledScores], Callable]:
    if isinstance(X, SampledSpans):
        return _sampled_forward(model, X, is_train)
    return _full_forward(model, X, is_train)


def _full_forward(model: Model, docs: List[Doc], is_train: bool) -> Tuple[SpanScores, Callable]:
    tok2vec = model.layers[0]
    ops = model.ops
    tokvecs, bp_tokvecs = tok2vec(docs, is_train)
    candidates = enumerate_candidates(ops, [len(doc) for doc in docs], max_width(model))
    X = _flatten(model, tokvecs)
    if not is_train:
        return SpanScores(candidates, candidate_logits(model, X, candidates)), _no_backprop
    logits, backprop = _head(model, X, candidates.starts, candidates.ends, _host_lengths(docs), bp_tokvecs, is_train)
    return SpanScores(candidates, logits), backprop


def _sampled_forward(model: Model, inputs: SampledSpans, is_train: bool) -> Tuple[SampledScores, Callable]:
    """Encode the batch once, select, then score (with gradient in
    training) only the selected candidates."""
    tok2vec = model.layers[0]
    head_dropout = model.attrs.get("head_dropout")
    if is_train and head_dropout is not None:
        # [training] dropout, set on the whole model, is the encoder's
        set_dropout_rate(model.get_ref("scorer"), head_dropout)
    tokvecs, bp_tokvecs = tok2vec(inputs.docs, is_train)
    lengths = _host_lengths(inputs.docs)
    X = _flatten(model, tokvecs)
    candidates = inputs.candidates
    selected = inputs.select(CandidateFeatures(model, candidates, inputs.docs, X))
    if selected.shape[0] == 0:
        return SampledScores(selected, model.ops.alloc2f(0, 0)), _nothing_selected
    starts, ends = candidates.starts[selected], candidates.ends[selected]
    logits, backprop = _head(model, X, starts, ends, lengths, bp_tokvecs, is_train)
    return SampledScores(selected, logits), backprop


def _head(
    model: Model, X: Floats2d, starts: Ints1d, ends: Ints1d, lengths: Ints1d, bp_tokvecs: Callable, is_train: bool
) -> Tuple[Floats2d, Callable]:
    """The head's logits for the spans (``starts``, ``ends``: token indices
    into ``X``) and the backward pass from them to the docs."""
    logits, bp_head = model.layers[1]((X, starts, ends), is_train)

    def backprop(d_logits: Floats2d) -> List[Doc]:
        d_X, _, _ = bp_head(d_logits)
        return bp_tokvecs(model.ops.unflatten(d_X, lengths))

    return logits, backprop


def _host_lengths(docs: List[Doc]) -> Ints1d:
    """The docs' lengths, host int32: Ops.unflatten splits on the host, an
    uploaded copy would come back."""
    # a 1-d int32 numpy array, which Ints1d describes
    return cast(Ints1d, numpy.asarray([len(doc) for doc in docs], dtype="int32"))


def _no_backprop(d_logits: Floats2d) -> List[Doc]:
    raise ValueError("SpanScorer.v1: the scores were computed in prediction mode (is_train=False); use begin_update to train")


def _nothing_selected(d_logits: Floats2d) -> List[Doc]:
    raise ValueError("SpanScorer.v1: select chose no candidate, so nothing was scored to back-propagate")


class CandidateFeatures:
    """What the model says of every candidate of a batch, in prediction mode
    (no dropout, nothing kept for a backward pass), each computed when a
    sampler asks (``spans.negatives.CandidateView``). The token vectors are
    the training pass's own when it gives them, else the tok2vec's
    prediction, computed once on first use."""

    def __init__(self, model: Model, candidates: Candidates, docs: List[Doc], X: Optional[Floats2d] = None) -> None:
        self.model = model
        self.candidates = candidates
        self.docs = docs
        self._X = X

    @property
    def tokens(self) -> Floats2d:
        if self._X is None:
            self._X = _flatten(self.model, self.model.get_ref("tok2vec").predict(self.docs))
        return self._X

    def logits(self) -> Floats2d:
        return candidate_logits(self.model, self.tokens, self.candidates)

    def vectors(self) -> Floats2d:
        """The span representations (the scoring head's input)."""
        return self.model.get_ref("span_repr").predict((self.tokens, self.candidates.starts, self.candidates.ends))

    def hidden(self) -> Floats2d:
        """The scoring head's hidden layer (the output layer's input)."""
        return candidate_hidden(self.model, self.tokens, self.candidates)


def candidate_features(model: Model, docs: List[Doc], candidates: Candidates) -> CandidateFeatures:
    """``CandidateFeatures`` of ``docs`` outside training: the token vectors
    are computed only if a sampler asks for one of them."""
    return CandidateFeatures(model, candidates, docs)


def listens_upstream(model: Model) -> bool:
    """Whether the model's tok2vec is a listener: outside training it reads
    ``doc.tensor``, zeros where the upstream tok2vec has not set it."""
    return model.get_ref("tok2vec").name == "tok2vec-listener"


def candidate_logits(model: Model[List[Doc], SpanScores], X: Floats2d, candidates: Candidates) -> Floats2d:
    """The head's logits for every candidate, in prediction mode: no dropout,
    nothing kept for a backward pass."""
    return _score_candidates(model, X, candidates, [model.get_ref("layer_norm"), model.get_ref("output_layer")])


def candidate_hidden(model: Model[List[Doc], SpanScores], X: Floats2d, candidates: Candidates) -> Floats2d:
    """The ``hidden`` layer's output (the output layer's input) for every
    candidate, in prediction mode."""
    return _score_candidates(model, X, candidates, [model.get_ref("layer_norm")])


def _score_candidates(model: Model[List[Doc], SpanScores], X: Floats2d, candidates: Candidates, after_maxout: List[Model]) -> Floats2d:
    """The Maxout's pre-activations from per-token projections (the same as
    on the concatenated span vectors up to float rounding), then its max and
    the ``after_maxout`` layers (the hidden layer's dropout is the identity
    in prediction mode), a run of candidates at a time on CPU."""
    ops = model.ops
    maxout = model.get_ref("maxout")
    nO, nP, nI = (maxout.get_dim(name) for name in ("nO", "nP", "nI"))
    W = ops.reshape2f(maxout.get_param("W"), nO * nP, nI)
    b = ops.reshape1f(maxout.get_param("b"), nO * nP)
    projector = span_projector(model.get_ref("span_repr"), X, candidates, W, b)
    n = len(candidates)
    step = _CPU_RUN if ops.device_type == "cpu" else max(n, 1)
    outputs = []
    for start in range(0, n, step):
        pre_activation = projector.rows(start, min(start + step, n))
        Y, _ = ops.maxout(ops.reshape3f(pre_activation, pre_activation.shape[0], nO, nP))
        for layer in after_maxout:
            Y = layer.predict(Y)
        outputs.append(Y)
    if not outputs:
        return ops.alloc2f(0, after_maxout[-1].get_dim("nO"))
    return outputs[0] if len(outputs) == 1 else ops.xp.concatenate(outputs)


def init(model: Model[List[Doc], SpanScores], X: Optional[List[Doc]] = None, Y: Optional[SpanScores] = None) -> None:
    """Widths flow from the tok2vec's output: the span representation's input
    width is the tok2vec width, the scorer's input width the representation's."""
    tok2vec = model.get_ref("tok2vec")
    tok2vec.initialize(X=X)
    span_repr = model.get_ref("span_repr")
    if not span_repr.has_dim("nI"):
        width = tok2vec.get_dim("nO") if tok2vec.has_dim("nO") else None
        if width is None and X is not None:
            width = _flatten(model, tok2vec.predict(X)).shape[1]
        if width is None:
            raise ValueError("SpanScorer.v1: cannot infer the token vector width; initialize with sample docs")
        span_repr.set_dim("nI", width)
    span_repr.initialize()
    # a dummy batch carries the width through Maxout, LayerNorm and dropout
    model.get_ref("scorer").initialize(X=model.ops.alloc2f(2, span_repr.get_dim("nO")))


def n_widths(model: Model) -> Optional[int]:
    """The span widths the width embedding has rows for, once set."""
    span_repr = model.get_ref("span_repr")
    return int(span_repr.get_dim("nV")) if span_repr.has_dim("nV") else None


def set_max_width(model: Model, max_span_width: int) -> None:
    """The candidates' width limit, and the width embedding's rows while
    they are unset (a model built for another width is the caller's error
    to name: ``n_widths``)."""
    span_repr = model.get_ref("span_repr")
    if not span_repr.has_dim("nV"):
        span_repr.set_dim("nV", max_span_width)
    model.attrs["max_span_width"] = max_span_width


def max_width(model: Model) -> int:
    """The candidates' width limit, validated on the host against the width
    embedding's rows: the span representation does not check device indices
    (that would be a device sync per batch)."""
    value = model.attrs.get("max_span_width")
    if value is None:
        raise ValueError("SpanScorer.v1: attrs['max_span_width'] is unset; the sampled_spancat component sets it")
    span_repr = model.get_ref("span_repr")
    n_widths = span_repr.get_dim("nV") if span_repr.has_dim("nV") else None
    if n_widths is not None and span_repr.attrs["representation"] in WIDTH_REPRESENTATIONS and int(value) > n_widths:
        raise ValueError(f"SpanScorer.v1: max_span_width {int(value)} exceeds the width embedding's {n_widths} widths")
    return int(value)


def _flatten(model: Model, tokvecs: List[Floats2d]) -> Floats2d:
    if not tokvecs:
        return model.ops.alloc2f(0, 0)
    return model.ops.flatten(tokvecs)
