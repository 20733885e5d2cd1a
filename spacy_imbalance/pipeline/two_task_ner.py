"""``two_task_ner``: NER as two binary tasks (is the token part of an entity?
does it begin one?) trained by AUC maximization (AUC-2T), binary cross entropy
(the CE-2T baseline) or alternating BIO cross entropy and AUC (COMAUC-2T), and
decoded by Algorithm 1 of the AUC maximization paper.

    [components.two_task_ner]
    factory = "two_task_ner"
    loss_mode = "auc"        # "bce" (CE-2T) or "compositional" (COMAUC-2T)
    lambda_ = 100.0          # AUC_M(en) + lambda_ * AUC_M(be), Eq. 4
    typing = "type_head"     # or "one_vs_all" (the released default), "untyped"
    en_threshold = null      # null: fitted on held-out training sentences
    be_threshold = null      # (tagging/fitted_thresholds.py); a number fixes it
    threshold_holdout = 0.1  # share of training sentences set aside for that

The component calls its model on docs and gets one row of scores per token
(``TwoTaskTagger``, whose ``HeadLayout`` says which column is which head);
the losses are ``losses.auc_margin`` and ``losses.two_task``, the threshold
fit ``tagging.fitted_thresholds``.
"""
from itertools import islice
from typing import Any, Callable, Dict, Iterable, List, Literal, Optional, Sequence, Tuple, cast

import numpy
from spacy.language import Language
from spacy.tokens import Doc
from spacy.training import Example, validate_examples
from spacy.vocab import Vocab
from thinc.api import Config, Model
from thinc.types import Floats1d, Floats2d, Ints1d, Ints2d

from ..decisions.softmax import log_softmax
from ..decisions.thresholds import check_threshold_pair
from ..losses.auc_margin import AUCMarginLoss, AUCMarginResult
from ..losses.base import DeviceLoss, check_setting
from ..losses.two_task import binary_cross_entropy, softmax_cross_entropy
from ..models.two_task_tagger import apply_auc_step, auc_state, set_n_tasks
from ._labelled import DEFAULT_TOK2VEC_CONFIG, ENTS_SCORE_WEIGHTS, LabelledEntityPipe, check_name, write_entities
from .tagging.fitted_thresholds import ThresholdFit
from .tagging.two_task import (
    HeadLayout,
    TwoTaskTargets,
    Typing,
    decide,
    decisions_to_spans,
    make_spans,
    sigmoid,
    token_targets,
    type_spans,
    validate_typing,
)

DEFAULT_TWO_TASK_MODEL = """
[model]
@architectures = "spacy-imbalance.TwoTaskTagger.v1"
nO = null
""" + DEFAULT_TOK2VEC_CONFIG
DEFAULT_MODEL = Config().from_str(DEFAULT_TWO_TASK_MODEL)["model"]
LossMode = Literal["auc", "bce", "compositional"]
LOSS_MODES = ("auc", "bce", "compositional")
Scores = List[Floats2d]


@Language.factory(
    "two_task_ner",
    assigns=["doc.ents", "doc.spans", "token.ent_iob", "token.ent_type"],
    default_config={
        "model": DEFAULT_MODEL,
        "loss_mode": "auc",
        "auc_loss": {"@losses": "spacy-imbalance.AUCMarginLoss.v1"},
        "lambda_": 100.0,
        "period": 1,
        "typed": True,
        # measured the safer default (docs/benchmarks/fidelity.md): one softmax
        # type head over a pooled entity task, not one rare binary task per type
        "typing": "type_head",
        "untyped_label": "ENTITY",
        "en_threshold": None,
        "be_threshold": None,
        "threshold_holdout": 0.1,
        "entities_key": None,
        "scorer": {"@scorers": "spacy-imbalance.ents_macro_scorer.v1"},
    },
    default_score_weights=ENTS_SCORE_WEIGHTS,
)
def make_two_task_ner(
    nlp: Language,
    name: str,
    model: Model[List[Doc], Scores],
    loss_mode: LossMode,
    auc_loss: AUCMarginLoss,
    lambda_: float,
    period: int,
    typed: bool,
    typing: Typing,
    untyped_label: str,
    en_threshold: Optional[float],
    be_threshold: Optional[float],
    threshold_holdout: float,
    entities_key: Optional[str],
    scorer: Optional[Callable],
) -> "TwoTaskNER":
    return TwoTaskNER(
        nlp.vocab,
        model,
        name,
        loss_mode=loss_mode,
        auc_loss=auc_loss,
        lambda_=lambda_,
        period=period,
        typing=typing if typed else "untyped",
        untyped_label=untyped_label,
        en_threshold=en_threshold,
        be_threshold=be_threshold,
        threshold_holdout=threshold_holdout,
        entities_key=entities_key,
        scorer=scorer,
    )


