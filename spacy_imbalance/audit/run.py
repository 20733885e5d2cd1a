"""The audit from documents to suspects: cross-fitted folds, decoded spans,
calibration, the miss-rate estimate.

Nothing here writes over the input: fold models go to ``OUT/folds``, and
``export`` writes the audited corpus and the reports beside them.
"""
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Dict, FrozenSet, List, Optional, Sequence, Tuple, TypeGuard

import numpy
from spacy.tokens import Doc
from spacy.util import load_model
from wasabi import msg

from ..corpus.docs_io import write_text_atomic
from ..corpus.scopes.scopes import get_label_scope, scope_problem
from ..init_config import config_fingerprint
from ..sweeps import ray_available, use_ray
from .estimate import Calibration, FoldSpans, Isotonic, MissRate, estimate_miss_rate, fit_maps, posteriors
from .folds import (
    TRAIN_LOG, FoldPlan, Trainer, corpus_fingerprint, finish_fold, fingerprint, fold_curve, fold_dir, fold_done, prepare_fold,
    prepare_plan, spacy_trainer, train_fold, untrained_reason,
)
from .suspects import DEFAULT_FLOOR, Decoded, boundary_matches, check_component, decode, span_probabilities


@dataclass
class CalibrationDoc:
    """One calibration document of a fold: its decoded spans, their outcomes
    (exact boundaries of a reference entity) and how many reference entities
    it holds, found or not (the decoding recall's denominator)."""

    doc: int
    decoded: Decoded
    outcomes: numpy.ndarray
    n_reference: int


# fewer resamples than this give a 95 % percentile interval from a handful of tail values
MIN_RESAMPLES = 100
# the audit's default model (uniform negatives, CNN), and the same on frozen
# all-MiniLM-L6-v2 features (both written by scripts/write_configs.py from configs/recipes.yml)
DEFAULT_CONFIG = Path(__file__).parent / "default.cfg"
FEATURES_CONFIG = DEFAULT_CONFIG.with_name("features.cfg")


@dataclass
class AuditSettings:
    """The audit's settings (the CLI's options)."""

    folds: int = 5
    seed: int = 0
    # calibrated probability from which an unannotated span is a suspect
    threshold: float = 0.5
    floor: float = DEFAULT_FLOOR
    component: str = "sampled_spancat"
    n_resamples: int = 500
    batch_size: int = 128

    def check(self) -> None:
        if not 0.0 < self.threshold < 1.0:
            raise ValueError(f"--threshold must be in (0, 1) (a calibrated probability), got {self.threshold}")
        if not 0.0 < self.floor < 0.5:
            raise ValueError(f"AuditSettings.floor must be in (0, 0.5), got {self.floor}")
        if self.n_resamples != 0 and self.n_resamples < MIN_RESAMPLES:
            raise ValueError(
                f"--resamples must be >= {MIN_RESAMPLES} for a percentile interval (or 0: no interval), got {self.n_resamples}"
            )
        if self.seed < 0:
            raise ValueError(f"--seed must be >= 0, got {self.seed}")
        if self.batch_size < 1:
            raise ValueError(f"AuditSettings.batch_size must be >= 1, got {self.batch_size}")


@dataclass
class Suspect:
    doc: int
    start: int
    end: int  # exclusive token end
    label: str
    # calibrated probability of being a missing entity
    probability: float
    # the fold model's entity probability 1 - p(O): the ranking score
    score: float
    fold: int


@dataclass
class AuditResult:
    labels: List[str]
    method: Calibration
    plan: FoldPlan
    suspects: List[Suspect]
    miss_rate: MissRate
    # per fold: its isotonic map and the calibration spans it was fitted to
    maps: List[Isotonic]
    # per document: each decoded unannotated span's probability of being a
    # missing entity (the order of info["decoded"][doc])
    probabilities: Dict[int, numpy.ndarray]
    calibration: List[Tuple[numpy.ndarray, numpy.ndarray]]
    settings: AuditSettings
    info: Dict[str, Any] = field(default_factory=dict)
    # unannotated spans that reach the threshold with a type outside their document's label scope:
    # unknown, not missed (that document does not annotate the type), so no suspects (``split_by_scope``)
    out_of_scope: List[Suspect] = field(default_factory=list)


