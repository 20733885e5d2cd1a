"""Restoring: the suspects written into the masked corpus as entities, a
model trained on it, and the share of the lost test macro-F1 it recovers."""
import time
from pathlib import Path
from typing import Any, Dict, Iterable, List, Optional, Sequence, Tuple

from spacy_imbalance.benchmark.names import run_name
from spacy_imbalance.benchmark.paired import paired_runs
from spacy_imbalance.benchmark.layout import Layout
from spacy_imbalance.benchmark.records import read_json
from spacy_imbalance.benchmark.runs import Run, config_sha, is_done, run_one

from .matching import SpanKey
from .setting import Setting
from .steps import Timer, train_corpus


def recovered_share(full: float, masked: float, restored: float) -> Optional[float]:
    """(restored - masked) / (full - masked): 1 when restoring wins back all
    the F1 masking lost, 0 when nothing; undefined when masking lost none."""
    lost = full - masked
    return (restored - masked) / lost if lost > 0 else None


def restore(docs: Sequence[Any], suspects: Iterable[Tuple[SpanKey, float]]) -> Tuple[List[Any], int]:
    """Copies of the docs with the suspects as entities, most probable first,
    each only where it overlaps no entity (kept or restored); and how many
    were restored."""
    from spacy.tokens import Span

    docs = [doc.copy() for doc in docs]
    taken = {i: [(e.start, e.end) for e in doc.ents] for i, doc in enumerate(docs)}
    added: Dict[int, List[Any]] = {}
    for (i, start, end, label), _ in sorted(suspects, key=lambda item: -item[1]):
        if all(end <= s or start >= e for s, e in taken[i]):
            taken[i].append((start, end))
            added.setdefault(i, []).append(Span(docs[i], start, end, label=label))
    for i, spans in added.items():
        docs[i].set_ents(list(docs[i].ents) + spans, default="unmodified")
    return docs, sum(len(s) for s in added.values())


def restore_runs(setting: Setting, masked: Path, restored: Path, timer: Timer) -> Dict[str, Dict[str, Any]]:
    """Metrics of the masked, restored and p = 0 runs (trained when missing)."""
    return corpus_runs(setting, {"masked": masked, "restored": restored}, timer)


def corpus_runs(setting: Setting, corpora: Dict[str, Path], timer: Timer) -> Dict[str, Dict[str, Any]]:
    """Metrics of ``<encoder>/sampled_spancat_uniform`` trained on each of
    ``corpora`` (name -> training corpus) and of the p = 0 run ("full"), each
    trained when missing, with the setting's seed and budget."""
    base = {"training.patience": str(setting.restore_patience), **setting.vector_overrides()}
    if setting.eval_frequency:
        base["training.eval_frequency"] = str(setting.eval_frequency)
    config = setting.config
    sha = config_sha(Layout(), config)
    reports = {}
    full_train = train_corpus(setting)
    runs = {key: (setting.folder, {**base, "paths.train": str(path)}) for key, path in corpora.items()}
    runs["full"] = (setting.work / f"{setting.corpus}{setting.limit_tag}-reference-s{setting.seed}",
                    {**base, "paths.train": str(full_train)} if setting.limit else dict(base))
    committed = Path("metrics") / setting.corpus / f"{config}-s{setting.seed}.json"
    for key, (folder, overrides) in runs.items():
        metrics = folder / "metrics" / setting.corpus / f"{run_name(config, key)}-s{setting.seed}.json"
        if key == "full" and not setting.limit and is_done(committed, sha, setting.restore_steps, True, overrides):
            metrics = committed  # the headline run of this encoder
        elif not is_done(metrics, sha, setting.restore_steps, True, overrides):
            print(f"  training {config} on the {key} corpus ({setting.restore_steps} steps)", flush=True)
            start = time.perf_counter()
            layout = Layout(metrics=folder / "metrics", training=folder / "training")
            run_one(layout, Run(setting.corpus, config, setting.seed, run_name(config, key), setting.restore_steps, overrides,
                                gpu_id=setting.gpu_id))
            timer.record(f"train_{key}", start)
        reports[key] = read_json(metrics)
    return reports


def restoring_scores(reports: Dict[str, Dict[str, Any]], n_restored: int) -> Dict[str, Any]:
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
