"""The summary over seeds: metrics/<corpus>/audit/*.json aggregated per p
into audit_validation.md (and its plot)."""
from pathlib import Path
from statistics import mean, stdev
from typing import Any, Dict, List, Optional, Sequence, Tuple

from spacy_imbalance.benchmark.cells import MISSING, mean_std, points
from spacy_imbalance.benchmark.records import read_json
from spacy_imbalance.benchmark.tables import head, row

from .plot import plot_summary
from .setting import REVALIDATION, config_name, metrics_folder, row_label, summary_path

# (column, path in a setting's JSON)
FINDING = [
    ("removed", ("masking", "removed")),
    ("suspects", ("audit", "selected", "n")),
    ("audit P", ("audit", "selected", "exact", "p")),
    ("audit R", ("audit", "selected", "exact", "r")),
    ("audit P@k", ("audit", "at_k", "exact", "p")),
    ("audit P@k overlap", ("audit", "at_k", "overlap", "p")),
    ("cleanlab spans", ("cleanlab", "selected", "n")),
    ("cleanlab P", ("cleanlab", "selected", "exact", "p")),
    ("cleanlab R", ("cleanlab", "selected", "exact", "r")),
    ("cleanlab P@k", ("cleanlab", "at_k", "exact", "p")),
    ("cleanlab P@k overlap", ("cleanlab", "at_k", "overlap", "p")),
]


ESTIMATE = [
    ("true rate", ("estimate", "total", "true")),
    ("estimated rate", ("estimate", "total", "estimate")),
    ("error", ("estimate", "total", "error")),
    ("interval holds it", ("estimate", "total", "covered")),
    # the same estimate with each fold's recall on its held-out annotations in place of dev's (audit.estimate)
    ("estimated, held-out recall", ("estimate", "total", "held_out")),
    ("F1 full", ("restoring", "macro_f", "full")),
    ("F1 masked", ("restoring", "macro_f", "masked")),
    ("F1 restored", ("restoring", "macro_f", "restored")),
    ("recovered share", ("restoring", "recovered_share")),
]


# the audit's decoding recall, fold means: on dev (the estimate divides by it), on the folds' held-out
# annotations (what it is checked against) and on the removed entities (what it needs)
RECALL = [
    ("recall on dev", ("estimate", "total", "recall", "dev")),
    ("recall on held-out annotations", ("estimate", "total", "recall", "held_out")),
    ("recall on the removed", ("estimate", "total", "recall", "removed")),
]


COUNTS = ("removed", "suspects", "cleanlab spans")


def lookup(report: Dict[str, Any], path: Sequence[str]) -> Optional[float]:
    value: Any = report
    for key in path:
        if not isinstance(value, dict) or value.get(key) is None:
            return None
        value = value[key]
    return float(value)


Groups = Dict[str, Dict[str, Tuple[float, float, int]]]


def aggregate(reports: Sequence[Dict[str, Any]], encoder: str = "vectors") -> Groups:
    """Per row (a p; the settings that re-validate the frozen design apart,
    ``setting.REVALIDATION``): (mean, std, n) of every summary column over the
    seeds that have it (std 0 for a single seed)."""
    by_row: Dict[Tuple[float, bool], List[Dict[str, Any]]] = {}
    for report in reports:
        p, seed = float(report["p"]), int(report["seed"])
        fresh = (encoder, report.get("corpus"), p, seed) in REVALIDATION
        by_row.setdefault((p, fresh), []).append(report)
    out: Groups = {}
    for (p, fresh), group in sorted(by_row.items()):
        label = row_label(encoder, group[0].get("corpus", ""), p, int(group[0]["seed"])) if fresh else f"{p:g}"
        out[label] = {"seeds": (float(len(group)), 0.0, len(group))}
        for column, path in FINDING + ESTIMATE + RECALL:
            values = [v for v in (lookup(r, path) for r in group) if v is not None]
            if values:
                out[label][column] = (mean(values), stdev(values) if len(values) > 1 else 0.0, len(values))
    return out


def _cell(stats: Optional[Tuple[float, float, int]], column: str) -> str:
    if stats is None:
        return MISSING
    m, sd, n = stats
    if column in COUNTS:
        return f"{m:.0f}" if m == round(m) else f"{m:.1f}"
    if column == "interval holds it":
        return f"{round(m * n)}/{n}"
    # one seed has no spread to show
    return points(m) if n == 1 else mean_std(m, sd)


