"""The audit validated where the truth is known (issue 15, item 4): entities
removed from a complete corpus at random, then found again.

For each corpus, masking probability p and seed:

1. `spacy-imbalance mask` drops each training entity with probability p
   (seed s) and keeps it in doc.spans["masked"], the truth;
2. `spacy-imbalance audit` runs on the masked corpus (k folds, dev set for the
   calibration; --encoder vectors: static vectors, features: frozen
   all-MiniLM-L6-v2 features, `audit --features`);
3. its suspects (calibrated probability >= --threshold) are scored against
   the removed entities: precision and recall with exact boundaries, exact
   boundaries and label, and token overlap; precision@k (= recall@k with exact
   boundaries) at k = the number removed, over the ranking of
   scored_spans.tsv; the miss-rate estimate against the realised rate
   removed / (removed + kept), and whether its interval holds it, in total and
   per label;
4. the peer baseline, cleanlab: out-of-fold token probabilities of a token_ner
   trained on the audit's own folds (OUT/folds/plan.json), cleanlab's
   find_label_issues on the masked BIO tags; flagged tokens tagged O, grouped
   into contiguous runs and ranked by their lowest label-quality score, scored
   the same way;
5. restoring: the suspects written into the masked corpus as entities;
   <encoder>/sampled_spancat_uniform trained on the masked and on the restored
   corpus (same seed and budget as the p = 0 run,
   metrics/<corpus>/<encoder>/sampled_spancat_uniform-s<seed>.json, which is
   trained in the work folder when it is missing) and the share of the lost
   test macro-F1 that restoring recovers, with a paired bootstrap restored
   against masked;
6. one small JSON per setting, metrics/<corpus>/audit/p30-s0.json (features:
   metrics/<corpus>/audit-features/, summarised in audit_validation_features.md).

Every model of a setting uses the same encoder: the audit's folds, the
token_ner of the cleanlab baseline and the restore runs.

Every expensive step is skipped when its output exists, so an interrupted
validation resumes. Each model carries the static vectors (about 50 MB): a
finished setting's model-last folders are deleted, its model-best kept
(about 0.6 GB per setting with 5 folds). `--summary` aggregates metrics/<corpus>/audit/*.json into
metrics/<corpus>/audit_validation.md (mean ± std over seeds per p) and
audit_validation.png.

    python scripts/audit_validation.py --corpus wnut16 --p 0.1,0.3,0.5 --seed 0,1,2 \\
        --vectors assets/en_core_web_md
    python scripts/audit_validation.py --corpus wnut16 --summary

--limit N trains on a seeded N-sentence sample of the training corpus (smoke
runs; the p = 0 run is then trained on the same sample). Run it from the
project root: the corpora, configs and vectors are found from there.
"""
import dataclasses
import hashlib
import importlib.util
import json
import shutil
import subprocess
import sys
import time
import warnings
from collections import Counter
from pathlib import Path
from statistics import mean, stdev
from typing import Any, Dict, Iterable, List, Optional, Sequence, Tuple

import numpy
import typer

# spaCy and the package are imported where they are used: --summary needs neither

# (doc, start, exclusive end, label)
SpanKey = Tuple[int, int, int, str]
MODES = ("exact", "exact_label", "overlap")
ENCODERS = ("vectors", "features")
MASKED_KEY = "masked"