def corpus_labels(*corpora: Optional[Sequence[Doc]]) -> List[str]:
    return sorted({ent.label_ for docs in corpora if docs for doc in docs for ent in doc.ents})


def check_corpus(docs: Sequence[Doc], source: str) -> None:
    if not docs:
        raise ValueError(f"{source} holds no documents")
    if not any(len(doc.ents) for doc in docs):
        raise ValueError(f"{source} has no annotated entity: the audit learns what an entity is from the annotations")


Scope = Optional[FrozenSet[str]]


def corpus_scopes(docs: Sequence[Doc], source: str) -> List[Scope]:
    """Each document's label scope (None: it annotates every type); a
    ValueError naming ``source`` and the document (from 0) whose stored
    scope is damaged or contradicted by an annotated entity of another type
    (the audit would take that type as unknown there)."""
    scopes = []
    for i, doc in enumerate(docs):
        try:
            scope = get_label_scope(doc)
        except ValueError as err:
            raise ValueError(f"{source}: document {i}: {err}") from None
        problem = None if scope is None else scope_problem(doc, scope)
        if problem is not None:
            raise ValueError(f"{source}: document {i}: {problem}")
        scopes.append(scope)
    return scopes


def check_shared_labels(train_labels: Sequence[str], dev_labels: Sequence[str], train_source: str, dev_source: str) -> None:
    """A ValueError naming both corpora and their types when the dev set
    annotates no type of the training corpus: the fold models learn only the
    corpus's types, so they would find none of dev's entities, and a
    calibration on dev would say that nothing the models find is an entity."""
    if dev_labels and not set(dev_labels) & set(train_labels):
        raise ValueError(
            f"--dev {dev_source} shares no entity type with {train_source}: {dev_source} annotates "
            f"{listed(dev_labels)}; {train_source} annotates {listed(train_labels)}. The fold models learn only "
            f"{train_source}'s types, so dev cannot calibrate them: give a dev set of the same types"
        )


def listed(labels: Sequence[str], n: int = 12) -> str:
    """Entity types for a message: sorted, the first ``n`` and a count of the rest."""
    names = sorted(labels)
    shown = ", ".join(names[:n])
    return shown if len(names) <= n else f"{shown} and {len(names) - n} more"


def check_config(config: Path, overrides: Dict[str, Any], component: str) -> None:
    """Before any fold trains: ``component`` is a sampled_spancat of
    ``config`` that learns from doc.ents (the audit blocks, counts and
    fingerprints the entities, so gold from a span group would be another
    corpus), and the per-fold paths are the audit's to set."""
    from spacy.util import load_config

    taken = sorted(key for key in overrides if key in ("paths.train", "paths.dev"))
    if taken:
        raise ValueError(f"{', '.join('--' + key for key in taken)}: the audit sets the training and dev paths of each fold itself")
    try:
        cfg = load_config(config, overrides=overrides, interpolate=False)
    except Exception as err:  # spaCy's ConfigValidationError, or a file that does not parse
        raise ValueError(f"--config {config} cannot be read: {err}") from None
    block = cfg.get("components", {}).get(component)
    if block is None or block.get("factory") != "sampled_spancat":
        raise ValueError(f"--config {config} has no sampled_spancat component named {component!r} (--component)")
    if block.get("gold_key") is not None:
        raise ValueError(
            f"--config {config}: [components.{component}] gold_key = {block['gold_key']!r}; the audit looks for "
            "entities missing from doc.ents, so its model must learn from doc.ents (gold_key = null)"
        )


def folds_on_ray(workers: int, address: Optional[str], n_folds: int) -> bool:
    """Whether the folds train on Ray (``sweeps.use_ray``'s rule), saying
    so in the audit's words when --workers asks for Ray and it is missing:
    the folds then train one after another here (use_ray's own warning
    speaks of a sweep's trials)."""
    if address is None and workers > 1 and not ray_available():
        msg.warn(
            f"--workers {workers} needs Ray (pip install 'spacy-imbalance[ray]'): the {n_folds} folds train one "
            "after another in this process"
        )
        return False
    return use_ray(workers, address)


