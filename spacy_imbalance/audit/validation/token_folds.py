"""The cleanlab comparison's token model: a token tagger (``--cleanlab``'s
config) trained on the audit's own folds, and its out-of-fold tag
probabilities."""
import dataclasses
import hashlib
import json
import time
from pathlib import Path
from typing import List, Optional, Sequence, Tuple, cast

from spacy.pipeline import TrainablePipe
from spacy.tokens import Doc
from thinc.api import NumpyOps
from thinc.types import Floats2d, Ints1d

from ..folds import PLAN_FILE, FoldPlan, fold_dir, fold_done, train_fold
from .cleanlab_spans import bio_tags, cleanlab_spans, tag_columns
from .matching import SpanKey
from .setting import Setting
from .steps import Timer, subprocess_trainer


def token_fold_models(setting: Setting, config: Path, docs: Sequence[Doc], dev_docs: Sequence[Doc], audit: Path,
                      timer: Timer) -> Tuple[FoldPlan, Path]:
    """The tagger trained on the audit's folds, with the audit's budget
    (resumable: train_fold skips a fold trained before under the same plan
    and settings)."""
    from spacy.util import load_config

    from ...init_config import config_fingerprint
    from ..run import DEFAULT_CONFIG

    plan = FoldPlan.from_disk(audit / "folds" / PLAN_FILE)
    audit_training = load_config(DEFAULT_CONFIG)["training"]
    overrides = {
        **setting.vector_overrides(),
        "training.patience": audit_training["patience"],  # the audit's budget: the same steps and patience
        **setting.training_overrides(),
    }
    shaping = json.dumps([plan.fingerprint, config_fingerprint(config.read_text(encoding="utf8")), overrides], sort_keys=True)
    plan = dataclasses.replace(plan, fingerprint=hashlib.sha256(shaping.encode("utf8")).hexdigest())
    folder = setting.folder / "token_folds"
    start = time.perf_counter()
    todo = [f for f in range(plan.k) if not fold_done(folder, plan, f)]
    for fold in todo:
        print(f"  token tagger fold {fold + 1}/{plan.k} ({setting.steps} steps)", flush=True)
        train_fold(folder, plan, fold, docs, dev_docs, config=config, overrides=overrides, gpu_id=setting.gpu_id, trainer=subprocess_trainer)
    if todo:
        timer.record("token_folds", start)
    return plan, folder


def corpus_probabilities(logits: Floats2d, columns: Ints1d, n_tags: int) -> Floats2d:
    """A fold model's tag logits (tokens x its own tags) as probabilities
    over the corpus's ``n_tags`` BIO tags: the softmax over its tags, each
    added to its column (``tag_columns``: L- to I-, U- to B-)."""
    ops = NumpyOps()
    own = ops.softmax(logits)
    mapped = ops.alloc2f(n_tags, logits.shape[0], dtype=logits.dtype)
    ops.scatter_add(mapped, columns, own.T)
    return ops.xp.ascontiguousarray(mapped.T)


def token_probabilities(plan: FoldPlan, folder: Path, docs: Sequence[Doc], tags: List[str], batch_size: int = 128) -> List[Floats2d]:
    """Out-of-fold tag probabilities of every document, columns ``tags``
    (float64, on the CPU: cleanlab reads numpy arrays)."""
    from spacy.util import load_model

    ops = NumpyOps()
    probs: List[Optional[Floats2d]] = [None] * len(docs)
    for fold in range(plan.k):
        nlp = load_model(fold_dir(folder, fold) / "model-best")
        name = next(n for n, pipe in nlp.pipeline if getattr(pipe, "factory", None) == "token_ner")
        pipe = cast(TrainablePipe, nlp.get_pipe(name))
        # token_ner's tags: its labels in its own scheme (BIO or BILUO)
        columns = ops.asarray1i(tag_columns(getattr(pipe, "tags"), tags))
        scored = plan.scored(fold)
        for offset in range(0, len(scored), batch_size):
            ids = scored[offset : offset + batch_size]
            inputs = [Doc(nlp.vocab, words=[t.text for t in docs[i]], spaces=[bool(t.whitespace_) for t in docs[i]]) for i in ids]
            inputs = list(nlp.pipe(inputs, disable=nlp.pipe_names[nlp.pipe_names.index(name):]))
            for i, logits in zip(ids, pipe.predict(inputs)):
                probs[i] = corpus_probabilities(ops.asarray2f(pipe.model.ops.to_numpy(logits), dtype="float64"), columns, len(tags))
    missing = [i for i, p in enumerate(probs) if p is None]
    if missing:
        raise ValueError(f"{folder}: no fold scored the documents {missing[:10]}")
    return [p for p in probs if p is not None]


def cleanlab_step(setting: Setting, docs: Sequence[Doc], dev_docs: Sequence[Doc], audit: Path,
                  timer: Timer) -> Tuple[List[Tuple[SpanKey, float]], int]:
    """cleanlab's spans from the tagger folds' out-of-fold probabilities."""
    from ...pipeline.tagging.tags import tag_names
    from ..run import corpus_labels

    if setting.cleanlab is None:
        raise ValueError("the cleanlab comparison needs a token tagger's config (--cleanlab)")
    plan, folder = token_fold_models(setting, setting.cleanlab, docs, dev_docs, audit, timer)
    start = time.perf_counter()
    tags = tag_names(corpus_labels(docs, dev_docs), "BIO")
    probs = token_probabilities(plan, folder, docs, tags)
    flagged = cleanlab_spans([bio_tags(doc, tags) for doc in docs], probs, tags)
    timer.record("cleanlab", start)
    return flagged
