from pathlib import Path
from typing import Optional

import typer
from spacy.util import load_model
from wasabi import msg

from ..calibration.matching import check_dev_gold
from ..calibration.reliability import MIN_CONFIDENCE, reliability_populations
from ..calibration.report import f_text, threshold_text, write_report
from ..calibration.thresholds import DEFAULT_MIN_GAIN, SpanThresholdSearch, dev_matcher, search_floor, search_thresholds
from ..corpus.docs_io import load_docs
from ..pipeline.sampled_spancat import set_span_thresholds, span_component
from ..pipeline.tagging.thresholds import MAX_STEP, MIN_STEP, default_grid
from ._app import app, check_outputs_are_not_inputs, check_save_target, fail, use_gpu
from .checks import check_output_folder


@app.command("calibrate")
def calibrate_cli(
    model: Path = typer.Argument(..., help="Pipeline folder with a sampled_spancat component"),
    data_path: Path = typer.Argument(..., help="Dev data with gold entities: .spacy or CoNLL (never the test split)"),
    output: Optional[Path] = typer.Option(None, "--output", "-o", help="Where to save the calibrated pipeline; MODEL is left as it is"),
    in_place: bool = typer.Option(False, "--in-place", help="Save the tuned thresholds into MODEL itself (instead of --output)"),
    component: str = typer.Option("sampled_spancat", "--component", help="Name of the sampled_spancat component"),
    step: float = typer.Option(0.05, "--step", help=f"Grid step of the per-label thresholds, in [{MIN_STEP}, {MAX_STEP}] (0.05: 0.05, 0.10, ..., 0.95)"),
    report: Optional[Path] = typer.Option(None, "--report", help="Folder for calibration.json, calibration.md and reliability.png (needs matplotlib)"),
    batch_size: int = typer.Option(128, "--batch-size"),
    shared: bool = typer.Option(True, "--shared/--no-shared", help="Start from the best threshold shared by all labels"),
    min_gain: float = typer.Option(100 * DEFAULT_MIN_GAIN, "--min-gain", help="Dev macro-F1 points a per-label threshold must add to be kept (0: any gain)"),
    gpu_id: int = typer.Option(-1, "--gpu-id", help="GPU id, -1 for CPU"),
) -> None:
    """Tune per-label decision thresholds of sampled_spancat for dev macro-F1.

    The dev docs are predicted once. The search tries one threshold shared by
    all labels first (--shared), then, label by label, the argmax rule and
    every threshold of the grid, keeping a change only when it adds
    --min-gain points of dev macro-F1. The tuned
    pipeline is saved to --output, or into MODEL with --in-place: one of the
    two is required, so that MODEL is never overwritten by accident. New
    thresholds are saved only when they beat the current ones on the dev
    data; otherwise MODEL is left unchanged and --output gets an unchanged
    copy of it. The saved config.cfg shows the thresholds as well.
    """
    check_save_target(model, output, in_place, "calibrated")
    check_outputs_are_not_inputs([model, data_path], [output, report])
    check_output_folder(output, "--output")
    check_output_folder(report, "--report")
    if report is not None and model.resolve() in report.resolve().parents:
        fail(f"--report {report} is inside MODEL {model}: give a folder outside the pipeline")
    if batch_size < 1:
        fail(f"--batch-size must be >= 1, got {batch_size}")
    if not 0.0 <= min_gain < 100.0:
        fail(f"--min-gain must be in [0, 100) (points of dev macro-F1), got {min_gain}")
    if report is not None:
        _require_matplotlib()
    try:
        grid = default_grid(step, setting="--step")
    except ValueError as err:
        fail(str(err))
    use_gpu(gpu_id)
    try:
        docs = load_docs(data_path)
        nlp = load_model(model)
    except (OSError, ValueError) as err:
        fail(str(err))
    try:
        pipe = span_component(nlp, component)
    except ValueError as err:
        fail(f"--component {component}: {err}")
    try:
        check_dev_gold(docs, pipe.cfg["gold_key"], source=str(data_path))
        current = pipe.thresholds or {}
        floor = search_floor(grid, current)
        # one prediction pass serves the search and the reliability tables
        matcher = dev_matcher(nlp, component, docs, floor=min(floor, MIN_CONFIDENCE) if report else floor, batch_size=batch_size)
        search = search_thresholds(matcher, current, grid, shared=shared, min_gain=min_gain / 100)
    except ValueError as err:
        fail(str(err))
    _print_table(search)
    if search.improves:
        set_span_thresholds(nlp, component, search.best or None)
        target = output if output is not None else model
        nlp.to_disk(target)
        msg.good(f"Saved the pipeline with tuned thresholds to {target}")
    else:
        msg.warn(_not_improved(search))
        if output is not None:
            # a later step reading --output must not find a stale or missing pipeline
            nlp.to_disk(output)
            msg.info(f"Saved an unchanged copy of {model} to {output}")
        else:
            msg.info(f"{model} is left unchanged")
    if report is not None:
        write_report(report, search, reliability_populations(matcher), component=component, saved=search.improves)
        msg.good(f"Saved the calibration report to {report}")


def _require_matplotlib() -> None:
    # checked before anything is written: the report comes after the pipeline
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        fail("--report draws reliability.png with matplotlib, which is not installed: pip install 'spacy-imbalance[plots]'")


def _print_table(search: SpanThresholdSearch) -> None:
    rows = [
        (label, search.support[label], threshold_text(search.current, label), threshold_text(search.best, label),
         f_text(search.current_f[label]), f_text(search.best_f[label]))
        for label in search.labels
    ]
    rows.append(("macro", "", "", "", f_text(search.current_macro_f), f_text(search.best_macro_f)))
    msg.table(rows, header=("label", "gold", "threshold", "tuned", "dev F1", "tuned F1"), aligns=("l", "r", "r", "r", "r", "r"))


def _not_improved(search: SpanThresholdSearch) -> str:
    current = ", ".join(f"{label} {value:g}" for label, value in search.current.items()) or "argmax for every label"
    text = (
        f"No thresholds of the grid beat the current decision ({current}: dev macro-F1 "
        f"{f_text(search.current_macro_f)}); it is kept"
    )
    if search.best_macro_f == 0:
        labels = [label for label in search.labels if search.support[label] == 0]
        text += f". Macro-F1 is 0 everywhere: do the dev data's labels match the component's? (labels without dev gold: {', '.join(labels) or 'none'})"
    return text
