"""Run a pipeline over a gold corpus and report micro, macro and per-type
scores with bootstrap confidence intervals."""
import json
import math
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Dict, Iterable, List, Optional, Sequence, Tuple, Union

import numpy
from spacy.language import Language
from spacy.tokens import Doc
from spacy.training import Example

from ..corpus.strict_json import DuplicateKeyError, loads_strict
from .aggregate import prf
from .bootstrap import bootstrap_intervals
from .counts import FN, FP, TP, MatchCounts, ents_counts, spans_counts


def pipeline_target(nlp: Language, spans_key: Optional[str] = None, *, name: str = "The pipeline") -> Optional[str]:
    """What a pipeline predicts: None for ``doc.ents``, else a spans key.

    An explicit ``spans_key`` wins. Otherwise a pipeline with a component that
    assigns ``doc.ents`` is scored on ents, and one whose component has a
    ``spans_key`` setting (spancat) on that key. ``name`` starts the message
    of the ValueError raised when there is neither, e.g. "The pipeline PATH".
    A pipeline without any component that writes entities or spans is refused
    with or without ``spans_key``: it would score F = 0 by construction.
    """
    components = ", ".join(nlp.pipe_names) or "none"
    if spans_key:
        if not any(_writes_entities(nlp, component) for component in nlp.pipe_names):
            # doc.spans[KEY] of its predictions is empty: F = 0 by construction
            raise ValueError(
                f"{name} has no NER component, nothing to score under --spans-key {spans_key!r}: no component "
                "assigns doc.ents or doc.spans (as ner, spancat and span_ruler do) or has a spans_key; "
                f"its components: {components}"
            )
        return spans_key
    for component in nlp.pipe_names:
        if "doc.ents" in nlp.get_pipe_meta(component).assigns:
            return None
    for _, pipe in nlp.pipeline:
        key = getattr(pipe, "cfg", {}).get("spans_key")
        if key:
            return str(key)
    raise ValueError(
        f"{name} has no NER component, nothing to score: no component assigns doc.ents "
        f"(as ner and entity_ruler do) or has a spans_key (as spancat does); its components: {components}. "
        "Pass --spans-key to score doc.spans[KEY]"
    )


def _writes_entities(nlp: Language, component: str) -> bool:
    """Whether ``component`` predicts something an evaluation can score:
    it assigns doc.ents or doc.spans (its factory's ``assigns``), or has a
    ``spans_key`` setting (a spancat whose factory does not declare it)."""
    assigns = nlp.get_pipe_meta(component).assigns
    if any(attr == "doc.ents" or attr.startswith("doc.spans") for attr in assigns):
        return True
    cfg = getattr(nlp.get_pipe(component), "cfg", None)
    return isinstance(cfg, dict) and bool(cfg.get("spans_key"))


def spans_allow_overlap(nlp: Language, spans_key: Optional[str]) -> bool:
    """The ``allow_overlap`` setting of the component writing ``spans_key``,
    so that evaluation aligns spans as that component's own scorer does."""
    for _, pipe in nlp.pipeline:
        cfg = getattr(pipe, "cfg", {})
        if spans_key is not None and cfg.get("spans_key") == spans_key:
            return bool(cfg.get("allow_overlap", True))
    return True


def predict_examples(nlp: Language, gold_docs: Sequence[Doc], *, batch_size: int = 128) -> Tuple[List[Example], float]:
    """Predict on copies of the gold tokens (no re-tokenisation).

    RETURNS: the examples and the words per second of prediction.
    """
    inputs = [
        Doc(nlp.vocab, words=[t.text for t in doc], spaces=[bool(t.whitespace_) for t in doc])
        for doc in gold_docs
    ]
    start = time.perf_counter()
    predicted = list(nlp.pipe(inputs, batch_size=batch_size))
    seconds = time.perf_counter() - start
    n_words = sum(len(doc) for doc in gold_docs)
    examples = [Example(pred, gold) for pred, gold in zip(predicted, gold_docs)]
    return examples, n_words / seconds if seconds > 0 else float("inf")


def entities_key_of(nlp: Language) -> Optional[str]:
    """The span group where the pipeline's last entity component that keeps
    off ``doc.ents`` (its ``entities_key``, beside a pipeline's own ner)
    writes its entities; None when the entities are ``doc.ents``."""
    for _, pipe in reversed(nlp.pipeline):
        cfg = getattr(pipe, "cfg", None)
        if isinstance(cfg, dict) and cfg.get("entities_key"):
            return str(cfg["entities_key"])
    return None


def match_counts(
    examples: Iterable[Example], spans_key: Optional[str], *, allow_overlap: bool = True, entities_key: Optional[str] = None
) -> MatchCounts:
    """Matches of the predicted entities (``doc.ents``, or the
    ``entities_key`` group) with the gold ``doc.ents``, or of the predicted
    and gold ``doc.spans[spans_key]``."""
    if spans_key is None:
        return ents_counts(examples, entities_key=entities_key)
    return spans_counts(examples, spans_key, allow_overlap=allow_overlap)