def load_benchmark() -> Any:
    """scripts/benchmark.py (scripts/ is not a package): its training runs,
    resume checks and metrics files are the benchmark's own."""
    spec = importlib.util.spec_from_file_location("benchmark", Path(__file__).parent / "benchmark.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def read_json(path: Path) -> Any:
    # the standard library's json: srsly reads 0.3 back as 0.30000000000000004
    return json.loads(path.read_text(encoding="utf8"))


def parse_list(value: str, kind: type, option: str) -> List[Any]:
    try:
        return [kind(part) for part in value.split(",") if part.strip()]
    except ValueError:
        raise typer.BadParameter(f"expected a comma-separated list, got {value!r}", param_hint=option)


def setting_name(p: float, seed: int) -> str:
    """``p30-s0`` for p = 0.3, seed 0 (the metrics file's name)."""
    return f"p{round(100 * p):02d}-s{seed}"


def config_name(encoder: str) -> str:
    """The restore runs' config, in configs/."""
    return f"{encoder}/sampled_spancat_uniform"


def token_config(encoder: str) -> Path:
    """The cleanlab baseline's token model."""
    return Path("configs") / encoder / "token_ner.cfg"


def audit_folder(encoder: str) -> str:
    """The metrics folder's name (and --only's prefix): the vectors runs came first."""
    return "audit" if encoder == "vectors" else f"audit-{encoder}"


def metrics_folder(metrics_dir: Path, corpus: str, encoder: str) -> Path:
    return metrics_dir / corpus / audit_folder(encoder)


def summary_path(metrics_dir: Path, corpus: str, encoder: str) -> Path:
    return metrics_dir / corpus / ("audit_validation.md" if encoder == "vectors" else f"audit_validation_{encoder}.md")


def run_name(p: float, encoder: str = "vectors") -> str:
    """The name --only selects, as in metrics/<corpus>/: ``audit/p30``
    (``audit-features/p30`` for the features encoder)."""
    return f"{audit_folder(encoder)}/p{round(100 * p):02d}"


# --- scoring spans against the removed entities -------------------------------------------------


def _overlaps(a: SpanKey, b: SpanKey) -> bool:
    return a[0] == b[0] and a[1] < b[2] and b[1] < a[2]


def _by_doc(spans: Sequence[SpanKey]) -> Dict[int, List[SpanKey]]:
    grouped: Dict[int, List[SpanKey]] = {}
    for span in spans:
        grouped.setdefault(span[0], []).append(span)
    return grouped


def _key(span: SpanKey, mode: str) -> tuple:
    return span if mode == "exact_label" else span[:3]


def match_counts(predicted: Sequence[SpanKey], truth: Sequence[SpanKey], mode: str) -> Tuple[int, int]:
    """(predicted spans that match a true one, true spans matched by one).
    ``exact``: same document and boundaries; ``exact_label``: and label;
    ``overlap``: at least one token in common (any label)."""
    if mode == "overlap":
        truth_in, predicted_in = _by_doc(truth), _by_doc(predicted)
        hit_pred = sum(any(_overlaps(s, t) for t in truth_in.get(s[0], ())) for s in predicted)
        hit_true = sum(any(_overlaps(t, s) for s in predicted_in.get(t[0], ())) for t in truth)
        return hit_pred, hit_true
    true_keys = {_key(t, mode) for t in truth}
    pred_keys = {_key(s, mode) for s in predicted}
    return sum(_key(s, mode) in true_keys for s in predicted), sum(_key(t, mode) in pred_keys for t in truth)


def _ratio(a: int, b: int) -> Optional[float]:
    return a / b if b else None


def selection_scores(predicted: Sequence[SpanKey], truth: Sequence[SpanKey]) -> Dict[str, Any]:
    """Precision and recall of a selection of spans, per matching mode."""
    scores: Dict[str, Any] = {"n": len(predicted)}
    for mode in MODES:
        hit_pred, hit_true = match_counts(predicted, truth, mode)
        scores[mode] = {"p": _ratio(hit_pred, len(predicted)), "r": _ratio(hit_true, len(truth))}
    return scores


def ranking_scores(ranked: Sequence[SpanKey], truth: Sequence[SpanKey], k: int) -> Dict[str, Any]:
    """Precision@k and recall@k of the top k of a ranking; a ranking shorter
    than k counts its missing places as misses. With exact matching both are
    hits / k when k is the number of true spans."""
    scores: Dict[str, Any] = {"k": k}
    for mode in MODES:
        hit_pred, hit_true = match_counts(list(ranked[:k]), truth, mode)
        scores[mode] = {"p": _ratio(hit_pred, k), "r": _ratio(hit_true, len(truth))}
    return scores


def recall_by_label(predicted: Sequence[SpanKey], truth: Sequence[SpanKey]) -> Dict[str, Optional[float]]:
    """Share of each label's true spans found with exact boundaries."""
    found = {s[:3] for s in predicted}
    totals, hits = Counter(t[3] for t in truth), Counter(t[3] for t in truth if t[:3] in found)
    return {label: hits[label] / n for label, n in sorted(totals.items())}


# --- the miss-rate estimate ---------------------------------------------------------------------


def realised_rates(removed: Dict[str, int], kept: Dict[str, int]) -> Dict[str, Optional[float]]:
    """removed / (removed + kept) per label and in total (``total``)."""
    labels = sorted(set(removed) | set(kept))
    rates = {label: _ratio(removed.get(label, 0), removed.get(label, 0) + kept.get(label, 0)) for label in labels}
    rates["total"] = _ratio(sum(removed.values()), sum(removed.values()) + sum(kept.values()))
    return rates


def estimate_errors(rows: Sequence[Dict[str, Any]], truth: Dict[str, Optional[float]]) -> Dict[str, Dict[str, Any]]:
    """The audit's summary.json rows against the realised rates: estimate,
    interval, error (estimate - true) and whether the interval holds it."""
    out = {}
    for row in rows:
        true = truth.get(row["label"])
        if true is None:
            continue
        out[row["label"]] = {
            "true": true,
            "estimate": row["rate"],
            "low": row["rate_low"],
            "high": row["rate_high"],
            "error": row["rate"] - true,
            "covered": bool(row["rate_low"] <= true <= row["rate_high"]),
        }
    return out


# --- cleanlab: flagged tokens into spans --------------------------------------------------------


def group_flagged(
    issues: Iterable[Tuple[int, int]], given: Sequence[Sequence[int]], token_scores: Sequence[Sequence[float]], outside: int = 0
) -> List[Tuple[int, int, int, float]]:
    """Contiguous runs of flagged tokens whose given tag is O, as (doc, start,
    exclusive end, score): the run's lowest label-quality score. Most likely
    missing first (lowest score), then by position."""
    flagged: Dict[int, set] = {}
    for i, j in issues:
        if given[i][j] == outside:
            flagged.setdefault(int(i), set()).add(int(j))
    spans = []
    for i, tokens in flagged.items():
        ordered = sorted(tokens)
        start = prev = ordered[0]
        for j in ordered[1:] + [None]:
            if j is not None and j == prev + 1:
                prev = j
                continue
            spans.append((i, start, prev + 1, float(min(token_scores[i][start : prev + 1]))))
            if j is not None:
                start = prev = j
    return sorted(spans, key=lambda s: (s[3], s[0], s[1]))


def span_label(probs: numpy.ndarray, start: int, end: int, tags: Sequence[str]) -> str:
    """The label whose B- and I- probabilities sum highest over the span."""
    mass = probs[start:end].sum(axis=0)
    totals: Dict[str, float] = {}
    for tag, value in zip(tags, mass):
        if tag != "O":
            totals[tag[2:]] = totals.get(tag[2:], 0.0) + float(value)
    return max(sorted(totals), key=lambda label: totals[label])


def tag_columns(model_tags: Sequence[str], tags: Sequence[str]) -> List[int]:
    """For each tag of a fold model (BIO or BILUO, its own labels), its
    column among the corpus's BIO ``tags`` (L- adds to I-, U- to B-)."""
    index = {tag: i for i, tag in enumerate(tags)}
    bio = {"O": "O", "B": "B", "U": "B", "I": "I", "L": "I"}
    return [index["O"] if tag == "O" else index[f"{bio[tag[0]]}-{tag[2:]}"] for tag in model_tags]


def import_cleanlab() -> Any:
    try:
        from cleanlab.token_classification import filter as cl_filter, rank as cl_rank
    except ImportError:
        raise SystemExit(
            "The cleanlab baseline needs cleanlab: pip install 'spacy-imbalance[cleanlab]' (the `cleanlab` extra), "
            "or pip install 'cleanlab>=2.6'"
        )
    return cl_filter, cl_rank


def cleanlab_spans(given: List[List[int]], probs: List[numpy.ndarray], tags: Sequence[str]) -> Tuple[List[Tuple[SpanKey, float]], int]:
    """cleanlab's label issues among the tokens tagged O, as labelled spans
    ranked most likely missing first; and the number of flagged tokens."""
    cl_filter, cl_rank = import_cleanlab()
    docs = [i for i, g in enumerate(given) if len(g)]  # cleanlab takes no empty sentence
    labels, pred_probs = [given[i] for i in docs], [probs[i] for i in docs]
    with warnings.catch_warnings():
        # a class with few given tokens (a rare label's I- tag) is warned about once per class
        warnings.filterwarnings("ignore", message="May not flag all label issues", category=UserWarning)
        issues = cl_filter.find_label_issues(labels, pred_probs)
    _, token_scores = cl_rank.get_label_quality_scores(labels, pred_probs)
    scores = [numpy.asarray(s, dtype="float64") for s in token_scores]
    spans = [
        ((docs[i], s, e, span_label(pred_probs[i], s, e, tags)), q) for i, s, e, q in group_flagged(issues, labels, scores)
    ]
    return spans, len(issues)


# --- restoring and its share of the lost F1 -----------------------------------------------------


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


# --- the summary over seeds ---------------------------------------------------------------------

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


def aggregate(reports: Sequence[Dict[str, Any]]) -> Dict[float, Dict[str, Tuple[float, float, int]]]:
    """Per p: (mean, std, n) of every summary column over the seeds that
    have it (std 0 for a single seed)."""
    by_p: Dict[float, List[Dict[str, Any]]] = {}
    for report in reports:
        by_p.setdefault(float(report["p"]), []).append(report)
    out: Dict[float, Dict[str, Tuple[float, float, int]]] = {}
    for p, group in sorted(by_p.items()):
        out[p] = {"seeds": (float(len(group)), 0.0, len(group))}
        for column, path in FINDING + ESTIMATE + RECALL:
            values = [v for v in (lookup(r, path) for r in group) if v is not None]
            if values:
                out[p][column] = (mean(values), stdev(values) if len(values) > 1 else 0.0, len(values))
    return out


def _cell(stats: Optional[Tuple[float, float, int]], column: str) -> str:
    if stats is None:
        return "–"
    m, sd, n = stats
    if column in COUNTS:
        return f"{m:.0f}" if m == round(m) else f"{m:.1f}"
    if column == "interval holds it":
        return f"{round(m * n)}/{n}"
    # one seed has no spread to show
    return f"{100 * m:.1f}" if n == 1 else f"{100 * m:.1f} ± {100 * sd:.1f}"


def summary_markdown(
    corpus: str, groups: Dict[float, Dict[str, Tuple[float, float, int]]], settings: Dict[str, Any], encoder: str = "vectors"
) -> str:
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
        "overlap: one shared token is enough. Removed, suspects, cleanlab spans: mean counts.",
        "",
        "| p | seeds | " + " | ".join(c for c, _ in FINDING) + " |",
        "| --- | --: | " + " | ".join("--:" for _ in FINDING) + " |",
    ]
    for p, g in groups.items():
        lines.append(f"| {p:g} | {g['seeds'][2]} | " + " | ".join(_cell(g.get(c), c) for c, _ in FINDING) + " |")
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


