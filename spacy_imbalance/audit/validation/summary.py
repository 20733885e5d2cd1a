"""The summary over seeds: a folder of check records aggregated per p into
a Markdown table (and its plot), and the simulated reviews into another."""
from pathlib import Path
from statistics import mean, stdev
from typing import AbstractSet, Any, Dict, List, Optional, Sequence, Tuple

from ...benchmark.cells import MISSING, mean_std, points
from ...benchmark.records import read_json
from ...benchmark.tables import head, row
from .plot import Groups, plot_summary
from .setting import setting_name

Column = Tuple[str, Tuple[str, ...]]
# (column, path in a setting's JSON)
FINDING: List[Column] = [
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


ESTIMATE: List[Column] = [
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
RECALL: List[Column] = [
    ("recall on dev", ("estimate", "total", "recall", "dev")),
    ("recall on held-out annotations", ("estimate", "total", "recall", "held_out")),
    ("recall on the removed", ("estimate", "total", "recall", "removed")),
]


COUNTS = ("removed", "suspects", "cleanlab spans")
REVALIDATED = " (re-validation)"


def lookup(report: Dict[str, Any], path: Sequence[str]) -> Optional[float]:
    value: Any = report
    for key in path:
        if not isinstance(value, dict) or value.get(key) is None:
            return None
        value = value[key]
    return float(value)


def aggregate(reports: Sequence[Dict[str, Any]], revalidation: AbstractSet[str] = frozenset()) -> Groups:
    """Per row (a p; the settings named in ``revalidation``, p30-s3, apart:
    they re-validate a frozen design): (mean, std, n) of every summary column
    over the seeds that have it (std 0 for a single seed)."""
    by_row: Dict[Tuple[float, bool], List[Dict[str, Any]]] = {}
    for report in reports:
        p, seed = float(report["p"]), int(report["seed"])
        by_row.setdefault((p, setting_name(p, seed) in revalidation), []).append(report)
    out: Groups = {}
    for (p, fresh), group in sorted(by_row.items()):
        label = f"{p:g}{REVALIDATED if fresh else ''}"
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


def restored_config(settings: Dict[str, Any]) -> str:
    """The config the restore runs trained: records from before it was
    recorded (issue 46) all trained <encoder>/sampled_spancat_uniform of configs/."""
    return settings.get("restore_config") or f"{settings.get('encoder', 'vectors')}/sampled_spancat_uniform"


def _has(groups: Groups, columns: Sequence[Column]) -> bool:
    return any(c in g for g in groups.values() for c, _ in columns)


def _finding_text(settings: Dict[str, Any], cleanlab: bool) -> str:
    audit = (f"the audit ({settings.get('folds')} folds, {settings.get('steps')} steps, suspects at calibrated probability "
             f">= {settings.get('threshold')})")
    if not cleanlab:
        return (f"Each training entity removed with probability p, then looked for by {audit}. Mean ± std (%) over the "
                "seeds of each row (a value alone: one seed). P, R: the audit's suspects against the removed entities, "
                "exact boundaries; P@k: the top k of its ranking, k = the number removed (= R@k); overlap: one shared "
                "token is enough. Removed, suspects: mean counts.")
    return (
        f"Each training entity removed with probability p, then looked for: {audit} against "
        "cleanlab on the out-of-fold probabilities of a token_ner trained on the same folds. Mean ± std (%) over "
        "the seeds of each row (a value alone: one seed). P, R: the selected spans (audit suspects, cleanlab's flagged O runs) "
        "against the removed entities, exact boundaries; P@k: the top k of each ranking, k = the number removed "
        "(= R@k; a ranking shorter than k, as cleanlab's flagged spans may be, misses the places it lacks); "
        "overlap: one shared token is enough. Removed, suspects, cleanlab spans: mean counts."
    )


def summary_markdown(corpus: str, groups: Groups, settings: Dict[str, Any], encoder: str = "vectors", records: str = "") -> str:
    title = f"# Audit validation on {corpus}" + ("" if encoder == "vectors" else f", {encoder} encoder")
    if not groups:
        return f"{title}\n\nNo validation run yet ({records}/ is empty).\n"
    finding = [c for c in FINDING if not c[0].startswith("cleanlab") or _has(groups, FINDING[6:])]
    restoring = _has(groups, ESTIMATE[5:])
    lines = [
        title,
        "",
        _finding_text(settings, cleanlab=len(finding) == len(FINDING))
        + (" Rows marked re-validation were run after the estimator and the search were frozen: settings that "
           "played no part in their design." if any(label.endswith(REVALIDATED) for label in groups) else ""),
        "",
        *head(["p", "seeds", *(c for c, _ in finding)], "lr" + "r" * len(finding)),
    ]
    for label, g in groups.items():
        lines.append(row([label, str(g["seeds"][2]), *(_cell(g.get(c), c) for c, _ in finding)]))
    lines += [
        "",
        "The estimated miss rate against the realised one (removed / (removed + kept))"
        + (", and restoring: test macro-F1 of "
           f"{restored_config(settings)} trained on the complete (p = 0), the masked and the restored "
           "corpus; recovered share = (restored - masked) / (full - masked)." if restoring else "."),
        "",
        *_table(groups, ESTIMATE if restoring else ESTIMATE[:5]),
    ]
    if _has(groups, RECALL):
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


def _table(groups: Groups, columns: Sequence[Column]) -> List[str]:
    """A Markdown table of ``columns``, a row per group."""
    lines = head(["p", *(c for c, _ in columns)], "l" + "r" * len(columns))
    lines += [row([label, *(_cell(g.get(c), c) for c, _ in columns)]) for label, g in groups.items()]
    return lines


def encoder_of(reports: Sequence[Dict[str, Any]], folder: Path) -> str:
    """The one encoder of a folder's records (the first records, from before
    it was recorded, were all of static vectors)."""
    encoders = sorted({r.get("settings", {}).get("encoder", "vectors") for r in reports})
    if len(encoders) > 1:
        raise ValueError(f"{folder}: records of several encoders ({', '.join(encoders)}); summarise each in a folder of its own")
    return encoders[0] if encoders else "vectors"


def _corpus(reports: Sequence[Dict[str, Any]], folder: Path, name: Optional[str]) -> str:
    return name or (str(reports[-1].get("corpus")) if reports else folder.as_posix())


def write_summary(records: Path, out: Path, revalidation: AbstractSet[str] = frozenset(), name: Optional[str] = None) -> str:
    """``records``' p*-s*.json over seeds into ``out`` (Markdown) and the
    plot beside it (.png); the text written."""
    reports = [read_json(path) for path in sorted(records.glob("p*-s*.json"))]
    groups = aggregate(reports, revalidation)
    settings = reports[-1]["settings"] if reports else {}
    text = summary_markdown(_corpus(reports, records, name), groups, settings, encoder_of(reports, records), records.as_posix())
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(text, encoding="utf8")
    print(text)
    plot = out.with_suffix(".png")
    if reports and plot_summary(reports, groups, plot, _corpus(reports, records, name)):
        print(f"Wrote {out} and {plot}")
    else:
        print(f"Wrote {out} (no plot: {'no runs' if not reports else 'matplotlib is not installed'})")
    return text


# (column, path in a review report): the simulated review loop (review.py)
REVIEW: List[Column] = [
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


def review_records(records: Path) -> List[Path]:
    return sorted(records.glob("review-p*-s*.json"))


def review_markdown(corpus: str, reports: Sequence[Dict[str, Any]], encoder: str, config: str) -> str:
    """The simulated reviews over seeds, a row per p."""
    by_p: Dict[float, List[Dict[str, Any]]] = {}
    for report in reports:
        by_p.setdefault(float(report["p"]), []).append(report)
    lines = [
        f"# The review loop on {corpus}" + ("" if encoder == "vectors" else f", {encoder} encoder"),
        "",
        "A reviewer who knows the truth reads the audit's ranking from the top, k = the number of removed entities: "
        "a span that is (or overlaps) a removed entity is accepted as that entity, any other is rejected; "
        "`spacy-imbalance apply-review` applies the decisions. Test macro-F1 (%) of "
        f"{config} trained on the complete, the masked and the reviewed corpus (accepts only; accepts "
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
    return "\n".join(lines) + "\n"


def write_review_summary(records: Path, out: Path, name: Optional[str] = None) -> bool:
    """``records``' review-p*-s*.json over seeds, per p, into ``out``;
    False (nothing written) when there is no review."""
    reports = [read_json(path) for path in review_records(records)]
    if not reports:
        return False
    # a review's settings are its check's: the records beside it
    checks = [read_json(path) for path in sorted(records.glob("p*-s*.json"))]
    settings = reports[-1].get("settings") or (checks[-1]["settings"] if checks else {})
    encoder = settings.get("encoder") or encoder_of(checks, records)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(review_markdown(_corpus(reports, records, name), reports, encoder, restored_config({"encoder": encoder, **settings})),
                   encoding="utf8")
    print(f"Wrote {out}")
    return True
