"""Train and evaluate configs x corpora x seeds, then summarise (mean ± std).

Each run trains with `spacy train`, evaluates model-best on the test split with
`spacy-imbalance evaluate`, and writes metrics/<corpus>/<config>-s<seed>.json,
which also records the size of the training set the config's train reader
yields (size factor = examples / sentences of the plain corpus). A finished run
is skipped when its metrics file records the same config (the SHA-256 of its
settings, whatever their order, comments or layout) and step budget, so an interrupted benchmark resumes where it stopped and
an edited config is trained again; --force redoes all.

With --baseline, every other config is compared with it by a paired bootstrap
of the mean macro/micro-F1 difference over the seeds (same seeds paired, same
resampled test sentences), written next to the summary.

--set KEY=VALUE overrides the configs of every run (spaCy's dotted names),
e.g. a low-resource study that swaps the train reader for a subset:
--set corpora.train.@readers=spacy-imbalance.SubsampledCorpus.v1
--set corpora.train.n_sentences=200 --set corpora.train.seed={seed} --tag n200
({seed} is replaced by each run's seed, so seed s trains on subset s). The tag
names the runs (<config>-n200-s<seed>), so runs with other overrides sit next
to them; a finished run counts only with the same overrides.

--seed takes one seed or a comma-separated list (--seed 0,1,2). --only takes
run names, comma-separated (ner,sampled_spancat_uniform-m50: <config>, or
<config>-<tag> for tagged runs) and trains only those (a quick pass through a
study; the summary then covers only those runs). --tables prints each run's
evaluation table (macro, micro and per-type scores). --metrics-dir and
--training-dir put the runs elsewhere than metrics/ and training/ (the demo
writes to runs/demo/, which git ignores: a user's first demo trains, whatever
the committed reference run in metrics/demo/ records). When it trained
anything it ends with the wall-clock time and the machine (CPU and cores, or
GPU); --next-steps then prints the commands that train on the user's own
CoNLL file. --equal-epochs trains each run
for max_steps x its train reader's word factor (words per epoch against the
plain corpus; the batcher batches by words): a corpus resampled to twice the
words then gets twice the steps, the same number of epochs, as the resampling
paper's fixed-epoch training.
"""
import sys
import time
from pathlib import Path
from typing import List, Optional

import srsly
import typer

from bench.names import run_name
from bench.options import parse_seeds, parse_sets, selected
from bench.paired import compare_with_baseline
from bench.records import device_words, stopped_at
from bench.runs import config_sha, is_done, make_trial, print_tables, record_run, train_steps_of

# spaCy and the package are imported where they are used: an invocation whose
# runs --only leaves out returns at once


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


def this_python() -> str:
    """This interpreter as the user can type it from the current folder: a
    relative path inside it (.venv/bin/python), else the absolute one."""
    path = Path(sys.executable)
    try:
        return str(path.relative_to(Path.cwd()))
    except ValueError:
        return str(path)


def clock(seconds: float) -> str:
    minutes, rest = divmod(round(seconds), 60)
    return f"{minutes} min {rest} s" if minutes else f"{rest} s"