class TwoTaskNER(LabelledEntityPipe):
    """Entity-token and begin-token heads on a shared tok2vec.

    ``cfg`` holds the labels, the typing, the loss settings and the decision
    thresholds: fixed ones (a number; ``spacy-imbalance tune-thresholds``
    writes them) or, where a threshold is None, the one fitted during training
    on the held-out sentences' scores (``thresholds``)."""

    factory = "two_task_ner"

    def __init__(
        self,
        vocab: Vocab,
        model: Model[List[Doc], Scores],
        name: str = "two_task_ner",
        *,
        loss_mode: LossMode = "auc",
        auc_loss: Optional[AUCMarginLoss] = None,
        lambda_: float = 100.0,
        period: int = 1,
        typing: Typing = "type_head",
        untyped_label: str = "ENTITY",
        en_threshold: Optional[float] = None,
        be_threshold: Optional[float] = None,
        threshold_holdout: float = 0.1,
        entities_key: Optional[str] = None,
        scorer: Optional[Callable] = None,
    ) -> None:
        prefix = f"two_task_ner '{name}'"
        if loss_mode not in LOSS_MODES:
            raise ValueError(f"{prefix}: loss_mode must be one of {', '.join(LOSS_MODES)}, got {loss_mode!r}")
        # confection does not check what a nested loss block resolves to: any
        # registered loss would get here and fail at the first AUC update
        if auc_loss is not None and not isinstance(auc_loss, AUCMarginLoss):
            raise ValueError(
                f'{prefix}: auc_loss must be an AUC margin loss (@losses = "spacy-imbalance.AUCMarginLoss.v1"), '
                f"got {type(auc_loss).__name__}"
            )
        validate_typing(typing)
        check_setting("lambda_", lambda_, low=0, note=" (the weight of the begin-token task)", prefix=f"{prefix}: ")
        if period < 1:
            raise ValueError(f"{prefix}: period (steps per phase of the compositional mode) must be >= 1, got {period}")
        check_threshold_pair(en_threshold, be_threshold, prefix)
        check_setting(
            "threshold_holdout", threshold_holdout, low=0, high=0.5,
            note=" (the share of training sentences set aside to fit the thresholds; 0 fits them on the training scores)",
            prefix=f"{prefix}: ",
        )
        check_name(untyped_label, "untyped_label", prefix, what="label", optional=False)
        check_name(entities_key, "entities_key", prefix)
        self.vocab, self.model, self.name, self.scorer = vocab, model, name, scorer
        self.auc_loss = auc_loss if auc_loss is not None else AUCMarginLoss()
        self.cfg: Dict[str, Any] = {
            "labels": [], "loss_mode": loss_mode, "lambda_": lambda_, "period": period, "typing": typing,
            "untyped_label": untyped_label, "en_threshold": en_threshold, "be_threshold": be_threshold,
            "threshold_holdout": threshold_holdout, "entities_key": entities_key,
            # the held-out score histograms and the thresholds fitted on them
            "score_histograms": None, "fitted_thresholds": None,
        }
        self._step = 0

    @property
    def thresholds(self) -> Tuple[float, float]:
        """The (entity, begin) thresholds the decoder uses: each fixed one, or
        the fitted one (0.5 before any training)."""
        return self._fit.thresholds(self.cfg.get("fitted_thresholds"))

    @property
    def _fit(self) -> ThresholdFit:
        return ThresholdFit(self.cfg["en_threshold"], self.cfg["be_threshold"], self.cfg["threshold_holdout"])

    @property
    def layout(self) -> HeadLayout:
        return HeadLayout(self.cfg["typing"], len(self.labels))

    @property
    def pair_labels(self) -> List[str]:
        """The label each entity/begin pair writes."""
        return list(self.labels) if self.cfg["typing"] == "one_vs_all" else [self.cfg["untyped_label"]]

    def predict(self, docs: Iterable[Doc]) -> Scores:
        docs = list(docs)
        if not any(len(doc) for doc in docs):
            return [self.model.ops.alloc2f(len(doc), self.layout.width) for doc in docs]
        return self.model.predict(docs)

    def set_annotations(self, docs: Iterable[Doc], scores: Scores) -> None:
        thresholds = self.thresholds
        for doc, doc_scores in zip(docs, self.host_scores(scores)):
            h, type_log_probs = self.decision_inputs(doc_scores)
            spans = make_spans(doc, self.decode(doc, h, type_log_probs, *thresholds))
            write_entities(doc, spans, self.cfg.get("entities_key"))

    def host_scores(self, scores: Scores) -> List[numpy.ndarray]:
        """Each doc's scores on the host, from one copy of the batch's (a
        copy per doc would wait for the device once per doc)."""
        if not scores:
            return []
        ops = self.model.ops
        flat = ops.to_numpy(ops.flatten(scores))
        return numpy.split(flat, numpy.cumsum([len(s) for s in scores])[:-1])

    def decision_inputs(self, scores: numpy.ndarray) -> Tuple[numpy.ndarray, Optional[numpy.ndarray]]:
        """Sigmoid task scores and, with a type head, its log-probabilities."""
        layout = self.layout
        h = sigmoid(numpy, scores[:, layout.tasks])
        if layout.typing != "type_head":
            return h, None
        return h, log_softmax(numpy, scores[:, layout.types])

    def decode(
        self,
        doc: Doc,
        h: numpy.ndarray,
        type_log_probs: Optional[numpy.ndarray],
        en_threshold: float,
        be_threshold: float,
    ) -> List[Tuple[int, int, str]]:
        """Entities as (start, end, label) token offsets, by Algorithm 1."""
        tags, pairs = decide(h, self.layout, en_threshold, be_threshold)
        spans = decisions_to_spans(doc, tags, pairs, self.pair_labels)
        if type_log_probs is not None:
            spans = type_spans(spans, type_log_probs, self.labels)
        return spans

    def _learn(self, examples: List[Example]) -> Optional[float]:
        scores, backprop = self.model.begin_update([eg.predicted for eg in examples])
        loss, d_scores, auc = self._loss(examples, scores, fit_thresholds=True)
        self._check_loss(loss)  # before the AUC step below moves a, b and alpha
        backprop(d_scores)
        if auc is not None:
            # a and b get gradients (the optimizer's step), alpha its ascent step
            apply_auc_step(self.model, auc, self.auc_loss)
        self._step += 1
        return loss

    @property
    def phase(self) -> str:
        """What the next update optimises: "auc", "bce" or, in the
        compositional mode, "ce" and "auc" alternating every ``period`` steps."""
        mode = self.cfg["loss_mode"]
        if mode != "compositional":
            return mode
        return "ce" if (self._step // self.cfg["period"]) % 2 == 0 else "auc"

    def get_loss(self, examples: Iterable[Example], scores: Scores) -> Tuple[float, Scores]:
        """Loss and gradient of the current phase. It changes nothing: the
        AUC loss's a, b and alpha only move in ``update``."""
        loss, d_scores, _ = self._loss(examples, scores)
        return loss, d_scores

    def _loss(
        self, examples: Iterable[Example], scores: Scores, *, fit_thresholds: bool = False
    ) -> Tuple[float, Scores, Optional[AUCMarginResult]]:
        """The held-out sentences (``threshold_holdout``) get no loss; with
        ``fit_thresholds`` their scores go into the threshold histograms."""
        examples = list(examples)
        validate_examples(examples, "TwoTaskNER.get_loss")
        ops = self.model.ops
        layout = self.layout
        targets = [token_targets(eg, self.labels, layout) for eg in examples]
        fit = self._fit
        held_out = fit.held_out([eg.reference.text for eg in examples])
        if fit_thresholds and fit.fits:
            task_scores = [doc_scores[:, layout.tasks] for doc_scores in scores]
            self.cfg.update(fit.count(self.cfg["score_histograms"], ops, task_scores, targets, held_out, layout.n_pairs) or {})
        if held_out is not None:
            targets = [t.all_missing() if out else t for t, out in zip(targets, held_out)]
        flat = ops.flatten(scores)
        d_flat = ops.alloc2f(*flat.shape)
        phase = self.phase
        auc = None
        # the targets stay on the host, where the losses check them before
        # one upload each; the loss terms stay on the device until one copy
        if phase == "ce":
            loss, d_flat[:, layout.bio] = softmax_cross_entropy(ops, flat[:, layout.bio], _host_ids([t.bio for t in targets]))
        else:
            loss, d_flat[:, layout.tasks], auc = self._task_loss(flat[:, layout.tasks], targets, phase)
        if layout.typing == "type_head" and phase != "ce":
            type_loss, d_flat[:, layout.types] = softmax_cross_entropy(ops, flat[:, layout.types], _host_ids([t.types for t in targets]))
            loss = loss.plus(type_loss)
        total = (auc.loss if auc is not None else 0.0) + loss.to_float()
        # host lengths: Ops.unflatten would copy device lengths back (a 1-d
        # int32 numpy array, which Ints1d describes)
        lengths = cast(Ints1d, numpy.asarray([len(s) for s in scores], dtype="int32"))
        return total, ops.unflatten(d_flat, lengths), auc

    def _task_loss(
        self, logits: Floats2d, targets: List[TwoTaskTargets], phase: str
    ) -> Tuple[DeviceLoss, Floats2d, Optional[AUCMarginResult]]:
        """The binary tasks' loss and its gradient w.r.t. their logits: BCE,
        or the AUC margin loss (which copies its value to the host itself)."""
        ops, layout = self.model.ops, self.layout
        # on the host, as numpy arrays the thinc types describe: int32 targets
        # (token_targets), n_tokens x n_tasks, and a float32 weight per task
        tasks = cast(Ints2d, numpy.concatenate([t.tasks for t in targets]).reshape(-1, layout.n_tasks))
        weights = cast(Floats1d, numpy.asarray([1.0] * layout.n_pairs + [self.cfg["lambda_"]] * layout.n_pairs, dtype="float32"))
        h = sigmoid(ops.xp, logits)
        if phase == "bce":
            loss, d_logits = binary_cross_entropy(ops, logits, h, ops.asarray2i(tasks), ops.asarray1f(weights))
            return loss, d_logits, None
        auc = self.auc_loss.compute(h, tasks, *auc_state(self.model), task_weights=weights)
        # through the sigmoid: dh/dlogit = h (1 - h)
        return DeviceLoss(), auc.d_h * h * (1.0 - h), auc

    def _initialize(self, get_examples: Callable[[], Iterable[Example]], labels: Optional[Sequence[str]]) -> None:
        self._initialize_labels(get_examples, labels)
        layout = self.layout
        self._check_output_width(layout.width, "columns")
        docs = [eg.x for eg in islice(get_examples(), 10)]
        set_n_tasks(self.model, layout.n_tasks)
        self.model.initialize(X=docs, Y=[self.model.ops.alloc2f(len(doc), layout.width) for doc in docs])
        self._step = 0
        self.cfg["score_histograms"] = None
        self.cfg["fitted_thresholds"] = None

    def set_thresholds(self, en_threshold: float, be_threshold: float) -> None:
        check_threshold_pair(en_threshold, be_threshold, f"two_task_ner '{self.name}'")
        self.cfg["en_threshold"] = float(en_threshold)
        self.cfg["be_threshold"] = float(be_threshold)


def _host_ids(parts: List[numpy.ndarray]) -> Ints1d:
    """The batch's class ids (``token_targets``'s) in one host array."""
    # a 1-d int32 numpy array, which Ints1d describes
    return cast(Ints1d, numpy.concatenate(parts))
