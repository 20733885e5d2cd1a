"""A summary of runs: each system's mean ± sample std over its runs (seeds),
as a Markdown table and a per-type F1 chart.

``spacy-imbalance summarize`` prints and writes it from metrics files; the
benchmark writes one per corpus (``write_summary``). Which files may be pooled as the seeds of
one system is ``scorers.pooling``'s question, asked before.
"""
from collections import defaultdict
from pathlib import Path
from typing import Any, Dict, List, Optional, Sequence

import numpy
import srsly

from ..plots import save_figure


def summarize_reports(reports: List[Dict[str, Any]]) -> Dict[str, Dict[str, Any]]:
    """Group reports by name; mean and sample std (ddof=1) of each score, in percent."""
    groups: Dict[str, List[Dict[str, Any]]] = defaultdict(list)
    for report in reports:
        groups[report["name"]].append(report)
    summary = {}
    for name, runs in groups.items():
        entry: Dict[str, Any] = {"runs": len(runs)}
        for avg in ("macro", "micro"):
            for k in "prf":
                values = numpy.array([100 * r[avg][k] for r in runs])
                entry[f"{avg}_{k}"] = {"mean": float(values.mean()), "std": float(values.std(ddof=1)) if len(values) > 1 else 0.0}
        # runs the step cap ended while dev was still at its best (benchmark
        # records say so): a longer budget might have raised their scores
        entry["cut_by_step_cap"] = sum(1 for r in runs if r.get("cut_by_step_cap"))
        if all("size_factor" in r for r in runs):
            entry["size_factor"] = float(numpy.mean([r["size_factor"] for r in runs]))
        # the runs of a name share their gold labels (pooling_problem): a label
        # absent from a run was only predicted by others, and scored F = 0 there
        labels = sorted({label for r in runs for label in r["per_type"]})
        entry["per_type_f"] = {
            label: float(numpy.mean([100 * r["per_type"].get(label, {"f": 0.0})["f"] for r in runs])) for label in labels
        }
        summary[name] = entry
    return summary


CUT_MARK = "†"


def markdown_table(summary: Dict[str, Dict[str, Any]]) -> str:
    """The summary as Markdown: a row per system (mean ± std of its scores;
    the size factor when training sets differ in size; CUT_MARK on a system
    with runs the step cap ended), then each type's mean F1."""

    def cell(entry: Dict[str, Any], key: str) -> str:
        return f"{entry[key]['mean']:.1f} ± {entry[key]['std']:.1f}"

    # the training-set size factor (paper Table 6) when the runs recorded it
    # and some training set differs in size from the corpus
    sized = all("size_factor" in e for e in summary.values()) and any(
        abs(e["size_factor"] - 1.0) > 1e-9 for e in summary.values()
    )
    size_head, size_rule = (" size factor |", " --: |") if sized else ("", "")
    lines = [
        f"| system | runs | macro-F1 | micro-F1 | macro-P | macro-R |{size_head}",
        f"| --- | --: | --: | --: | --: | --: |{size_rule}",
    ]
    for name, e in summary.items():
        size = f" {e['size_factor']:.2f} |" if sized else ""
        mark = CUT_MARK if e.get("cut_by_step_cap") else ""
        lines.append(
            f"| {name}{mark} | {e['runs']} | {cell(e, 'macro_f')} | {cell(e, 'micro_f')} | {cell(e, 'macro_p')} | {cell(e, 'macro_r')} |{size}"
        )
    cut = [f"{name} ({e['cut_by_step_cap']} of {e['runs']})" for name, e in summary.items() if e.get("cut_by_step_cap")]
    if cut:
        lines += ["", f"{CUT_MARK} ended at the step cap with dev still at its best, so a longer budget might score higher: " + ", ".join(cut) + "."]
    labels = sorted({label for e in summary.values() for label in e["per_type_f"]})
    lines += ["", "Per-type F1 (mean over runs):", "", "| system | " + " | ".join(labels) + " |", "| --- |" + " --: |" * len(labels)]
    for name, e in summary.items():
        lines.append(f"| {name} | " + " | ".join(f"{e['per_type_f'].get(label, 0.0):.1f}" for label in labels) + " |")
    return "\n".join(lines) + "\n"


def plot_per_type(summary: Dict[str, Dict[str, Any]], path: Path, title: str) -> None:
    """Each system's per-type F1 as bars, saved at ``path`` (matplotlib's
    Agg backend: no display needed)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    labels = sorted({label for e in summary.values() for label in e["per_type_f"]})
    names = list(summary)
    width = 0.8 / max(len(names), 1)
    fig, ax = plt.subplots(figsize=(max(6, 0.9 * len(labels) + 2), 4))
    x = numpy.arange(len(labels))
    for i, name in enumerate(names):
        values = [summary[name]["per_type_f"].get(label, 0.0) for label in labels]
        macro = summary[name]["macro_f"]["mean"]
        ax.bar(x + i * width, values, width, label=f"{name} (macro {macro:.1f})")
    ax.set_xticks(x + width * (len(names) - 1) / 2, labels, rotation=30, ha="right")
    ax.set_ylabel("F1 (%)")
    ax.set_title(title)
    ax.legend(fontsize="small")
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    save_figure(fig, path, dpi=120)
    plt.close(fig)


def write_summary(paths: Sequence[Path], output: Path, plot: Optional[Path], title: str) -> str:
    """The summary of the records at ``paths`` (in path order) as Markdown
    at ``output``, as JSON beside it and, given ``plot``, as a per-type F1
    chart there; its Markdown. A ValueError names a record that is missing or
    not a report, or says why the records may not be pooled (``scorers.pooling``)."""
    from ..corpus.docs_io import write_text_atomic
    from ..scorers.evaluation import load_report
    from ..scorers.pooling import pooling_problem

    runs = [(path, load_report(path)) for path in sorted(paths)]
    problem = pooling_problem(runs)
    if problem is not None:
        raise ValueError(problem)
    summary = summarize_reports([report for _, report in runs])
    table = markdown_table(summary)
    write_text_atomic(output, table)
    write_text_atomic(output.with_suffix(".json"), srsly.json_dumps(summary, indent=2))
    if plot is not None:
        plot_per_type(summary, plot, title)
    return table
