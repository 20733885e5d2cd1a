from pathlib import Path
from typing import Dict, List, Optional, Sequence, Tuple

import spacy
import srsly
import typer
from spacy.language import Language
from spacy.tokens import Doc
from wasabi import msg

from ..corpus.docs_io import load_docs
from ..corpus.gold_checks import check_no_empty_spans
from ..evaluation.components import span_component
from ..evaluation.missampling import DocsPreparer, MissamplingResult, measure_missampling
from ..pipeline.sampled_spancat import SampledSpanCategorizer
from ..plots import save_figure
from ..spans.candidates import MAX_SPAN_WIDTH
from ..spans.gold import doc_labels
from ..spans.negatives.menu import SAMPLERS, build_sampler
from ..spans.negatives.temperature import MAX_TEMPERATURE, MIN_TEMPERATURE
from ._app import app, fail, require_matplotlib, use_gpu
from .checks import bounded, check_output_file, check_spans_key, load_pipeline_or_fail

# the fine-tuning recipe's ~13 epochs of WNUT-2017 would be the run-level view; 1 keeps the paper's per-draw view
MAX_EPOCHS = 1000
DEFAULT_P = [0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9]
# Every seed masks and samples the whole corpus once per p; the paper uses 10
MAX_SEEDS = 1000


