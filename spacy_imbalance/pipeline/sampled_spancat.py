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
    rate = 1.0
    correction = 0.0    # the share of the sampling's odds inflation undone at prediction (off: chosen on dev)
    fixed = true        # one draw per sentence, kept every epoch
    overlapping = true  # and every negative overlapping a gold span

An update calls the model as spaCy's spancat does, ``model.begin_update``
on ``SampledSpans`` (``models.span_scorer``): the sampler chooses from what
the model says of every candidate (``spans.negatives.draws``). Spans a
reviewer rejected (``doc.spans[incorrect_spans_key]``) are trained on every
time. The drawn negatives that are masked entities (``doc.spans[masked_key]``
of the references, from ``MaskedCorpus``) give the missampling rate of Li et
al. (2022, Eq. 12), the ``missampling_rate`` score (a column of the training
log) over the updates since the last evaluation.

In a scoped document (``ScopedCorpus.v1``) a candidate not annotated as an entity is trained towards "O or
a type outside the scope", their summed probability, and ``scope_o_weight`` of it as O (``spans.scopes``).

Prediction adds the sampler's prior correction to O's logit
(``NegativeSampler.prior_shift``, none for v1 samplers), then decodes
(``_span_decisions``). "Per sentence" means per ``Doc``; a candidate may
cross a sentence boundary inside a Doc, as in spaCy's ``spancat``.
"""
from functools import partial
from itertools import islice
from typing import Any, Callable, Dict, Iterable, List, Optional, Sequence, Tuple

from spacy.language import Language
from spacy.tokens import Doc
from spacy.training import Example, validate_examples
from spacy.vocab import Vocab
from thinc.api import Config, Model, Optimizer
from thinc.types import Floats2d, Ints1d

from ..decisions.thresholds import check_label_thresholds
from ..losses.base import TokenLoss, check_span_loss
from ..losses.partial import scope_rows
from ..losses.scoped import check_o_weight, check_training_scopes, scoped_span_loss
from ..models.output import output_width, set_output_width
from ..models.span_scorer import SampledScores, SampledSpans, SpanScores, candidate_features, listens_upstream, n_widths, set_max_width
from ..spans.candidates import MAX_SPAN_WIDTH, Candidates, check_max_width, enumerate_candidates
from ..spans.gold import SpanTargets, count_classes, gold_labels, span_targets, warn_too_wide, width_from_gold
from ..spans.negatives import CandidateView, NegativeDraws, NegativeSampler, check_sampler, training_rows
from ..spans.negatives.uniform import CHOSEN_RATE, DEFAULT_CORRECTION
from ..spans.scopes import batch_scopes, training_scopes
from ._labelled import DEFAULT_TOK2VEC_CONFIG, ENTS_SCORE_WEIGHTS, check_groups
from ._span_decisions import SpanDecisionsPipe

# The head and sampler chosen on WNUT-2017 dev with frozen and fine-tuned MiniLM, complete
# and with half the entities missing (docs/benchmarks/never_worse.md), as init-config writes
# them by default (--head v2, --sampler uniform; a test ties the two): endpoints with the
# mean and max of the span's tokens, a hidden layer of 128 without dropout, the loss summed
# over the trained spans, one draw per sentence (one negative per token) kept all run and every negative overlapping
# a gold span. A saved pipeline's config names its own settings, so these defaults change no
# trained model; the first release's head is `init-config --head v1`. spaCy fills a block
# that names the same function as the default from the default, so the sampler and loss are
# functions whose own defaults are these (uniform_negatives.v3, CrossEntropy.v2): a block
# naming a released function (uniform_negatives.v2, CrossEntropy.v1) that leaves a setting
# out keeps that function's default. A partial SpanScorer.v1 block is filled from the model
# below, its tok2vec included, as spaCy's own components fill theirs.
DEFAULT_SAMPLED_SPANCAT_MODEL = """
[model]
@architectures = "spacy-imbalance.SpanScorer.v1"
representation = "endpoints_mean_max"
width_embedding = 32
hidden_width = 128
maxout_pieces = 3
dropout = 0.0
nO = null
""" + DEFAULT_TOK2VEC_CONFIG
DEFAULT_MODEL = Config().from_str(DEFAULT_SAMPLED_SPANCAT_MODEL)["model"]
DEFAULT_NEGATIVES = {
    "@misc": "spacy-imbalance.uniform_negatives.v3", "rate": CHOSEN_RATE, "correction": DEFAULT_CORRECTION, "fixed": True,
    "overlapping": True,
}
DEFAULT_LOSS = {"@losses": "spacy-imbalance.CrossEntropy.v2", "normalize": False}
# 0: the marginal likelihood alone, as published; `init-config --scoped` writes 0.1, the weight
# chosen on WNUT-2017 dev (docs/label_scopes.md)
DEFAULT_SCOPE_O_WEIGHT = 0.0
MISSAMPLING_KEY = "missampling_rate"


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
        "scope_o_weight": DEFAULT_SCOPE_O_WEIGHT,
        "scorer": {"@scorers": "spacy-imbalance.ents_macro_scorer.v1"},
    },
    default_score_weights={**ENTS_SCORE_WEIGHTS, MISSAMPLING_KEY: 0.0},
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
    scope_o_weight: float,
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
    scope_o_weight: in [0, 1], the share of an unannotated candidate of a scoped document trained as O.
    """
    return SampledSpanCategorizer(
        nlp.vocab, model, name, negatives=negatives, loss=loss, max_span_width=max_span_width, gold_key=gold_key,
        spans_key=spans_key, masked_key=masked_key, incorrect_spans_key=incorrect_spans_key,
        entities_key=entities_key, thresholds=thresholds, scope_o_weight=scope_o_weight, scorer=scorer,
    )


