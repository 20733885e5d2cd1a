"""``spacy-imbalance benchmark``: configs x corpora x seeds trained, resumed,
recorded with provenance and compared (``run``), their speed (``speed``),
thresholds tuned on finished runs (``tune``) and a study's tables
(``table``), in the folder it runs in: configs/, corpus/, metrics/ and
training/ by default (``benchmark.layout.Layout``); what Ray buys a sweep
(``sweep-speed``)."""
import sys
import time
from pathlib import Path
from typing import List, Optional

import typer

from ..benchmark.layout import Layout
from ..benchmark.names import run_name
from ..benchmark.options import only_names, overrides_for_load, parse_seeds, selected, split_sets
from ._app import app, clear_errors, fail, has_matplotlib, warn_without_matplotlib
from .checks import bounded

benchmark_app = typer.Typer(
    help="Train and compare configs x corpora x seeds (resumable, recorded with provenance); their speed; tuned thresholds; a study's tables.",
    no_args_is_help=True,
)
app.add_typer(benchmark_app, name="benchmark")

CONFIGS_DIR = typer.Option(Path("configs"), "--configs-dir", help="The folder of the configs: --config NAME is NAME.cfg there")
CORPUS_DIR = typer.Option(Path("corpus"), "--corpus-dir", help="The folder of the corpora: --corpus NAME is NAME/{train,dev,test}.spacy there")
METRICS_DIR = typer.Option(Path("metrics"), "--metrics-dir", help="The folder of the records: METRICS_DIR/<corpus>/<run>-s<seed>.json")
TRAINING_DIR = typer.Option(Path("training"), "--training-dir", help="The folder of the trained pipelines: TRAINING_DIR/<corpus>/<run>-s<seed>/")


def _layout(configs: Path, corpora: Path, metrics: Path, training: Path, corpus_names: List[str], config_names: List[str]) -> Layout:
    """The layout, every config and corpus it names checked before anything runs."""
    layout = Layout(configs, corpora, metrics, training)
    missing = [f"--config {name} ({layout.config(name)})" for name in config_names if not layout.config(name).is_file()]
    missing += [f"--corpus {name} ({layout.corpora / name})" for name in corpus_names if not (layout.corpora / name).is_dir()]
    if missing:
        fail(f"Not found: {'; '.join(missing)}. Configs are read from --configs-dir, corpora from --corpus-dir")
    return layout


