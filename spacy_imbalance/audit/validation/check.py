"""One check from start to end, and its report: the entities hidden, the
audit run, the hidden entities looked for among its suspects; the optional
cleanlab comparison and restoring; or the simulated review."""
from collections import Counter
from pathlib import Path
from statistics import mean
from typing import Any, Dict, List, Optional, Sequence

from spacy.tokens import Doc

from ...benchmark.cells import MISSING, interval, points
from ...benchmark.records import read_json
from .matching import SpanKey, method_scores, recall_by_label, selection_scores
from .restoring import corpus_runs, restore, restoring_scores
from .review import review_step
from .setting import Setting
from .steps import Timer, audit_step, check_work_folder, mask_step, prune, read_scored_spans
from .token_folds import cleanlab_step
from .truth import estimate_errors, realised_rates

# the span group of a masked corpus that holds the hidden entities (`spacy-imbalance mask`)
MASKED_KEY = "masked"


def rounded(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: rounded(v) for k, v in value.items()}
    if isinstance(value, float):
        return round(value, 4)
    return value


def setting_record(setting: Setting, report: Dict[str, Any]) -> Dict[str, Any]:
    """A setting's report, its numbers rounded, with where, when and how it ran."""
    from ...sweeps import run_provenance

    return {**rounded(report), "provenance": run_provenance(setting.gpu_id)}


def hidden_entities(docs: Sequence[Doc]) -> List[SpanKey]:
    """The entities masking hid, the truth the audit is checked against."""
    return [(i, s.start, s.end, s.label_) for i, doc in enumerate(docs) for s in doc.spans.get(MASKED_KEY, [])]


def estimate_report(audit: Path, truth: Sequence[SpanKey], kept: Dict[str, int], ranked: Sequence[SpanKey]) -> Dict[str, Any]:
    """The audit's miss-rate estimate against the realised rate, in total
    (with the decoding recall it divides by) and per label."""
    audit_summary = read_json(audit / "summary.json")
    estimate = estimate_errors(audit_summary["labels"], realised_rates(Counter(t[3] for t in truth), kept))
    if "total" in estimate:
        # None for an audit written before the check of dev existed
        estimate["total"]["held_out"] = audit_summary.get("held_out_rate")
        # the decoding recall the estimate divides by (dev), the one it is checked against (held-out
        # annotations) and the one it needs (the hidden entities among the decoded spans): fold means
        held_out = audit_summary.get("held_out_recall") or []
        estimate["total"]["recall"] = {
            "dev": mean(audit_summary["decoding_recall"]) if audit_summary.get("decoding_recall") else None,
            "held_out": mean(held_out) if held_out else None,
            "removed": selection_scores(ranked, truth)["exact"]["r"],
        }
    return {"total": estimate.pop("total"), "labels": estimate}


def validate(setting: Setting) -> Dict[str, Any]:
    """Every step of one check (those done before are skipped); its report."""
    from ...corpus.docs_io import load_docs, write_docbin

    check_work_folder(setting)
    timer = Timer(setting.folder / "seconds.json")
    masked_path = mask_step(setting, timer)
    audit = audit_step(setting, masked_path, timer)
    docs = load_docs(masked_path)
    truth = hidden_entities(docs)
    kept = Counter(e.label_ for doc in docs for e in doc.ents)
    ranked = read_scored_spans(audit / "scored_spans.tsv")
    suspects = [(span, prob) for span, prob in ranked if prob >= setting.threshold]
    ranked_spans = [s for s, _ in ranked]
    report: Dict[str, Any] = {
        "corpus": setting.corpus,
        "p": setting.p,
        "seed": setting.seed,
        "settings": setting.recorded(),
        "masking": {"docs": len(docs), "removed": len(truth), "kept": sum(kept.values())},
        "estimate": estimate_report(audit, truth, dict(kept), ranked_spans),
        "audit": {
            **method_scores([s for s, _ in suspects], ranked_spans, truth),
            "recall_by_label": recall_by_label([s for s, _ in suspects], truth),
        },
    }
    if setting.cleanlab is not None:
        flagged, n_tokens = cleanlab_step(setting, docs, load_docs(setting.dev), audit, timer)
        report["cleanlab"] = {**method_scores([s for s, _ in flagged], [s for s, _ in flagged], truth), "flagged_tokens": n_tokens}
    if setting.restoring is not None:
        restored_docs, n_restored = restore(docs, suspects)
        restored_path = setting.folder / f"restored-t{round(100 * setting.threshold):02d}.spacy"
        write_docbin(restored_docs, restored_path)
        reports = corpus_runs(setting, {"masked": masked_path, "restored": restored_path}, timer)
        prune(setting.work / f"{setting.corpus}{setting.limit_tag}-reference-s{setting.seed}")
        report["restoring"] = restoring_scores(reports, n_restored)
    return setting_record(setting, {**report, "seconds": timer.seconds})


