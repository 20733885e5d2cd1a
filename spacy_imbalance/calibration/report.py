"""The calibration report of ``spacy-imbalance calibrate --report DIR``:
calibration.json (for scripts), calibration.md (for people) and
reliability.png."""
from dataclasses import asdict
from pathlib import Path
from typing import Any, Dict, List, Optional

import srsly

from ..decisions.thresholds import Thresholds
from ..evaluation.thresholds.spans import SpanThresholdSearch
from .reliability import Population, expected_calibration_error, plot_reliability, reliability_table

JSON_NAME, MARKDOWN_NAME, PLOT_NAME = "calibration.json", "calibration.md", "reliability.png"


def threshold_text(thresholds: Thresholds, label: str) -> str:
    return f"{thresholds[label]:g}" if label in thresholds else "argmax"


def f_text(value: Optional[float]) -> str:
    return f"{100 * value:.1f}" if value is not None else "–"


def report_data(search: SpanThresholdSearch, populations: Dict[str, Population], *, component: str, saved: bool, n_bins: int = 10) -> Dict[str, Any]:
    """The report as JSON-ready data: thresholds and dev F1 before and after
    the search, and per population its ECE and reliability table."""
    per_label = {
        label: {
            "support": search.support[label],
            "threshold_before": search.current.get(label),
            "threshold_after": search.best.get(label),
            "f_before": search.current_f[label],
            "f_after": search.best_f[label],
        }
        for label in search.labels
    }
    reliability = {}
    for name, (confidence, correct) in populations.items():
        table = reliability_table(confidence, correct, n_bins)
        n = sum(b.count for b in table)
        reliability[name] = {
            "n_spans": n,
            "ece": expected_calibration_error(confidence, correct, n_bins) if n else None,
            "bins": [asdict(b) for b in table],
        }
    return {
        "component": component,
        # null thresholds: the label keeps the argmax rule
        "thresholds": {"before": dict(search.current), "after": dict(search.best), "saved": saved},
        "macro_f": {"before": search.current_macro_f, "after": search.best_macro_f},
        "per_label": per_label,
        "reliability": reliability,
    }


def write_report(folder: Path, search: SpanThresholdSearch, populations: Dict[str, Population], *, component: str, saved: bool, n_bins: int = 10) -> List[Path]:
    """Write the three files into ``folder`` (created if needed); returns their paths."""
    folder.mkdir(parents=True, exist_ok=True)
    data = report_data(search, populations, component=component, saved=saved, n_bins=n_bins)
    paths = [folder / JSON_NAME, folder / MARKDOWN_NAME, folder / PLOT_NAME]
    srsly.write_json(paths[0], data)
    paths[1].write_text(_markdown(data, search), encoding="utf8")
    plot_reliability(populations, paths[2], n_bins=n_bins)
    return paths


def _markdown(data: Dict[str, Any], search: SpanThresholdSearch) -> str:
    saved = "saved" if data["thresholds"]["saved"] else "not saved: they do not beat the current ones"
    lines = [
        f"# Calibration of `{data['component']}`",
        "",
        f"Decision thresholds tuned for dev macro-F1 ({saved}). `argmax`: the label is predicted where it is the most probable class.",
        "",
        "| label | gold spans | threshold before | threshold after | dev F1 before | dev F1 after |",
        "| --- | ---: | ---: | ---: | ---: | ---: |",
    ]
    for label in search.labels:
        lines.append(
            f"| {label} | {search.support[label]} | {threshold_text(search.current, label)} | {threshold_text(search.best, label)} "
            f"| {f_text(search.current_f[label])} | {f_text(search.best_f[label])} |"
        )
    lines.append(f"| **macro** | | | | **{f_text(search.current_macro_f)}** | **{f_text(search.best_macro_f)}** |")
    lines += [
        "",
        "## Reliability",
        "",
        "Decoded dev spans (every candidate with p(label) >= 0.05, kept greedily by p(label) without overlap).",
        "`label`: confidence p(label), right when span and label match a gold entity;",
        "`entity`: confidence 1 - p(O), right when the span matches a gold entity of any label.",
        "ECE: the spans-weighted mean gap between accuracy and mean confidence over the bins (0 = calibrated).",
        "",
        f"![reliability]({PLOT_NAME})",
    ]
    for name, table in data["reliability"].items():
        ece = f"{table['ece']:.3f}" if table["ece"] is not None else "–"
        lines += ["", f"### `{name}`: {table['n_spans']} spans, ECE {ece}", "", "| confidence | spans | mean confidence | accuracy |", "| --- | ---: | ---: | ---: |"]
        for b in table["bins"]:
            mean = f"{b['confidence']:.3f}" if b["confidence"] is not None else "–"
            accuracy = f"{b['accuracy']:.3f}" if b["accuracy"] is not None else "–"
            close = "]" if b["upper"] >= 1.0 else ")"  # the last bin holds 1.0
            lines.append(f"| [{b['lower']:.2f}, {b['upper']:.2f}{close} | {b['count']} | {mean} | {accuracy} |")
    return "\n".join(lines) + "\n"