def _table(groups: Dict[float, Dict[str, Tuple[float, float, int]]], columns: Sequence[Tuple[str, Tuple[str, ...]]]) -> List[str]:
    """A Markdown table of ``columns``, a row per p."""
    lines = ["| p | " + " | ".join(c for c, _ in columns) + " |", "| --- | " + " | ".join("--:" for _ in columns) + " |"]
    lines += [f"| {p:g} | " + " | ".join(_cell(g.get(c), c) for c, _ in columns) + " |" for p, g in groups.items()]
    return lines


def plot_summary(reports: Sequence[Dict[str, Any]], groups: Dict[float, Dict[str, Tuple[float, float, int]]], path: Path, corpus: str) -> bool:
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return False
    fig, (left, right) = plt.subplots(1, 2, figsize=(10, 4))
    for report in reports:
        row = report["estimate"]["total"]
        # the interval as it is (a percentile bootstrap interval need not hold its point)
        left.vlines(100 * row["true"], 100 * row["low"], 100 * row["high"], color="#4c72b0")
        left.plot(100 * row["true"], 100 * row["estimate"], "o", color="#4c72b0")
    top = max([100 * r["estimate"]["total"]["high"] for r in reports] + [100 * r["estimate"]["total"]["true"] for r in reports] + [1.0])
    left.plot([0, top], [0, top], ls=":", color="black")
    left.set_xlabel("true miss rate (%)")
    left.set_ylabel("estimated miss rate (%)")
    left.set_title("Miss-rate estimate (one point per seed)")
    bars = [("audit P@k", "#4c72b0", ""), ("audit P@k overlap", "#4c72b0", "//"), ("cleanlab P@k", "#dd8452", ""), ("cleanlab P@k overlap", "#dd8452", "//")]
    x = numpy.arange(len(groups))
    width = 0.8 / len(bars)
    for b, (column, color, hatch) in enumerate(bars):
        stats = [g.get(column, (0.0, 0.0, 0)) for g in groups.values()]
        right.bar(x + b * width, [100 * s[0] for s in stats], width, yerr=[100 * s[1] for s in stats],
                  color=color, hatch=hatch, edgecolor="white", label=column, capsize=2)
    right.set_xticks(x + 0.4 - width / 2, [f"p = {p:g}" for p in groups])
    right.set_ylabel("precision@k (%)")
    right.set_title("Removed entities in the top k (k = number removed)")
    right.legend(fontsize=7)
    fig.suptitle(f"Audit validation on {corpus}")
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return True


