"""Restoring (``--restore``): the suspects written into the masked corpus as
entities, the config trained on it, and the share of the lost test macro-F1
it recovers."""
import time
from pathlib import Path
from typing import Any, Dict, Iterable, List, Mapping, Optional, Sequence, Tuple

from spacy.tokens import Doc, Span

from ...benchmark.paired import paired_runs
from ...benchmark.records import read_json
from ...benchmark.runs import expected_record, is_done
from .matching import SpanKey
from .setting import Restoring, Setting
from .steps import Timer, train_corpus


def recovered_share(full: float, masked: float, restored: float) -> Optional[float]:
    """(restored - masked) / (full - masked): 1 when restoring wins back all
    the F1 masking lost, 0 when nothing; undefined when masking lost none."""
    lost = full - masked
    return (restored - masked) / lost if lost > 0 else None


def restore(docs: Sequence[Doc], suspects: Iterable[Tuple[SpanKey, float]]) -> Tuple[List[Doc], int]:
    """Copies of the docs with the suspects as entities, most probable first,
    each only where it overlaps no entity (kept or restored); and how many
    were restored."""
    copies = [doc.copy() for doc in docs]
    taken = {i: [(e.start, e.end) for e in doc.ents] for i, doc in enumerate(copies)}
    added: Dict[int, List[Span]] = {}
    for (i, start, end, label), _ in sorted(suspects, key=lambda item: -item[1]):
        if all(end <= s or start >= e for s, e in taken[i]):
            taken[i].append((start, end))
            added.setdefault(i, []).append(Span(copies[i], start, end, label=label))
    for i, spans in added.items():
        copies[i].set_ents(list(copies[i].ents) + spans, default="unmodified")
    return copies, sum(len(s) for s in added.values())


def _restoring(setting: Setting) -> Restoring:
    if setting.restoring is None:
        raise ValueError("restoring needs the config to train and a test set (--restore, --test)")
    return setting.restoring


def _train(setting: Setting, key: str, train: Path, folder: Path, overrides: Mapping[str, str], timer: Timer) -> Dict[str, Any]:
    """Train ``--restore``'s config on ``train`` (select on dev, score on
    test); its record, with what makes it fresh."""
    from ...init_config import config_fingerprint
    from ...sweeps import Trial, run_trial, write_record

    restoring = _restoring(setting)
    print(f"  training {restoring.config} on the {key} corpus ({restoring.steps} steps)", flush=True)
    start = time.perf_counter()
    own = {k: v for k, v in overrides.items() if k != "paths.train"}  # the trial's train path is ``train``
    trial = Trial(name=f"{setting.corpus} {key} seed {setting.seed}", config=str(restoring.config), output=str(folder / key),
                  metrics=str(folder / f"{key}.json"), train=str(train), dev=str(setting.dev), test=str(restoring.test),
                  seed=setting.seed, max_steps=restoring.steps, overrides=own, gpu_id=setting.gpu_id)
    sha = config_fingerprint(restoring.config.read_text(encoding="utf8"))
    record = {**run_trial(trial), "name": key, "seed": setting.seed, **expected_record(sha, restoring.steps, "steps", dict(overrides))}
    write_record(trial.metrics, record)
    timer.record(f"train_{key}", start)
    return record


def corpus_runs(setting: Setting, corpora: Dict[str, Path], timer: Timer) -> Dict[str, Dict[str, Any]]:
    """The records of ``--restore``'s config trained on each of ``corpora``
    (name -> training corpus) and on the complete one ("full"), each trained
    when its record is missing or stale, with the check's seed and budget;
    "full" is ``--reference``'s record where that one is fresh."""
    from ...init_config import config_fingerprint

    restoring = _restoring(setting)
    base = {"training.patience": str(restoring.patience), **setting.vector_overrides()}
    if setting.eval_frequency:
        base["training.eval_frequency"] = str(setting.eval_frequency)
    sha = config_fingerprint(restoring.config.read_text(encoding="utf8"))
    runs = {key: (setting.folder / "restore", path, {**base, "paths.train": str(path)}) for key, path in corpora.items()}
    # the complete corpus's run is shared by every p of a seed; a --reference run trained on the whole
    # corpus has no paths.train override, which a --limit sample needs
    full = train_corpus(setting)
    runs["full"] = (setting.work / f"{setting.corpus}{setting.limit_tag}-reference-s{setting.seed}", full,
                    {**base, "paths.train": str(full)} if setting.limit else dict(base))
    reference = None if setting.limit else restoring.reference_record(setting.seed)
    reports = {}
    for key, (folder, train, overrides) in runs.items():
        record = folder / f"{key}.json"
        if key == "full" and reference is not None and is_done(reference, sha, restoring.steps, True, overrides):
            reports[key] = read_json(reference)
        elif is_done(record, sha, restoring.steps, True, overrides):
            reports[key] = read_json(record)
        else:
            reports[key] = _train(setting, key, train, folder, overrides, timer)
    return reports


def restoring_scores(reports: Dict[str, Dict[str, Any]], n_restored: int) -> Dict[str, Any]:
    """Test F1 of the full, masked and restored runs; the recovered shares and
    the paired bootstrap of restored against masked."""
    f1 = {avg: {key: reports[key][avg]["f"] for key in ("full", "masked", "restored")} for avg in ("macro", "micro")}
    paired = paired_runs([reports["masked"]], [reports["restored"]])
    keep = ("delta", "low", "high", "share_not_better")
    return {
        "restored_entities": n_restored,
        "macro_f": f1["macro"],
        "micro_f": f1["micro"],
        "recovered_share": recovered_share(**f1["macro"]),
        "recovered_share_micro": recovered_share(**f1["micro"]),
        "paired": {avg: {k: paired[avg][k] for k in keep} for avg in ("macro_f", "micro_f")},
    }