def run_audit(
    train_docs: Sequence[Doc],
    dev_docs: Optional[Sequence[Doc]],
    out: Path,
    *,
    config: Path,
    overrides: Dict[str, Any],
    settings: AuditSettings,
    gpu_id: int = -1,
    trainer: Trainer = spacy_trainer,
    train_source: str = "the training corpus",
    dev_source: str = "the dev corpus",
    workers: int = 1,
    address: Optional[str] = None,
) -> AuditResult:
    """Train the folds (resumable), score every training document with the
    model that did not see it, calibrate, estimate, select the suspects.
    With ``workers`` > 1 (or a Ray cluster's ``address``) the folds train in
    parallel on Ray (``parallel``), with the same folds and models."""
    settings.check()
    check_config(Path(config), overrides, settings.component)
    check_corpus(train_docs, train_source)
    if dev_docs is not None:
        check_corpus(dev_docs, dev_source)
    scopes = corpus_scopes(train_docs, train_source)
    if dev_docs is not None:
        corpus_scopes(dev_docs, dev_source)
    labels = corpus_labels(train_docs, dev_docs)
    if dev_docs is not None:
        check_shared_labels(corpus_labels(train_docs), corpus_labels(dev_docs), train_source, dev_source)
    dev_only = sorted(set(labels) - set(corpus_labels(train_docs)))
    if dev_only:
        msg.warn(
            f"{dev_source} has types {train_source} never annotates: {', '.join(dev_only)}. The fold models cannot "
            "learn them, so none of their missing entities is found, and their dev entities lower the decoding recall"
        )
    folder = out / "folds"
    # the settings the folds' plan is fingerprinted with (prepare_plan's settings)
    shaping: Dict[str, Any] = {
        # what the config says, not how it is written: editing a comment keeps the folds
        "config": config_fingerprint(Path(config).read_text(encoding="utf8")),
        "overrides": overrides,
        # the dev set calibrates and picks each fold's checkpoint
        "dev": None if dev_docs is None else fingerprint(dev_docs, {}),
    }
    if any(scope is not None for scope in scopes):
        # the fold models train on the scopes: other scopes, other folds (an unscoped corpus's plan is as it was)
        shaping["scopes"] = [None if scope is None else sorted(scope) for scope in scopes]
    plan = prepare_plan(folder, train_docs, settings.folds, settings.seed, shaping)
    empty = plan.left_out()
    if empty:
        msg.warn(
            f"{len(empty)} of the {len(train_docs)} documents of {train_source} are empty (no tokens): left out of the "
            f"folds, as they cannot hold a missed entity (documents {_some(empty)}, counted from 0)"
        )
    pending = []
    for fold in range(plan.k):
        if fold_done(folder, plan, fold):
            msg.info(f"Fold {fold + 1}/{plan.k}: trained before ({fold_dir(folder, fold)})")
        else:
            pending.append(fold)
    if pending and folds_on_ray(workers, address, len(pending)):
        from .parallel import train_on_ray

        jobs = [prepare_fold(folder, plan, fold, train_docs, dev_docs, overrides) for fold in pending]
        msg.divider(f"{len(jobs)} folds on Ray, {workers} at a time")
        train_on_ray(Path(config), jobs, workers=workers, address=address, gpu_id=gpu_id)
        for job in jobs:
            finish_fold(folder, plan, job)
        pending = []
    for fold in pending:
        msg.divider(f"Fold {fold + 1}/{plan.k}: training on {len(plan.trained(fold))} documents, scoring {len(plan.scored(fold))}")
        train_fold(folder, plan, fold, train_docs, dev_docs, config=config, overrides=overrides, gpu_id=gpu_id, trainer=trainer)
    curves = [fold_curve(folder, fold) for fold in range(plan.k)]
    check_folds_learned(curves, folder, _training_settings(Path(config), overrides))
    method = Calibration.given(dev_docs)
    folds: List[FoldSpans] = []
    decoded: Dict[int, Decoded] = {}
    masks = scope_masks(scopes, labels)
    for fold in range(plan.k):
        msg.text(f"Scoring fold {fold + 1}/{plan.k}")
        spans, cal, held_out = _score_fold(fold_dir(folder, fold) / "model-best", plan, fold, train_docs, dev_docs, labels, settings)
        folds.append(_fold_spans(spans, cal, plan.scored(fold), held_out, masks))
        decoded.update(spans)
    annotated = numpy.zeros((len(train_docs), len(labels)), dtype="float64")
    for i, doc in enumerate(train_docs):
        for ent in doc.ents:
            annotated[i, labels.index(ent.label_)] += 1
    estimate = estimate_miss_rate(
        folds,
        annotated,
        labels,
        method=method,
        n_calibration_docs=len(dev_docs) if dev_docs is not None else len(train_docs),
        n_resamples=settings.n_resamples,
        seed=settings.seed,
    )
    dev_scores = [max(score for _, score in curve) if curve else None for curve in curves]
    weak = learned_little(dev_scores)
    if weak is not None:
        # first: it qualifies every number after it
        estimate.notes.insert(0, weak)
    maps = fit_maps(folds)
    probabilities = _probabilities(plan, folds, maps, decoded, method)
    suspects, out_of_scope = split_by_scope(_suspects(plan, decoded, probabilities, labels, settings.threshold), scopes)
    if out_of_scope:
        estimate.notes.append(out_of_scope_note(out_of_scope, settings.threshold))
    return AuditResult(
        labels=labels,
        method=method,
        plan=plan,
        suspects=suspects,
        miss_rate=estimate,
        maps=maps,
        probabilities=probabilities,
        calibration=[(f.calibration_scores, f.calibration_outcomes) for f in folds],
        settings=settings,
        info={"n_docs": len(train_docs), "n_dev_docs": 0 if dev_docs is None else len(dev_docs), "n_empty_docs": len(empty),
              "decoded": decoded, "corpus_fingerprint": corpus_fingerprint(train_docs),
              # each fold's best dev score (None: not recorded), and whether they are too low to trust the estimate
              "fold_dev_scores": dev_scores, "learned_little": weak is not None},
        out_of_scope=out_of_scope,
    )