def summary_markdown(corpus: str, groups: Groups, settings: Dict[str, Any], encoder: str = "vectors") -> str:
    title = f"# Audit validation on {corpus}" + ("" if encoder == "vectors" else f", {encoder} encoder")
    if not groups:
        folder = metrics_folder(Path("metrics"), corpus, encoder).as_posix()
        return f"{title}\n\nNo validation run yet ({folder}/ is empty).\n"
    lines = [
        title,
        "",
        f"Each training entity removed with probability p, then looked for: the audit ({settings.get('folds')} folds, "
        f"{settings.get('steps')} steps, suspects at calibrated probability >= {settings.get('threshold')}) against "
        "cleanlab on the out-of-fold probabilities of a token_ner trained on the same folds. Mean ± std (%) over "
        "the seeds of each row (a value alone: one seed). P, R: the selected spans (audit suspects, cleanlab's flagged O runs) "
        "against the removed entities, exact boundaries; P@k: the top k of each ranking, k = the number removed "
        "(= R@k; a ranking shorter than k, as cleanlab's flagged spans may be, misses the places it lacks); "
        "overlap: one shared token is enough. Removed, suspects, cleanlab spans: mean counts."
        + (" Rows marked re-validation were run after the estimator and the search were frozen: settings that "
           "played no part in their design." if any(label.endswith("(re-validation)") for label in groups) else ""),
        "",
        *head(["p", "seeds", *(c for c, _ in FINDING)], "lr" + "r" * len(FINDING)),
    ]
    for label, g in groups.items():
        lines.append(row([label, str(g["seeds"][2]), *(_cell(g.get(c), c) for c, _ in FINDING)]))
    lines += [
        "",
        "The estimated miss rate against the realised one (removed / (removed + kept)), and restoring: test "
        f"macro-F1 of {config_name(encoder)} trained on the complete (p = 0), the masked and the restored "
        "corpus; recovered share = (restored - masked) / (full - masked).",
        "",
        *_table(groups, ESTIMATE),
    ]
    if any(c in g for g in groups.values() for c, _ in RECALL):
        lines += [
            "",
            "The estimate divides the suspects' summed probabilities by the folds' decoding recall on dev; the "
            "estimate with held-out recall divides by the recall on each fold's held-out annotations instead. What "
            "it needs is the recall on the removed entities (decoded spans of the masked corpus, exact boundaries). "
            "Fold means, % (– for a setting audited before the held-out recall was recorded).",
            "",
            *_table(groups, RECALL),
        ]
    return "\n".join(lines) + "\n"


def _table(groups: Groups, columns: Sequence[Tuple[str, Tuple[str, ...]]]) -> List[str]:
    """A Markdown table of ``columns``, a row per group."""
    lines = head(["p", *(c for c, _ in columns)], "l" + "r" * len(columns))
    lines += [row([label, *(_cell(g.get(c), c) for c, _ in columns)]) for label, g in groups.items()]
    return lines


def write_summary(corpus: str, metrics_dir: Path, encoder: str = "vectors") -> None:
    folder = metrics_folder(metrics_dir, corpus, encoder)
    reports = [read_json(path) for path in sorted(folder.glob("p*-s*.json"))]
    groups = aggregate(reports, encoder)
    settings = reports[-1]["settings"] if reports else {}
    out = summary_path(metrics_dir, corpus, encoder)
    out.parent.mkdir(parents=True, exist_ok=True)
    text = summary_markdown(corpus, groups, settings, encoder)
    out.write_text(text, encoding="utf8")
    print(text)
    plot = out.with_suffix(".png")
    if reports and plot_summary(reports, groups, plot, corpus):
        print(f"Wrote {out} and {plot}")
    else:
        print(f"Wrote {out} (no plot: {'no runs' if not reports else 'matplotlib is not installed'})")


# (column, path in a review report): the simulated review loop (review.py)
REVIEW = [
    ("k", ("k",)),
    ("accepted", ("accepted",)),
    ("rejected", ("rejected",)),
    ("F1 full", ("macro_f", "full")),
    ("F1 masked", ("macro_f", "masked")),
    ("F1 accepts", ("macro_f", "reviewed-accepts")),
    ("F1 accepts + rejections", ("macro_f", "reviewed")),
    ("recovered, accepts", ("recovered_share", "reviewed-accepts")),
    ("recovered, + rejections", ("recovered_share", "reviewed")),
    ("Δ rejections", ("paired_rejections", "delta")),
]
REVIEW_COUNTS = ("k", "accepted", "rejected")


def write_review_summary(corpus: str, metrics_dir: Path, encoder: str = "vectors") -> None:
    """metrics/<corpus>/<audit folder>/review-*.json over seeds, per p, into
    audit_review.md beside the validation's summary (nothing when there is no review)."""
    reports = [read_json(path) for path in sorted(metrics_folder(metrics_dir, corpus, encoder).glob("review-p*-s*.json"))]
    if not reports:
        return
    by_p: Dict[float, List[Dict[str, Any]]] = {}
    for report in reports:
        by_p.setdefault(float(report["p"]), []).append(report)
    lines = [
        f"# The review loop on {corpus}" + ("" if encoder == "vectors" else f", {encoder} encoder"),
        "",
        "A reviewer who knows the truth reads the audit's ranking from the top, k = the number of removed entities: "
        "a span that is (or overlaps) a removed entity is accepted as that entity, any other is rejected; "
        "`spacy-imbalance apply-review` applies the decisions. Test macro-F1 (%) of "
        f"{config_name(encoder)} trained on the complete, the masked and the reviewed corpus (accepts only; accepts "
        "and the rejections as known negatives); recovered = (reviewed - masked) / (full - masked); Δ rejections: "
        "accepts + rejections against accepts only, paired bootstrap over test sentences. Mean ± std over seeds.",
        "",
        *head(["p", "seeds", *(c for c, _ in REVIEW)], "lr" + "r" * len(REVIEW)),
    ]
    for p, group in sorted(by_p.items()):
        cells = []
        for column, path in REVIEW:
            values = [v for v in (lookup(r, path) for r in group) if v is not None]
            if not values:
                cells.append(MISSING)
            elif column in REVIEW_COUNTS:
                cells.append(f"{mean(values):.0f}")
            else:
                cells.append(points(values[0]) if len(values) == 1 else mean_std(mean(values), stdev(values)))
        lines.append(row([f"{p:g}", str(len(group)), *cells]))
    out = summary_path(metrics_dir, corpus, encoder).with_name(
        summary_path(metrics_dir, corpus, encoder).name.replace("audit_validation", "audit_review"))
    out.write_text("\n".join(lines) + "\n", encoding="utf8")
    print(f"Wrote {out}")
