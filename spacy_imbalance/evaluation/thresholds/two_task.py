"""Decision thresholds of ``two_task_ner`` that maximise macro-F1 on dev data.

AUC training ranks entity tokens above the rest without calibrating the
sigmoid scores, so 0.5 is an arbitrary cut. The pipeline runs once; every
(entity, begin) threshold pair of the grid (``evaluation.thresholds.grid``) is
then decoded and scored with the same matching rules as ``spacy-imbalance
evaluate``. The pair a component fits while it trains is
``pipeline.tagging.fitted_thresholds``'s.
"""
from dataclasses import dataclass
from typing import Any, List, Optional, Sequence, Tuple

import numpy
from spacy.language import Language
from spacy.tokens import Doc
from spacy.training import Example
from tqdm import tqdm

from ...decisions.thresholds import ThresholdPair
from ...pipeline.tagging.two_task import make_spans
from ...scorers.aggregate import scores_dict
from ...scorers.counts import ents_counts
from ..matching import check_gold
from .grid import default_grid


@dataclass
class ThresholdSearch:
    grid: List[float]
    macro_f: numpy.ndarray  # len(grid) x len(grid): entity threshold x begin threshold
    best: ThresholdPair
    best_macro_f: float
    current: ThresholdPair  # the thresholds the component carried
    current_macro_f: float

    @property
    def improves(self) -> bool:
        """Whether the best pair of the grid beats the current thresholds
        (a tie keeps the current ones)."""
        return self.best_macro_f > self.current_macro_f


def two_task_component(nlp: Language, name: str) -> Any:
    if name not in nlp.pipe_names:
        raise ValueError(f"the pipeline has no component {name!r} (it has {', '.join(nlp.pipe_names)})")
    component = nlp.get_pipe(name)
    if not hasattr(component, "decision_inputs"):
        raise ValueError(f"{name!r} is a {type(component).__name__}, not a two_task_ner component")
    return component


def component_inputs(nlp: Language, name: str, gold_docs: Sequence[Doc], *, batch_size: int = 128) -> Tuple[List[Doc], list]:
    """Docs on the gold tokens after the components before ``name``, and the
    component's decision inputs (sigmoid scores, type log-probabilities)."""
    component = two_task_component(nlp, name)
    docs = [Doc(nlp.vocab, words=[t.text for t in d], spaces=[bool(t.whitespace_) for t in d]) for d in gold_docs]
    for other_name, proc in nlp.pipeline[: nlp.pipe_names.index(name)]:
        docs = list(proc.pipe(docs, batch_size=batch_size)) if hasattr(proc, "pipe") else [proc(d) for d in docs]
    inputs = []
    for start in range(0, len(docs), batch_size):
        batch = docs[start : start + batch_size]
        for scores in component.host_scores(component.predict(batch)):
            inputs.append(component.decision_inputs(scores))
    return docs, inputs


def search_thresholds(
    nlp: Language, name: str, gold_docs: Sequence[Doc], *, grid: Optional[List[float]] = None, batch_size: int = 128, progress: bool = True
) -> ThresholdSearch:
    """Macro-F1 of every threshold pair of ``grid`` (default 0.05, 0.10, ...,
    0.95), and of the pair the component carries, which a caller keeps
    unless the grid beats it (``ThresholdSearch.improves``)."""
    grid = grid if grid is not None else default_grid()
    component = two_task_component(nlp, name)
    check_gold(gold_docs)
    docs, inputs = component_inputs(nlp, name, gold_docs, batch_size=batch_size)
    examples = [Example(doc, gold) for doc, gold in zip(docs, gold_docs)]

    def score(en_threshold: float, be_threshold: float) -> float:
        for doc, (h, type_log_probs) in zip(docs, inputs):
            spans = component.decode(doc, h, type_log_probs, en_threshold, be_threshold)
            doc.set_ents(make_spans(doc, spans), default="outside")
        counts = ents_counts(examples)
        return scores_dict(counts.totals(), counts.labels, "ents")["ents_macro_f"] or 0.0

    macro_f = numpy.zeros((len(grid), len(grid)))
    pairs = [(i, j) for i in range(len(grid)) for j in range(len(grid))]
    for i, j in tqdm(pairs, desc="thresholds", disable=not progress, unit="pair"):
        macro_f[i, j] = score(grid[i], grid[j])
    # ties go to the first pair in grid order (the lowest thresholds)
    best_i, best_j = (int(k) for k in numpy.unravel_index(int(macro_f.argmax()), macro_f.shape))
    # fixed or fitted during training: what the component decodes with now
    en_threshold, be_threshold = component.thresholds
    current = (float(en_threshold), float(be_threshold))
    return ThresholdSearch(grid, macro_f, (grid[best_i], grid[best_j]), float(macro_f[best_i, best_j]), current, float(score(*current)))


def set_pipeline_thresholds(nlp: Language, name: str, thresholds: ThresholdPair) -> None:
    """Give the component new thresholds, in its ``cfg`` and in the pipeline
    config: ``nlp.to_disk`` writes config.cfg from the latter, and a pipeline
    assembled or trained on from that config.cfg would otherwise get the old
    thresholds back."""
    en_threshold, be_threshold = (float(t) for t in thresholds)
    two_task_component(nlp, name).set_thresholds(en_threshold, be_threshold)
    # nlp.config is rebuilt from these per-component configs on every access
    pipe_config = nlp.get_pipe_config(name)
    pipe_config["en_threshold"] = en_threshold
    pipe_config["be_threshold"] = be_threshold