# the span group the decoded entities of a span system are counted in
DECODED_KEY = "_decoded_entities"


@dataclass
class DecodedCounts(MatchCounts):
    """Counts of the entities decoded from a span system's ``spans_key``
    group, with the spans' own counts (``spans``) when they were kept."""

    spans_key: str = ""
    spans: Optional[MatchCounts] = None


def decode_span_entities(examples: Iterable[Example], spans_key: str) -> None:
    """A span system's predicted ``doc.spans[spans_key]`` decoded to
    entities as ``sampled_spancat`` decodes its own: greedily by score,
    each kept only when it overlaps none kept before (``DECODED_KEY``).
    Without scores (``attrs["scores"]``) every span counts as 1, in order."""
    from ..spans.decoding import greedy_non_overlapping

    for eg in examples:
        group = eg.predicted.spans.get(spans_key, [])
        scores = numpy.ones(len(group), dtype="float32")
        stored = group.attrs.get("scores") if len(group) else None
        if stored is not None:
            stored = numpy.asarray(stored, dtype="float32").reshape(len(group), -1)
            # spancat_singlelabel stores each span's label score; multilabel spancat a row per span
            scores = stored.max(axis=1)
        starts = numpy.asarray([span.start for span in group], dtype="int64")
        ends = numpy.asarray([span.end for span in group], dtype="int64")
        kept = greedy_non_overlapping(starts, ends, scores)
        eg.predicted.spans[DECODED_KEY] = [group[i] for i in kept]


def pipeline_counts(
    nlp: Language, gold_docs: Sequence[Doc], *, spans_key: Optional[str] = None, batch_size: int = 128,
    spans_too: bool = False,
) -> Tuple[MatchCounts, Optional[str], float]:
    """Predict and count matches on what the pipeline predicts.

    A pipeline that writes spans and no entities (spancat) is scored on the
    entities a greedy non-overlapping decoding of its spans gives
    (``decode_span_entities``): every system of a comparison on the same
    target, the gold ``doc.ents``; its counts are ``DecodedCounts``, which
    with ``spans_too`` also hold the spans' own counts. An explicit
    ``spans_key`` scores the spans themselves.

    RETURNS: the counts, the spans key scored (None for doc.ents, and for
        spans decoded to entities) and the words per second of prediction.
    """
    target = pipeline_target(nlp, spans_key)
    examples, words_per_second = predict_examples(nlp, gold_docs, batch_size=batch_size)
    if target is not None and spans_key is None:
        spans = match_counts(examples, target, allow_overlap=spans_allow_overlap(nlp, target)) if spans_too else None
        decode_span_entities(examples, target)
        counts = match_counts(examples, None, entities_key=DECODED_KEY)
        return DecodedCounts(counts.labels, counts.table, target, spans), None, words_per_second
    counts = match_counts(examples, target, allow_overlap=spans_allow_overlap(nlp, target), entities_key=entities_key_of(nlp))
    return counts, target, words_per_second


def score_report(
    counts: MatchCounts, *, n_resamples: int = 1000, seed: int = 0, level: float = 0.95
) -> Dict[str, Any]:
    """Micro/macro P/R/F, per-type scores with counts, and bootstrap intervals."""
    totals = counts.totals()
    s = prf(totals)
    per_type = {
        label: {
            "p": float(s["p"][j]),
            "r": float(s["r"][j]),
            "f": float(s["f"][j]),
            "tp": int(totals[j, TP]),
            "fp": int(totals[j, FP]),
            "fn": int(totals[j, FN]),
            "support": int(totals[j, TP] + totals[j, FN]),
        }
        for j, label in enumerate(counts.labels)
        if s["present"][j]
    }
    ci = bootstrap_intervals(counts, n_resamples=n_resamples, seed=seed, level=level)
    return {
        "macro": {k: float(s[f"macro_{k}"]) for k in "prf"},
        "micro": {k: float(s[f"micro_{k}"]) for k in "prf"},
        "per_type": per_type,
        "ci": {name: list(bounds) for name, bounds in ci.items()},
        "bootstrap": {"n_resamples": n_resamples, "seed": seed, "level": level},
        "n_docs": int(counts.table.shape[0]),
        "counts": counts.to_sparse(),
    }


def evaluate_pipeline(
    nlp: Language,
    gold_docs: Sequence[Doc],
    *,
    spans_key: Optional[str] = None,
    batch_size: int = 128,
    n_resamples: int = 1000,
    seed: int = 0,
) -> Dict[str, Any]:
    counts, target, words_per_second = pipeline_counts(nlp, gold_docs, spans_key=spans_key, batch_size=batch_size, spans_too=True)
    report = score_report(counts, n_resamples=n_resamples, seed=seed)
    report["target"] = "ents" if target is None else f"spans:{target}"
    if isinstance(counts, DecodedCounts):
        # a span system: scored on its decoded entities, its spans' own scores beside
        report["target"] = f"ents decoded from spans:{counts.spans_key}"
        if counts.spans is not None:
            spans = score_report(counts.spans, n_resamples=n_resamples, seed=seed)
            report["spans"] = {"key": counts.spans_key, "macro": spans["macro"], "micro": spans["micro"], "ci": spans["ci"]}
    report["words_per_second"] = words_per_second
    return report


