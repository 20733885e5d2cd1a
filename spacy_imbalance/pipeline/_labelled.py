"""What the entity components share: their entity labels (kept in
``cfg["labels"]``, sorted, fixed once the output layer has its size), how
they write predictions next to entities a doc already has and, for
``token_ner`` and ``sampled_spancat``, the class counts their loss may need."""
from pathlib import Path
from typing import Callable, Dict, Iterable, List, Optional, Sequence, Tuple, Union

from spacy.language import Language
from spacy.pipeline import TrainablePipe
from spacy.tokens import Doc, Span, SpanGroup
from spacy.training import Example, validate_examples, validate_get_examples
from thinc.api import Optimizer, set_dropout_rate

from ..models.output import output_width
from ..training.checks import check_finite_loss
from .tagging.tags import check_label


# The tok2vec of the components' default model configs: spaCy's own default
# for its ner and tagger (a CNN over hash embeddings), so that a component
# added without a model config compares with spaCy's.
DEFAULT_TOK2VEC_CONFIG = """
[model.tok2vec]
@architectures = "spacy.HashEmbedCNN.v2"
pretrained_vectors = null
width = 96
depth = 4
embed_size = 2000
window_size = 1
maxout_pieces = 3
subword_features = true
"""

# Checkpoints are selected by macro-F1; spaCy's micro scores are reported.
ENTS_SCORE_WEIGHTS = {
    "ents_macro_f": 1.0,
    "ents_macro_p": 0.0,
    "ents_macro_r": 0.0,
    "ents_f": 0.0,
    "ents_p": 0.0,
    "ents_r": 0.0,
    "ents_per_type": None,
}


class LabelledEntityPipe(TrainablePipe):
    """A trainable entity component whose output layer is sized by its labels.
    Subclasses set ``factory`` (used in messages) and own ``cfg["labels"]``."""

    factory = "entity component"

    @property
    def labels(self) -> Tuple[str, ...]:
        return tuple(self.cfg["labels"])

    def update(
        self,
        examples: Iterable[Example],
        *,
        drop: float = 0.0,
        sgd: Optional[Optimizer] = None,
        losses: Optional[Dict[str, float]] = None,
    ) -> Dict[str, float]:
        """One training step, in spaCy's order: a batch without tokens is
        skipped, ``_learn`` runs the forward pass, the loss and the backward
        pass, then ``sgd`` applies the gradients (``finish_update``) unless
        the loss is NaN or infinite, which stops training with a ValueError."""
        if losses is None:
            losses = {}
        losses.setdefault(self.name, 0.0)
        examples = list(examples)
        validate_examples(examples, f"{type(self).__name__}.update")
        if not any(len(eg.predicted) for eg in examples):
            return losses
        set_dropout_rate(self.model, drop)
        loss = self._learn(examples)
        if loss is None:
            # nothing in the batch to learn from: no optimizer step either
            return losses
        self._check_loss(loss)
        if sgd is not None:
            self.finish_update(sgd)
        losses[self.name] += loss
        return losses

    def _learn(self, examples: List[Example]) -> Optional[float]:
        """Forward, loss and backward pass on a batch that has tokens; the
        loss, or None when the batch holds nothing to learn from."""
        raise NotImplementedError

    def initialize(
        self,
        get_examples: Callable[[], Iterable[Example]],
        *,
        nlp: Optional[Language] = None,
        labels: Optional[Sequence[str]] = None,
    ) -> None:
        """spaCy's initialize: ``get_examples`` checked, then ``_initialize``
        sets the labels (``labels``, or the training data's), sizes and
        initialises the model and keeps what the component needs of the data."""
        validate_get_examples(get_examples, f"{type(self).__name__}.initialize")
        self._initialize(get_examples, labels)

    def _initialize(self, get_examples: Callable[[], Iterable[Example]], labels: Optional[Sequence[str]]) -> None:
        raise NotImplementedError

    def _check_loss(self, loss: float) -> None:
        """Stop training on a NaN or infinite loss (a ValueError naming the
        component), before its gradients reach any weight: ``update`` calls
        it before the optimizer step, and a ``_learn`` that moves weights of
        its own calls it before that."""
        check_finite_loss(f"{self.factory} '{self.name}'", loss)

    @property
    def label_data(self) -> List[str]:
        return list(self.labels)

    def add_label(self, label: str) -> int:
        check_label(label, self.name)
        if label in self.labels:
            return 0
        if output_width(self.model) is not None:
            raise ValueError(
                f"{self.factory} '{self.name}': cannot add label {label!r} once the output layer's "
                "size is set (after the model is initialized, or nO in the config); give every "
                "label to initialize"
            )
        self.cfg["labels"] = sorted([*self.labels, label])
        self.vocab.strings.add(label)
        return 1

    def _require_labels(self) -> None:
        if not self.labels:
            raise ValueError(
                f"{self.factory} '{self.name}' has no labels: the training examples have no "
                f"entities and none were given to initialize ([initialize.components.{self.name}.labels])"
            )

    def _initialize_labels(self, get_examples: Callable[[], Iterable[Example]], labels: Optional[Sequence[str]]) -> None:
        """Labels from ``initialize(labels=...)`` or the data, plus those added
        before with ``add_label`` (as spaCy's tagger keeps them)."""
        if labels is None:
            labels = [ent.label_ for eg in get_examples() for ent in eg.reference.ents]
        for label in labels:
            check_label(label, self.name)
        self.cfg["labels"] = sorted(set(self.labels) | set(labels))
        for label in self.labels:
            self.vocab.strings.add(label)
        self._require_labels()

    def _check_output_width(self, width: int, unit: str) -> None:
        built = output_width(self.model)
        if built is not None and built != width:
            raise ValueError(
                f"{self.factory} '{self.name}': the output layer has {built} {unit} "
                f"but the labels {', '.join(self.labels)} need {width}; start from a fresh component "
                "(or nO = null) to change the label set"
            )