class SampledSpanCategorizer(SpanDecisionsPipe):
    """Span classification over O + labels with sampled negatives. ``cfg``
    holds the labels, the settings, the sampler's seed, the updates done
    (the step of the weighted sampler's temperature schedule), the masked
    entities and negatives drawn over the whole training (``missampled``),
    the class counts of losses that weight classes, and the thresholds."""

    factory = "sampled_spancat"

    def __init__(
        self,
        vocab: Vocab,
        model: Model,  # SpanScorer: docs -> SpanScores, SampledSpans -> SampledScores
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
        scope_o_weight: float = 0.0,
        scorer: Optional[Callable] = None,
    ) -> None:
        owner = f"sampled_spancat '{name}'"
        check_o_weight(scope_o_weight, owner)
        if max_span_width is not None:
            check_max_width(max_span_width, f"{owner}: max_span_width", high=MAX_SPAN_WIDTH)
        check_sampler(negatives, owner)
        check_span_loss(loss, owner)
        groups = {"gold_key": gold_key, "spans_key": spans_key, "masked_key": masked_key,
                  "incorrect_spans_key": incorrect_spans_key, "entities_key": entities_key}
        # the masked entities, the rejected spans and the decoded entities each need a group of their own
        # (gold and the scored spans may share one: they live on different docs)
        check_groups(groups, ("masked_key", "incorrect_spans_key", "entities_key"), owner)
        self.vocab, self.model, self.name, self.negatives, self.loss, self.scorer = vocab, model, name, negatives, loss, scorer
        # null: the width comes from the training data at initialize
        self._width_from_data = max_span_width is None
        if max_span_width is not None:
            self._set_max_width(max_span_width)
        self.cfg: Dict[str, Any] = {
            "labels": [], "max_span_width": max_span_width, "width_from_data": self._width_from_data,
            "sampling_seed": None, **groups, "n_updates": 0, "missampled": [0, 0], "class_counts": None,
            "thresholds": check_label_thresholds(thresholds, owner), "scope_o_weight": scope_o_weight,
        }
        # the sampler's stream, and the missampling counts since the last score()
        self._draws = NegativeDraws()

    @property
    def max_span_width(self) -> int:
        width = self.cfg["max_span_width"]
        if width is None:
            raise ValueError(
                f"sampled_spancat '{self.name}': max_span_width = null is read from the training data at "
                "initialize, which has not run yet (nlp.initialize, or spacy train)"
            )
        return int(width)

    def predict(self, docs: Iterable[Doc]) -> SpanScores:
        docs = list(docs)
        if not any(len(doc) for doc in docs):
            candidates = enumerate_candidates(self.model.ops, [len(doc) for doc in docs], self.max_span_width)
            return SpanScores(candidates, self.model.ops.alloc2f(0, len(self.classes)))
        scores = self.model.predict(docs)
        # the sampler's prior correction, in place: the model's output is a fresh array
        self.negatives.correct(self.model.ops, scores.candidates, scores.logits)
        return scores

    def _learn(self, examples: List[Example]) -> Optional[float]:
        """The model encodes the batch once, the sampler draws the negatives
        (``_train_on``), and only the gold spans and the drawn negatives are
        scored and back-propagated through."""
        self._require_labels()
        docs = [eg.predicted for eg in examples]
        candidates = enumerate_candidates(self.model.ops, [len(doc) for doc in docs], self.max_span_width)
        targets = self._targets(examples, candidates)
        select = partial(self._train_on, docs, candidates, targets)
        scores, backprop = self.model.begin_update(SampledSpans(docs, candidates, select))
        if scores.selected.shape[0] == 0:
            # nothing to learn from (e.g. every token's annotation is missing)
            return None
        d_logits, loss = self._loss(targets, scores)
        backprop(d_logits)
        return float(loss)

    def _loss(self, targets: SpanTargets, scores: SampledScores) -> Tuple[Floats2d, float]:
        """The configured loss of the scored candidates against their gold classes, in its partial-label
        form where a scope leaves types out (``losses.partial``): (d loss / d logits, loss), thinc's order."""
        if targets.out_of_scope is None:
            return self.loss(scores.logits, targets.classes[scores.selected])
        # pipelines saved before scope_o_weight existed trained with partial labels alone
        o_weight = self.cfg.get("scope_o_weight", 0.0)
        return scoped_span_loss(self.model.ops, self.loss, targets, scores.logits, scores.selected, o_weight=o_weight, owner=self._owner)

    def _train_on(self, docs: List[Doc], candidates: Candidates, targets: SpanTargets, view: CandidateView) -> Ints1d:
        """The candidates an update scores (``training_rows``); drawn negatives count for the missampling rate."""
        negatives = self._draw(docs, candidates, targets, view)
        self.cfg["missampled"] = self._draws.missampling.count(targets.masked, negatives, self.cfg["missampled"])
        return training_rows(self.model.ops, targets, negatives)

    def finish_update(self, sgd: Optimizer) -> None:
        """Apply the gradients and count the optimizer step (the weighted sampler's schedule's)."""
        super().finish_update(sgd)
        self.cfg["n_updates"] += 1

    def sample_negatives(self, examples: Sequence[Example]) -> Tuple[Candidates, SpanTargets, Ints1d]:
        """The candidates, their gold classes and the negatives the sampler
        draws for ``examples``, as ``update`` does, without training (the
        ``missampling`` command). Samplers that need no model output (all,
        uniform) work on an uninitialized component that has labels; a model
        listening to a shared tok2vec needs the docs' ``doc.tensor`` set."""
        docs = [eg.predicted for eg in examples]
        # outside training a Tok2VecListener reads doc.tensor and returns
        # zeros where it is unset: the samplers would see no token at all
        if self.negatives.needs_model and listens_upstream(self.model) and any(len(doc) and not doc.tensor.size for doc in docs):
            raise ValueError(
                f"sampled_spancat '{self.name}': its model listens to an upstream tok2vec, but the docs have "
                "no doc.tensor; run them through the pipeline's components before this one first"
            )
        candidates = enumerate_candidates(self.model.ops, [len(doc) for doc in docs], self.max_span_width)
        targets = self._targets(examples, candidates)
        return candidates, targets, self._draw(docs, candidates, targets, candidate_features(self.model, docs, candidates))

    def _draw(self, docs: Sequence[Doc], candidates: Candidates, targets: SpanTargets, view: CandidateView) -> Ints1d:
        if self._draws.generator is None:
            self.reseed(self.cfg.get("sampling_seed"))
        step, seed = int(self.cfg["n_updates"]), self.cfg.get("sampling_seed") or 0
        return self._draws.draw(self.negatives, self.model.ops, candidates, targets.classes, view, step=step, docs=docs, seed=seed)

    def reseed(self, seed: Optional[int] = None) -> None:
        """Start the sampler's stream from ``seed`` (None: ``run_seed``), kept in cfg: it keys a kept draw too."""
        self.cfg["sampling_seed"] = self._draws.reseed(self.model.ops, seed)

    def _targets(self, examples: Sequence[Example], candidates: Candidates) -> SpanTargets:
        label_index = {label: i for i, label in enumerate(self.labels)}
        # pipelines saved before incorrect_spans_key existed have none
        targets = span_targets(
            self.model.ops, examples, candidates, label_index, gold_key=self.cfg["gold_key"],
            masked_key=self.cfg["masked_key"], incorrect_key=self.cfg.get("incorrect_spans_key"), component=self.name,
        )
        scopes = batch_scopes(examples, self.cfg["gold_key"], self._owner)
        return targets._replace(out_of_scope=scope_rows(self.labels, scopes, candidates.doc_counts, self._owner))

    def missampling_rate(self, *, reset: bool = False) -> Optional[float]:
        """Share of the drawn negatives that were masked entities, over the updates
        whose references carried the masked group since the last reset (or None)."""
        return self._draws.missampling.rate(reset=reset)

    def score(self, examples: Iterable[Example], **kwargs: Any) -> Dict[str, Any]:
        return {**super().score(examples, **kwargs), MISSAMPLING_KEY: self.missampling_rate(reset=True)}

    def get_loss(self, examples: Iterable[Example], scores: SpanScores) -> Tuple[float, Floats2d]:
        """Loss and gradient over *every* gold span and negative candidate of
        ``scores`` (the unsampled objective, e.g. for a dev loss); ``update``
        trains on the sampled negatives only."""
        examples = list(examples)
        validate_examples(examples, "SampledSpanCategorizer.get_loss")
        candidates, logits = scores
        every = self.model.ops.xp.arange(len(candidates), dtype="int32")
        d_logits, loss = self._loss(self._targets(examples, candidates), SampledScores(every, logits))
        return float(loss), d_logits

    def _initialize(self, get_examples: Callable[[], Iterable[Example]], labels: Optional[Sequence[str]]) -> None:
        gold_key, scopes = self.cfg["gold_key"], training_scopes(get_examples())
        # a scope's type counts as annotated even where no entity of it occurs
        self._initialize_labels(get_examples, labels if labels is not None else sorted(set(gold_labels(get_examples(), gold_key)).union(*scopes)))
        check_training_scopes(self.labels, scopes, self.loss, self._owner)
        n_classes = len(self.classes)
        self._check_output_width(n_classes, "classes")
        if self._width_from_data:  # logged, and saved in cfg
            width = width_from_gold(get_examples(), gold_key, self.name)
            self._set_max_width(width, from_data=True)
            self.cfg["max_span_width"] = width
        if output_width(self.model) is None:
            set_output_width(self.model, n_classes)
        self.model.initialize(X=[eg.x for eg in islice(get_examples(), 10)])
        warn_too_wide(get_examples(), self.max_span_width, gold_key, self.name)
        counts = self.loss.needs_class_counts
        self.cfg["class_counts"] = count_classes(self.model.ops, get_examples(), n_classes, self.max_span_width, self._targets) if counts else None
        self._initialize_loss()
        self._check_threshold_labels()
        self.cfg["n_updates"] = 0
        self.cfg["missampled"] = [0, 0]
        self.reseed()

    def _set_max_width(self, width: int, *, from_data: bool = False) -> None:
        """The model's candidates and width embedding follow the component's
        ``max_span_width``; a model built for another width is an error."""
        built = n_widths(self.model)
        if built is not None and built != width:
            raise ValueError(f"sampled_spancat '{self.name}': " + (
                f"max_span_width = null read {width} from the training data, but the model was built for {built} widths "
                "(initialized before on other data); set max_span_width to that width or start from a fresh model"
                if from_data else f"the model's width embedding covers {built} widths but max_span_width is {width}"
            ))
        set_max_width(self.model, width)
