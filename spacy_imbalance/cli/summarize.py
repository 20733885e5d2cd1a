from pathlib import Path
from typing import List, Optional

import srsly
import typer
from wasabi import msg

# summarize_reports, markdown_table, plot_per_type: their home is benchmark.summary; imported from here before they moved
from ..benchmark.summary import markdown_table, plot_per_type, summarize_reports
from ..corpus.docs_io import write_text_atomic
from ..scorers.evaluation import load_report
from ..scorers.pooling import pooling_problem
from ._app import app, check_outputs_are_not_inputs, fail, require_matplotlib
from .checks import check_output_file


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
            write_text_atomic(output.with_suffix(".json"), srsly.json_dumps(summary, indent=2))
        except (OSError, ValueError) as err:
            fail(f"Could not write the summary {output}: {getattr(err, 'strerror', None) or err}")
        msg.good(f"Saved summary to {output}")
    if plot is not None:
        plot_per_type(summary, plot, title)
        msg.good(f"Saved plot to {plot}")