class ClassCountedPipe(LabelledEntityPipe):
    """An entity component trained with a loss of ``spacy_imbalance.losses``,
    which may need the training set's class counts (weighted cross entropy).
    They are kept in ``cfg["class_counts"]``, one per entry of
    ``loss_classes``, so that a loaded pipeline trains on with the same
    weights. Subclasses set ``self.loss``."""

    @property
    def loss_classes(self) -> List[str]:
        """The classes the loss sees, in output-column order."""
        raise NotImplementedError

    def _initialize_loss(self) -> None:
        counts = self.cfg.get("class_counts")
        n_classes = len(self.loss_classes)
        if counts is not None:
            if len(counts) != n_classes:
                raise ValueError(
                    f"{self.factory} '{self.name}': {len(counts)} stored class counts for "
                    f"{n_classes} classes; re-run initialize"
                )
            self.loss.initialize(counts)
        elif self.loss.needs_class_counts and self.labels:
            raise ValueError(
                f"{self.factory} '{self.name}': the loss {type(self.loss).__name__} needs class "
                "counts from the training data, but this pipeline was initialized with a "
                "loss that did not record them; re-run initialize"
            )

    def from_bytes(self, bytes_data: bytes, *, exclude: Iterable[str] = tuple()) -> "ClassCountedPipe":
        super().from_bytes(bytes_data, exclude=exclude)
        self._loaded()
        return self

    def from_disk(self, path: Union[str, Path], *, exclude: Iterable[str] = tuple()) -> "ClassCountedPipe":
        super().from_disk(path, exclude=exclude)
        self._loaded()
        return self

    def _loaded(self) -> None:
        """What a loaded component sets up from its stored cfg (subclasses
        add theirs after this): the loss, with the stored class counts."""
        self._initialize_loss()


def check_name(
    value: Optional[str], setting: str, owner: str, *, what: str = "span group name", optional: bool = True
) -> None:
    """A name from the config that keys ``doc.spans`` or labels entities:
    spaCy takes "" or "  " as a key, but no user means one, and predictions
    written under it are found by nobody (nor readable in a log).

    owner (str): The component, for the message, e.g. "token_ner 'ner'".
    what (str): What the name is, for the message.
    optional (bool): Whether None (null: not used) is allowed.
    """
    if value is None and optional:
        return
    if not isinstance(value, str) or not value.strip():
        alternative = " or null" if optional else ""
        raise ValueError(f"{owner}: {setting} must be a non-empty {what}{alternative}, got {value!r}")


def check_groups(groups: Dict[str, Optional[str]], own: Sequence[str], owner: str) -> None:
    """Every setting of ``groups`` names a span group or is null
    (``check_name``), and those of ``own`` each a group of their own
    (``check_own_groups``)."""
    for setting, key in groups.items():
        check_name(key, setting, owner)
    check_own_groups(groups, own, owner)


def check_own_groups(groups: Dict[str, Optional[str]], own: Sequence[str], owner: str) -> None:
    """Each setting of ``own`` that names a span group names one no other
    setting of ``groups`` names: a ValueError naming both settings."""
    for setting in own:
        key = groups[setting]
        others = [other for other, value in groups.items() if other != setting and value is not None and value == key]
        if key is not None and others:
            raise ValueError(
                f"{owner}: {setting} {key!r} must differ from {' and '.join(others)}: it names a span group of its own"
            )


def write_entities(doc: Doc, spans: List[Span], entities_key: Optional[str]) -> None:
    """The decoded (non-overlapping) entities into ``doc.ents``, where the
    entities the doc already has win (``keep_preset``), or, with
    ``entities_key``, into ``doc.spans[entities_key]`` alone: ``doc.ents``
    stays as the components before wrote it (a pipeline's own ``ner``)."""
    if entities_key is None:
        doc.set_ents(keep_preset(doc, spans), default="outside")
    else:
        doc.spans[entities_key] = SpanGroup(doc, name=entities_key, spans=spans)


def keep_preset(doc: Doc, spans: List[Span]) -> List[Span]:
    """Entities the doc already has (e.g. from an entity_ruler before the
    component) plus the predicted ones that do not overlap them."""
    preset = list(doc.ents)
    if not preset:
        return spans
    taken = {i for ent in preset for i in range(ent.start, ent.end)}
    kept = [s for s in spans if not taken.intersection(range(s.start, s.end))]
    return sorted(preset + kept, key=lambda s: s.start)
