"""What the tests of the components on documents with a label scope share
(test_token_ner_scopes, test_sampled_spancat_scopes, and init-config
--scoped's in tests/init_config/test_scoped): the component with its data
and losses, the loss from its definition, the refusals, the device
comparison, and corpora written for `spacy train`."""
import math
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Dict, Iterable, List, Mapping, Optional, Sequence, Tuple

import numpy
import pytest
import spacy
from spacy.language import Language
from spacy.tokens import DocBin, Span
from spacy.training import Example

from spacy_imbalance.corpus.scopes import set_label_scope

from ..device import TransferCounts, device, seeded_initialize, seeded_updates, update_counts
from .test_token_ner import LOSSES

# the losses with a partial-label form (MoM's and Dice's have none)
SCOPED_LOSSES = ["ce", "wce1", "wce2", "focal", "focal_alpha"]
ALL_LOSSES = {**LOSSES, "focal_alpha": {"@losses": "spacy-imbalance.FocalLoss.v1", "gamma": 1.5, "alpha": 0.25}}
UNSCOPED = [None, None, None]


@dataclass(frozen=True)
class ScopedComponent:
    """A component under test and its data: rows (text, entities or BILUO
    tags with "-" = missing, scope or None[, rejected spans as token
    ranges]). ``labels`` are the data's entity types; ``classes`` is what
    its ``classes_attr`` must hold once initialised on the data; ``config``
    is its config before the loss."""

    name: str
    data: Sequence[tuple]
    labels: List[str]
    classes_attr: str
    classes: List[str]
    config: Mapping[str, Any] = field(default_factory=dict)

    @property
    def owner(self) -> str:
        """How its errors name it."""
        return f"{self.name} '{self.name}'"

    def make_nlp(self, loss: str = "ce", **cfg: Any) -> Language:
        nlp = spacy.blank("en")
        nlp.add_pipe(self.name, config={**self.config, **cfg, "loss": ALL_LOSSES[loss]})
        return nlp

    def make_examples(self, nlp: Language, scopes: Optional[Sequence[Any]] = None) -> List[Example]:
        """The data's examples, each with its scope (or ``scopes``, one per example)."""
        examples = []
        for i, (text, annotation, scope, *rejected) in enumerate(self.data):
            eg = Example.from_dict(nlp.make_doc(text), {"entities": annotation})
            if rejected and rejected[0]:
                eg.reference.spans["incorrect_spans"] = [Span(eg.reference, s, e) for s, e in rejected[0]]
            scope = scope if scopes is None else scopes[i]
            if scope is not None:
                set_label_scope(eg.reference, scope)
            examples.append(eg)
        return examples

    def initialized(self, loss: str = "ce", scopes: Optional[Sequence[Any]] = None, **cfg: Any) -> Tuple[Language, List[Example]]:
        nlp = self.make_nlp(loss, **cfg)
        examples = self.make_examples(nlp, scopes)
        seeded_initialize(nlp, examples)
        assert getattr(nlp.get_pipe(self.name), self.classes_attr) == self.classes
        return nlp, examples

    def seeded_history(self, loss: str, n_updates: int) -> List[float]:
        """The losses of ``n_updates`` seeded updates on the data."""
        nlp = self.make_nlp(loss)
        return seeded_updates(nlp, self.make_examples(nlp), self.name, n_updates=n_updates)

    def update_counts(
        self, fake_ops: Any, loss: str, sizes: Sequence[int] = (3, 30)
    ) -> Tuple[List[TransferCounts], List[TransferCounts]]:
        """What one update moves on each of ``sizes`` examples cycled from the
        data, initialised on it (seeded): with the scopes, then without."""
        nlp = self.make_nlp(loss)
        scoped, plain = self.make_examples(nlp), self.make_examples(nlp, scopes=UNSCOPED)
        seeded_initialize(nlp, scoped)
        with_scopes = [update_counts(fake_ops, nlp, scoped, n) for n in sizes]
        return with_scopes, [update_counts(fake_ops, nlp, plain, n) for n in sizes]