@app.command("missampling")
def missampling_cli(
    data_path: Path = typer.Argument(..., metavar="DATA", help="Well-annotated training data (.spacy or CoNLL); it is masked here"),
    model: Optional[str] = typer.Option(None, "--model", help="Trained pipeline with a sampled_spancat component; needed by the weighted and top samplers"),
    samplers: List[str] = typer.Option(["uniform"], "--sampler", help=f"{', '.join(SAMPLERS)} (as init-config's --sampler; uniform keeps one draw per sentence all run and adds the negatives that overlap a gold entity, which no missed entity is, uniform_v1 draws anew each epoch); repeat to compare"),
    p_values: List[float] = typer.Option(DEFAULT_P, "--p", help="Masking probabilities; repeat (default 0.1 ... 0.9)"),
    n_seeds: int = typer.Option(10, "--seeds", help=f"Seeds 0..N-1 per p (masking and sampling), N in [1, {MAX_SEEDS}]; the paper uses 10"),
    rate: Optional[float] = typer.Option(
        None, "--rate", help="uniform/weighted: negatives per token, in (0, 1]; default: each sampler's as init-config writes it (uniform 1.0, the others 0.7)"
    ),
    mu: float = typer.Option(8.0, "--mu", help="weighted: mu of Eq. 16, >= 0"),
    temperature: float = typer.Option(
        1.0, "--temperature", help=f"weighted: T of Eq. 16, in [{MIN_TEMPERATURE:g}, {MAX_TEMPERATURE:g}] (1.0 = the schedule's last epoch)"
    ),
    ratio: float = typer.Option(0.05, "--ratio", help="top: share of the batch's negatives kept, in (0, 1]"),
    max_span_width: int = typer.Option(
        8, "--max-span-width", help=f"Widest candidate without --model, in [1, {MAX_SPAN_WIDTH}] (with it, the component's)"
    ),
    component: str = typer.Option("sampled_spancat", "--component", help="Name of the component in --model"),
    gold_key: Optional[str] = typer.Option(None, "--gold-key", help="Without --model: gold from doc.spans[KEY] instead of doc.ents"),
    batch_size: int = typer.Option(64, "--batch-size", help="Sentences per batch (Top-Neg ranks within a batch)"),
    output: Optional[Path] = typer.Option(None, "--output", "-o", help="Write the rates as JSON"),
    plot: Optional[Path] = typer.Option(None, "--plot", help="Save missampling rate against p (needs matplotlib)"),
    gpu_id: int = typer.Option(-1, "--gpu-id", help="GPU id, -1 for CPU"),
    epochs: int = typer.Option(1, "--epochs", help=f"Draw from the corpus this many times, in [1, {MAX_EPOCHS}], and report the share of masked entities drawn at least once (what a whole training run teaches)"),
) -> None:
    """Missampling rate (Eq. 12 of Li et al. 2022): the share of sampled negatives that are masked entities, per masking probability."""
    # every setting and output before any work: a sampler's setting is
    # checked whether or not that sampler runs (a nan --mu with the uniform
    # sampler reached the JSON output), and -o before the whole measurement
    _check_settings(p_values, n_seeds, rate, mu, temperature, ratio, max_span_width, batch_size)
    bounded(epochs, "--epochs", low=1, high=MAX_EPOCHS, integer=True)
    unknown = [name for name in samplers if name not in SAMPLERS]
    if unknown:
        fail(f"unknown --sampler {', '.join(unknown)}; choose from {', '.join(SAMPLERS)}")
    check_output_file(output, "--output", inputs=[data_path])
    check_output_file(plot, "--plot", inputs=[data_path])
    if plot is not None:
        require_matplotlib("--plot draws the rates")
    use_gpu(gpu_id)
    try:
        built = {name: build_sampler(name, rate=rate, mu=mu, temperature=temperature, ratio=ratio) for name in samplers}
        docs = load_docs(data_path)
        # Doc.copy in masking fails on a zero-length span with spaCy's E1052, naming no file
        check_no_empty_spans(docs, str(data_path))
        pipe, prepare = _component(model, component, docs, max_span_width, gold_key)
        for name, sampler in built.items():
            if (sampler.needs_probs or sampler.needs_vectors) and model is None:
                raise ValueError(f"the {name} sampler draws from a model's outputs: pass a trained pipeline with --model")
    except (OSError, ValueError) as err:
        fail(str(err))
    if pipe.cfg["gold_key"] is not None:
        # an absent key masks nothing: every rate would be 0 by construction
        option = "--gold-key" if model is None else f"the gold_key of {component!r} in --model"
        check_spans_key(docs, pipe.cfg["gold_key"], str(data_path), option)
    seeds = list(range(n_seeds))
    results: Dict[str, List[MissamplingResult]] = {}
    for name, sampler in built.items():

        def report(result: MissamplingResult, name: str = name) -> None:
            over = ""
            if epochs > 1:
                over = f"; masked entities drawn in epoch 1 {100 * _mean(result.reached):.1f} %, over {epochs} epochs {100 * _mean(result.reached_over_epochs):.1f} %"
            msg.text(f"{name:>8}  p={result.p:.2f}  missampling {100 * result.mean:.3f} ± {100 * result.std:.3f} % ({sum(result.drawn)} negatives drawn{over})")

        try:
            results[name] = measure_missampling(
                pipe, sampler, docs, p_values, seeds, batch_size=batch_size, prepare=prepare, progress=report, epochs=epochs
            )
        except ValueError as err:
            fail(str(err))
    # the masks depend on p and the seed only: any sampler's results tell
    _warn_unmasked(next(iter(results.values())), data_path, docs, pipe.cfg["gold_key"])
    header = ("p", *[f"{name} (%)" for name in results])
    rows = [(f"{p:.2f}", *[f"{100 * results[n][i].mean:.3f} ± {100 * results[n][i].std:.3f}" for n in results]) for i, p in enumerate(p_values)]
    msg.divider(f"Missampling rate on {data_path}, {n_seeds} seeds (mean ± std)")
    msg.table(rows, header=header, aligns=("r",) * len(header))
    if epochs > 1:
        header = ("p", *[f"{name}: 1 epoch / {epochs} (%)" for name in results])
        rows = [(f"{p:.2f}", *[f"{100 * _mean(results[n][i].reached):.1f} / {100 * _mean(results[n][i].reached_over_epochs):.1f}" for n in results]) for i, p in enumerate(p_values)]
        msg.divider(f"Masked entities drawn as a negative at least once: in one epoch, and in {epochs}")
        msg.table(rows, header=header, aligns=("r",) * len(header))
    if output is not None:
        output.parent.mkdir(parents=True, exist_ok=True)
        # each sampler's own rate: without --rate the menu's, which differ (uniform 1.0, the others 0.7)
        rates = {name: getattr(sampler, "rate", None) for name, sampler in built.items()}
        settings = {"rate": rates, "mu": mu, "temperature": temperature, "ratio": ratio, "max_span_width": pipe.max_span_width, "epochs": epochs}
        srsly.write_json(output, {"data": str(data_path), "model": model, "seeds": seeds, "settings": settings, "results": {n: [r.to_dict() for r in rs] for n, rs in results.items()}})
        msg.good(f"Saved the rates to {output}")
    if plot is not None:
        _plot(results, plot, str(data_path))
        msg.good(f"Saved the plot to {plot}")


def _mean(values: Sequence[float]) -> float:
    return sum(values) / len(values) if values else 0.0