def write_summary(corpus: str, metrics_dir: Path, encoder: str = "vectors") -> None:
    folder = metrics_folder(metrics_dir, corpus, encoder)
    reports = [read_json(path) for path in sorted(folder.glob("p*-s*.json"))]
    groups = aggregate(reports)
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


# --- the expensive steps ------------------------------------------------------------------------


def run_logged(cmd: List[str], log: Path, what: str) -> None:
    with log.open("w", encoding="utf8") as out:
        code = subprocess.call(cmd, stdout=out, stderr=subprocess.STDOUT)
    if code != 0:
        raise SystemExit(f"{what} failed ({code}); see {log}")


def cli_args(overrides: Dict[str, Any]) -> List[str]:
    return [arg for key, value in overrides.items() for arg in (f"--{key}", str(value))]


def subprocess_trainer(config: Path, output: Path, overrides: Dict[str, Any], gpu_id: int) -> None:
    """A fold's `spacy train`, its console log in OUTPUT.log."""
    cmd = [sys.executable, "-m", "spacy", "train", str(config), "--output", str(output), "--gpu-id", str(gpu_id), *cli_args(overrides)]
    run_logged(cmd, output.with_suffix(".log"), f"Training {output}")


@dataclasses.dataclass
class Setting:
    corpus: str
    p: float
    seed: int
    folds: int
    steps: int
    threshold: float
    vectors: str
    restore_steps: int
    restore_patience: int
    eval_frequency: Optional[int]
    limit: Optional[int]
    resamples: int
    gpu_id: int
    work: Path
    encoder: str = "vectors"

    @property
    def name(self) -> str:
        return setting_name(self.p, self.seed)

    @property
    def encoder_tag(self) -> str:
        return "" if self.encoder == "vectors" else f"-{self.encoder}"

    @property
    def folder(self) -> Path:
        return self.work / f"{self.corpus}{self.limit_tag}{self.encoder_tag}-{self.name}"

    @property
    def config(self) -> str:
        return config_name(self.encoder)

    def vector_overrides(self) -> Dict[str, Any]:
        """paths.vectors for the vectors encoder; the features need none."""
        return {"paths.vectors": self.vectors} if self.encoder == "vectors" else {}

    @property
    def limit_tag(self) -> str:
        return f"-n{self.limit}" if self.limit else ""

    def shaping(self) -> Dict[str, Any]:
        """What the work folder's contents depend on (the restore runs are
        checked by the benchmark's own resume test)."""
        keys = ("corpus", "p", "seed", "folds", "steps", "vectors", "eval_frequency", "limit", "resamples")
        # the encoder is named only where it is not the first one, so that vectors work folders resume
        return {**{k: getattr(self, k) for k in keys}, **({"encoder": self.encoder} if self.encoder != "vectors" else {})}

    def training_overrides(self) -> Dict[str, Any]:
        extra = {"training.eval_frequency": self.eval_frequency} if self.eval_frequency else {}
        return {"training.max_steps": self.steps, "system.seed": self.seed, **extra}


