"""One validation setting from start to end, and its report."""
import dataclasses
from collections import Counter
from pathlib import Path
from statistics import mean
from typing import Any, Dict, Optional

from spacy_imbalance.benchmark.cells import MISSING, interval, points
from spacy_imbalance.benchmark.records import read_json

from .estimate import estimate_errors, realised_rates
from .matching import method_scores, recall_by_label, selection_scores
from .restoring import restore, restore_runs, restoring_scores
from .review import review_step
from .setting import Setting
from .steps import Timer, audit_step, check_work_folder, mask_step, prune, read_scored_spans
from .token_folds import cleanlab_step

# the span group of a masked corpus that holds the removed entities
MASKED_KEY = "masked"


def rounded(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: rounded(v) for k, v in value.items()}
    if isinstance(value, float):
        return round(value, 4)
    return value


def setting_record(setting: Setting, report: Dict[str, Any]) -> Dict[str, Any]:
    """A setting's report, its numbers rounded, with where, when and how it ran."""
    from spacy_imbalance.sweeps import run_provenance

    return {**rounded(report), "provenance": run_provenance(setting.gpu_id)}


def validate(setting: Setting) -> Dict[str, Any]:
    """Every step for one setting (those done before are skipped); the
    setting's report."""
    from spacy_imbalance.corpus.docs_io import load_docs, write_docbin

    check_work_folder(setting)
    timer = Timer(setting.folder / "seconds.json")
    masked_path = mask_step(setting, timer)
    audit = audit_step(setting, masked_path, timer)
    docs = load_docs(masked_path)
    dev_docs = load_docs(Path("corpus") / setting.corpus / "dev.spacy")
    truth = [(i, s.start, s.end, s.label_) for i, doc in enumerate(docs) for s in doc.spans.get(MASKED_KEY, [])]
    kept = Counter(e.label_ for doc in docs for e in doc.ents)
    ranked = read_scored_spans(audit / "scored_spans.tsv")
    suspects = [(span, prob) for span, prob in ranked if prob >= setting.threshold]
    ranked_spans = [s for s, _ in ranked]
    flagged, n_tokens = cleanlab_step(setting, docs, dev_docs, audit, timer)
    audit_summary = read_json(audit / "summary.json")
    estimate = estimate_errors(audit_summary["labels"], realised_rates(Counter(t[3] for t in truth), kept))
    if "total" in estimate:
        # None for an audit written before the check of dev existed
        estimate["total"]["held_out"] = audit_summary.get("held_out_rate")
        # the decoding recall the estimate divides by (dev), the one it is checked against (held-out
        # annotations) and the one it needs (the removed entities among the decoded spans): fold means
        held_out = audit_summary.get("held_out_recall") or []
        estimate["total"]["recall"] = {
            "dev": mean(audit_summary["decoding_recall"]) if audit_summary.get("decoding_recall") else None,
            "held_out": mean(held_out) if held_out else None,
            "removed": selection_scores(ranked_spans, truth)["exact"]["r"],
        }
    restored_docs, n_restored = restore(docs, suspects)
    restored_path = setting.folder / f"restored-t{round(100 * setting.threshold):02d}.spacy"
    write_docbin(restored_docs, restored_path)
    reports = restore_runs(setting, masked_path, restored_path, timer)
    prune(setting.work / f"{setting.corpus}{setting.limit_tag}-reference-s{setting.seed}")
    return setting_record(setting, {
        "corpus": setting.corpus,
        "p": setting.p,
        "seed": setting.seed,
        "settings": {k: v for k, v in dataclasses.asdict(setting).items() if k not in ("corpus", "p", "seed", "work", "gpu_id")},
        "masking": {"docs": len(docs), "removed": len(truth), "kept": sum(kept.values())},
        "estimate": {"total": estimate.pop("total"), "labels": estimate},
        "audit": {
            **method_scores([s for s, _ in suspects], ranked_spans, truth),
            "recall_by_label": recall_by_label([s for s, _ in suspects], truth),
        },
        "cleanlab": {**method_scores([s for s, _ in flagged], [s for s, _ in flagged], truth), "flagged_tokens": n_tokens},
        "restoring": restoring_scores(reports, n_restored),
        "seconds": timer.seconds,
    })


def _pct(x: Optional[float]) -> str:
    return MISSING if x is None else points(x)


def _method_line(scores: Dict[str, Any]) -> str:
    selected, at_k = scores["selected"], scores["at_k"]
    return (
        f"P {_pct(selected['exact']['p'])} R {_pct(selected['exact']['r'])} "
        f"(overlap P {_pct(selected['overlap']['p'])} R {_pct(selected['overlap']['r'])}), "
        f"P@{at_k['k']} {_pct(at_k['exact']['p'])} (overlap {_pct(at_k['overlap']['p'])})"
    )


def print_result(report: Dict[str, Any]) -> None:
    a, c, e, r = report["audit"], report["cleanlab"], report["estimate"]["total"], report["restoring"]
    f1, paired = r["macro_f"], r["paired"]["macro_f"]
    print(
        f"  removed {report['masking']['removed']}, kept {report['masking']['kept']}\n"
        f"  audit:    {a['selected']['n']} suspects, {_method_line(a)}\n"
        f"  cleanlab: {c['selected']['n']} spans from {c['flagged_tokens']} flagged tokens, {_method_line(c)}\n"
        f"  miss rate: estimated {_pct(e['estimate'])} [{_pct(e['low'])}, {_pct(e['high'])}], true {_pct(e['true'])}, "
        f"error {100 * e['error']:+.1f} points, {'inside' if e['covered'] else 'outside'} the interval\n"
        f"  macro-F1: full {_pct(f1['full'])}, masked {_pct(f1['masked'])}, restored {_pct(f1['restored'])} "
        f"({r['restored_entities']} entities restored); recovered share {_pct(r['recovered_share'])} %; "
        f"restored - masked {interval(paired)}",
        flush=True,
    )


def review(setting: Setting) -> Dict[str, Any]:
    """The simulated review of a setting (``review.py``), after its audit
    (run here when missing); its report."""
    from spacy_imbalance.corpus.docs_io import load_docs

    check_work_folder(setting)
    timer = Timer(setting.folder / "seconds.json")
    masked_path = mask_step(setting, timer)
    audit = audit_step(setting, masked_path, timer)
    docs = load_docs(masked_path)
    truth = [(i, s.start, s.end, s.label_) for i, doc in enumerate(docs) for s in doc.spans.get(MASKED_KEY, [])]
    ranked = [span for span, _ in read_scored_spans(audit / "scored_spans.tsv")]
    report = review_step(setting, docs, masked_path, ranked, truth, timer)
    return setting_record(setting, {"corpus": setting.corpus, "p": setting.p, "seed": setting.seed, **report, "seconds": timer.seconds})