@benchmark_app.command("run")
def run_cli(
    corpora: List[str] = typer.Option(..., "--corpus", help="A corpus of --corpus-dir; repeatable"),
    configs: List[str] = typer.Option(..., "--config", help="A config of --configs-dir (e.g. ner or vectors/ner); repeatable"),
    seed_values: List[str] = typer.Option(["0,1,2"], "--seed", help="A seed or a comma-separated list, e.g. 0,1,2; repeatable"),
    max_steps: int = typer.Option(2000, "--max-steps", help="Training steps per run"),
    gpu_id: int = typer.Option(-1, "--gpu-id", help="The GPU to train on (one per Ray trial), -1 for the CPU"),
    jobs: int = typer.Option(1, "--jobs", "-j", help="Runs trained at the same time, one thread each, on Ray (the ray extra); without Ray, one after another"),
    address: Optional[str] = typer.Option(None, "--address", help="A Ray cluster to run on (e.g. auto, ray://head:10001); its nodes must see these folders"),
    summary: str = typer.Option("summary", "--summary", help="The name of the summary files in METRICS_DIR/<corpus>/"),
    baseline: Optional[str] = typer.Option(None, "--baseline", help="A --config to compare the others with (paired bootstrap over the seeds)"),
    sets: List[str] = typer.Option([], "--set", help="Config override KEY=VALUE for every run, e.g. corpora.train.n_sentences=200; {seed} in VALUE is the run's seed"),
    tag: Optional[str] = typer.Option(None, "--tag", help="Run names become <config>-TAG (runs that differ by --set)"),
    only: str = typer.Option("", "--only", help="Comma-separated run names to train, e.g. ner,ner-m50 (<config> or <config>-<tag>); empty: all"),
    tables: bool = typer.Option(False, "--tables", help="Print each run's evaluation table (macro, micro, per type)"),
    equal_epochs: bool = typer.Option(False, "--equal-epochs", help="Scale each run's steps by its train reader's word factor: a resampled corpus gets as many epochs as the plain one gets from --max-steps"),
    force: bool = typer.Option(False, "--force", help="Train finished runs again"),
    show_next_steps: bool = typer.Option(False, "--next-steps", help="End with the commands that train on your own CoNLL data (the demo)"),
    need_dev_curve: bool = typer.Option(False, "--need-dev-curve", help="Train again finished runs whose record has no dev curve, for a study that chooses a setting on dev"),
    configs_dir: Path = CONFIGS_DIR,
    corpus_dir: Path = CORPUS_DIR,
    metrics_dir: Path = METRICS_DIR,
    training_dir: Path = TRAINING_DIR,
) -> None:
    """Train each config on each corpus with each seed, evaluate model-best on test, record it in METRICS_DIR/<corpus>/<run>-s<seed>.json, and summarize; a run whose record is fresh (the same config settings, budget and overrides) is not trained again."""
    from ..benchmark.sweep import Benchmark, summarize, train

    started = time.perf_counter()
    with clear_errors():
        seeds = parse_seeds(seed_values)
        overrides = split_sets(sets)
    if baseline is not None and baseline not in configs:
        fail(f"--baseline {baseline} is not one of the --config values ({', '.join(configs)})")
    bounded(max_steps, "--max-steps", low=1, integer=True)
    bounded(jobs, "--jobs", low=1, integer=True)
    chosen = selected(configs, tag, only)
    if not chosen:
        print(f"--only {only}: no run of this benchmark is selected", flush=True)
        return
    layout = _layout(configs_dir, corpus_dir, metrics_dir, training_dir, corpora, chosen)
    warn_without_matplotlib("benchmark run", "the per-type F1 charts")
    benchmark = Benchmark(
        corpora, chosen, seeds, max_steps, overrides, tag, "epochs" if equal_epochs else "steps", gpu_id,
        baseline if baseline in chosen else None, need_dev_curve,
    )
    from ..sweeps import TrialFailed

    with clear_errors():
        try:
            trained = train(benchmark, layout, force=force, jobs=jobs, address=address, name=summary, tables=tables)
        except (TrialFailed, ImportError) as err:
            fail(str(err))
        summarize(benchmark, layout, summary, plots=has_matplotlib())
    if trained:
        from ..benchmark.records import device_words
        from ..sweeps import run_provenance

        # measured here, each time: a figure from another machine or load says little about this one
        print(f"\n{trained} runs trained and scored in {_clock(time.perf_counter() - started)} on this machine: "
              f"{'GPU' if gpu_id >= 0 else 'CPU'}, {device_words(run_provenance(gpu_id))}", flush=True)
    if show_next_steps:
        print(f"\nYour runs are in {metrics_dir}/, their pipelines in {training_dir}/.")
        print(next_steps(_this_python()), flush=True)


@benchmark_app.command("speed")
def speed_cli(
    corpus: str = typer.Option(..., "--corpus", help="A corpus of --corpus-dir (its train and test splits are read)"),
    configs: List[str] = typer.Option(..., "--config", help="A config of --configs-dir; the first is the baseline of the ratios; repeatable"),
    steps: int = typer.Option(100, "--steps", help="Timed training updates"),
    warmup: int = typer.Option(5, "--warmup", help="Untimed updates first"),
    batch_words: int = typer.Option(1000, "--batch-words", help="Words per training batch"),
    batch_size: int = typer.Option(128, "--batch-size", help="Docs per nlp.pipe batch"),
    repeats: int = typer.Option(3, "--repeats", help="Inference passes; the fastest counts"),
    rounds: int = typer.Option(1, "--rounds", help="Measure every config this many times, the configs in turn; ratios are the median over rounds of each round's ratio, with their range"),
    seed: int = typer.Option(0, "--seed", help="system.seed of every config"),
    profile: bool = typer.Option(False, "--profile", help="Write cProfile's top functions of each training run beside the results"),
    only: str = typer.Option("", "--only", help="Comma-separated configs to measure (a quick pass); empty: all"),
    gpu_id: int = typer.Option(-1, "--gpu-id", help="The GPU to train and predict on; -1: the CPU"),
    sets: List[str] = typer.Option([], "--set", help="Config override KEY=VALUE for every config"),
    name: str = typer.Option("speed", "--name", help="Result files METRICS_DIR/<corpus>/<name>.json and .md"),
    configs_dir: Path = CONFIGS_DIR,
    corpus_dir: Path = CORPUS_DIR,
    metrics_dir: Path = METRICS_DIR,
) -> None:
    """Training and inference words per second and peak memory of each config, each phase in a fresh process, as ratios against the first config."""
    from ..benchmark.speed import measure
    from ..benchmark.speed_table import Settings

    names = only_names(only)
    if names:
        configs = [config for config in configs if config in names]
        if not configs:
            print(f"--only {only}: no config of the speed benchmark is selected", flush=True)
            return
    for option, value in (("--steps", steps), ("--batch-words", batch_words), ("--batch-size", batch_size), ("--repeats", repeats), ("--rounds", rounds)):
        bounded(value, option, low=1, integer=True)
    bounded(warmup, "--warmup", low=0, integer=True)
    with clear_errors():
        overrides = overrides_for_load(split_sets(sets))
    layout = _layout(configs_dir, corpus_dir, metrics_dir, Path("training"), [corpus], configs)
    settings = Settings(steps, warmup, batch_words, batch_size, repeats, seed, gpu_id)
    lines = measure(layout, corpus, configs, settings, overrides, name, rounds, profile)
    print("\n".join(lines))


