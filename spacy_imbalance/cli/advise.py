import dataclasses
from pathlib import Path
from typing import Optional

import typer
from wasabi import msg

from ..advise import AdviseSettings, plan_trials, rank, read_miss_rate, run_candidates, select_candidates, write_advice, write_corpora
from ..advise.run import candidate_config, stats_rows
from ..corpus.conll import ConllFormatError
from ..corpus.docs_io import load_docs
from ..corpus.stats import corpus_stats
from ..init_config.options import ENCODERS
from ..sweeps import TrialFailed, use_ray
from ._app import app, check_not_a_file, check_outputs_are_not_inputs, fail


@app.command("advise")
def advise_cli(
    train_path: Path = typer.Argument(..., metavar="TRAIN", help="The training corpus (.spacy or CoNLL)"),
    dev_path: Path = typer.Argument(..., metavar="DEV", help="The dev corpus (.spacy or CoNLL): picks checkpoints and ranks"),
    output: Path = typer.Option(Path("advice"), "--output", "-o", help="The folder of the advice, its configs and trials (resumable)"),
    budget: float = typer.Option(20.0, "--budget", help="Minutes of wall-clock time for all trials"),
    seeds: int = typer.Option(2, "--seeds", help="Training seeds per method (>= 2)"),
    encoder: str = typer.Option("cnn", "--encoder", help=f"The encoder of every method: {', '.join(ENCODERS)}"),
    vectors: Optional[str] = typer.Option(None, "--vectors", help="paths.vectors of --encoder vectors (default en_core_web_md)"),
    audit: Optional[Path] = typer.Option(None, "--audit", help="The output folder of spacy-imbalance audit on TRAIN: its miss-rate estimate"),
    lang: str = typer.Option("en", "--lang", help="The language code of the pipelines"),
    workers: int = typer.Option(1, "--workers", help="Trials at once, on Ray (the ray extra); without Ray, one after another"),
    address: Optional[str] = typer.Option(None, "--address", help="A Ray cluster (e.g. auto, ray://head:10001); its nodes must see OUTPUT"),
    gpu_id: int = typer.Option(-1, "--gpu-id", help="Train on this GPU (each Ray trial gets one), -1 for the CPU"),
    max_steps: int = typer.Option(20000, "--max-steps", help="The most steps of a trial (the time budget ends it first)"),
) -> None:
    """Train the methods that fit TRAIN for a short budget, rank them on DEV against spaCy's best built-in, and recommend one."""
    settings = AdviseSettings(
        budget_minutes=budget, seeds=seeds, encoder=encoder, vectors=vectors, lang=lang, workers=workers,
        address=address, gpu_id=gpu_id, max_steps=max_steps,
    )
    try:
        settings.check()
        miss_rate = read_miss_rate(audit) if audit is not None else None
        on_ray = use_ray(workers, address)
    except (ValueError, ImportError) as err:
        fail(str(err))
    if not on_ray:
        # one after another: each trial's share of the budget is as for one worker
        settings = dataclasses.replace(settings, workers=1)
    elif gpu_id >= 0:
        msg.warn(f"Each trial takes a whole GPU: with fewer than {workers} GPUs they wait for one another, and take longer than --budget")
    check_not_a_file(output)
    check_outputs_are_not_inputs([train_path, dev_path], [output / "corpus" / "train.spacy", output / "corpus" / "dev.spacy"])
    try:
        train, dev = load_docs(train_path), load_docs(dev_path)
    except (OSError, ConllFormatError, ValueError) as err:
        fail(str(err))
    for name, docs in ((train_path, train), (dev_path, dev)):
        if not any(doc.ents for doc in docs):
            fail(f"{name} has no entities (doc.ents) to learn or rank on")
    if train_path.resolve() == dev_path.resolve():
        msg.warn(f"TRAIN and DEV are the same file ({train_path}): the ranking measures fit to the training data, not generalisation")
    if miss_rate is not None and miss_rate.get("n_docs") not in (None, len(train)):
        fail(f"--audit {audit} audited {miss_rate['n_docs']} documents, {train_path} has {len(train)}: run the audit on TRAIN")
    stats = corpus_stats(train)
    rows = stats_rows(stats, miss_rate)
    msg.table(rows, header=("corpus", str(train_path)), aligns=("l", "r"), divider=True)
    candidates, left_out = select_candidates(stats, encoder, None if miss_rate is None else miss_rate["rate"])
    try:
        train_spacy, dev_spacy = write_corpora(train, dev, output, sources=(str(train_path), str(dev_path)))
        planned, minutes = plan_trials(candidates, settings, output, train_spacy, dev_spacy)
    except ImportError as err:
        fail(f"--encoder {encoder} needs a package that is not installed: {err}")
    except (OSError, ValueError) as err:
        fail(str(err))
    msg.info(
        f"{len(candidates)} methods x {seeds} seeds, {minutes:.1f} minutes of training each "
        f"({f'{settings.workers} at a time on Ray' if on_ray else 'one after another'}):"
    )
    planned_minutes = settings.planned_minutes(len(planned))
    if planned_minutes > budget * 1.05:
        msg.warn(
            f"--budget {budget:g} is too short for {len(planned)} trials: each trains at least "
            f"{minutes:.1f} minutes, so the trials take about {planned_minutes:.0f} minutes"
        )
    for candidate in candidates:
        msg.text(f"  {candidate.name}: {candidate.reason}")

    def progress(trial, report, n_done: int, n_all: int) -> None:
        curve = report.get("dev_curve") or [[0, 0.0]]
        steps = report.get("steps_trained", curve[-1][0])
        msg.text(f"[{n_done}/{n_all}] {trial.name}: dev macro-F1 {100 * report['macro']['f']:.1f} ({steps} steps)")

    try:
        reports = run_candidates(planned, settings, output, on_done=progress)
    except (TrialFailed, ImportError) as err:
        fail(str(err))
    advice = rank(candidates, reports, list(range(seeds)))
    recommended = next(c for c in candidates if c.name == advice.recommended)
    summary = {"budget_minutes": budget, "trial_minutes": minutes, "seeds": seeds, "encoder": encoder,
               "train": str(train_path), "dev": str(dev_path)}
    paths = write_advice(output, advice, rows, left_out, summary, candidate_config(recommended, settings, None))
    table = [(r.name, f"{100 * r.mean:.1f} ± {100 * r.std:.1f}",
              "–" if r.delta is None else f"{100 * r.delta['delta']:+.1f} [{100 * r.delta['low']:+.1f}, {100 * r.delta['high']:+.1f}]")
             for r in advice.ranking]
    msg.table(table, header=("method", "dev macro-F1", f"Δ vs {advice.baseline}"), aligns=("l", "r", "r"), divider=True)
    msg.good(f"Recommended: {advice.recommended}. {advice.verdict}")
    msg.info(f"Report: {paths['report']}; config: {paths['config']}")
