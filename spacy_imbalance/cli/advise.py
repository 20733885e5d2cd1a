import dataclasses
from pathlib import Path
from typing import Optional

import typer
from wasabi import msg

from ..advise import AdviseSettings, plan_trials, rank, read_miss_rate, run_candidates, select_candidates, write_advice, write_corpora
from ..advise.ranking import Ranked, minutes_trained, steps_trained
from ..advise.report import trained_text
from ..advise.run import (
    BUDGET_MINUTES_MAX, GPU_ID_RANGE, MAX_STEPS_RANGE, SEEDS_RANGE, WORKERS_RANGE, candidate_config, check_labels, plan_text,
    stats_rows,
)
from ..audit.run import check_audited_corpus
from ..corpus.conll import ConllFormatError
from ..corpus.docs_io import load_docs
from ..corpus.stats import corpus_stats
from ..init_config.options import ENCODERS
from ..sweeps import TrialFailed, use_ray
from ._app import _same_file, app, check_outputs_are_not_inputs, fail, warn_without_matplotlib
from .checks import bounded, check_output_folder


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
    warn_without_matplotlib("advise", "advice.png")
    # every number before anything is written: inf or nan would reach the
    # trials' configs, and each trial would fail in its own log
    bounded(budget, "--budget", low=0, high=BUDGET_MINUTES_MAX, low_open=True)
    bounded(seeds, "--seeds", low=SEEDS_RANGE[0], high=SEEDS_RANGE[1], integer=True)
    bounded(workers, "--workers", low=WORKERS_RANGE[0], high=WORKERS_RANGE[1], integer=True)
    bounded(gpu_id, "--gpu-id", low=GPU_ID_RANGE[0], high=GPU_ID_RANGE[1], integer=True)
    bounded(max_steps, "--max-steps", low=MAX_STEPS_RANGE[0], high=MAX_STEPS_RANGE[1], integer=True)
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
    check_output_folder(output, "--output")
    check_outputs_are_not_inputs([train_path, dev_path], [output / "corpus" / "train.spacy", output / "corpus" / "dev.spacy"])
    if _same_file(train_path, dev_path):
        fail(f"DEV {dev_path} is TRAIN {train_path}: ranked on its training data, every method would look better than it is. Give a dev set apart from TRAIN")
    try:
        train, dev = load_docs(train_path), load_docs(dev_path)
    except (OSError, ConllFormatError, ValueError) as err:
        fail(str(err))
    for name, docs in ((train_path, train), (dev_path, dev)):
        if not any(doc.ents for doc in docs):
            fail(f"{name} has no entities (doc.ents) to learn or rank on")
    if [doc.text for doc in train] == [doc.text for doc in dev]:
        # another file (a copy, or the CoNLL of the same .spacy) with the same sentences
        fail(f"DEV {dev_path} holds the same {len(dev)} sentences as TRAIN {train_path}: ranked on its training data, every method would look better than it is. Give a dev set apart from TRAIN")
    try:
        # before anything trains: a DEV of other types ranks zeros (every trial at 0.0)
        label_warnings = check_labels(train, dev, str(train_path), str(dev_path))
    except ValueError as err:
        fail(str(err))
    for warning in label_warnings:
        msg.warn(warning)
    if miss_rate is not None and miss_rate.get("n_docs") not in (None, len(train)):
        fail(f"--audit {audit} audited {miss_rate['n_docs']} documents, {train_path} has {len(train)}: run the audit on TRAIN")
    if audit is not None:
        try:
            # the same size is not the same corpus: its recorded fingerprint decides
            check_audited_corpus(audit, train, str(train_path))
        except ValueError as err:
            fail(str(err))
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
    info, too_short = plan_text(settings, len(candidates), minutes, on_ray)
    msg.info(info)
    if too_short is not None:
        msg.warn(too_short)
    for candidate in candidates:
        msg.text(f"  {candidate.name}: {candidate.reason}")

    def progress(trial, report, n_done: int, n_all: int) -> None:
        msg.text(
            f"[{n_done}/{n_all}] {trial.name}: dev macro-F1 {100 * report['macro']['f']:.1f} "
            f"({steps_trained(report):,} steps in {minutes_trained(report):.1f} minutes)"
        )

    try:
        reports = run_candidates(planned, settings, output, on_done=progress)
    except (TrialFailed, ImportError) as err:
        fail(str(err))
    try:
        advice = rank(candidates, reports, list(range(seeds)))
    except ValueError as err:
        # no recommendation from untrained models: the trials stay in OUTPUT for a resumed run
        fail(str(err))
    for method, why in advice.untrained:
        msg.warn(f"{method} is not ranked: {why}; its scores would be those of an untrained model")
    recommended = next(c for c in candidates if c.name == advice.recommended)
    summary = {"budget_minutes": budget, "trial_minutes": minutes, "max_steps": max_steps, "seeds": seeds,
               "encoder": encoder, "train": str(train_path), "dev": str(dev_path)}
    paths = write_advice(output, advice, rows, left_out, summary, candidate_config(recommended, settings, None))
    table = [(r.name, f"{100 * r.mean:.1f} ± {100 * r.std:.1f}",
              "–" if r.delta is None else f"{100 * r.delta['delta']:+.1f} [{100 * r.delta['low']:+.1f}, {100 * r.delta['high']:+.1f}]",
              trained_text(r))
             for r in advice.ranking]
    msg.table(table, header=("method", "dev macro-F1", f"Δ vs {advice.baseline}", "trained"), aligns=("l", "r", "r", "r"), divider=True)
    top: Ranked = advice.ranking[0]
    msg.good(f"Recommended: {advice.recommended} (trained {trained_text(top)} per seed). {advice.verdict}")
    msg.info(f"Report: {paths['report']}; config: {paths['config']}")