@benchmark_app.command("tune")
def tune_cli(
    corpora: List[str] = typer.Option(..., "--corpus", help="A corpus of --corpus-dir; repeatable"),
    configs: List[str] = typer.Option(..., "--config", help="A config whose finished runs are tuned; repeatable"),
    seed_values: List[str] = typer.Option(["0,1,2"], "--seed", help="A seed or a comma-separated list, e.g. 0,1,2"),
    tag: Optional[str] = typer.Option(None, "--tag", help="The --tag the runs were trained with"),
    step: float = typer.Option(0.05, "--step", help="The threshold grid's step"),
    gpu_id: int = typer.Option(-1, "--gpu-id", help="The GPU to tune and evaluate on; -1: the CPU"),
    summary: Optional[str] = typer.Option(None, "--summary", help="Also write METRICS_DIR/<corpus>/NAME.md: untuned and tuned runs side by side"),
    only: str = typer.Option("", "--only", help="Comma-separated run names to tune, as benchmark run --only; empty: all"),
    reference: Optional[str] = typer.Option(None, "--reference", help="Also pair each tuned run against this finished run (e.g. the best built-in) in the summary"),
    corpus_dir: Path = CORPUS_DIR,
    metrics_dir: Path = METRICS_DIR,
    training_dir: Path = TRAINING_DIR,
) -> None:
    """Tune the decision thresholds of finished two_task_ner, sampled_spancat or spaCy spancat_singlelabel runs on dev and score them again on test, as runs named <run>-tuned beside them (spancat_singlelabel: searched as calibrate searches ours, a score with no tuned pipeline); a run tuned before from the same training run is skipped."""
    from ..benchmark.tuning import tune_one, write_summary

    with clear_errors():
        seeds = parse_seeds(seed_values)
    bounded(step, "--step", low=0, high=1, low_open=True, high_open=True)
    layout = Layout(Path("configs"), corpus_dir, metrics_dir, training_dir)
    chosen = selected(configs, tag, only)
    if not chosen:
        print(f"--only {only}: no run to tune is selected", flush=True)
    with clear_errors():
        for corpus in corpora:
            for config in chosen:
                for seed in seeds:
                    tune_one(layout, corpus, run_name(config, tag), seed, step, gpu_id)
            if summary is not None:
                # from every tuned run there is, not only those --only selected: a partial rerun
                # rewrites the same summary instead of shrinking it
                write_summary(layout, corpus, [run_name(config, tag) for config in configs], seeds, summary, reference)


@benchmark_app.command("table")
def table_cli(
    name: str = typer.Argument(..., metavar="NAME", help="The study's name: writes METRICS_DIR/<corpus>/NAME.md and NAME.png"),
    corpora: List[str] = typer.Option(..., "--corpus", help="A corpus whose runs are tabled; repeatable"),
    configs: List[str] = typer.Option(..., "--config", help="A system of the study, one row each: a config, or CONFIG@VARIANT for its runs tagged <TAG>_<VARIANT> (trained with an override); repeatable"),
    settings: List[str] = typer.Option(..., "--setting", help="TAG=LABEL, in column order, e.g. n50=50; an empty TAG (=0) is the untagged runs"),
    xlabel: str = typer.Option("setting", "--xlabel", help="What the settings are, e.g. training sentences"),
    detail: bool = typer.Option(False, "--detail", help="Also macro precision and recall, and the missampling rate"),
    baselines: List[str] = typer.Option([], "--baseline", help="Compare every other system with this one in each setting (paired bootstrap); repeatable"),
    references: List[str] = typer.Option([], "--reference", help="An untagged run (e.g. token_ner) to pair every <config>-<TAG> with; repeatable"),
    choose_on_dev: bool = typer.Option(False, "--choose-on-dev", help="Choose each system's setting by its mean dev score and report that choice's test score"),
    metrics_dir: Path = METRICS_DIR,
) -> None:
    """A study's tables and plot: each system's mean ± std over seeds by setting, from the runs `benchmark run --tag TAG` wrote, with paired comparisons."""
    from ..benchmark.study.table import Study, parse_settings, write_study

    with clear_errors():
        pairs = parse_settings(settings)
    unknown = [baseline for baseline in baselines if baseline not in configs]
    if unknown:
        fail(f"--baseline {', '.join(unknown)} is not among the --config values ({', '.join(configs)})")
    warn_without_matplotlib("benchmark table", f"{name}.png")
    study = Study(name, configs, pairs, xlabel, detail, baselines, references, choose_on_dev)
    for corpus in corpora:
        folder = metrics_dir / corpus
        if not folder.is_dir():
            fail(f"--corpus {corpus}: no records in {folder} (--metrics-dir {metrics_dir})")
        with clear_errors():
            text = write_study(study, folder, corpus, plots=has_matplotlib(), warn=lambda line: print(line, file=sys.stderr))
        print(text)