def expected_loss(settings: Dict[str, Any], loss: Any, logits: Any, rows: Iterable[Tuple[int, Any]]) -> float:
    """The loss ``settings`` configure (``loss``, the component's, holds a
    weighted cross-entropy's weights), from its definition: per trained row
    (``rows`` holds its gold class, -1 for untrained, and the mask of the
    classes it may be), the configured loss of the probability of its
    allowed classes, over the number of trained rows (summed when the
    component's loss has ``normalize = false``, sampled_spancat's default).
    A row not annotated as an entity weighs as O (gold 0) in a weighted
    cross-entropy."""
    total, n = 0.0, 0
    for row, (gold, allowed) in zip(numpy.asarray(logits, dtype="float64"), rows):
        if gold < 0:
            continue
        p = numpy.exp(row - row.max()) / numpy.exp(row - row.max()).sum()
        p_allowed = p[allowed].sum()
        term = -math.log(p_allowed)
        if settings["@losses"].endswith("WeightedCrossEntropy.v1"):
            term *= loss.weights[gold]
        if settings["@losses"].endswith("FocalLoss.v1"):
            alpha = settings.get("alpha")
            weight = 1.0 if alpha is None else (1 - alpha if gold == 0 else alpha)
            term *= weight * (1 - p_allowed) ** settings["gamma"]
        total += term
        n += 1
    return total / n if getattr(loss, "normalize", True) else total


def initialize_error(nlp: Language, examples: List[Example]) -> str:
    """The ValueError that initialising ``nlp`` on ``examples`` raises."""
    with pytest.raises(ValueError) as err:
        nlp.initialize(get_examples=lambda: examples)
    return str(err.value)


def refusals_without_partial_form(component: ScopedComponent, loss: str) -> Tuple[str, str]:
    """The errors for ``loss`` on the scoped data: at initialize, and, when
    the scopes appear only in the training batches, at the update."""
    nlp = component.make_nlp(loss)
    examples = component.make_examples(nlp)
    at_initialize = initialize_error(nlp, examples)
    nlp = component.make_nlp(loss)
    optimizer = nlp.initialize(get_examples=lambda: component.make_examples(nlp, scopes=UNSCOPED))
    with pytest.raises(ValueError) as at_update:
        nlp.update(examples, sgd=optimizer)
    return at_initialize, str(at_update.value)


def assert_history_is_numpy_s(device_ops: Any, run: Callable[[], List[float]]) -> None:
    """``run``'s losses on the device under test are numpy's (on cupy, which
    initialises and samples from its own random streams: finite)."""
    with device("numpy"):
        expected = run()
    history = run()
    if device_ops.name == "cupy":
        assert all(numpy.isfinite(history))
        return
    assert history == pytest.approx(expected, rel=1e-5)


def write_corpus(path: Path, nlp: Language, data: Iterable[Tuple[str, List[Tuple[int, int, str]]]]) -> None:
    """A .spacy file of (text, [(start char, end char, label)]) docs, with their user data."""
    docs = []
    for text, ents in data:
        doc = nlp.make_doc(text)
        doc.ents = [doc.char_span(start, end, label=label) for start, end, label in ents]
        docs.append(doc)
    DocBin(docs=docs, store_user_data=True).to_disk(path)


def write_corpora(folder: Path, **corpora: Iterable[Tuple[str, List[Tuple[int, int, str]]]]) -> None:
    """Each corpus as ``folder``/NAME.spacy (``write_corpus``)."""
    nlp = spacy.blank("en")
    for name, data in corpora.items():
        write_corpus(folder / f"{name}.spacy", nlp, data)


def train_with_spacy(config: Path, dev: Path, output: Path) -> Language:
    """`spacy train` of ``config`` for two steps: its last model."""
    trained = subprocess.run(
        [sys.executable, "-m", "spacy", "train", str(config), "--output", str(output),
         "--paths.dev", str(dev), "--training.max_steps", "2", "--training.eval_frequency", "1"],
        capture_output=True, text=True,
    )
    assert trained.returncode == 0, trained.stdout + trained.stderr
    return spacy.load(output / "model-last")
