"""``token_ner``: NER as token classification, trained with any token loss.

spaCy's ``ner`` learns by imitation of a transition oracle, so its loss cannot
be swapped. ``token_ner`` scores every token over BIO (or BILUO) tags with
``spacy-imbalance.TokenTagger.v1``, trains with the configured loss from
``spacy_imbalance.losses`` (cross entropy, weighted CE, focal, dice, MoM) and
decodes the best valid tag sequence with a constrained Viterbi, so that it
never writes an ``I-`` that continues nothing.

    [components.token_ner]
    factory = "token_ner"

    [components.token_ner.loss]
    @losses = "spacy-imbalance.MoMLoss.v1"
    lambda_ = 0.2

Documents with a label scope (``spacy-imbalance.ScopedCorpus.v1``: a corpus
that annotates only some entity types) train an unannotated token towards
"O or a tag of a type outside the scope", the summed probability
(``tagging.scopes``), with cross-entropy, weighted cross-entropy or focal
loss; a batch whose documents leave no type out trains exactly as without
scopes.
"""
from itertools import islice
from typing import Any, Callable, Dict, FrozenSet, Iterable, List, Optional, Sequence, Set, Tuple, cast

import numpy
from spacy.language import Language
from spacy.tokens import Doc, SpanGroup
from spacy.training import Example, validate_examples
from spacy.vocab import Vocab
from thinc.api import Config, Model
from thinc.types import Floats2d, Ints1d

from ..decisions.softmax import log_softmax
from ..corpus.scopes import get_label_scope
from ..losses.scoped import check_o_weight
from ..losses import TokenLoss
from .tagging.decoding import constrained_viterbi
from .tagging.scopes import check_scoped_loss, leaves_types_out, scoped_tag_loss, tag_scope_rows
from ._labelled import DEFAULT_TOK2VEC_CONFIG, ENTS_SCORE_WEIGHTS, ClassCountedPipe, check_name, write_entities
from .tagging.tags import TagScheme, gold_tag_ids, tag_names, tag_spans, transition_masks, validate_scheme

DEFAULT_TOKEN_NER_MODEL = """
[model]
@architectures = "spacy-imbalance.TokenTagger.v1"
nO = null
""" + DEFAULT_TOK2VEC_CONFIG
DEFAULT_MODEL = Config().from_str(DEFAULT_TOKEN_NER_MODEL)["model"]
DEFAULT_LOSS = {"@losses": "spacy-imbalance.CrossEntropy.v1"}

Scores = List[Floats2d]


@Language.factory(
    "token_ner",
    assigns=["doc.ents", "doc.spans", "token.ent_iob", "token.ent_type"],
    default_config={
        "model": DEFAULT_MODEL,
        "loss": DEFAULT_LOSS,
        "tag_scheme": "BIO",
        "spans_key": None,
        "entities_key": None,
        "scope_o_weight": 0.0,
        "scorer": {"@scorers": "spacy-imbalance.ents_macro_scorer.v1"},
    },
    default_score_weights=ENTS_SCORE_WEIGHTS,
)
def make_token_ner(
    nlp: Language,
    name: str,
    model: Model[List[Doc], Scores],
    loss: TokenLoss,
    tag_scheme: TagScheme,
    spans_key: Optional[str],
    entities_key: Optional[str],
    scope_o_weight: float,
    scorer: Optional[Callable],
) -> "TokenNER":
    """entities_key: where the decoded entities go: null -> doc.ents (entities
    the doc has win over overlapping ones); a name -> doc.spans[name] only,
    doc.ents untouched (beside a pipeline's own ner; the scorer reads it).
    scope_o_weight: in [0, 1], the share of an unannotated token of a document with a label scope
    trained as O, the rest as "O or a tag of a type outside the scope" (``losses.scoped.scoped_loss``)."""
    return TokenNER(
        nlp.vocab, model, name, loss=loss, tag_scheme=tag_scheme, spans_key=spans_key, entities_key=entities_key,
        scope_o_weight=scope_o_weight, scorer=scorer,
    )