def review(setting: Setting) -> Dict[str, Any]:
    """The simulated review of a setting (``review.py``), after its audit
    (run here when missing); its report."""
    from ...corpus.docs_io import load_docs

    check_work_folder(setting)
    timer = Timer(setting.folder / "seconds.json")
    masked_path = mask_step(setting, timer)
    audit = audit_step(setting, masked_path, timer)
    docs = load_docs(masked_path)
    ranked = [span for span, _ in read_scored_spans(audit / "scored_spans.tsv")]
    report = review_step(setting, docs, masked_path, ranked, hidden_entities(docs), timer)
    return setting_record(setting, {"corpus": setting.corpus, "p": setting.p, "seed": setting.seed, "settings": setting.recorded(),
                                    **report, "seconds": timer.seconds})


def _pct(x: Optional[float]) -> str:
    return MISSING if x is None else points(x)


def _method_line(scores: Dict[str, Any]) -> str:
    selected, at_k = scores["selected"], scores["at_k"]
    return (
        f"P {_pct(selected['exact']['p'])} R {_pct(selected['exact']['r'])} "
        f"(overlap P {_pct(selected['overlap']['p'])} R {_pct(selected['overlap']['r'])}), "
        f"P@{at_k['k']} {_pct(at_k['exact']['p'])} (overlap {_pct(at_k['overlap']['p'])})"
    )


def _estimate_line(e: Dict[str, Any]) -> str:
    return (f"estimated {_pct(e['estimate'])} [{_pct(e['low'])}, {_pct(e['high'])}], true {_pct(e['true'])}, "
            f"error {100 * e['error']:+.1f} points, {'inside' if e['covered'] else 'outside'} the interval")


def result_lines(report: Dict[str, Any]) -> List[str]:
    """A check's result as the console shows it: what the audit found of the
    hidden entities, in total and per label, and the extras that ran."""
    a, e = report["audit"], report["estimate"]
    lines = [f"hidden {report['masking']['removed']}, kept {report['masking']['kept']}",
             f"audit:    {a['selected']['n']} suspects, {_method_line(a)}", f"miss rate: {_estimate_line(e['total'])}"]
    for label, row in sorted(e["labels"].items()):
        found = a["recall_by_label"].get(label)
        lines.append(f"  {label}: recall {_pct(found)} of its hidden entities; miss rate {_estimate_line(row)}")
    if "cleanlab" in report:
        c = report["cleanlab"]
        lines.append(f"cleanlab: {c['selected']['n']} spans from {c['flagged_tokens']} flagged tokens, {_method_line(c)}")
    if "restoring" in report:
        r = report["restoring"]
        f1 = r["macro_f"]
        lines.append(f"macro-F1: full {_pct(f1['full'])}, masked {_pct(f1['masked'])}, restored {_pct(f1['restored'])} "
                     f"({r['restored_entities']} entities restored); recovered share {_pct(r['recovered_share'])} %; "
                     f"restored - masked {interval(r['paired']['macro_f'])}")
    return lines


def print_result(report: Dict[str, Any]) -> None:
    print("\n".join(f"  {line}" for line in result_lines(report)), flush=True)
