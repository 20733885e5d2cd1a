"""``sampled_spancat``: a span classifier (O plus the entity labels, single
label per span) trained with negative sampling, for corpora whose
annotations miss entities.

Every span of width 1..``max_span_width`` is a candidate. Training keeps all
gold spans and only the negatives the configured sampler draws
(``spacy_imbalance.spans.negatives``): unsampled negatives get no gradient, so an
unlabeled entity that is not drawn cannot teach the model that it is O.

    [components.sampled_spancat]
    factory = "sampled_spancat"
    max_span_width = 8

    [components.sampled_spancat.negatives]
    @misc = "spacy-imbalance.uniform_negatives.v2"
    rate = 0.7
    correction = 0.0    # the share of the sampling's odds inflation undone at prediction (off: chosen on dev)
    fixed = true        # one draw per sentence, kept every epoch

Prediction: the sampler's prior correction is added to O's logit
(``NegativeSampler.prior_shift``: a share of log(candidates / drawn) per
sentence, none for v1 samplers); then the argmax class of every candidate; non-O spans, by descending
probability, go to ``doc.ents`` unless they overlap one kept before; all of
them, with their probabilities, go to ``doc.spans[spans_key]``. With
``thresholds`` (per label, e.g. from ``spacy-imbalance calibrate``) a
candidate's most probable entity label l is predicted when p(l) >=
thresholds[l] instead, even where O is more probable; labels without a
threshold keep the argmax rule (``decisions.thresholds``, docs/calibration.md).

Gold comes from ``doc.ents``, or from ``doc.spans[gold_key]`` when
``gold_key`` is set. The gold group is a setting of its own, not
``spans_key``: the predicted group holds every non-O span (overlapping, with
scores), which is not what a gold group holds. The default scorer then
compares the predicted ``doc.ents`` with that gold group.

"Per sentence" (the samplers' counts) means per ``Doc``, and a candidate may
cross a sentence boundary inside a Doc, as in spaCy's ``spancat``; the
corpus readers of this package yield one sentence per Doc.

When the training references carry ``doc.spans[masked_key]`` (entities that
``MaskedCorpus`` removed), the component counts how many sampled negatives are
such entities: the missampling rate of Li et al. (2022, Eq. 12), reported as
the ``missampling_rate`` score (a column of the training log) over the
updates since the last evaluation.

Spans a reviewer rejected, in the references' ``doc.spans[incorrect_spans_key]``
(``spacy-imbalance apply-review`` writes them there; spaCy's ``ner`` reads the
same group through its own ``incorrect_spans_key``), are certain negatives:
every update trains on all of them as O, besides the sampled negatives.
"""
import logging
import warnings
from contextlib import contextmanager
from itertools import chain, islice
from pathlib import Path
from typing import Any, Callable, Dict, Iterable, Iterator, List, Optional, Sequence, Tuple, Union

import numpy
from spacy.language import Language
from spacy.strings import hash_string
from spacy.tokens import Doc, Span, SpanGroup
from spacy.training import Example, validate_examples, validate_get_examples
from spacy.vocab import Vocab
from thinc.api import Config, Model, Ops, Optimizer, set_dropout_rate
from thinc.types import Floats1d, Floats2d, Ints1d

from ..decisions.softmax import softmax
from ..decisions.thresholds import check_label_thresholds, check_threshold_labels, threshold_vector
from ..losses import TokenLoss
from ..models.span_scorer import SpanScores, candidate_hidden, candidate_logits
from ..spans.candidates import MAX_SPAN_WIDTH, Candidates, check_max_width, covering_width, enumerate_candidates
from ..spans.decoding import entity_candidates, greedy_non_overlapping
from ..spans.gold import SpanTargets, count_gold, gold_labels, gold_widths, span_targets
from ..spans.negatives import NegativeSampler, SamplingBatch, make_generator
from ..spans.negatives.uniform import DEFAULT_CORRECTION, DEFAULT_FIXED, DEFAULT_RATE
from ..spans.scoring import HostSpans
from ._labelled import DEFAULT_TOK2VEC_CONFIG, ENTS_SCORE_WEIGHTS, ClassCountedPipe, check_name, check_own_groups, write_entities