def _check_settings(
    p_values: Sequence[float], n_seeds: int, rate: Optional[float], mu: float, temperature: float, ratio: float,
    max_span_width: int, batch_size: int,
) -> None:
    """Exit with a message naming the option and its range unless every
    numeric option is finite and in range."""
    for p in p_values:
        bounded(p, "--p", low=0, high=1)
    bounded(n_seeds, "--seeds", low=1, high=MAX_SEEDS, integer=True)
    if rate is not None:
        bounded(rate, "--rate", low=0, high=1, low_open=True)
    # mu is an exponent of a number in [0, 1]: any finite mu >= 0 is a weight
    bounded(mu, "--mu", low=0)
    bounded(temperature, "--temperature", low=MIN_TEMPERATURE, high=MAX_TEMPERATURE)
    bounded(ratio, "--ratio", low=0, high=1, low_open=True)
    bounded(max_span_width, "--max-span-width", low=1, high=MAX_SPAN_WIDTH, integer=True)
    bounded(batch_size, "--batch-size", low=1, integer=True)


def _warn_unmasked(
    results: List[MissamplingResult], data_path: Path, docs: Sequence[Doc], gold_key: Optional[str]
) -> None:
    """Rates over masks that hold no entity are 0 whatever the sampler draws."""
    if not any(n for result in results for n in result.masked) and not doc_labels(docs, gold_key):
        where = "" if gold_key is None else f" in doc.spans[{gold_key!r}]"
        msg.warn(
            f"{data_path} has no gold entities{where}: nothing could be masked, so every missampling rate "
            "is 0 by construction and says nothing about the samplers"
        )
        return
    for result in results:
        n_seeds, n_unmasked = len(result.rates), result.seeds_without_masks
        if n_unmasked == n_seeds:
            cause = "p = 0 masks nothing" if result.p == 0 else f"with {n_seeds} seed(s)"
            msg.warn(
                f"p={result.p:.2f}: no entity was masked ({cause}), so the missampling rate is 0 by "
                "construction: there was nothing to missample"
            )
        elif n_unmasked:
            msg.warn(
                f"p={result.p:.2f}: {n_unmasked} of {n_seeds} seeds masked no entity; their rate of 0 is by "
                "construction and pulls the mean down (use more data or a larger p)"
            )


def _component(
    model: Optional[str], component: str, docs: Sequence[Doc], max_span_width: int, gold_key: Optional[str]
) -> Tuple[SampledSpanCategorizer, Optional[DocsPreparer]]:
    """The component that samples, and what prepares its input docs."""
    if model is not None:
        nlp = load_pipeline_or_fail(model, "--model")
        if component not in nlp.pipe_names:
            raise ValueError(f"{model} has no component {component!r} (it has {', '.join(nlp.pipe_names)})")
        pipe = nlp.get_pipe(component)
        if not isinstance(pipe, SampledSpanCategorizer):
            raise ValueError(f"{component!r} in {model} is not a sampled_spancat component")
        return pipe, _upstream(nlp, component)
    # samplers that need no model run on an uninitialized component with labels
    nlp = spacy.blank("xx")  # candidates need no language data
    nlp.add_pipe("sampled_spancat", name=component, config={"max_span_width": max_span_width, "gold_key": gold_key})
    pipe = span_component(nlp, component)
    for label in doc_labels(docs, gold_key):
        pipe.add_label(label)
    return pipe, None


def _upstream(nlp: Language, component: str) -> DocsPreparer:
    """Run the components before ``component``: a model that listens to a
    shared tok2vec reads the doc.tensor that it sets."""
    names = nlp.pipe_names
    later = names[names.index(component) :]

    def prepare(docs: List[Doc]) -> List[Doc]:
        return list(nlp.pipe(docs, disable=later))

    return prepare


def _plot(results: Dict[str, List[MissamplingResult]], path: Path, title: str) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6, 4))
    for name, rows in results.items():
        ax.errorbar([r.p for r in rows], [100 * r.mean for r in rows], yerr=[100 * r.std for r in rows], marker="o", capsize=3, label=name)
    ax.set_xlabel("masking probability p")
    ax.set_ylabel("missampling rate (%)")
    ax.set_title(f"Missampling rate: {title}")
    ax.legend()
    ax.grid(alpha=0.3)
    path.parent.mkdir(parents=True, exist_ok=True)
    save_figure(fig, path, dpi=120, bbox_inches="tight")
    plt.close(fig)
