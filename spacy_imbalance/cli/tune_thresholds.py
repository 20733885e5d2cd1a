"""``spacy-imbalance tune-thresholds`` (alias ``calibrate``): the decision
thresholds of a trained component tuned for dev macro-F1, one command for
each kind of component that has them: the per-label thresholds of
``sampled_spancat`` (``evaluation.thresholds.spans``) and the entity/begin
pair of ``two_task_ner`` (``evaluation.thresholds.two_task``)."""
from pathlib import Path
from typing import List, Optional, Sequence, Tuple, Union

import typer
from spacy.language import Language
from spacy.util import load_model
from wasabi import msg

from ..calibration.reliability import MIN_CONFIDENCE, reliability_populations
from ..calibration.report import f_text, threshold_text, write_report
from ..corpus.docs_io import load_docs
from ..evaluation.components import span_component
from ..evaluation.matching import check_dev_gold, check_gold
from ..evaluation.thresholds.grid import MAX_STEP, MIN_STEP, default_grid
from ..evaluation.thresholds.spans import (
    DEFAULT_MIN_GAIN,
    SpanThresholdSearch,
    dev_matcher,
    search_floor,
    search_thresholds as search_span_thresholds,
    set_span_thresholds,
)
from ..evaluation.thresholds.two_task import ThresholdSearch, search_thresholds, set_pipeline_thresholds, two_task_component
from ..pipeline.sampled_spancat import SampledSpanCategorizer
from ..pipeline.two_task_ner import TwoTaskNER
from ..plots import save_figure
from ._app import app, check_outputs_are_not_inputs, check_save_target, fail, require_matplotlib, use_gpu
from .checks import check_output_file, check_output_folder

# the components whose thresholds the command tunes, by factory
TUNED = {SampledSpanCategorizer.factory: SampledSpanCategorizer, TwoTaskNER.factory: TwoTaskNER}


@app.command("tune-thresholds")
def tune_thresholds_cli(
    model: Path = typer.Argument(..., metavar="MODEL", help="Pipeline folder with a sampled_spancat or two_task_ner component"),
    data_path: Path = typer.Argument(..., metavar="DEV", help="Dev data with gold entities: .spacy or CoNLL (never the test split)"),
    output: Optional[Path] = typer.Option(None, "--output", "-o", help="Where to save the tuned pipeline; MODEL is left as it is"),
    in_place: bool = typer.Option(False, "--in-place", help="Save the tuned thresholds into MODEL itself (instead of --output)"),
    component: Optional[str] = typer.Option(None, "--component", help="Name of the sampled_spancat or two_task_ner component (default: the pipeline's only one)"),
    step: float = typer.Option(0.05, "--step", help=f"Grid step of the thresholds, in [{MIN_STEP}, {MAX_STEP}] (0.05: 0.05, 0.10, ..., 0.95)"),
    plot: Optional[Path] = typer.Option(None, "--plot", help="two_task_ner: save a heatmap of macro-F1 over the grid (needs matplotlib)"),
    report: Optional[Path] = typer.Option(None, "--report", help="sampled_spancat: folder for calibration.json, calibration.md and reliability.png (needs matplotlib)"),
    batch_size: int = typer.Option(128, "--batch-size", help="Sentences per batch of the pipeline's predictions"),
    shared: Optional[bool] = typer.Option(None, "--shared/--no-shared", help="sampled_spancat: start from the best threshold shared by all labels (default: --shared)"),
    min_gain: Optional[float] = typer.Option(None, "--min-gain", help=f"sampled_spancat: dev macro-F1 points a per-label threshold must add to be kept (0: any gain; default {100 * DEFAULT_MIN_GAIN:g})"),
    gpu_id: int = typer.Option(-1, "--gpu-id", help="GPU id, -1 for CPU"),
) -> None:
    """Tune the decision thresholds of a sampled_spancat or two_task_ner for dev macro-F1.

    The dev docs are predicted once. sampled_spancat: per-label thresholds;
    the search tries one threshold shared by all labels first (--shared),
    then, label by label, the argmax rule and every threshold of the grid,
    keeping a change only when it adds --min-gain points of dev macro-F1.
    two_task_ner: every (entity, begin) threshold pair of the grid.

    The tuned pipeline is saved to --output, or into MODEL with --in-place:
    one of the two is required, so that MODEL is never overwritten by
    accident. New thresholds are saved only when they beat the current ones
    on the dev data; otherwise MODEL is left unchanged and --output gets an
    unchanged copy of it. The saved config.cfg shows the thresholds as well.
    """
    check_save_target(model, output, in_place, "tuned")
    check_outputs_are_not_inputs([model, data_path], [output, plot, report])
    check_output_folder(output, "--output")
    check_output_file(plot, "--plot", [model, data_path])
    check_output_folder(report, "--report")
    if report is not None and model.resolve() in report.resolve().parents:
        fail(f"--report {report} is inside MODEL {model}: give a folder outside the pipeline")
    if batch_size < 1:
        fail(f"--batch-size must be >= 1, got {batch_size}")
    if min_gain is not None and not 0.0 <= min_gain < 100.0:
        fail(f"--min-gain must be in [0, 100) (points of dev macro-F1), got {min_gain}")
    if plot is not None or report is not None:
        require_matplotlib("--plot draws the heatmap" if plot is not None else "--report draws reliability.png")
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
    component, factory = _tuned_component(nlp, component)
    if factory == TwoTaskNER.factory:
        _only_for(factory, component, ("--report", report), ("--shared/--no-shared", shared), ("--min-gain", min_gain))
        try:
            check_gold(docs, source=str(data_path))
            search = search_thresholds(nlp, component, docs, grid=grid, batch_size=batch_size)
        except ValueError as err:
            fail(str(err))
        _print_pair_table(search)
        if search.improves:
            set_pipeline_thresholds(nlp, component, search.best)
        _save(nlp, model, output, search.improves, _pair_not_improved(search, two_task_component(nlp, component).labels))
        if plot is not None:
            _plot(search, plot, component)
            msg.good(f"Saved the macro-F1 heatmap to {plot}")
        return
    _only_for(factory, component, ("--plot", plot))
    try:
        pipe = span_component(nlp, component)
        check_dev_gold(docs, pipe.cfg["gold_key"], source=str(data_path))
        current = pipe.thresholds or {}
        floor = search_floor(grid, current)
        # one prediction pass serves the search and the reliability tables
        matcher = dev_matcher(nlp, component, docs, floor=min(floor, MIN_CONFIDENCE) if report else floor, batch_size=batch_size)
        gain = DEFAULT_MIN_GAIN if min_gain is None else min_gain / 100
        span_search = search_span_thresholds(matcher, current, grid, shared=shared is not False, min_gain=gain)
    except ValueError as err:
        fail(str(err))
    _print_span_table(span_search)
    if span_search.improves:
        set_span_thresholds(nlp, component, span_search.best or None)
    _save(nlp, model, output, span_search.improves, _span_not_improved(span_search))
    if report is not None:
        write_report(report, span_search, reliability_populations(matcher), component=component, saved=span_search.improves)
        msg.good(f"Saved the calibration report to {report}")