DEFAULT_SAMPLED_SPANCAT_MODEL = """
[model]
@architectures = "spacy-imbalance.SpanScorer.v1"
representation = "endpoints_width"
width_embedding = 32
hidden_width = 256
maxout_pieces = 3
dropout = 0.1
nO = null
""" + DEFAULT_TOK2VEC_CONFIG
DEFAULT_MODEL = Config().from_str(DEFAULT_SAMPLED_SPANCAT_MODEL)["model"]
# v2: the prior correction and one draw per sentence (docs/benchmarks/never_worse.md); a
# saved pipeline's config names its own sampler, so this default changes no trained model
DEFAULT_NEGATIVES = {
    "@misc": "spacy-imbalance.uniform_negatives.v2", "rate": DEFAULT_RATE, "correction": DEFAULT_CORRECTION, "fixed": DEFAULT_FIXED,
}
DEFAULT_LOSS = {"@losses": "spacy-imbalance.CrossEntropy.v1"}
MISSAMPLING_KEY = "missampling_rate"
logger = logging.getLogger("spacy")


@Language.factory(
    "sampled_spancat",
    assigns=["doc.ents", "doc.spans"],
    default_config={
        "model": DEFAULT_MODEL,
        "negatives": DEFAULT_NEGATIVES,
        "loss": DEFAULT_LOSS,
        "max_span_width": 8,
        "gold_key": None,
        "spans_key": "sc",
        "masked_key": "masked",
        "incorrect_spans_key": "incorrect_spans",
        "entities_key": None,
        "thresholds": None,
        "scorer": {"@scorers": "spacy-imbalance.ents_macro_scorer.v1"},
    },
    default_score_weights={
        **ENTS_SCORE_WEIGHTS,
        MISSAMPLING_KEY: 0.0,
    },
)
def make_sampled_spancat(
    nlp: Language,
    name: str,
    model: Model[List[Doc], SpanScores],
    negatives: NegativeSampler,
    loss: TokenLoss,
    max_span_width: Optional[int],
    gold_key: Optional[str],
    spans_key: Optional[str],
    masked_key: Optional[str],
    incorrect_spans_key: Optional[str],
    entities_key: Optional[str],
    thresholds: Optional[Dict[str, float]],
    scorer: Optional[Callable],
) -> "SampledSpanCategorizer":
    """negatives: the sampler (``spacy-imbalance.*_negatives.v1``). loss: any
    loss of ``spacy_imbalance.losses``, over the spans trained on (O is class 0).
    max_span_width (Optional[int]): widest candidate, in tokens, in [1, 256]
        (MAX_SPAN_WIDTH); 8 as in Top-Neg. null: read from the training data at
        initialize, the width that covers 99 % of the gold spans (at most 16),
        logged and saved with the component.
    gold_key: gold from doc.spans[gold_key] instead of doc.ents (scored
        against the predicted doc.ents).
    spans_key: where every non-O span and its probability is written (null: nowhere).
    masked_key: span group of masked entities, for the missampling rate (null: off).
    incorrect_spans_key: span group of known non-entities (a reviewer's
        rejections), always trained on as O (null: off; a reference without
        the group has none).
    entities_key: where the decoded entities go: null -> doc.ents (entities
        the doc has win over overlapping ones); a name -> doc.spans[name] only,
        doc.ents untouched (beside a pipeline's own ner; the scorer reads it).
    thresholds: per-label decision thresholds in (0, 1) on the label's
        probability (null: the argmax class; labels left out keep it).
    """
    return SampledSpanCategorizer(
        nlp.vocab,
        model,
        name,
        negatives=negatives,
        loss=loss,
        max_span_width=max_span_width,
        gold_key=gold_key,
        spans_key=spans_key,
        masked_key=masked_key,
        incorrect_spans_key=incorrect_spans_key,
        entities_key=entities_key,
        thresholds=thresholds,
        scorer=scorer,
    )


