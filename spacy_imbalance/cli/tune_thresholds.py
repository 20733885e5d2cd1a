from pathlib import Path
from typing import Optional

import spacy
import typer
from spacy.util import load_model
from wasabi import msg

from ..corpus.docs_io import load_docs
from ..pipeline.tagging.thresholds import default_grid, search_thresholds
from ._app import app, fail


@app.command("tune-thresholds")
def tune_thresholds_cli(
    model: Path = typer.Argument(..., help="Pipeline folder with a two_task_ner component"),
    data_path: Path = typer.Argument(..., help="Dev data: .spacy or CoNLL (never the test split)"),
    output: Optional[Path] = typer.Option(None, "--output", "-o", help="Where to save the tuned pipeline (default: MODEL itself)"),
    component: str = typer.Option("two_task_ner", "--component", help="Name of the two_task_ner component"),
    step: float = typer.Option(0.05, "--step", help="Grid step of both thresholds (0.05: 0.05, 0.10, ..., 0.95)"),
    plot: Optional[Path] = typer.Option(None, "--plot", help="Save a heatmap of macro-F1 over the grid (needs matplotlib)"),
    batch_size: int = typer.Option(128, "--batch-size"),
    gpu_id: int = typer.Option(-1, "--gpu-id", help="GPU id, -1 for CPU"),
) -> None:
    """Pick the entity/begin thresholds of two_task_ner that maximise macro-F1 on dev data and save them into the pipeline."""
    if gpu_id >= 0:
        spacy.require_gpu(gpu_id)
    try:
        nlp = load_model(model)
        docs = load_docs(data_path)
        search = search_thresholds(nlp, component, docs, grid=default_grid(step), batch_size=batch_size)
    except (OSError, ValueError) as err:
        fail(str(err))
    pipe = nlp.get_pipe(component)
    before = (pipe.cfg["en_threshold"], pipe.cfg["be_threshold"])
    pipe.set_thresholds(*search.best)
    rows = [("entity threshold", f"{before[0]:.2f}", f"{search.best[0]:.2f}"), ("begin threshold", f"{before[1]:.2f}", f"{search.best[1]:.2f}")]
    rows.append(("dev macro-F1", _macro_at(search, before), f"{100 * search.best_macro_f:.1f}"))
    msg.table(rows, header=("", "before", "tuned"), aligns=("l", "r", "r"))
    target = output or model
    nlp.to_disk(target)
    msg.good(f"Saved the pipeline with tuned thresholds to {target}")
    if plot is not None:
        _plot(search, plot, component)
        msg.good(f"Saved the macro-F1 heatmap to {plot}")


def _macro_at(search, thresholds) -> str:
    """The grid's macro-F1 at the old thresholds, when they are on the grid."""
    try:
        i, j = (search.grid.index(round(t, 6)) for t in thresholds)
    except ValueError:
        return "off grid"
    return f"{100 * search.macro_f[i, j]:.1f}"


def _plot(search, path: Path, component: str) -> None:
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