def format_report(report: Dict[str, Any]) -> Tuple[List[Tuple[Any, ...]], List[Tuple[Any, ...]]]:
    """Rows for an overview table and a per-type table, scores in percent."""

    def pct(value: float) -> str:
        return f"{100 * value:.1f}"

    overview = []
    for avg in ("macro", "micro"):
        low, high = report["ci"][f"{avg}_f"]
        row = (avg, pct(report[avg]["p"]), pct(report[avg]["r"]), pct(report[avg]["f"]), f"[{pct(low)}, {pct(high)}]")
        overview.append(row)
    per_type = [
        (label, pct(v["p"]), pct(v["r"]), pct(v["f"]), v["support"], v["tp"], v["fp"], v["fn"])
        for label, v in sorted(report["per_type"].items(), key=lambda kv: (-kv[1]["support"], kv[0]))
    ]
    return overview, per_type


def load_report(path: Union[str, Path]) -> Dict[str, Any]:
    """A metrics file written by `spacy-imbalance evaluate --output`; a
    ValueError naming the file when it is missing, not JSON (an object with
    a key twice included: which value holds?) or not a report."""
    data = read_json_file(path, "metrics file")
    if not isinstance(data, dict):
        raise ValueError(f"{path}: not a metrics file of `spacy-imbalance evaluate` (a JSON {type(data).__name__}, not an object)")
    for key in ("name", "macro", "micro", "per_type"):
        if key not in data:
            raise ValueError(f"{path}: not a metrics file of `spacy-imbalance evaluate` (no {key!r})")
    problem = report_problem(data)
    if problem is not None:
        raise ValueError(f"{path}: not a metrics file of `spacy-imbalance evaluate` ({problem})")
    return data


def read_json_file(path: Union[str, Path], what: str) -> Any:
    """The JSON value of a UTF-8 file, read strictly (``loads_strict``); an
    OSError or ValueError naming the file (and the line) when it cannot be."""
    path = Path(path)
    if not path.exists():
        raise FileNotFoundError(f"No such {what}: {path}")
    if path.is_dir():
        raise IsADirectoryError(f"{path} is a folder: give a {what}")
    try:
        text = path.read_text(encoding="utf-8-sig")  # a byte order mark, which some editors write, is no JSON
    except UnicodeDecodeError as err:
        raise ValueError(f"{path}: not valid JSON (not UTF-8 text: {err})") from None
    try:
        return loads_strict(text)
    except DuplicateKeyError as err:
        raise ValueError(f"{path}, {err}") from None
    except json.JSONDecodeError as err:
        raise ValueError(f"{path}: not valid JSON ({err})") from None


def report_problem(report: Dict[str, Any]) -> Optional[str]:
    """What in a metrics file (a JSON object with its keys) has the wrong
    shape or type for `summarize`, naming the field; None when nothing does.
    Scores are fractions: a finite number in [0, 1] (an edited 1e308 would
    make a table of inf)."""
    if not isinstance(report["name"], str):
        return f"'name' must be a string, got {_json_type(report['name'])}"
    for avg in ("macro", "micro"):
        problem = _scores_problem(report[avg], avg)
        if problem is not None:
            return problem
    per_type = report["per_type"]
    if not isinstance(per_type, dict):
        return f"'per_type' must be an object of labels, got {_json_type(per_type)}"
    for label, scores in per_type.items():
        problem = _scores_problem(scores, f"per_type.{label}")
        if problem is not None:
            return problem
    if "size_factor" in report and not (_is_number(report["size_factor"]) and report["size_factor"] > 0):
        return f"'size_factor' must be a finite number > 0, got {report['size_factor']!r}"
    return None


def _scores_problem(scores: Any, field: str) -> Optional[str]:
    if not isinstance(scores, dict):
        return f"{field!r} must be an object with p, r and f, got {_json_type(scores)}"
    for k in "prf":
        if k not in scores:
            return f"{field!r} has no {k!r}"
        value = scores[k]
        if not (_is_number(value) and 0.0 <= value <= 1.0):
            return f"'{field}.{k}' must be a score in [0, 1], got {value!r}"
    return None


def _is_number(value: Any) -> bool:
    # JSON true/false are Python bools, which are ints: no score
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def _json_type(value: Any) -> str:
    names = {dict: "an object", list: "a list", str: "a string", bool: "a boolean", int: "a number", float: "a number"}
    return f"{names.get(type(value), type(value).__name__)} ({value!r:.40})" if value is not None else "null"