class TokenNER(ClassCountedPipe):
    """Token-classification NER with a pluggable loss and constrained decoding.

    ``cfg`` holds the labels, the tag scheme, the optional ``spans_key`` and,
    for losses that weight classes (WCE), the training-set tag counts, so that a
    loaded pipeline trains on with the same weights."""

    factory = "token_ner"

    def __init__(
        self,
        vocab: Vocab,
        model: Model[List[Doc], Scores],
        name: str = "token_ner",
        *,
        loss: TokenLoss,
        tag_scheme: TagScheme = "BIO",
        spans_key: Optional[str] = None,
        entities_key: Optional[str] = None,
        scope_o_weight: float = 0.0,
        scorer: Optional[Callable] = None,
    ) -> None:
        validate_scheme(tag_scheme)
        check_o_weight(scope_o_weight, f"token_ner '{name}'")
        if not callable(loss) or not hasattr(loss, "initialize"):
            raise ValueError(
                f"token_ner '{name}': loss must be a token loss from spacy_imbalance.losses "
                f"(e.g. @losses = \"spacy-imbalance.CrossEntropy.v1\"), got {type(loss).__name__}"
            )
        check_name(spans_key, "spans_key", f"token_ner '{name}'")
        check_name(entities_key, "entities_key", f"token_ner '{name}'")
        if entities_key is not None and entities_key == spans_key:
            raise ValueError(
                f"token_ner '{name}': entities_key and spans_key are both {entities_key!r}: spans_key holds the "
                "entities with their scores, entities_key the entities alone; use one of them or two names"
            )
        self.vocab = vocab
        self.model = model
        self.name = name
        self.loss = loss
        self.scorer = scorer
        self.cfg: Dict[str, Any] = {
            "labels": [],
            "tag_scheme": tag_scheme,
            "spans_key": spans_key,
            "entities_key": entities_key,
            "class_counts": None,
            "scope_o_weight": scope_o_weight,
        }

    @property
    def tags(self) -> List[str]:
        """Tag inventory; index 0 is ``O``."""
        return tag_names(self.labels, self.cfg["tag_scheme"])

    def predict(self, docs: Iterable[Doc]) -> Scores:
        docs = list(docs)
        if not any(len(doc) for doc in docs):
            n_tags = len(self.tags)
            return [self.model.ops.alloc2f(len(doc), n_tags) for doc in docs]
        return self.model.predict(docs)

    def set_annotations(self, docs: Iterable[Doc], scores: Scores) -> None:
        """Write the decoded entities to ``doc.ents``. Entities a doc already
        has (e.g. from an ``entity_ruler`` before this component) are kept;
        predicted entities that overlap them are dropped."""
        docs = list(docs)
        if not docs:
            return
        ops = self.model.ops
        lengths = _host_lengths(scores)
        # one softmax for the whole batch
        flat_log_probs = log_softmax(ops.xp, ops.flatten(scores))
        start, trans, end = transition_masks(self.tags, self.cfg["tag_scheme"])
        paths = constrained_viterbi(ops, ops.unflatten(flat_log_probs, lengths), start, trans, end)
        tags = self.tags
        spans_key = self.cfg["spans_key"]
        # only the span scores read the log-probabilities: copy them only then
        host = _split(ops.to_numpy(flat_log_probs), lengths.tolist()) if spans_key is not None else paths
        for doc, path, lp in zip(docs, paths, host):
            spans = tag_spans(doc, path, tags)
            write_entities(doc, spans, self.cfg.get("entities_key"))
            if spans_key is not None:
                doc.spans[spans_key] = _scored_group(doc, spans_key, spans, path, lp)

    def _learn(self, examples: List[Example]) -> Optional[float]:
        scores, backprop = self.model.begin_update([eg.predicted for eg in examples])
        loss, d_scores = self.get_loss(examples, scores)
        backprop(d_scores)
        return loss

    def get_loss(self, examples: Iterable[Example], scores: Scores) -> Tuple[float, Scores]:
        """Loss and gradient (spaCy's order) of the configured token loss; tokens
        without gold annotation get neither. In a document whose label scope
        leaves types out, an O token is trained towards O or those types'
        tags (``tagging.scopes``)."""
        examples = list(examples)
        validate_examples(examples, "TokenNER.get_loss")
        ops = self.model.ops
        tag_index = {tag: i for i, tag in enumerate(self.tags)}
        # host int32 tag ids (gold_tag_ids), a numpy array that Ints1d describes
        truths = cast(Ints1d, numpy.concatenate([gold_tag_ids(eg, tag_index, self.cfg["tag_scheme"]) for eg in examples]))
        lengths = _host_lengths(scores)
        flat = ops.flatten(scores)
        owner = f"token_ner '{self.name}'"
        scopes = [get_label_scope(eg.reference) for eg in examples]
        out_of_scope = tag_scope_rows(self.tags, scopes, lengths.tolist(), owner)
        if out_of_scope is not None:
            check_scoped_loss(self.loss, owner)
            # pipelines saved before scope_o_weight existed trained with partial labels alone
            d_flat, device_loss = scoped_tag_loss(self.loss, flat, truths, out_of_scope, o_weight=self.cfg.get("scope_o_weight", 0.0))
            return device_loss.to_float(), ops.unflatten(d_flat, lengths)
        # thinc losses return (grad, loss): tagger.pyx does the same swap.
        # The lengths let a loss average per sentence (MoMLoss.v2). The
        # package's losses take the gold ids from the host: they check them
        # there and upload them once.
        if hasattr(self.loss, "compute_sequences"):
            d_flat, loss = self.loss.compute_sequences(flat, truths, lengths.tolist())
        else:  # any thinc loss with the package's initialize protocol
            d_flat, loss = self.loss(flat, ops.asarray1i(truths))
        return float(loss), ops.unflatten(d_flat, lengths)

    def _initialize(self, get_examples: Callable[[], Iterable[Example]], labels: Optional[Sequence[str]]) -> None:
        entity_labels, scopes = _labels_and_scopes(get_examples())
        if labels is None:
            # a scope's type counts as annotated even where no entity of it occurs
            labels = sorted(entity_labels.union(*scopes))
        self._initialize_labels(get_examples, labels)
        self._check_scopes(scopes)
        n_tags = len(self.tags)
        self._check_output_width(n_tags, "tags")
        docs = [eg.x for eg in islice(get_examples(), 10)]
        self.model.initialize(X=docs, Y=[self.model.ops.alloc2f(len(doc), n_tags) for doc in docs])
        needs_counts = self.loss.needs_class_counts
        self.cfg["class_counts"] = self._count_tags(get_examples()) if needs_counts else None
        self._initialize_loss()

    def _check_scopes(self, scopes: Iterable[FrozenSet[str]]) -> None:
        """Before training: every scope of the training data names labels of
        the component, and the loss trains scopes that leave types out."""
        owner = f"token_ner '{self.name}'"
        for scope in sorted(scopes, key=sorted):
            try:
                leaves_out = leaves_types_out(self.tags, scope)
            except ValueError as err:
                raise ValueError(f"{owner}: the training data's {err}") from None
            if leaves_out:
                check_scoped_loss(self.loss, owner)

    def _count_tags(self, examples: Iterable[Example]) -> List[int]:
        """Gold tag counts over the whole training set (missing tokens excluded):
        the class frequencies that weighted cross entropy needs."""
        tag_index = {tag: i for i, tag in enumerate(self.tags)}
        counts = numpy.zeros(len(tag_index), dtype="int64")
        for eg in examples:
            ids = gold_tag_ids(eg, tag_index, self.cfg["tag_scheme"])
            counts += numpy.bincount(ids[ids >= 0], minlength=len(tag_index))
        return [int(c) for c in counts]

    @property
    def loss_classes(self) -> List[str]:
        return self.tags


