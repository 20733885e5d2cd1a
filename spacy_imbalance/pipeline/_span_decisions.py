"""How ``sampled_spancat`` turns its scores into entities.

``set_annotations``: non-O spans (the argmax class, or per-label
``thresholds``: ``decisions.thresholds``, docs/calibration.md), by
descending probability, go to ``doc.ents`` unless they overlap one kept
before (``spans.decoding``); all of them, with their probabilities, to
``doc.spans[spans_key]``.

The per-label decision thresholds, as the component keeps them: in
``cfg["thresholds"]``, checked against the labels whenever either changes
(set, initialize, load); on the device as one vector, rebuilt only when they
change; and, for ``spacy-imbalance.tuned_thresholds.v1``, other thresholds
that a save writes while the component keeps deciding with its own."""
from contextlib import contextmanager
from pathlib import Path
from typing import Dict, Iterable, Iterator, List, Optional, Tuple, Union

from spacy.tokens import Doc, SpanGroup
from thinc.api import Ops
from thinc.types import Floats1d

from ..decisions.thresholds import check_label_thresholds, check_threshold_labels, threshold_vector
from ..models.span_scorer import SpanScores
from ..spans.decoding import entity_candidates, entity_spans
from ._labelled import ClassCountedPipe, write_entities

Thresholds = Dict[str, float]


class SpanDecisionsPipe(ClassCountedPipe):
    """A span classifier over ``classes`` (O, then its labels) that decides
    with per-label thresholds on their probabilities, or with the argmax rule
    (None). Subclasses put the checked thresholds in ``cfg["thresholds"]``
    (``check_label_thresholds``), and the span groups ``spans_key`` and
    ``entities_key``."""

    # (ops, key, device vector) of the thresholds: uploaded once, not per batch
    _threshold_cache: Optional[Tuple[Ops, Tuple, Floats1d]] = None
    # (thresholds,) that saving writes instead of the ones it decides with
    _saved_thresholds: Optional[Tuple[Optional[Thresholds]]] = None

    @property
    def classes(self) -> List[str]:
        """Output columns: O, then the labels."""
        return ["O", *self.labels]

    @property
    def loss_classes(self) -> List[str]:
        return self.classes

    @property
    def thresholds(self) -> Optional[Thresholds]:
        """The per-label decision thresholds, or None for the argmax rule."""
        thresholds = self.cfg.get("thresholds")
        return dict(thresholds) if thresholds is not None else None

    @property
    def _owner(self) -> str:
        return f"{self.factory} '{self.name}'"

    def set_annotations(self, docs: Iterable[Doc], scores: SpanScores) -> None:
        """Greedy non-overlapping non-O spans -> ``doc.ents`` (entities the
        doc already has are kept, and win over overlapping predictions);
        every non-O span with its probability -> ``doc.spans[spans_key]``."""
        candidates, logits = scores
        entities = entity_candidates(self.model.ops, candidates, logits, self._threshold_vector())
        spans_key = self.cfg["spans_key"]
        for doc, doc_entities in zip(docs, entities.by_doc(candidates.doc_lengths)):
            spans, kept = entity_spans(doc, doc_entities, self.classes)
            write_entities(doc, [spans[k] for k in kept], self.cfg.get("entities_key"))
            if spans_key is not None:
                group = SpanGroup(doc, name=spans_key, spans=spans)
                group.attrs["scores"] = doc_entities.columns["confidence"].tolist()
                doc.spans[spans_key] = group

    def set_thresholds(self, thresholds: Optional[Thresholds]) -> None:
        """Decide with ``thresholds`` from now on (None: the argmax rule).
        Only the component changes; ``set_span_thresholds`` also updates the
        pipeline's config, which ``nlp.to_disk`` writes as config.cfg."""
        checked = check_label_thresholds(thresholds, self._owner)
        # labels come with initialize: until then they are checked there
        if self.labels:
            check_threshold_labels(checked, self.labels, self._owner)
        self.cfg["thresholds"] = checked

    def save_with_thresholds(self, thresholds: Optional[Thresholds]) -> None:
        """Write ``thresholds`` (None: the argmax rule) whenever the
        component is saved from now on, while it keeps deciding with its own:
        what ``spacy-imbalance.tuned_thresholds.v1`` does at each save of
        ``spacy train``, so that the checkpoint is still chosen on untuned
        dev scores and the saved pipeline decides with the tuned ones."""
        checked = check_label_thresholds(thresholds, self._owner)
        check_threshold_labels(checked, self.labels, self._owner)
        self._saved_thresholds = (checked,)

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
            check_threshold_labels(thresholds, self.labels, self._owner)
            cached = (ops, key, ops.asarray1f(threshold_vector(self.classes, thresholds)))
            self._threshold_cache = cached
        return cached[2]

    def _check_threshold_labels(self) -> None:
        # the stored cfg replaces the one built from config.cfg: check both kinds of value again
        self.cfg["thresholds"] = check_label_thresholds(self.cfg.get("thresholds"), self._owner)
        check_threshold_labels(self.cfg["thresholds"], self.labels, self._owner)

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

    def _loaded(self) -> None:
        super()._loaded()
        self._check_threshold_labels()