# the folds' mean best dev score (0-1) below which the estimate says that they learned little
WEAK_DEV_SCORE = 0.1

Curve = Sequence[Sequence[float]]


def check_folds_learned(curves: Sequence[Optional[Curve]], folder: Path, training: Dict[str, Any]) -> None:
    """A ValueError, before any fold scores, when a fold's model-best is no
    better on dev than its model after one update (``untrained_reason``):
    its scores are an untrained model's, and an estimate from them says
    nothing of the corpus (issue 44: every fold's best was step 0, and the
    audit printed a miss rate of 96 % where 40 % were missing). The message
    names the folds, why, and which [training] setting to raise
    (``training``: the config's block with the overrides). A fold without a
    recorded curve is a warning: nothing says whether it learned."""
    unknown = [fold for fold, curve in enumerate(curves) if not curve]
    if unknown:
        msg.warn(
            f"{_folds(unknown)}: no dev evaluation is recorded (no {TRAIN_LOG} of the training, or a "
            "[training.logger] that prints no table), so whether the model learned past its first update is not known"
        )
    untrained: Dict[str, List[int]] = {}
    for fold, curve in enumerate(curves):
        why = untrained_reason(curve) if curve else None
        if why is not None:
            untrained.setdefault(why, []).append(fold)
    if not untrained:
        return
    folds = sorted(fold for group in untrained.values() for fold in group)
    only_step_0 = any(all(step == 0 for step, _ in curves[fold] or []) for fold in folds)
    stalled = any(any(step > 0 for step, _ in curves[fold] or []) for fold in folds)
    reasons = "; ".join(f"{_folds(group).lower()}: {why}" for why, group in untrained.items())
    raise ValueError(
        f"No miss rate is estimated: in {_folds(folds).lower()} of {len(curves)}, the best checkpoint (model-best) is no "
        "better on dev than the model after one update (step 0), so the scores are those of an untrained model "
        f"({reasons}). {_budget_hint(training, only_step_0, stalled)}. Then run the audit again with another "
        f"--output, or delete {folder} first: its folds were trained with these settings, and an audit with other "
        "ones refuses that folder"
    )