def _labels_and_scopes(examples: Iterable[Example]) -> Tuple[Set[str], Set[FrozenSet[str]]]:
    """The entity labels of the references and their distinct label scopes, in one pass."""
    labels: Set[str] = set()
    scopes: Set[FrozenSet[str]] = set()
    for eg in examples:
        labels.update(ent.label_ for ent in eg.reference.ents)
        scope = get_label_scope(eg.reference)
        if scope is not None:
            scopes.add(scope)
    return labels, scopes


def _host_lengths(scores: Scores) -> Ints1d:
    """The docs' lengths on the host: Ops.unflatten would copy device lengths back."""
    # a 1-d int32 numpy array, which Ints1d describes
    return cast(Ints1d, numpy.asarray([len(s) for s in scores], dtype="int32"))


def _split(flat: numpy.ndarray, lengths: Sequence[int]) -> List[numpy.ndarray]:
    """The rows of each doc, from a host array of the batch's rows."""
    return numpy.split(flat, numpy.cumsum(lengths)[:-1])


def _scored_group(doc: Doc, key: str, spans: List[Any], path: Any, log_probs: Any) -> SpanGroup:
    """The decoded entities with a confidence each: the mean probability of the
    decoded tags over the span's tokens."""
    token_probs = numpy.exp(log_probs[numpy.arange(len(path)), path]) if len(path) else []
    group = SpanGroup(doc, name=key, spans=spans)
    group.attrs["scores"] = [float(numpy.mean(token_probs[s.start : s.end])) for s in spans]
    return group