class SampledSpanCategorizer(ClassCountedPipe):
    """Span classification over O + labels with sampled negatives.

    ``cfg`` holds the labels, the span settings, the number of updates done
    (the step of the weighted sampler's temperature schedule), the masked
    entities and negatives drawn over the whole training (``missampled``) and,
    for losses that weight classes, the training-set class counts."""

    factory = "sampled_spancat"

    def __init__(
        self,
        vocab: Vocab,
        model: Model[List[Doc], SpanScores],
        name: str = "sampled_spancat",
        *,
        negatives: NegativeSampler,
        loss: TokenLoss,
        max_span_width: Optional[int] = 8,
        gold_key: Optional[str] = None,
        spans_key: Optional[str] = "sc",
        masked_key: Optional[str] = "masked",
        incorrect_spans_key: Optional[str] = "incorrect_spans",
        entities_key: Optional[str] = None,
        thresholds: Optional[Dict[str, float]] = None,
        scorer: Optional[Callable] = None,
    ) -> None:
        if max_span_width is not None:
            check_max_width(max_span_width, f"sampled_spancat '{name}': max_span_width", high=MAX_SPAN_WIDTH)
        if not isinstance(negatives, NegativeSampler):
            raise ValueError(
                f"sampled_spancat '{name}': negatives must be a sampler from spacy_imbalance.spans.negatives "
                f'(e.g. @misc = "spacy-imbalance.uniform_negatives.v1"), got {type(negatives).__name__}'
            )
        if not isinstance(loss, TokenLoss):
            raise ValueError(
                f"sampled_spancat '{name}': loss must be a loss from spacy_imbalance.losses "
                f'(e.g. @losses = "spacy-imbalance.CrossEntropy.v1"), got {type(loss).__name__}'
            )
        if loss.per_sequence:
            # its rows are spans, not the tokens of sentences it could average over
            raise ValueError(
                f"sampled_spancat '{name}': loss {type(loss).__name__} averages over sentences of tokens "
                "(e.g. MoMLoss.v2), which does not apply to span rows; use MoMLoss.v1 or another token loss"
            )
        groups = {"gold_key": gold_key, "spans_key": spans_key, "masked_key": masked_key,
                  "incorrect_spans_key": incorrect_spans_key, "entities_key": entities_key}
        for setting, key in groups.items():
            check_name(key, setting, f"sampled_spancat '{name}'")
        # the masked entities, the rejected spans and the decoded entities each need a group of their own
        # (gold and the scored spans may share one: they live on different docs)
        check_own_groups(groups, ("masked_key", "incorrect_spans_key", "entities_key"), f"sampled_spancat '{name}'")
        self.vocab = vocab
        self.model = model
        self.name = name
        self.negatives = negatives
        self.loss = loss
        self.scorer = scorer
        # null: the width comes from the training data at initialize
        self._width_from_data = max_span_width is None
        if max_span_width is not None:
            _set_max_width(model, max_span_width, name)
        self.cfg: Dict[str, Any] = {
            "labels": [],
            "max_span_width": max_span_width,
            "width_from_data": self._width_from_data,
            # the seed of the sampler's stream, which also keys a draw kept per sentence
            "sampling_seed": None,
            "gold_key": gold_key,
            "spans_key": spans_key,
            "masked_key": masked_key,
            "incorrect_spans_key": incorrect_spans_key,
            "entities_key": entities_key,
            "n_updates": 0,
            # [masked entities drawn, negatives drawn] over all updates
            "missampled": [0, 0],
            "class_counts": None,
            # per-label decision thresholds (null: argmax); labels are
            # checked once the component has them (initialize, from_disk)
            "thresholds": check_label_thresholds(thresholds, f"sampled_spancat '{name}'"),
        }
        # (ops, key, device vector) of the thresholds: uploaded once, not per batch
        self._threshold_cache: Optional[Tuple[Ops, Tuple, Floats1d]] = None
        # (thresholds,) that saving writes instead of the ones it decides with (save_with_thresholds)
        self._saved_thresholds: Optional[Tuple[Optional[Dict[str, float]]]] = None
        self._generator: Any = None
        # [masked entities drawn, negatives drawn] since the last score()
        self._missampled = [0, 0]

    @property
    def max_span_width(self) -> int:
        width = self.cfg["max_span_width"]
        if width is None:
            raise ValueError(
                f"sampled_spancat '{self.name}': max_span_width = null is read from the training data at "
                "initialize, which has not run yet (nlp.initialize, or spacy train)"
            )
        return int(width)

    @property
    def classes(self) -> List[str]:
        """Output columns: O, then the labels."""
        return ["O", *self.labels]

    @property
    def thresholds(self) -> Optional[Dict[str, float]]:
        """The per-label decision thresholds, or None for the argmax rule."""
        thresholds = self.cfg.get("thresholds")
        return dict(thresholds) if thresholds is not None else None

    def set_thresholds(self, thresholds: Optional[Dict[str, float]]) -> None:
        """Decide with ``thresholds`` from now on (None: the argmax rule).
        Only the component changes; ``set_span_thresholds`` also updates the
        pipeline's config, which ``nlp.to_disk`` writes as config.cfg."""
        checked = check_label_thresholds(thresholds, f"sampled_spancat '{self.name}'")
        # labels come with initialize: until then they are checked there
        if self.labels:
            check_threshold_labels(checked, self.labels, f"sampled_spancat '{self.name}'")
        self.cfg["thresholds"] = checked

    def save_with_thresholds(self, thresholds: Optional[Dict[str, float]]) -> None:
        """Write ``thresholds`` (None: the argmax rule) whenever the
        component is saved from now on, while it keeps deciding with its own:
        what ``spacy-imbalance.tuned_thresholds.v1`` does at each save of
        ``spacy train``, so that the checkpoint is still chosen on untuned
        dev scores and the saved pipeline decides with the tuned ones."""
        checked = check_label_thresholds(thresholds, f"sampled_spancat '{self.name}'")
        check_threshold_labels(checked, self.labels, f"sampled_spancat '{self.name}'")
        self._saved_thresholds = (checked,)

    @contextmanager
    def _saving(self) -> Iterator[None]:
        if self._saved_thresholds is None:
            yield
            return
        own = self.cfg["thresholds"]
        self.cfg["thresholds"] = self._saved_thresholds[0]
        try:
            yield
        finally:
            self.cfg["thresholds"] = own

    def to_bytes(self, *, exclude: Iterable[str] = tuple()) -> bytes:
        with self._saving():
            return super().to_bytes(exclude=exclude)

    def to_disk(self, path: Union[str, Path], *, exclude: Iterable[str] = tuple()) -> None:
        with self._saving():
            super().to_disk(path, exclude=exclude)

    def _threshold_vector(self) -> Optional[Floats1d]:
        """The thresholds as a per-class device vector (``threshold_vector``),
        rebuilt only when the thresholds, labels or ops change."""
        thresholds = self.cfg.get("thresholds")
        if thresholds is None:
            return None
        ops = self.model.ops
        key = (tuple(self.classes), tuple(sorted(thresholds.items())))
        cached = self._threshold_cache
        if cached is None or cached[0] is not ops or cached[1] != key:
            check_threshold_labels(thresholds, self.labels, f"sampled_spancat '{self.name}'")
            cached = (ops, key, ops.asarray1f(threshold_vector(self.classes, thresholds)))
            self._threshold_cache = cached
        return cached[2]

    # -- prediction -------------------------------------------------------

    def predict(self, docs: Iterable[Doc]) -> SpanScores:
        docs = list(docs)
        if not any(len(doc) for doc in docs):
            candidates = enumerate_candidates(self.model.ops, [len(doc) for doc in docs], self.max_span_width)
            return SpanScores(candidates, self.model.ops.alloc2f(0, len(self.classes)))
        return self._corrected(self.model.predict(docs))

    def _corrected(self, scores: SpanScores) -> SpanScores:
        """The sampler's prior correction (``NegativeSampler.prior_shift``)
        added to O's logit: what the decision, the written probabilities,
        thresholds and calibration all read. Training never sees it."""
        shift = self.negatives.prior_shift(self.model.ops, scores.candidates)
        if shift is None:
            return scores
        # the model's output is a fresh array: shifted in place
        scores.logits[:, 0] += shift
        return scores

    def set_annotations(self, docs: Iterable[Doc], scores: SpanScores) -> None:
        """Greedy non-overlapping non-O spans -> ``doc.ents`` (entities the
        doc already has are kept, and win over overlapping predictions);
        every non-O span with its probability -> ``doc.spans[spans_key]``."""
        docs = list(docs)
        candidates, logits = scores
        entities = entity_candidates(self.model.ops, candidates, logits, self._threshold_vector())
        for doc, doc_entities in zip(docs, entities.by_doc(candidates.doc_lengths)):
            self._annotate(doc, doc_entities)

    def _annotate(self, doc: Doc, entities: HostSpans) -> None:
        """One doc's non-O spans (their ``label`` class and its
        ``confidence``) -> doc.ents and doc.spans[spans_key]."""
        labels = self.classes
        classes, confidence = entities.columns["label"], entities.columns["confidence"]
        spans = [Span(doc, int(start), int(end), label=labels[int(class_id)]) for start, end, class_id in zip(entities.starts, entities.ends, classes)]
        kept = greedy_non_overlapping(entities.starts, entities.ends, confidence)
        write_entities(doc, [spans[k] for k in kept], self.cfg.get("entities_key"))
        spans_key = self.cfg["spans_key"]
        if spans_key is not None:
            group = SpanGroup(doc, name=spans_key, spans=spans)
            group.attrs["scores"] = confidence.tolist()
            doc.spans[spans_key] = group

    # -- training ---------------------------------------------------------

    def _learn(self, examples: List[Example]) -> Optional[float]:
        """Encode the batch once, draw the negatives, then score (and
        back-propagate through) only the gold spans and the drawn negatives."""
        self._require_labels()
        # [training] dropout is the encoder's (set by update); SpanScorer.v1's own
        # `dropout` setting is the scoring head's and would otherwise be overwritten
        head_dropout = self.model.attrs.get("head_dropout")
        if head_dropout is not None:
            set_dropout_rate(self.model.get_ref("scorer"), head_dropout)
        docs = [eg.predicted for eg in examples]
        ops = self.model.ops
        tok2vec, head = self.model.get_ref("tok2vec"), self.model.get_ref("head")
        tokvecs, bp_tokvecs = tok2vec.begin_update(docs)
        lengths = [len(doc) for doc in docs]
        X = ops.flatten(tokvecs)
        candidates = enumerate_candidates(ops, lengths, self.max_span_width)
        targets = self._targets(examples, candidates)
        negatives = self._sample(docs, candidates, targets, X)
        self._count_missampled(targets, negatives)
        trained = [ops.xp.nonzero(targets.classes > 0)[0].astype("int32"), negatives]
        if targets.known is not None:
            # every known negative, whether drawn or not (unique: a drawn one is trained once)
            trained.append(ops.xp.nonzero(targets.known)[0].astype("int32"))
            selected = ops.xp.unique(ops.xp.concatenate(trained)).astype("int32")
        else:
            selected = ops.xp.sort(ops.xp.concatenate(trained))
        if selected.shape[0] == 0:
            # nothing to learn from (e.g. every token's annotation is missing)
            return None
        logits, bp_head = head.begin_update((X, candidates.starts[selected], candidates.ends[selected]))
        d_logits, loss = self.loss(logits, targets.classes[selected])
        d_X, _, _ = bp_head(d_logits)
        # host int32: Ops.unflatten splits on the host, an uploaded copy would come back
        bp_tokvecs(ops.unflatten(d_X, numpy.asarray(lengths, dtype="int32")))
        return float(loss)

    def finish_update(self, sgd: Optimizer) -> None:
        """Apply the gradients and count the optimizer step: the weighted
        sampler's temperature schedule runs over these steps, which with
        ``accumulate_gradient > 1`` are fewer than the ``update`` calls."""
        super().finish_update(sgd)
        self.cfg["n_updates"] += 1

    def sample_negatives(self, examples: Sequence[Example]) -> Tuple[Candidates, SpanTargets, Ints1d]:
        """The candidates, their gold classes and the negatives the sampler
        draws for ``examples``, as in ``update`` but without training (the
        ``missampling`` command uses it). Samplers that need no model output
        (all, uniform) work on an uninitialized component that has labels.
        With a model that listens to a shared tok2vec, the predicted docs
        must have been through the upstream components (``doc.tensor`` set)."""
        docs = [eg.predicted for eg in examples]
        ops = self.model.ops
        X = ops.alloc2f(0, 0)
        if self.negatives.needs_model and any(len(doc) for doc in docs):
            tok2vec = self.model.get_ref("tok2vec")
            # outside training a Tok2VecListener reads doc.tensor and returns
            # zeros where it is unset: the samplers would see no token at all
            if tok2vec.name == "tok2vec-listener" and any(len(doc) and not doc.tensor.size for doc in docs):
                raise ValueError(
                    f"sampled_spancat '{self.name}': its model listens to an upstream tok2vec, but the docs have "
                    "no doc.tensor; run them through the pipeline's components before this one first"
                )
            X = ops.flatten(tok2vec.predict(docs))
        candidates = enumerate_candidates(ops, [len(doc) for doc in docs], self.max_span_width)
        targets = self._targets(examples, candidates)
        return candidates, targets, self._sample(docs, candidates, targets, X)

    def _targets(self, examples: Sequence[Example], candidates: Candidates) -> SpanTargets:
        label_index = {label: i for i, label in enumerate(self.labels)}
        return span_targets(
            self.model.ops,
            examples,
            candidates,
            label_index,
            gold_key=self.cfg["gold_key"],
            masked_key=self.cfg["masked_key"],
            # pipelines saved before the setting existed have none
            incorrect_key=self.cfg.get("incorrect_spans_key"),
            component=self.name,
        )

    def _sample(self, docs: Sequence[Doc], candidates: Candidates, targets: SpanTargets, X: Floats2d) -> Ints1d:
        if self._generator is None:
            self._generator = self._seeded_generator()
        batch = SamplingBatch(self.model.ops, candidates, targets.classes, step=int(self.cfg["n_updates"]))
        if self.negatives.needs_doc_keys:
            batch = batch._replace(doc_keys=[_sentence_key(doc, self.cfg.get("sampling_seed") or 0) for doc in docs])
        if self.negatives.needs_probs and len(candidates):
            batch = batch._replace(probs=softmax(self.model.ops.xp, candidate_logits(self.model, X, candidates)))
        if self.negatives.needs_vectors and len(candidates):
            batch = batch._replace(vectors=self.model.get_ref("span_repr").predict((X, candidates.starts, candidates.ends)))
        if self.negatives.needs_hidden and len(candidates):
            batch = batch._replace(hidden=self._hidden(X, candidates))
        return self.negatives.sample(batch, self._generator)

    def _hidden(self, X: Floats2d, candidates: Candidates) -> Floats2d:
        """The scoring head's hidden layer (the output layer's input) for
        every candidate, in prediction mode: no dropout, nothing kept for a
        backward pass."""
        if not all(self.model.has_ref(name) for name in ("hidden", "maxout", "layer_norm")):
            raise ValueError(
                f"sampled_spancat '{self.name}': the {type(self.negatives).__name__} sampler needs the model's "
                "'hidden' layer (the output layer's input) and its 'maxout' and 'layer_norm', which this model "
                "does not name; use spacy-imbalance.SpanScorer.v1"
            )
        return candidate_hidden(self.model, X, candidates)

    def _count_missampled(self, targets: SpanTargets, negatives: Ints1d) -> None:
        if targets.masked is None:
            return
        masked, drawn = int(targets.masked[negatives].sum()), int(negatives.shape[0])
        self._missampled = [self._missampled[0] + masked, self._missampled[1] + drawn]
        total = self.cfg["missampled"]
        self.cfg["missampled"] = [total[0] + masked, total[1] + drawn]

    def missampling_rate(self, *, reset: bool = False) -> Optional[float]:
        """Share of the drawn negatives that were masked entities, over the
        updates whose references carried the masked group (since the last
        reset); None when there were none."""
        masked, drawn = self._missampled
        if reset:
            self._missampled = [0, 0]
        return masked / drawn if drawn else None

    def score(self, examples: Iterable[Example], **kwargs: Any) -> Dict[str, Any]:
        scores = dict(super().score(examples, **kwargs))
        scores[MISSAMPLING_KEY] = self.missampling_rate(reset=True)
        return scores

    def get_loss(self, examples: Iterable[Example], scores: SpanScores) -> Tuple[float, Floats2d]:
        """Loss and gradient over *every* gold span and negative candidate of
        ``scores`` (the unsampled objective, e.g. for a dev loss); ``update``
        trains on the sampled negatives only."""
        examples = list(examples)
        validate_examples(examples, "SampledSpanCategorizer.get_loss")
        candidates, logits = scores
        targets = self._targets(examples, candidates)
        d_logits, loss = self.loss(logits, targets.classes)
        return float(loss), d_logits

    def initialize(
        self,
        get_examples: Callable[[], Iterable[Example]],
        *,
        nlp: Optional[Language] = None,
        labels: Optional[Sequence[str]] = None,
    ) -> None:
        validate_get_examples(get_examples, "SampledSpanCategorizer.initialize")
        gold_key = self.cfg["gold_key"]
        self._initialize_labels(get_examples, labels if labels is not None else gold_labels(get_examples(), gold_key))
        n_classes = len(self.classes)
        self._check_output_width(n_classes, "classes")
        if self._width_from_data:
            self._width_from(get_examples())
        output_layer = self.model.get_ref("output_layer")
        if not output_layer.has_dim("nO"):
            output_layer.set_dim("nO", n_classes)
        docs = [eg.x for eg in islice(get_examples(), 10)]
        self.model.initialize(X=docs)
        n_gold, n_wide = count_gold(get_examples(), self.max_span_width, gold_key, self.name)
        if n_wide:
            warnings.warn(
                f"sampled_spancat '{self.name}': {n_wide} of {n_gold} gold spans ({100 * n_wide / n_gold:.1f} %) "
                f"are wider than max_span_width = {self.max_span_width} tokens; they are no candidates, so "
                "they are never trained on nor predicted. Raise max_span_width to cover them.",
                stacklevel=2,
            )
        self.cfg["class_counts"] = self._count_classes(get_examples()) if self.loss.needs_class_counts else None
        self._initialize_loss()
        self._check_threshold_labels()
        self.cfg["n_updates"] = 0
        self.cfg["missampled"] = [0, 0]
        self.cfg["sampling_seed"] = None
        self._generator = self._seeded_generator()

    def _width_from(self, examples: Iterable[Example]) -> None:
        """max_span_width = null: the width that covers WIDTH_COVERAGE of
        the training set's gold spans, logged and kept in cfg (saved)."""
        widths = gold_widths(examples, self.cfg["gold_key"], self.name)
        width = covering_width(widths)
        covered = sum(1 for w in widths if w <= width)
        logger.info(
            "sampled_spancat '%s': max_span_width = %d from the training data (covers %d of %d gold spans, %.1f %%)",
            self.name, width, covered, len(widths), 100 * covered / max(len(widths), 1),
        )
        span_repr = self.model.get_ref("span_repr")
        if span_repr.has_dim("nV") and span_repr.get_dim("nV") != width:
            raise ValueError(
                f"sampled_spancat '{self.name}': max_span_width = null read {width} from the training data, but "
                f"the model was built for {span_repr.get_dim('nV')} widths (initialized before on other data); "
                "set max_span_width to that width or start from a fresh model"
            )
        _set_max_width(self.model, width, self.name)
        self.cfg["max_span_width"] = width

    def _seeded_generator(self) -> Any:
        # numpy's global state is what spacy train's fix_random_seed([training]
        # seed) set, so the sampler's stream follows the training seed; the same
        # seed keys the sentences of a draw kept per sentence
        seed = self.cfg.get("sampling_seed")
        if seed is None:
            seed = int(numpy.random.randint(0, 2**31 - 1))
            self.cfg["sampling_seed"] = seed
        return make_generator(self.model.ops, seed)

    def _count_classes(self, examples: Iterable[Example]) -> List[int]:
        """Gold class counts over every candidate of the training set (O =
        negative candidates): the frequencies weighted losses need."""
        counts = numpy.zeros(len(self.classes), dtype="int64")
        ops = self.model.ops
        batch: List[Example] = []
        for eg in chain(examples, [None]):
            if eg is not None:
                batch.append(eg)
            if batch and (eg is None or len(batch) == 256):
                candidates = enumerate_candidates(ops, [len(e.predicted) for e in batch], self.max_span_width)
                classes = ops.to_numpy(self._targets(batch, candidates).classes)
                counts += numpy.bincount(classes[classes >= 0], minlength=len(counts))
                batch = []
        return [int(c) for c in counts]

    @property
    def loss_classes(self) -> List[str]:
        return self.classes

    def from_bytes(self, bytes_data: bytes, *, exclude: Iterable[str] = tuple()) -> "SampledSpanCategorizer":
        super().from_bytes(bytes_data, exclude=exclude)
        self._check_threshold_labels()
        return self

    def from_disk(self, path: Union[str, Path], *, exclude: Iterable[str] = tuple()) -> "SampledSpanCategorizer":
        super().from_disk(path, exclude=exclude)
        self._check_threshold_labels()
        return self

    def _check_threshold_labels(self) -> None:
        # the stored cfg replaces the one built from config.cfg: check both kinds of value again
        prefix = f"sampled_spancat '{self.name}'"
        self.cfg["thresholds"] = check_label_thresholds(self.cfg.get("thresholds"), prefix)
        check_threshold_labels(self.cfg["thresholds"], self.labels, prefix)