def _folds(folds: Sequence[int]) -> str:
    return f"Fold {folds[0] + 1}" if len(folds) == 1 else f"Folds {', '.join(str(f + 1) for f in folds)}"


def _budget_hint(training: Dict[str, Any], only_step_0: bool, stalled: bool) -> str:
    """Which [training] settings let the folds learn past step 0: those
    that end training before its second evaluation (``only_step_0``), and
    those that bound a training that evaluated later but never rose
    (``stalled``)."""
    every, steps = training.get("eval_frequency"), training.get("max_steps")
    patience, epochs = training.get("patience"), training.get("max_epochs")
    hints = []
    if only_step_0:
        evaluates = (
            f"spaCy evaluates a fold's model after its first update (step 0) and then every {every} steps "
            "([training] eval_frequency)"
        )
        if _count(steps) and _count(every) and steps < every:
            hints.append(
                f"{evaluates}, and --training.max_steps {steps} ends training before step {every}: raise "
                f"--training.max_steps well above {every}, or lower --training.eval_frequency below {steps}, so that "
                "checkpoints after step 0 are evaluated"
            )
        else:
            hints.append(
                f"{evaluates}, and training ended before step {every} (--training.max_epochs {epochs}, "
                f"--training.patience {patience}): raise --training.max_epochs (0: no limit) or --training.patience, "
                "or lower --training.eval_frequency, so that checkpoints after step 0 are evaluated"
            )
    if stalled:
        limit = "0: no limit" if steps == 0 else steps
        hints.append(
            f"{'And where' if hints else 'Where'} later evaluations scored no higher than step 0's, train the folds "
            f"longer: raise --training.max_steps (now {limit}) and --training.patience (now {patience}: training "
            "stops that many steps after its best evaluation)"
        )
    return ". ".join(hints)


def _count(value: object) -> TypeGuard[int]:
    # a positive whole number of the config (an interpolated string is no count);
    # a TypeGuard, so that the settings it passes compare as ints
    return isinstance(value, int) and not isinstance(value, bool) and value > 0


def _training_settings(config: Path, overrides: Dict[str, Any]) -> Dict[str, Any]:
    """The config's [training] block with the overrides (check_config read
    the same file before any fold trained)."""
    from spacy.util import load_config

    return dict(load_config(config, overrides=overrides, interpolate=False).get("training", {}))


def learned_little(dev_scores: Sequence[Optional[float]]) -> Optional[str]:
    """The note that qualifies an estimate from folds whose best dev scores
    average below WEAK_DEV_SCORE (None when they do not, or none is
    recorded): models that weak barely tell entities from other spans."""
    known = [(fold, score) for fold, score in enumerate(dev_scores) if score is not None]
    if not known or sum(score for _, score in known) / len(known) >= WEAK_DEV_SCORE:
        return None
    scores = ", ".join(f"{score:.2f} (fold {fold + 1})" for fold, score in known)
    return (
        f"The fold models learned little: their best dev scores (the score that picked each checkpoint, 0-1) are "
        f"{scores}, below {WEAK_DEV_SCORE:g} on average. Models this weak barely tell entities from other spans, so "
        "this estimate is rough and may be far off: train the folds longer (--training.max_steps) or on a stronger "
        "encoder (--vectors, --features) before relying on it."
    )


def _some(indices: Sequence[int], n: int = 10) -> str:
    shown = ", ".join(str(i) for i in indices[:n])
    return shown if len(indices) <= n else f"{shown} and {len(indices) - n} more"


