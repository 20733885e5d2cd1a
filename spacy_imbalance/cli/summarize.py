from collections import defaultdict
from pathlib import Path
from typing import Any, Dict, List, Optional

import numpy
import srsly
import typer
from wasabi import msg

from ..corpus.docs_io import write_text_atomic
from ..scorers.evaluation import load_report
from ..scorers.pooling import pooling_problem
from ._app import app, check_outputs_are_not_inputs, fail, require_matplotlib
from .checks import check_output_file


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
    fig.savefig(path, dpi=120)
    plt.close(fig)


@app.command("summarize")
def summarize_cli(
    paths: List[Path] = typer.Argument(..., metavar="METRICS", help="Metrics files written by `evaluate --output`"),
    output: Optional[Path] = typer.Option(None, "--output", "-o", help="Write a Markdown table here (and .json beside it)"),
    plot: Optional[Path] = typer.Option(None, "--plot", help="Save a per-type F1 bar chart (needs matplotlib)"),
    title: str = typer.Option("Per-type F1", "--title", help="The title of the --plot chart"),
) -> None:
    """Mean ± std of macro/micro scores over runs (seeds) with the same name."""
    # the .json beside --output too: `summarize a.json -o a.md` would replace a.json
    summary_json = output.with_suffix(".json") if output else None
    check_outputs_are_not_inputs(paths, [output, summary_json, plot])
    check_output_file(output, "--output")
    check_output_file(summary_json, "the .json beside --output")
    check_output_file(plot, "--plot")
    if plot is not None:
        require_matplotlib("--plot draws the per-type F1 chart")
    try:
        runs = [(p, load_report(p)) for p in sorted(paths)]
        problem = pooling_problem(runs)
    except (OSError, ValueError) as err:
        fail(str(err))
    if problem is not None:
        fail(problem)
    summary = summarize_reports([report for _, report in runs])
    table = markdown_table(summary)
    print(table)
    if output is not None:
        try:
            write_text_atomic(output, table)
            write_text_atomic(summary_json, srsly.json_dumps(summary, indent=2))
        except (OSError, ValueError) as err:
            fail(f"Could not write the summary {output}: {getattr(err, 'strerror', None) or err}")
        msg.good(f"Saved summary to {output}")
    if plot is not None:
        plot_per_type(summary, plot, title)
        msg.good(f"Saved plot to {plot}")