def _tuned_component(nlp: Language, name: Optional[str]) -> Tuple[str, str]:
    """The component to tune (``--component``, or the pipeline's only
    component with thresholds) and its factory."""
    components = ", ".join(nlp.pipe_names) or "none"
    kinds = " or ".join(TUNED)
    if name is None:
        tuned = [n for n in nlp.pipe_names if _factory(nlp.get_pipe(n))]
        if not tuned:
            fail(f"the pipeline has no {kinds} component to tune; its components: {components}")
        if len(tuned) > 1:
            fail(f"the pipeline has {len(tuned)} components to tune ({', '.join(tuned)}): name one with --component")
        name = tuned[0]
    if name not in nlp.pipe_names:
        fail(f"--component {name}: the pipeline has no component {name!r}; its components: {components}")
    factory = _factory(nlp.get_pipe(name))
    if factory is None:
        fail(f"--component {name}: the component {name!r} is a {type(nlp.get_pipe(name)).__name__}, not a {kinds}; the pipeline's components: {components}")
    return name, factory


def _factory(pipe: object) -> Optional[str]:
    return next((factory for factory, cls in TUNED.items() if isinstance(pipe, cls)), None)


def _only_for(factory: str, component: str, *options: Tuple[str, object]) -> None:
    """Options of the other kind of component are an error, not ignored."""
    given = [option for option, value in options if value is not None]
    if given:
        fail(f"{', '.join(given)} {'does' if len(given) == 1 else 'do'} not apply to the {factory} {component!r}; see --help")


def _save(nlp: Language, model: Path, output: Optional[Path], improves: bool, kept: str) -> None:
    """The pipeline with its new thresholds to --output or MODEL, or, when
    they do not improve, an unchanged copy to --output."""
    if improves:
        target = output if output is not None else model
        nlp.to_disk(target)
        msg.good(f"Saved the pipeline with tuned thresholds to {target}")
        return
    msg.warn(kept)
    if output is not None:
        # a later step reading --output must not find a stale or missing pipeline
        nlp.to_disk(output)
        msg.info(f"Saved an unchanged copy of {model} to {output}")
    else:
        msg.info(f"{model} is left unchanged")


def _print_span_table(search: SpanThresholdSearch) -> None:
    # label, gold count ("" on the macro row), thresholds and F1s as text
    rows: List[Tuple[str, Union[int, str], str, str, str, str]] = [
        (label, search.support[label], threshold_text(search.current, label), threshold_text(search.best, label),
         f_text(search.current_f[label]), f_text(search.best_f[label]))
        for label in search.labels
    ]
    rows.append(("macro", "", "", "", f_text(search.current_macro_f), f_text(search.best_macro_f)))
    msg.table(rows, header=("label", "gold", "threshold", "tuned", "dev F1", "tuned F1"), aligns=("l", "r", "r", "r", "r", "r"))


def _span_not_improved(search: SpanThresholdSearch) -> str:
    current = ", ".join(f"{label} {value:g}" for label, value in search.current.items()) or "argmax for every label"
    text = (
        f"No thresholds of the grid beat the current decision ({current}: dev macro-F1 "
        f"{f_text(search.current_macro_f)}); it is kept"
    )
    if search.best_macro_f == 0:
        labels = [label for label in search.labels if search.support[label] == 0]
        text += f". Macro-F1 is 0 everywhere: do the dev data's labels match the component's? (labels without dev gold: {', '.join(labels) or 'none'})"
    return text


def _print_pair_table(search: ThresholdSearch) -> None:
    rows = [
        ("entity threshold", f"{search.current[0]:g}", f"{search.best[0]:g}"),
        ("begin threshold", f"{search.current[1]:g}", f"{search.best[1]:g}"),
        ("dev macro-F1", f"{100 * search.current_macro_f:.1f}", f"{100 * search.best_macro_f:.1f}"),
    ]
    msg.table(rows, header=("", "current", "best on the grid"), aligns=("l", "r", "r"))


def _pair_not_improved(search: ThresholdSearch, labels: Sequence[str]) -> str:
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
    save_figure(fig, path, dpi=120, bbox_inches="tight")
    plt.close(fig)