def _score_fold(
    model: Path,
    plan: FoldPlan,
    fold: int,
    train_docs: Sequence[Doc],
    dev_docs: Optional[Sequence[Doc]],
    labels: List[str],
    settings: AuditSettings,
) -> Tuple[Dict[int, Decoded], List[CalibrationDoc], Optional[float]]:
    """The fold's suspects (decoded spans of its documents that touch no
    annotation), its calibration documents and, with a dev set, the share of
    its documents' annotated entities that its decoding finds (None without
    a dev set, where that share is the decoding recall itself, or without
    annotations)."""
    nlp = load_model(model)
    pipe = check_component(nlp, settings.component, source=str(model))
    columns = [labels.index(label) for label in pipe.labels if label in labels]
    unknown = [label for label in pipe.labels if label not in labels]
    if unknown:
        raise ValueError(f"{model} predicts labels {unknown} that no document of the corpus has")
    scored = plan.scored(fold)
    spans: Dict[int, Decoded] = {}
    calibration: List[CalibrationDoc] = []
    probs = span_probabilities(nlp, settings.component, [train_docs[i] for i in scored], floor=settings.floor, batch_size=settings.batch_size)
    found = annotated = 0
    for i, doc_spans in zip(scored, probs):
        doc = train_docs[i]
        gold = [(e.start, e.end) for e in doc.ents]
        spans[i] = _relabel(decode(doc_spans, blocked=gold), columns, len(labels))
        unblocked = known_outcomes(_relabel(decode(doc_spans), columns, len(labels)), labels, get_label_scope(doc))
        matches = boundary_matches(unblocked, gold)
        found += int(matches.sum())
        annotated += len(gold)
        if dev_docs is None:
            calibration.append(CalibrationDoc(i, unblocked, matches, len(gold)))
    if dev_docs is not None:
        dev_probs = span_probabilities(nlp, settings.component, dev_docs, floor=settings.floor, batch_size=settings.batch_size)
        for j, (doc, doc_spans) in enumerate(zip(dev_docs, dev_probs)):
            unblocked = known_outcomes(_relabel(decode(doc_spans), columns, len(labels)), labels, get_label_scope(doc))
            gold = [(e.start, e.end) for e in doc.ents]
            calibration.append(CalibrationDoc(j, unblocked, boundary_matches(unblocked, gold), len(gold)))
    held_out = found / annotated if dev_docs is not None and annotated else None
    return spans, calibration, held_out


def _relabel(decoded: Decoded, columns: List[int], n_labels: int) -> Decoded:
    """The fold model's label columns placed at the corpus's label indices
    (a fold may lack a rare label)."""
    label_probs = numpy.zeros((len(decoded), n_labels), dtype="float64")
    label_probs[:, columns] = decoded.label_probs
    return Decoded(decoded.starts, decoded.ends, decoded.scores, label_probs)


def known_outcomes(decoded: Decoded, labels: Sequence[str], scope: Scope) -> Decoded:
    """The decoded spans whose outcome a calibration can know: in a scoped
    document (``scope`` not None), those whose most probable type is in its
    scope. Another type is not annotated there, so whether the span is an
    entity is unknown, and taking it as "not annotated" would calibrate the
    model's scores down."""
    if scope is None or not len(decoded):
        return decoded
    keep = numpy.asarray([labels[int(b)] in scope for b in decoded.best_labels()], dtype=bool)
    return Decoded(decoded.starts[keep], decoded.ends[keep], decoded.scores[keep], decoded.label_probs[keep])


def scope_masks(scopes: Sequence[Scope], labels: Sequence[str]) -> Dict[int, numpy.ndarray]:
    """For each scoped document, 1.0 for each of ``labels`` in its scope and
    0.0 for the others: the types it can miss."""
    return {
        i: numpy.asarray([float(label in scope) for label in labels], dtype="float64")
        for i, scope in enumerate(scopes)
        if scope is not None
    }


