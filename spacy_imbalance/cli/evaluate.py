import time
from pathlib import Path
from typing import Any, Dict, List, Optional

import typer
from wasabi import msg

# print_report: its home is evaluation.evaluate; imported from here before it moved
from ..evaluation.evaluate import EvaluationError, evaluate_model, load_gold, print_report, scored_pipeline, write_report
from ..scorers.bootstrap import paired_bootstrap
from ..scorers.evaluation import pipeline_counts
from ..sweeps.provenance import run_provenance
from ._app import app, check_outputs_are_not_inputs, fail, use_gpu
from .checks import bounded, check_output_file


def check_evaluation_settings(data_path: Path, output: Optional[Path], n_resamples: int, batch_size: int) -> None:
    """The settings of evaluate and compare, checked before any work: the
    output file (not the data, not a folder or device) and the numbers."""
    check_outputs_are_not_inputs([data_path], [output])
    check_output_file(output, "--output")
    bounded(n_resamples, "--n-bootstrap", low=1, integer=True)
    bounded(batch_size, "--batch-size", low=1, integer=True)


def write_json_output(output: Path, data: Dict[str, Any], what: str, indent: int = 2) -> None:
    """``evaluation.evaluate.write_report``, and a message naming the file
    when it cannot be written."""
    try:
        write_report(output, data, indent=indent)
    except (OSError, ValueError) as err:
        fail(f"Could not write --output {output}: {getattr(err, 'strerror', None) or err}")
    msg.good(f"Saved {what} to {output}")


@app.command("evaluate")
def evaluate_cli(
    model: str = typer.Argument(..., metavar="MODEL", help="Pipeline folder or package name"),
    data_path: Path = typer.Argument(..., metavar="DATA", help="Gold test data: .spacy or CoNLL"),
    output: Optional[Path] = typer.Option(None, "--output", "-o", help="Write the report as JSON, e.g. metrics/ner.json"),
    name: Optional[str] = typer.Option(None, "--name", help="Name of the system in reports (default: MODEL); runs with the same name are averaged by `summarize`"),
    spans_key: Optional[str] = typer.Option(None, "--spans-key", help="Score doc.spans[KEY] (default: doc.ents, or the spancat key)"),
    n_resamples: int = typer.Option(1000, "--n-bootstrap", help="Bootstrap resamples of the test sentences"),
    seed: int = typer.Option(0, "--seed", help="Seed of the bootstrap"),
    batch_size: int = typer.Option(128, "--batch-size", help="Sentences per batch of the pipeline's predictions"),
    gpu_id: int = typer.Option(-1, "--gpu-id", help="GPU id, -1 for CPU"),
) -> None:
    """Macro-, micro- and per-type P/R/F with bootstrap 95% intervals."""
    check_evaluation_settings(data_path, output, n_resamples, batch_size)
    use_gpu(gpu_id)
    try:
        report = evaluate_model(model, data_path, name=name, spans_key=spans_key, n_resamples=n_resamples, seed=seed, batch_size=batch_size)
    except EvaluationError as err:
        fail(str(err))
    # where it ran: a score or a words/s figure is only comparable with its device
    report["provenance"] = run_provenance(gpu_id)
    print_report(report, f"{report['name']} on {data_path} ({report['target']})")
    if output is not None:
        # compact: the per-sentence counts (kept for paired bootstraps) dominate the file
        write_json_output(output, report, "metrics", indent=0)


@app.command("compare")
def compare_cli(
    data_path: Path = typer.Argument(..., metavar="DATA", help="Gold test data: .spacy or CoNLL"),
    models: List[str] = typer.Argument(..., metavar="MODELS", help="Two or more pipelines (folders or package names); the first is the baseline"),
    output: Optional[Path] = typer.Option(None, "--output", "-o", help="Write the comparison as JSON"),
    spans_key: Optional[str] = typer.Option(None, "--spans-key", help="Score doc.spans[KEY] for every pipeline"),
    n_resamples: int = typer.Option(1000, "--n-bootstrap", help="Paired bootstrap resamples of the test sentences"),
    seed: int = typer.Option(0, "--seed", help="Seed of the bootstrap"),
    batch_size: int = typer.Option(128, "--batch-size", help="Sentences per batch of the pipelines' predictions"),
    gpu_id: int = typer.Option(-1, "--gpu-id", help="GPU id, -1 for CPU"),
) -> None:
    """Paired bootstrap: how much each pipeline beats the first, with intervals."""
    if len(models) < 2:
        fail("compare needs at least two pipelines: a baseline and one to compare")
    check_evaluation_settings(data_path, output, n_resamples, batch_size)
    start = time.perf_counter()
    use_gpu(gpu_id)
    counts = []
    try:
        docs = load_gold(data_path)
        for model in models:
            nlp = scored_pipeline(model, spans_key, docs, data_path, argument="MODELS")
            try:
                system_counts, _, _ = pipeline_counts(nlp, docs, spans_key=spans_key, batch_size=batch_size)
            except ValueError as err:
                raise EvaluationError(f"The pipeline {model}: {err}") from err
            counts.append(system_counts)
    except EvaluationError as err:
        fail(str(err))
    systems: Dict[str, Any] = {}
    rows, result = [], {"data": str(data_path), "baseline": models[0], "n_resamples": n_resamples, "seed": seed, "systems": systems}
    for model, system in zip(models[1:], counts[1:]):
        diff = paired_bootstrap(counts[0], system, n_resamples=n_resamples, seed=seed)
        systems[model] = diff
        for avg in ("macro_f", "micro_f"):
            d = diff[avg]
            rows.append((model, avg, f"{100 * d['delta']:+.1f}", f"[{100 * d['low']:+.1f}, {100 * d['high']:+.1f}]", f"{d['share_not_better']:.3f}"))
    msg.divider(f"Paired bootstrap against {models[0]} ({n_resamples} resamples of {len(docs)} sentences)")
    msg.table(rows, header=("pipeline", "score", "delta", "95% CI", "resamples not better"), aligns=("l", "l", "r", "r", "r"))
    if output is not None:
        write_json_output(output, result, "comparison")
