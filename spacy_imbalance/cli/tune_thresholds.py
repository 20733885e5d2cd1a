from pathlib import Path
from typing import Optional, Sequence

import typer
from spacy.util import load_model
from wasabi import msg

from ..corpus.docs_io import load_docs
from ..pipeline.tagging.thresholds import (
    MAX_STEP,
    MIN_STEP,
    ThresholdSearch,
    check_gold,
    default_grid,
    search_thresholds,
    set_pipeline_thresholds,
)
from ._app import app, check_outputs_are_not_inputs, check_save_target, fail, use_gpu
from .checks import check_output_file, check_output_folder


@app.command("tune-thresholds")
def tune_thresholds_cli(
    model: Path = typer.Argument(..., help="Pipeline folder with a two_task_ner component"),
    data_path: Path = typer.Argument(..., help="Dev data with gold entities: .spacy or CoNLL (never the test split)"),
    output: Optional[Path] = typer.Option(None, "--output", "-o", help="Where to save the tuned pipeline; MODEL is left as it is"),
    in_place: bool = typer.Option(False, "--in-place", help="Save the tuned thresholds into MODEL itself (instead of --output)"),
    component: str = typer.Option("two_task_ner", "--component", help="Name of the two_task_ner component"),
    step: float = typer.Option(0.05, "--step", help=f"Grid step of both thresholds, in [{MIN_STEP}, {MAX_STEP}] (0.05: 0.05, 0.10, ..., 0.95)"),
    plot: Optional[Path] = typer.Option(None, "--plot", help="Save a heatmap of macro-F1 over the grid (needs matplotlib)"),
    batch_size: int = typer.Option(128, "--batch-size"),
    gpu_id: int = typer.Option(-1, "--gpu-id", help="GPU id, -1 for CPU"),
) -> None:
    """Pick the entity/begin thresholds of two_task_ner that maximise macro-F1 on dev data.

    The tuned pipeline is saved to --output, or into MODEL with --in-place:
    one of the two is required, so that MODEL is never overwritten by
    accident. New thresholds are saved only when they beat the current ones
    on the dev data; otherwise MODEL is left unchanged and --output gets an
    unchanged copy of it. The saved config.cfg shows the thresholds as well.
    """
    check_save_target(model, output, in_place, "tuned")
    check_outputs_are_not_inputs([model, data_path], [output, plot])
    check_output_folder(output, "--output")
    check_output_file(plot, "--plot", [model, data_path])
    if plot is not None:
        _require_matplotlib()
    try:
        grid = default_grid(step, setting="--step")
    except ValueError as err:
        fail(str(err))
    use_gpu(gpu_id)
    try:
        docs = load_docs(data_path)
        check_gold(docs, source=str(data_path))
        nlp = load_model(model)
        search = search_thresholds(nlp, component, docs, grid=grid, batch_size=batch_size)
    except (OSError, ValueError) as err:
        fail(str(err))
    rows = [
        ("entity threshold", f"{search.current[0]:g}", f"{search.best[0]:g}"),
        ("begin threshold", f"{search.current[1]:g}", f"{search.best[1]:g}"),
        ("dev macro-F1", f"{100 * search.current_macro_f:.1f}", f"{100 * search.best_macro_f:.1f}"),
    ]
    msg.table(rows, header=("", "current", "best on the grid"), aligns=("l", "r", "r"))
    if search.improves:
        set_pipeline_thresholds(nlp, component, search.best)
        target = output if output is not None else model
        nlp.to_disk(target)
        msg.good(f"Saved the pipeline with tuned thresholds to {target}")
    else:
        msg.warn(_not_improved(search, nlp.get_pipe(component).labels))
        if output is not None:
            # a later step reading --output must not find a stale or missing pipeline
            nlp.to_disk(output)
            msg.info(f"Saved an unchanged copy of {model} to {output}")
        else:
            msg.info(f"{model} is left unchanged")
    if plot is not None:
        _plot(search, plot, component)
        msg.good(f"Saved the macro-F1 heatmap to {plot}")


def _require_matplotlib() -> None:
    # checked before anything is written: the heatmap comes after the pipeline
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        fail("--plot draws the heatmap with matplotlib, which is not installed: pip install 'spacy-imbalance[plots]'")


def _not_improved(search: ThresholdSearch, labels: Sequence[str]) -> str:
    text = (
        f"No threshold pair of the grid beats the current thresholds (entity {search.current[0]:g}, "
        f"begin {search.current[1]:g}: dev macro-F1 {100 * search.current_macro_f:.1f}); they are kept"
    )
    if search.best_macro_f == 0:
        text += f". Macro-F1 is 0 at every pair: do the dev data's labels match the component's ({', '.join(labels)})?"
    return text


def _plot(search: ThresholdSearch, path: Path, component: str) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6, 5))
    image = ax.imshow(100 * search.macro_f, origin="lower", cmap="viridis", extent=(search.grid[0], search.grid[-1], search.grid[0], search.grid[-1]), aspect="auto")
    ax.plot(search.best[1], search.best[0], "r+", markersize=14)
    ax.set_xlabel("begin-token threshold")
    ax.set_ylabel("entity-token threshold")
    ax.set_title(f"{component}: dev macro-F1 (best {100 * search.best_macro_f:.1f})")
    fig.colorbar(image, ax=ax, label="macro-F1")
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=120, bbox_inches="tight")
    plt.close(fig)