def split_by_scope(suspects: List[Suspect], scopes: Sequence[Scope]) -> Tuple[List[Suspect], List[Suspect]]:
    """The suspects whose type their document annotates (no scope: every
    type), and the others: out of scope, unknown rather than missed."""
    kept: List[Suspect] = []
    outside: List[Suspect] = []
    for s in suspects:
        scope = scopes[s.doc]
        (kept if scope is None or s.label in scope else outside).append(s)
    return kept, outside


def out_of_scope_note(outside: Sequence[Suspect], threshold: float) -> str:
    """What the audit says of the spans ``split_by_scope`` set aside."""
    counts: Dict[str, int] = {}
    for s in outside:
        counts[s.label] = counts.get(s.label, 0) + 1
    types = ", ".join(f"{label} {n}" for label, n in sorted(counts.items(), key=lambda item: (-item[1], item[0])))
    return (
        f"Out of scope: {len(outside)} unannotated spans with a calibrated probability >= {threshold:g} have as their "
        f"most probable type one that their document does not annotate (outside its label scope): {types}. They are "
        "unknown, not missed: they are no suspects, and the estimate counts in each document only the types it "
        "annotates."
    )


def _fold_spans(
    spans: Dict[int, Decoded],
    calibration: List[CalibrationDoc],
    scored: List[int],
    held_out_recall: Optional[float] = None,
    masks: Optional[Dict[int, numpy.ndarray]] = None,
) -> FoldSpans:
    """The fold's spans end to end; a scoped document's suspects keep only
    the label probabilities of the types it annotates (``masks``,
    ``scope_masks``): the estimate counts no missed entity of another type."""
    n_labels = next((d.label_probs.shape[1] for d in spans.values()), 0)
    docs = [i for i in scored if len(spans[i])]
    masks = masks or {}
    label_probs = [spans[i].label_probs * masks[i] if i in masks else spans[i].label_probs for i in docs]
    return FoldSpans(
        suspect_scores=numpy.concatenate([spans[i].scores for i in docs]) if docs else numpy.zeros((0,)),
        suspect_label_probs=numpy.concatenate(label_probs) if docs else numpy.zeros((0, n_labels)),
        suspect_docs=numpy.concatenate([numpy.full(len(spans[i]), i) for i in docs]).astype("int64") if docs else numpy.zeros((0,), "int64"),
        calibration_scores=numpy.concatenate([c.decoded.scores for c in calibration]) if calibration else numpy.zeros((0,)),
        calibration_outcomes=numpy.concatenate([c.outcomes for c in calibration]) if calibration else numpy.zeros((0,)),
        calibration_docs=numpy.concatenate([numpy.full(len(c.decoded), c.doc) for c in calibration]).astype("int64") if calibration else numpy.zeros((0,), "int64"),
        reference_docs=numpy.asarray([c.doc for c in calibration], dtype="int64"),
        reference_entities=numpy.asarray([c.n_reference for c in calibration], dtype="float64"),
        held_out_recall=held_out_recall,
    )


def _probabilities(
    plan: FoldPlan, folds: List[FoldSpans], maps: List[Isotonic], decoded: Dict[int, Decoded], method: Calibration
) -> Dict[int, numpy.ndarray]:
    """Each fold's posteriors, split back into its documents (FoldSpans lays
    them end to end in the fold's document order)."""
    probabilities: Dict[int, numpy.ndarray] = {}
    for fold, (spans, g) in enumerate(zip(folds, maps)):
        probs = posteriors(spans, g, method)
        offset = 0
        for i in plan.scored(fold):
            n = len(decoded[i])
            probabilities[i] = probs[offset : offset + n]
            offset += n
    return probabilities


def _suspects(
    plan: FoldPlan,
    decoded: Dict[int, Decoded],
    probabilities: Dict[int, numpy.ndarray],
    labels: List[str],
    threshold: float,
) -> List[Suspect]:
    suspects = []
    for i in sorted(decoded):
        spans, probs = decoded[i], probabilities[i]
        best = spans.best_labels()
        for k in numpy.nonzero(probs >= threshold)[0]:
            suspects.append(
                Suspect(i, int(spans.starts[k]), int(spans.ends[k]), labels[int(best[k])], float(probs[k]), float(spans.scores[k]), plan.assignment[i])
            )
    return suspects