class Timer:
    """Seconds per step, kept in the work folder across resumed runs."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.seconds: Dict[str, float] = read_json(path) if path.exists() else {}

    def record(self, step: str, start: float) -> None:
        self.seconds[step] = round(time.perf_counter() - start, 1)
        self.path.write_text(json.dumps(self.seconds) + "\n", encoding="utf8")


def check_work_folder(setting: Setting) -> None:
    folder = setting.folder
    record = folder / "setting.json"
    shaping = json.loads(json.dumps(setting.shaping()))
    if record.exists() and read_json(record) != shaping:
        raise SystemExit(f"{folder} was made with other settings ({read_json(record)}); delete it to start over")
    folder.mkdir(parents=True, exist_ok=True)
    record.write_text(json.dumps(shaping) + "\n", encoding="utf8")


def train_corpus(setting: Setting) -> Path:
    """corpus/<corpus>/train.spacy, or its seeded --limit sample."""
    source = Path("corpus") / setting.corpus / "train.spacy"
    if not setting.limit:
        return source
    sample = setting.work / f"{setting.corpus}{setting.limit_tag}" / "train.spacy"
    if not sample.exists():
        sample.parent.mkdir(parents=True, exist_ok=True)
        cmd = [sys.executable, "-m", "spacy_imbalance", "subsample", str(source), str(sample), "--n", str(setting.limit), "--seed", "0"]
        run_logged(cmd, sample.with_suffix(".log"), "Subsampling")
    return sample


def mask_step(setting: Setting, timer: Timer) -> Path:
    masked = setting.folder / "masked.spacy"
    if masked.exists():
        return masked
    start = time.perf_counter()
    cmd = [sys.executable, "-m", "spacy_imbalance", "mask", str(train_corpus(setting)), str(masked), "--p", str(setting.p), "--seed", str(setting.seed)]
    run_logged(cmd, setting.folder / "mask.log", "Masking")
    timer.record("mask", start)
    return masked


def audit_step(setting: Setting, masked: Path, timer: Timer) -> Path:
    out = setting.folder / "audit"
    if (out / "scored_spans.tsv").exists() and (out / "summary.json").exists():
        return out
    print(f"  audit: {setting.folds} folds x {setting.steps} steps (log: {setting.folder / 'audit.log'})", flush=True)
    start = time.perf_counter()
    cmd = [
        sys.executable, "-m", "spacy_imbalance", "audit", str(masked), "--dev", str(Path("corpus") / setting.corpus / "dev.spacy"),
        "-o", str(out), "--folds", str(setting.folds), "--seed", str(setting.seed), "--threshold", str(setting.threshold),
        *(["--vectors", setting.vectors] if setting.encoder == "vectors" else ["--features"]),
        "--resamples", str(setting.resamples), "--gpu-id", str(setting.gpu_id),
        *cli_args(setting.training_overrides()),
    ]
    run_logged(cmd, setting.folder / "audit.log", "The audit")
    timer.record("audit", start)
    return out


def token_fold_models(setting: Setting, docs: List[Any], dev_docs: List[Any], audit: Path, timer: Timer) -> Tuple[Any, Path]:
    """token_ner trained on the audit's folds (resumable: train_fold skips a
    fold trained before under the same plan and settings)."""
    from spacy.util import load_config

    from spacy_imbalance.audit.folds import PLAN_FILE, FoldPlan, fold_done, train_fold
    from spacy_imbalance.init_config import config_fingerprint
    from spacy_imbalance.cli.audit import DEFAULT_CONFIG

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


def bio_tags(doc: Any, tags: List[str]) -> List[int]:
    index = {tag: i for i, tag in enumerate(tags)}
    ids = [0] * len(doc)
    for ent in doc.ents:
        ids[ent.start] = index[f"B-{ent.label_}"]
        for j in range(ent.start + 1, ent.end):
            ids[j] = index[f"I-{ent.label_}"]
    return ids


def read_scored_spans(path: Path) -> List[Tuple[SpanKey, float]]:
    """The audit's ranking (best first) with calibrated probabilities."""
    rows = []
    for line in path.read_text(encoding="utf8").splitlines()[1:]:
        doc, start, end, label, prob = line.split("\t", 7)[:5]
        rows.append(((int(doc), int(start), int(end), label), float(prob)))
    return rows