def span_component(nlp: Language, name: str) -> SampledSpanCategorizer:
    """The ``sampled_spancat`` component ``name`` of ``nlp``; an error that
    lists the pipeline's components otherwise."""
    components = ", ".join(nlp.pipe_names) or "none"
    if name not in nlp.pipe_names:
        raise ValueError(f"the pipeline has no component {name!r}; its components: {components}")
    pipe = nlp.get_pipe(name)
    if not isinstance(pipe, SampledSpanCategorizer):
        raise ValueError(
            f"the component {name!r} is a {type(pipe).__name__}, not a sampled_spancat; "
            f"the pipeline's components: {components}"
        )
    return pipe


def _set_max_width(model: Model, max_span_width: int, name: str) -> None:
    """The model's candidates and width embedding follow the component's
    ``max_span_width``; a model built for another width is an error."""
    span_repr = model.get_ref("span_repr")
    if span_repr.has_dim("nV") and span_repr.get_dim("nV") != max_span_width:
        raise ValueError(
            f"sampled_spancat '{name}': the model's width embedding covers {span_repr.get_dim('nV')} "
            f"widths but max_span_width is {max_span_width}"
        )
    if not span_repr.has_dim("nV"):
        span_repr.set_dim("nV", max_span_width)
    model.attrs["max_span_width"] = max_span_width


def _sentence_key(doc: Doc, seed: int) -> int:
    """A key of the sentence's words and the run's seed: a sentence keeps
    its draw across epochs (and shuffles), another seed draws anew."""
    return (int(hash_string("\x1f".join(token.text for token in doc))) ^ (int(seed) * 0x9E3779B97F4A7C15)) % 2**64