# what an audit's output folder records of the corpus it audited
CORPUS_FILE = "corpus.json"


def write_corpus_record(out: Path, result: AuditResult, source: str) -> Path:
    """``OUT/corpus.json``: the audited corpus (``source``), its documents and
    its fingerprint (``folds.corpus_fingerprint``), which a reader of the
    audit checks against its own corpus (``check_audited_corpus``)."""
    path = out / CORPUS_FILE
    record = {
        "corpus": source,
        "n_docs": result.info["n_docs"],
        "fingerprint": result.info["corpus_fingerprint"],
        "labels": list(result.labels),
    }
    write_text_atomic(path, json.dumps(record, indent=1) + "\n")
    return path


def read_audit_file(path: Path, prefix: str) -> Any:
    """A JSON file the audit wrote, read by the standard library (srsly
    reads 0.3 back as 0.30000000000000004); a ValueError starting with
    ``prefix`` when it is no JSON or cannot be read (the commands that read
    an audit turn ValueErrors into their message)."""
    try:
        return json.loads(path.read_text(encoding="utf8"))
    except ValueError as err:
        raise ValueError(f"{prefix}: {path} is not valid JSON ({err})") from None
    except OSError as err:
        raise ValueError(f"{prefix}: {path} cannot be read ({err.strerror or err})") from None


def check_audited_corpus(audit: Path, docs: Sequence[Doc], source: str, option: str = "--audit") -> None:
    """A ValueError naming ``option``, the audit's corpus and ``source`` when
    the audit in folder ``audit`` is not of ``docs``: another corpus, even one
    of the same size, or an audit made before audits recorded their corpus
    (no corpus.json: nothing says what it audited)."""
    path = audit / CORPUS_FILE
    if not path.is_file():
        raise ValueError(
            f"{option} {audit}: no {CORPUS_FILE} there, so nothing says which corpus it audited (audits made "
            f"before they recorded their corpus have none). Re-run spacy-imbalance audit on {source} with --output "
            f"{audit} and the same settings: its trained folds are reused"
        )
    record = read_audit_file(path, f"{option} {audit}")
    if not isinstance(record, dict) or not isinstance(record.get("fingerprint"), str):
        raise ValueError(f"{option} {audit}: {path} is not the corpus record of spacy-imbalance audit (no 'fingerprint')")
    if record["fingerprint"] != corpus_fingerprint(docs):
        audited = record.get("corpus", "?")
        n_docs = record.get("n_docs", "?")
        raise ValueError(
            f"{option} {audit} audited another corpus than {source}: {path} records {audited} ({n_docs} documents), "
            f"whose words or entities differ from the {len(docs)} documents of {source}. Run the audit on {source}"
        )


def headline(n_suspects: int, threshold: float, total: Dict[str, float], method: Calibration) -> str:
    """The audit's result in one line, suspects and estimate in agreement.
    The suspects are the spans that reach ``threshold``; the estimate sums
    the probabilities of every decoded unannotated span, below it too, so it
    may be large with no suspect at all: then the line says why."""
    rate = (
        f"estimated miss rate {100 * total['rate']:.1f} % [{100 * total['rate_low']:.1f}, {100 * total['rate_high']:.1f}]"
    )
    missing = f"{total['expected_missing']:.1f} expected missing entities"
    if n_suspects:
        return (
            f"{n_suspects} suspected missing entities (unannotated spans with a calibrated probability >= {threshold:g}); "
            f"{rate}: {missing}, the summed probabilities of every decoded unannotated span ({method} calibration)"
        )
    if round(total["expected_missing"], 1) > 0:
        return (
            f"No suspected missing entity: no unannotated span reaches a calibrated probability of {threshold:g} "
            f"(--threshold). The {rate} sums the probabilities of every decoded unannotated span, those below "
            f"{threshold:g} too: {missing}, spread over many spans none of which is likely on its own "
            f"({method} calibration)"
        )
    return f"No suspected missing entity; {rate} ({method} calibration)"