def restore_runs(setting: Setting, masked: Path, restored: Path, bench: Any, timer: Timer) -> Dict[str, Dict[str, Any]]:
    """Metrics of the masked, restored and p = 0 runs (trained when missing)."""
    base = {"training.patience": str(setting.restore_patience), **setting.vector_overrides()}
    if setting.eval_frequency:
        base["training.eval_frequency"] = str(setting.eval_frequency)
    config = setting.config
    sha = bench.config_sha(Path("."), config)
    reports = {}
    full_train = train_corpus(setting)
    runs = {
        "masked": (setting.folder, {**base, "paths.train": str(masked)}),
        "restored": (setting.folder, {**base, "paths.train": str(restored)}),
        "full": (setting.work / f"{setting.corpus}{setting.limit_tag}-reference-s{setting.seed}",
                 {**base, "paths.train": str(full_train)} if setting.limit else dict(base)),
    }
    committed = Path("metrics") / setting.corpus / f"{config}-s{setting.seed}.json"
    for key, (folder, overrides) in runs.items():
        metrics = folder / "metrics" / setting.corpus / f"{bench.run_name(config, key)}-s{setting.seed}.json"
        if key == "full" and not setting.limit and bench.is_done(committed, sha, setting.restore_steps, True, overrides):
            metrics = committed  # the headline run of this encoder
        elif not bench.is_done(metrics, sha, setting.restore_steps, True, overrides):
            print(f"  training {config} on the {key} corpus ({setting.restore_steps} steps)", flush=True)
            start = time.perf_counter()
            bench.run_one(setting.corpus, config, setting.seed, setting.restore_steps, setting.gpu_id, Path("."), overrides,
                          bench.run_name(config, key), folder / "metrics", folder / "training")
            timer.record(f"train_{key}", start)
        reports[key] = read_json(metrics)
    return reports


