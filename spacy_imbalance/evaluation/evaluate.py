"""A trained pipeline's report on a gold data file: macro-, micro- and
per-type P/R/F with bootstrap intervals (``scorers.evaluation``), as
``spacy-imbalance evaluate`` prints and writes it and a sweep's trial
records it.

The pipeline and the data are checked before any prediction. What cannot be
scored raises ``EvaluationError`` with the message a user should read: the
command exits with it (``fail``), a trial fails with it. The device and the
run's provenance are the caller's: a command's ``--gpu-id``, a trial's own.
``print_report`` prints a report's tables, ``write_report`` writes it.
"""
import hashlib
import time
from pathlib import Path
from typing import Any, Dict, List, Optional, Sequence, Union

import srsly
from spacy.language import Language
from spacy.tokens import Doc
from spacy.util import load_model
from wasabi import msg

from ..corpus.docs_io import load_docs, write_text_atomic
from ..corpus.gold_checks import missing_gold
from ..scorers.evaluation import evaluate_pipeline, format_report, pipeline_target

# What spaCy raises for a pipeline it cannot load: OSError (no such package or
# folder, no meta.json or config.cfg), ImportError ([E048] blank:LANG of an
# unknown language, or a package a factory needs), ValueError (a config that
# does not validate; catalogue's RegistryError for an unknown factory)
PIPELINE_LOAD_ERRORS = (ImportError, OSError, ValueError)


class EvaluationError(ValueError):
    """A pipeline or data that cannot be scored; the message names which and why."""


def load_pipeline(model: Union[str, Path], argument: str = "MODEL") -> Language:
    """The pipeline ``model`` (a package, a folder or blank:LANG); else an
    error naming ``argument`` (the command's name for it: "MODEL", "--model")
    and the model."""
    try:
        return load_model(model)
    except PIPELINE_LOAD_ERRORS as err:
        raise EvaluationError(f"{argument} {str(model)!r} cannot be loaded as a spaCy pipeline: {err}") from err


def check_gold_key(docs: Sequence[Doc], key: str, source: str, option: str = "--spans-key") -> None:
    """An error unless some document of ``source`` has spans under ``key``:
    scored there, any pipeline would get F = 0. The message names the keys
    the documents do have (``corpus.gold_checks.missing_gold``, the rule's
    one home)."""
    if not key or not key.strip():
        raise EvaluationError(f"{option} must name a span group, got {key!r}")
    problem = missing_gold(docs, key, option)
    if problem is not None:
        raise EvaluationError(f"{source}: {problem}")


def load_gold(data_path: Path) -> List[Doc]:
    """The gold documents of ``data_path`` (.spacy or CoNLL)."""
    try:
        return load_docs(data_path)
    except (OSError, ValueError) as err:
        raise EvaluationError(str(err)) from err


def scored_pipeline(model: str, spans_key: Optional[str], gold: Sequence[Doc], data_path: Path, argument: str = "MODEL") -> Language:
    """The pipeline ``model``, checked to predict something to score, and
    the gold checked to have what it will be scored on, before any
    prediction."""
    nlp = load_pipeline(model, argument)
    try:
        target = pipeline_target(nlp, spans_key, name=f"The pipeline {model}")
    except ValueError as err:
        raise EvaluationError(str(err)) from err
    if target is not None:
        # spans scored under a key no gold document has: F = 0 for any pipeline.
        # doc.ents (target None) are checked by nothing: gold without entities is a corpus
        option = "--spans-key" if spans_key else f"the spans key of the pipeline {model}"
        check_gold_key(gold, target, str(data_path), option)
    return nlp


def evaluate_model(
    model: str, data_path: Path, *, name: Optional[str] = None, spans_key: Optional[str] = None,
    n_resamples: int = 1000, seed: int = 0, batch_size: int = 128,
) -> Dict[str, Any]:
    """The report of ``spacy-imbalance evaluate`` (its options' meanings and
    defaults) of the pipeline ``model`` on the gold docs of ``data_path``,
    with what was scored (``name``, default the model; the data and its
    SHA-256) and the seconds it took."""
    start = time.perf_counter()
    docs = load_gold(data_path)
    nlp = scored_pipeline(model, spans_key, docs, data_path)
    try:
        report = evaluate_pipeline(nlp, docs, spans_key=spans_key, batch_size=batch_size, n_resamples=n_resamples, seed=seed)
    except ValueError as err:
        raise EvaluationError(f"The pipeline {model}: {err}") from err
    # the data's contents too: `summarize` pools runs of one name only when scored on the same data
    report.update({"name": name or str(model), "model": str(model), "data": str(data_path), "data_sha256": _sha256(data_path)})
    report["eval_seconds"] = time.perf_counter() - start
    return report


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def print_report(report: Dict[str, Any], title: str) -> None:
    """The report's tables under ``title``: the averages with the bootstrap
    interval, then each type's scores and counts."""
    overview, per_type = format_report(report)
    msg.divider(title)
    level = int(100 * report["bootstrap"]["level"])
    msg.table(overview, header=("average", "P", "R", "F", f"F {level}% CI"), aligns=("l", "r", "r", "r", "r"))
    msg.table(per_type, header=("type", "P", "R", "F", "support", "tp", "fp", "fn"), aligns=("l",) + ("r",) * 7)


def write_report(path: Path, data: Dict[str, Any], indent: int = 2) -> None:
    """``data`` (a report, a comparison) as JSON at ``path``, written
    atomically: a stopped run leaves no half file. An OSError, or a
    ValueError naming ``path`` when it is a folder or a device, when it
    cannot be written."""
    write_text_atomic(path, srsly.json_dumps(data, indent=indent))