def main(
    corpora: List[str] = typer.Option(["wnut16", "wnut17"], "--corpus", help="Corpus folders under corpus/"),
    configs: List[str] = typer.Option(["ner", "spancat", "spancat_singlelabel", "spancat_1-8"], "--config"),
    seed_values: List[str] = typer.Option(["0,1,2"], "--seed", help="A seed or a comma-separated list, e.g. 0,1,2; repeatable"),
    max_steps: int = typer.Option(2000, "--max-steps", help="Training steps per run (bounded for a 2-core machine)"),
    gpu_id: int = typer.Option(-1, "--gpu-id"),
    jobs: int = typer.Option(1, "--jobs", "-j", help="Runs trained at the same time, one thread each, on Ray (the ray extra); without Ray, one after another"),
    address: Optional[str] = typer.Option(None, "--address", help="A Ray cluster to run on (e.g. auto, ray://head:10001); its nodes must see --root"),
    summary: str = typer.Option("summary", "--summary", help="Name of the summary files in metrics/<corpus>/"),
    baseline: Optional[str] = typer.Option(None, "--baseline", help="Config to compare the others with (paired bootstrap)"),
    sets: List[str] = typer.Option([], "--set", help="Config override KEY=VALUE for every run, e.g. corpora.train.n_sentences=200; {seed} in VALUE is the run's seed"),
    tag: Optional[str] = typer.Option(None, "--tag", help="Run names become <config>-TAG (runs that differ by --set)"),
    only: str = typer.Option("", "--only", help="Comma-separated run names to train, e.g. ner,ner-m50 (<config> or <config>-<tag>); empty: all"),
    tables: bool = typer.Option(False, "--tables", help="Print each run's evaluation table (macro, micro, per type)"),
    metrics_dir: Path = typer.Option(Path("metrics"), "--metrics-dir", help="Folder (in --root) for metrics/<corpus>/ files"),
    training_dir: Path = typer.Option(Path("training"), "--training-dir", help="Folder (in --root) for the trained pipelines"),
    equal_epochs: bool = typer.Option(
        False, "--equal-epochs",
        help="Scale each run's steps by its train reader's word factor, so that a resampled corpus gets as many epochs as the plain corpus gets from --max-steps",
    ),
    force: bool = typer.Option(False, "--force", help="Rerun finished runs"),
    show_next_steps: bool = typer.Option(
        False, "--next-steps", help="End with the commands that train on your own CoNLL data (the demo)"
    ),
    need_dev_curve: bool = typer.Option(
        False, "--need-dev-curve", help="Rerun finished runs whose record has no dev curve (runs from before records kept it), for a study that chooses a setting on dev"
    ),
    root: Path = typer.Option(Path("."), "--root", help="Project folder"),
) -> None:
    started = time.perf_counter()
    if baseline is not None and baseline not in configs:
        raise typer.BadParameter(f"--baseline {baseline!r} is not one of the --config values {configs}")
    seeds = parse_seeds(seed_values)
    budget = "epochs" if equal_epochs else "steps"
    overrides = parse_sets(sets)
    configs = selected(configs, tag, only)
    if not configs:
        print(f"--only {only}: no run of this benchmark is selected", flush=True)
        return
    if baseline not in configs:
        baseline = None
    runs = [(c, cfg, s) for c in corpora for cfg in configs for s in seeds]
    todo = []
    for i, (corpus, config, seed) in enumerate(runs, start=1):
        metrics = root / metrics_dir / corpus / f"{run_name(config, tag)}-s{seed}.json"
        label = f"[{i}/{len(runs)}] {corpus} {run_name(config, tag)} seed {seed}"
        if not force and is_done(metrics, config_sha(root, config), max_steps, baseline is not None, overrides, budget, need_dev_curve):
            print(f"{label}: done before with this config, skipped ({metrics})", flush=True)
        else:
            todo.append((corpus, config, seed))

    from spacy_imbalance.cli.summarize import summarize_cli  # prints the table, writes .md, .json and the plot
    from spacy_imbalance.sweeps import run_trials

    runs_of = {}
    trials = []
    for corpus, config, seed in todo:
        steps, size = train_steps_of(root, config, corpus, seed, max_steps, overrides, budget)
        trial = make_trial(corpus, config, seed, steps, gpu_id, root, overrides, run_name(config, tag), metrics_dir, training_dir)
        runs_of[trial.name] = (corpus, config, seed, size, run_name(config, tag))
        trials.append(trial)

    def done(trial, report: dict, n_done: int, n_all: int) -> None:
        corpus, config, seed, size, name = runs_of[trial.name]
        report = record_run(report, corpus, config, seed, max_steps, gpu_id, root, overrides, trial, budget, size, name=name)
        if tables:
            print_tables(report, trial)
        print(
            f"[{n_done}/{n_all} trained] {trial.name}: macro-F1 {100 * report['macro']['f']:.1f}, "
            f"micro-F1 {100 * report['micro']['f']:.1f}, size x{report['size_factor']:.2f}, "
            f"{stopped_at(report)} steps ({report['train_seconds']:.0f} s)",
            flush=True,
        )

    if trials:
        print(f"Training {len(trials)} runs", flush=True)
    run_trials(
        trials, workers=jobs, address=address, gpus_per_trial=1.0 if gpu_id >= 0 else 0.0,
        storage=root / training_dir / "ray", name=summary, on_done=done,
    )
    for corpus in corpora:
        folder = root / metrics_dir / corpus
        files = [str(folder / f"{run_name(cfg, tag)}-s{s}.json") for cfg in configs for s in seeds]
        out = folder / f"{summary}.md"
        over = f"mean of {len(seeds)} seeds" if len(seeds) > 1 else f"seed {seeds[0]}"
        plot = folder / ("per_type_f1.png" if summary == "summary" else f"{summary}_per_type_f1.png")
        summarize_cli([Path(f) for f in files], output=out, plot=plot, title=f"Per-type F1 on {corpus} test ({over})")
        if baseline is not None and len(configs) > 1:
            names = [run_name(cfg, tag) for cfg in configs]
            result, table = compare_with_baseline(folder, names, seeds, run_name(baseline, tag))
            srsly.write_json(out.with_name(f"{summary}-paired.json"), result)
            with out.open("a", encoding="utf8") as f:
                f.write("\n" + table)
            print(table)
    if trials:
        from spacy_imbalance.sweeps import run_provenance

        # measured here, each time: a figure from another machine or load says little about this one
        where = device_words(run_provenance(gpu_id, root))
        print(
            f"\n{len(trials)} runs trained and scored in {clock(time.perf_counter() - started)} "
            f"on this machine: {'GPU' if gpu_id >= 0 else 'CPU'}, {where}",
            flush=True,
        )
    if show_next_steps:
        print(f"\nYour runs are in {root / metrics_dir}/, their pipelines in {root / training_dir}/.")
        print(next_steps(this_python()), flush=True)


if __name__ == "__main__":
    typer.run(main)