def restoring_scores(reports: Dict[str, Dict[str, Any]], n_restored: int) -> Dict[str, Any]:
    from spacy_imbalance.scorers.bootstrap import paired_bootstrap_runs
    from spacy_imbalance.scorers.counts import MatchCounts

    f1 = {avg: {key: reports[key][avg]["f"] for key in ("full", "masked", "restored")} for avg in ("macro", "micro")}
    counts = {key: MatchCounts.from_sparse(reports[key]["counts"]) for key in ("masked", "restored")}
    paired = paired_bootstrap_runs([counts["masked"]], [counts["restored"]], n_resamples=1000, seed=0)
    keep = ("delta", "low", "high", "share_not_better")
    return {
        "restored_entities": n_restored,
        "macro_f": f1["macro"],
        "micro_f": f1["micro"],
        "recovered_share": recovered_share(**f1["macro"]),
        "recovered_share_micro": recovered_share(**f1["micro"]),
        "paired": {avg: {k: paired[avg][k] for k in keep} for avg in ("macro_f", "micro_f")},
    }


def prune(folder: Path) -> None:
    """Delete the model-last folders of the fold models and runs (every model
    carries the static vectors, about 50 MB each); model-best stays."""
    for path in sorted(folder.rglob("model-last")) if folder.exists() else []:
        shutil.rmtree(path)


def rounded(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: rounded(v) for k, v in value.items()}
    if isinstance(value, float):
        return round(value, 4)
    return value


def method_scores(selected: Sequence[SpanKey], ranked: Sequence[SpanKey], truth: Sequence[SpanKey]) -> Dict[str, Any]:
    """A method's selection (P/R) and ranking (P@k, k = the number removed)."""
    return {"selected": selection_scores(selected, truth), "at_k": ranking_scores(ranked, truth, len(truth))}


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