def next_steps(python: str) -> str:
    """The commands that do what the demo did on the user's own corpus, each
    runnable as printed (``python``: the interpreter of this environment)."""
    return "\n".join([
        "Next, on your own data: a CoNLL file, one token per line with its tag last (BIO, IOB1 or BILUO),",
        "a blank line between sentences. Convert and split it, write a config, train, and score on test:",
        f"  {python} -m spacy_imbalance convert mine.conll corpus/mine --split train=0.7,dev=0.15,test=0.15",
        f"  {python} -m spacy_imbalance init-config config.cfg --component sampled_spancat",
        f"  {python} -m spacy train config.cfg --output training/mine --paths.train corpus/mine/train.spacy --paths.dev corpus/mine/dev.spacy",
        f"  {python} -m spacy_imbalance evaluate training/mine/model-best corpus/mine/test.spacy",
        "Which component and method suit your corpus best, trained and ranked on dev within a budget:",
        f"  {python} -m spacy_imbalance advise corpus/mine/train.spacy corpus/mine/dev.spacy -o advice --budget 20",
    ])


def _this_python() -> str:
    """This interpreter as the user can type it from the current folder: a
    relative path inside it (.venv/bin/python), else the absolute one."""
    path = Path(sys.executable)
    try:
        return str(path.relative_to(Path.cwd()))
    except ValueError:
        return str(path)


def _clock(seconds: float) -> str:
    minutes, rest = divmod(round(seconds), 60)
    return f"{minutes} min {rest} s" if minutes else f"{rest} s"


@benchmark_app.command("sweep-speed")
def sweep_speed_cli(
    corpus: str = typer.Option(..., "--corpus", help="A corpus of --corpus-dir"),
    configs: List[str] = typer.Option(..., "--config", help="A config of --configs-dir; repeatable"),
    seed_values: List[str] = typer.Option(["0,1"], "--seed", help="A seed or a comma-separated list, e.g. 0,1"),
    max_steps: int = typer.Option(300, "--max-steps", help="Training steps per trial"),
    workers: int = typer.Option(2, "--workers", help="Ray's workers in the second mode"),
    work_dir: Path = typer.Option(Path("training/sweep_speed"), "--work-dir", help="Where each mode trains its trials"),
    only: str = typer.Option("", "--only", help="Comma-separated run names: it runs only when empty or naming sweep-speed"),
    configs_dir: Path = CONFIGS_DIR,
    corpus_dir: Path = CORPUS_DIR,
    metrics_dir: Path = METRICS_DIR,
) -> None:
    """What Ray buys a sweep: the same trials timed one after another and on Ray with --workers workers, written to METRICS_DIR/<corpus>/sweep_speed.json and .md. Run it alone on the machine: it times."""
    import srsly

    from ..benchmark.sweep_speed import table, time_modes
    from ..sweeps import ray_available

    out = metrics_dir / corpus / "sweep_speed.json"
    if only.strip() and "sweep-speed" not in only_names(only):
        print(f"--only {only}: the sweep-speed benchmark is not selected", flush=True)
        if not out.with_suffix(".md").exists():  # a write-up may include it: say it has not run
            out.parent.mkdir(parents=True, exist_ok=True)
            out.with_suffix(".md").write_text("No sweep-speed run yet.\n", encoding="utf8")
        return
    if not ray_available():
        fail("benchmark sweep-speed times Ray: pip install 'spacy-imbalance[ray]'")
    bounded(workers, "--workers", low=2, integer=True)
    bounded(max_steps, "--max-steps", low=1, integer=True)
    with clear_errors():
        seeds = parse_seeds(seed_values)
    layout = _layout(configs_dir, corpus_dir, metrics_dir, Path("training"), [corpus], configs)
    result = time_modes(layout, corpus, configs, seeds, max_steps, workers, work_dir)
    out.parent.mkdir(parents=True, exist_ok=True)
    srsly.write_json(out, result, indent=2)
    text = table(result)
    out.with_suffix(".md").write_text(text, encoding="utf8")
    print(text)
