"""The cleanlab baseline's token model: token_ner trained on the audit's own
folds, and its out-of-fold tag probabilities."""
import dataclasses
import hashlib
import json
import time
from pathlib import Path
from typing import Any, List, Optional, Tuple

import numpy

from .cleanlab_spans import bio_tags, cleanlab_spans, tag_columns
from .matching import SpanKey
from .setting import Setting, token_config
from .steps import Timer, subprocess_trainer


def token_fold_models(setting: Setting, docs: List[Any], dev_docs: List[Any], audit: Path, timer: Timer) -> Tuple[Any, Path]:
    """token_ner trained on the audit's folds (resumable: train_fold skips a
    fold trained before under the same plan and settings)."""
    from spacy.util import load_config

    from spacy_imbalance.audit.folds import PLAN_FILE, FoldPlan, fold_done, train_fold
    from spacy_imbalance.audit.run import DEFAULT_CONFIG
    from spacy_imbalance.init_config import config_fingerprint

    plan = FoldPlan.from_disk(audit / "folds" / PLAN_FILE)
    audit_training = load_config(DEFAULT_CONFIG)["training"]
    overrides = {
        **setting.vector_overrides(),
        "training.patience": audit_training["patience"],  # the audit's budget: the same steps and patience
        **setting.training_overrides(),
    }
    shaping = json.dumps([plan.fingerprint, config_fingerprint(token_config(setting.encoder).read_text(encoding="utf8")), overrides], sort_keys=True)
    plan = dataclasses.replace(plan, fingerprint=hashlib.sha256(shaping.encode("utf8")).hexdigest())
    folder = setting.folder / "token_folds"
    start = time.perf_counter()
    todo = [f for f in range(plan.k) if not fold_done(folder, plan, f)]
    for fold in todo:
        print(f"  token_ner fold {fold + 1}/{plan.k} ({setting.steps} steps)", flush=True)
        train_fold(folder, plan, fold, docs, dev_docs, config=token_config(setting.encoder), overrides=overrides, gpu_id=setting.gpu_id, trainer=subprocess_trainer)
    if todo:
        timer.record("token_folds", start)
    return plan, folder


def token_probabilities(plan: Any, folder: Path, docs: List[Any], tags: List[str], batch_size: int = 128) -> List[numpy.ndarray]:
    """Out-of-fold tag probabilities of every document, columns ``tags``."""
    from spacy.tokens import Doc
    from spacy.util import load_model

    from spacy_imbalance.audit.folds import fold_dir

    probs: List[Optional[numpy.ndarray]] = [None] * len(docs)
    for fold in range(plan.k):
        nlp = load_model(fold_dir(folder, fold) / "model-best")
        name = next(n for n, pipe in nlp.pipeline if getattr(pipe, "factory", None) == "token_ner")
        pipe = nlp.get_pipe(name)
        columns = tag_columns(pipe.tags, tags)
        scored = plan.scored(fold)
        for offset in range(0, len(scored), batch_size):
            ids = scored[offset : offset + batch_size]
            inputs = [Doc(nlp.vocab, words=[t.text for t in docs[i]], spaces=[bool(t.whitespace_) for t in docs[i]]) for i in ids]
            inputs = list(nlp.pipe(inputs, disable=nlp.pipe_names[nlp.pipe_names.index(name):]))
            for i, logits in zip(ids, pipe.predict(inputs)):
                logits = pipe.model.ops.to_numpy(logits).astype("float64")
                own = numpy.exp(logits - logits.max(axis=1, keepdims=True))
                own /= own.sum(axis=1, keepdims=True)
                mapped = numpy.zeros((len(docs[i]), len(tags)))
                numpy.add.at(mapped.T, columns, own.T)
                probs[i] = mapped
    return probs  # type: ignore[return-value]


def cleanlab_step(setting: Setting, docs: List[Any], dev_docs: List[Any], audit: Path, timer: Timer) -> Tuple[List[Tuple[SpanKey, float]], int]:
    """cleanlab's spans from the token_ner folds' out-of-fold probabilities."""
    from spacy_imbalance.audit.run import corpus_labels
    from spacy_imbalance.pipeline.tagging.tags import tag_names

    plan, folder = token_fold_models(setting, docs, dev_docs, audit, timer)
    start = time.perf_counter()
    tags = tag_names(corpus_labels(docs, dev_docs), "BIO")
    probs = token_probabilities(plan, folder, docs, tags)
    flagged = cleanlab_spans([bio_tags(doc, tags) for doc in docs], probs, tags)
    timer.record("cleanlab", start)
    return flagged