def validate(setting: Setting, bench: Any) -> Dict[str, Any]:
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
    reports = restore_runs(setting, masked_path, restored_path, bench, timer)
    prune(setting.work / f"{setting.corpus}{setting.limit_tag}-reference-s{setting.seed}")
    return rounded({
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
    return "–" if x is None else f"{100 * x:.1f}"


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
        f"restored - masked {100 * paired['delta']:+.1f} [{100 * paired['low']:+.1f}, {100 * paired['high']:+.1f}]",
        flush=True,
    )


def main(
    corpus: str = typer.Option("wnut16", "--corpus", help="A corpus folder of corpus/ (train, dev and test .spacy)"),
    p_values: str = typer.Option("0.3", "--p", help="Masking probabilities, comma-separated (0.1,0.3,0.5)"),
    seed_values: str = typer.Option("0", "--seed", help="Seeds, comma-separated (0,1,2): of the masking, the folds and the training"),
    folds: int = typer.Option(5, "--folds", help="Cross-fitting folds of the audit (and of the cleanlab token model)"),
    steps: int = typer.Option(2000, "--steps", help="Training steps of each fold model"),
    threshold: float = typer.Option(0.5, "--threshold", help="Calibrated probability from which a span is a suspect (and restored)"),
    vectors: str = typer.Option("assets/en_core_web_md", "--vectors", help="Static vectors of every model (--encoder vectors)"),
    encoder: str = typer.Option("vectors", "--encoder", help="The encoder of every model: vectors (static vectors) or features (frozen all-MiniLM-L6-v2)"),
    restore_steps: int = typer.Option(4000, "--restore-steps", help="Most steps of the masked, restored and p = 0 runs (the headline budget)"),
    restore_patience: int = typer.Option(1000, "--restore-patience", help="Their early-stopping patience (the headline's)"),
    eval_frequency: Optional[int] = typer.Option(None, "--eval-frequency", help="Steps between evaluations of every training (default: the configs')"),
    limit: Optional[int] = typer.Option(None, "--limit", help="Train on a seeded sample of this many sentences (smoke runs)"),
    resamples: int = typer.Option(500, "--resamples", help="Bootstrap resamples of the audit's miss-rate interval"),
    only: str = typer.Option("", "--only", help="Comma-separated run names to do (audit/p30, as in metrics/<corpus>/); empty: all"),
    gpu_id: int = typer.Option(-1, "--gpu-id"),
    work_dir: Path = typer.Option(Path("training/audit"), "--work-dir", help="Masked corpora, audits, fold models, runs"),
    metrics_dir: Path = typer.Option(Path("metrics"), "--metrics-dir", help="Writes <corpus>/audit/<p>-<seed>.json and the summary here"),
    summary: bool = typer.Option(False, "--summary", help="Only aggregate metrics/<corpus>/audit/*.json into audit_validation.md and .png"),
) -> None:
    if encoder not in ENCODERS:
        raise typer.BadParameter(f"one of {', '.join(ENCODERS)}, got {encoder!r}", param_hint="--encoder")
    if summary:
        write_summary(corpus, metrics_dir, encoder)
        return
    names = {name.strip() for name in only.split(",") if name.strip()}
    ps = [p for p in parse_list(p_values, float, "--p") if not names or run_name(p, encoder) in names]
    if not ps:
        print(f"--only {only}: no audit validation run is selected", flush=True)
        return
    for p in ps:
        if not 0.0 < p < 1.0:
            raise typer.BadParameter(f"a masking probability in (0, 1), got {p}", param_hint="--p")
    bench = load_benchmark()
    for p in ps:
        for seed in parse_list(seed_values, int, "--seed"):
            setting = Setting(corpus, p, seed, folds, steps, threshold, vectors, restore_steps, restore_patience,
                              eval_frequency, limit, resamples, gpu_id, work_dir, encoder)
            print(f"{corpus} p = {p:g}, seed {seed} ({setting.folder})", flush=True)
            report = validate(setting, bench)
            out = metrics_folder(metrics_dir, corpus, encoder) / f"{setting.name}.json"
            out.parent.mkdir(parents=True, exist_ok=True)
            out.write_text(json.dumps(report) + "\n", encoding="utf8")
            prune(setting.folder)
            print_result(report)
            print(f"  -> {out}", flush=True)


if __name__ == "__main__":
    typer.run(main)
