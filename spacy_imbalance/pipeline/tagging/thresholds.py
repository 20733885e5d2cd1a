"""Decision thresholds of ``two_task_ner`` that maximise macro-F1 on dev data.

AUC training ranks entity tokens above the rest without calibrating the
sigmoid scores, so 0.5 is an arbitrary cut. The pipeline runs once; every
(entity, begin) threshold pair of the grid is then decoded and scored with the
same matching rules as ``spacy-imbalance evaluate``.
"""
from dataclasses import dataclass
from typing import List, Optional, Sequence, Tuple

import numpy
from spacy.language import Language
from spacy.tokens import Doc
from spacy.training import Example
from tqdm import tqdm

from ...scorers.aggregate import scores_dict
from ...scorers.counts import ents_counts
from .two_task import make_spans


@dataclass
class ThresholdSearch:
    grid: List[float]
    macro_f: numpy.ndarray  # len(grid) x len(grid): entity threshold x begin threshold
    best: Tuple[float, float]
    best_macro_f: float


def default_grid(step: float = 0.05) -> List[float]:
    if not 0.0 < step < 0.5:
        raise ValueError(f"the grid step must be in (0, 0.5), got {step}")
    return [round(x, 6) for x in numpy.arange(step, 1.0 - 1e-9, step)]


def component_inputs(nlp: Language, name: str, gold_docs: Sequence[Doc], *, batch_size: int = 128) -> Tuple[List[Doc], list]:
    """Docs on the gold tokens after the components before ``name``, and the
    component's decision inputs (sigmoid scores, type log-probabilities)."""
    if name not in nlp.pipe_names:
        raise ValueError(f"the pipeline has no component {name!r} (it has {', '.join(nlp.pipe_names)})")
    component = nlp.get_pipe(name)
    if not hasattr(component, "decision_inputs"):
        raise ValueError(f"{name!r} is a {type(component).__name__}, not a two_task_ner component")
    docs = [Doc(nlp.vocab, words=[t.text for t in d], spaces=[bool(t.whitespace_) for t in d]) for d in gold_docs]
    for other_name, proc in nlp.pipeline[: nlp.pipe_names.index(name)]:
        docs = list(proc.pipe(docs, batch_size=batch_size)) if hasattr(proc, "pipe") else [proc(d) for d in docs]
    inputs = []
    for start in range(0, len(docs), batch_size):
        batch = docs[start : start + batch_size]
        for scores in component.predict(batch):
            inputs.append(component.decision_inputs(component.model.ops.to_numpy(scores)))
    return docs, inputs


def search_thresholds(
    nlp: Language, name: str, gold_docs: Sequence[Doc], *, grid: Optional[List[float]] = None, batch_size: int = 128, progress: bool = True
) -> ThresholdSearch:
    """Macro-F1 of every threshold pair of ``grid`` (default 0.05, 0.10, ..., 0.95)."""
    grid = grid if grid is not None else default_grid()
    docs, inputs = component_inputs(nlp, name, gold_docs, batch_size=batch_size)
    component = nlp.get_pipe(name)
    examples = [Example(doc, gold) for doc, gold in zip(docs, gold_docs)]
    macro_f = numpy.zeros((len(grid), len(grid)))
    pairs = [(i, j) for i in range(len(grid)) for j in range(len(grid))]
    for i, j in tqdm(pairs, desc="thresholds", disable=not progress, unit="pair"):
        for doc, (h, type_log_probs) in zip(docs, inputs):
            spans = component.decode(doc, h, type_log_probs, grid[i], grid[j])
            doc.set_ents(make_spans(doc, spans), default="outside")
        counts = ents_counts(examples)
        macro_f[i, j] = scores_dict(counts.totals(), counts.labels, "ents")["ents_macro_f"] or 0.0
    # ties go to the first pair in grid order (the lowest thresholds)
    i, j = numpy.unravel_index(int(macro_f.argmax()), macro_f.shape)
    return ThresholdSearch(grid, macro_f, (grid[i], grid[j]), float(macro_f[i, j]))
