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
writes to metrics/demo/ and training/demo/). --equal-epochs trains each run
for max_steps x its train reader's word factor (words per epoch against the
plain corpus; the batcher batches by words): a corpus resampled to twice the
words then gets twice the steps, the same number of epochs, as the resampling
paper's fixed-epoch training.
"""
from pathlib import Path
from typing import Dict, List, Optional, Tuple

import srsly
import typer

# spaCy and the package are imported where they are used: an invocation whose
# runs --only leaves out returns at once


def config_sha(root: Path, config: str) -> str:
    """The config's fingerprint: what it says, not how it is written (comments
    and layout do not retrain a run)."""
    from spacy_imbalance.init_config import config_fingerprint

    return config_fingerprint((root / "configs" / f"{config}.cfg").read_text(encoding="utf8"))


def parse_sets(sets: List[str]) -> Dict[str, str]:
    # strings until {seed} is filled in; overrides_for_load reads the values
    from spacy_imbalance.cli._app import split_sets

    return split_sets(sets)


def with_seed(overrides: Dict[str, str], seed: int) -> Dict[str, str]:
    return {key: value.replace("{seed}", str(seed)) for key, value in overrides.items()}


def run_name(config: str, tag: Optional[str]) -> str:
    return f"{config}-{tag}" if tag else config


def parse_seeds(values: List[str]) -> List[int]:
    """--seed values: each one seed or a comma-separated list ("0,1,2")."""
    try:
        return [int(part) for value in values for part in str(value).split(",") if part.strip()]
    except ValueError:
        raise typer.BadParameter(f"expected whole numbers, e.g. --seed 0,1,2; got {values}", param_hint="--seed")


def selected(configs: List[str], tag: Optional[str], only: str) -> List[str]:
    """The configs whose runs --only names (<config>, or <config>-<tag> for
    tagged runs, as in the metrics file names); all when it is empty."""
    names = {name.strip() for name in only.split(",") if name.strip()}
    if not names:
        return list(configs)
    return [config for config in configs if run_name(config, tag) in names]


def is_done(
    metrics: Path, sha: str, max_steps: int, need_counts: bool, overrides: Dict[str, str], budget: str = "steps",
    need_dev_curve: bool = False,
) -> bool:
    """Whether a run's metrics are there for this config, budget and overrides
    (and hold the per-sentence counts when a paired comparison will need them,
    and the dev curve when a setting is to be chosen on dev)."""
    if not metrics.exists():
        return False
    report = srsly.read_json(metrics)
    fresh = (
        report.get("config_sha256") == sha
        and report.get("max_steps") == max_steps
        and report.get("budget", "steps") == budget
        and report.get("overrides", {}) == overrides
    )
    return fresh and ("counts" in report or not need_counts) and ("dev_curve" in report or not need_dev_curve)


def train_set_size(root: Path, config: str, corpus: str, seed: int, overrides: Dict[str, str]) -> Dict[str, float]:
    """How many examples the config's train reader yields per epoch, against
    the sentences of the plain corpus (paper Table 6's size increase factor)."""
    import spacy
    from spacy.util import load_config, registry

    from spacy_imbalance.corpus._source import sentence_examples

    train = root / "corpus" / corpus / "train.spacy"
    cfg = load_config(
        root / "configs" / f"{config}.cfg",
        overrides={**overrides_for_load(with_seed(overrides, seed)), "paths.train": str(train), "paths.dev": str(train), "system.seed": seed},
        interpolate=True,
    )
    nlp = spacy.blank(cfg["nlp"]["lang"])
    reader = registry.resolve({"train": cfg["corpora"]["train"]})["train"]
    plain = registry.resolve({"c": {"@readers": "spacy.Corpus.v1", "path": str(train), "gold_preproc": True}})["c"]
    n_examples = n_words = 0
    for example in reader(nlp):
        n_examples += 1
        n_words += len(example.reference)
    sentences = sentence_examples(plain, nlp)
    plain_words = sum(len(eg.reference) for eg in sentences)
    return {
        "train_examples": n_examples,
        "train_sentences": len(sentences),
        "size_factor": n_examples / len(sentences),
        # the batcher batches by words, so an epoch's steps scale with the words
        "word_factor": n_words / max(plain_words, 1),
    }


def overrides_for_load(overrides: Dict[str, str]) -> Dict[str, object]:
    """--set values as load_config wants them, read as spaCy's CLI does."""
    from spacy_imbalance.cli._app import setting_value

    return {key: setting_value(value) for key, value in overrides.items()}


def make_trial(
    corpus: str, config: str, seed: int, train_steps: int, gpu_id: int, root: Path,
    overrides: Dict[str, str], name: str, metrics_dir: Path, training_dir: Path,
):
    """The sweep trial of one run: train on corpus/<corpus>/train.spacy,
    select on dev, evaluate model-best on test."""
    from spacy_imbalance.sweeps import Trial

    data = root / "corpus" / corpus
    return Trial(
        name=f"{corpus} {name} seed {seed}",
        config=str(root / "configs" / f"{config}.cfg"),
        output=str(root / training_dir / corpus / f"{name}-s{seed}"),
        metrics=str(root / metrics_dir / corpus / f"{name}-s{seed}.json"),
        train=str(data / "train.spacy"), dev=str(data / "dev.spacy"), test=str(data / "test.spacy"),
        seed=seed, max_steps=train_steps, overrides=with_seed(overrides, seed), gpu_id=gpu_id,
    )


def train_steps_of(
    root: Path, config: str, corpus: str, seed: int, max_steps: int, overrides: Dict[str, str], budget: str
) -> Tuple[int, Optional[dict]]:
    """The steps a run trains, and the train-set size where that took
    counting: with ``budget="epochs"``, max_steps x the word factor of its
    train reader, as many epochs as ``max_steps`` gives the plain corpus (the
    resampling paper fixes epochs)."""
    if budget != "epochs":
        return max_steps, None
    size = train_set_size(root, config, corpus, seed, overrides)
    return max(1, round(max_steps * size["word_factor"])), size


def record_run(
    report: dict, corpus: str, config: str, seed: int, max_steps: int, gpu_id: int, root: Path,
    overrides: Dict[str, str], trial, budget: str = "steps", size: Optional[dict] = None,
) -> dict:
    """A finished run's report with what the benchmark resumes and compares
    on, and where it ran, written back to its metrics file."""
    from spacy_imbalance.sweeps import run_provenance

    report.update(
        {
            "corpus": corpus,
            "config": config,
            "config_sha256": config_sha(root, config),
            "seed": seed,
            "max_steps": max_steps,
            "budget": budget,
            "overrides": overrides,
            "gpu_id": gpu_id,
            "provenance": run_provenance(gpu_id, root),
            # counted after training, so that it never takes a core from the timed runs
            **(size or train_set_size(root, config, corpus, seed, overrides)),
            **missampling_record(Path(trial.output) / "model-last"),
        }
    )
    srsly.write_json(trial.metrics, report, indent=0)  # compact: per-run files hold per-sentence counts
    return report


def run_one(
    corpus: str, config: str, seed: int, max_steps: int, gpu_id: int, root: Path,
    overrides: Dict[str, str], name: str, metrics_dir: Path, training_dir: Path, budget: str = "steps",
) -> dict:
    """Train, evaluate and record one run in this process (the audit
    validation's runs); its metrics report."""
    from spacy_imbalance.sweeps import run_trial

    steps, size = train_steps_of(root, config, corpus, seed, max_steps, overrides, budget)
    trial = make_trial(corpus, config, seed, steps, gpu_id, root, overrides, name, metrics_dir, training_dir)
    return record_run(run_trial(trial), corpus, config, seed, max_steps, gpu_id, root, overrides, trial, budget, size)


def print_tables(report: dict, trial) -> None:
    """A run's evaluation tables (macro and micro scores, then each type), as
    ``spacy-imbalance evaluate`` prints them."""
    from spacy_imbalance.cli.evaluate import print_report

    print_report(report, f"{Path(trial.metrics).stem.rsplit('-s', 1)[0]} on {trial.test}")


def stopped_at(report: dict) -> str:
    """The steps a run trained, "of" its budget when early stopping ended it."""
    curve = report.get("dev_curve") or []
    if curve and curve[-1][0] < report["train_steps"]:
        return f"{curve[-1][0]} of {report['train_steps']}"
    return str(report["train_steps"])


def missampling_record(model: Path) -> dict:
    """The missampling rate over the whole training, from the counts a
    sampled_spancat component keeps in its cfg (empty for other pipelines,
    or when the training data had no masked entities)."""
    for cfg_path in sorted(model.glob("*/cfg")):
        cfg = srsly.read_json(cfg_path)
        masked, drawn = cfg.get("missampled") or (0, 0)
        if drawn:
            return {"missampling_rate": masked / drawn, "missampled": [masked, drawn]}
    return {}


def compare_with_baseline(folder: Path, configs: List[str], seeds: List[int], baseline: str) -> Tuple[dict, str]:
    """Paired bootstrap of each config against ``baseline``, seeds paired
    (runs read from ``folder``, i.e. metrics/<corpus>)."""
    from spacy_imbalance.scorers.bootstrap import paired_bootstrap_runs
    from spacy_imbalance.scorers.counts import MatchCounts

    def counts(config: str) -> list:
        return [MatchCounts.from_sparse(srsly.read_json(folder / f"{config}-s{s}.json")["counts"]) for s in seeds]

    base = counts(baseline)
    over_seeds = f"mean difference over seeds {', '.join(map(str, seeds))}" if len(seeds) > 1 else f"seed {seeds[0]}"
    result = {"baseline": baseline, "seeds": seeds, "n_resamples": 1000, "systems": {}}
    lines = [
        f"Paired bootstrap against `{baseline}` ({over_seeds}, "
        "1,000 resamples of the test sentences; in points):",
        "",
        "| system | Δ macro-F1 | 95 % CI | Δ micro-F1 | 95 % CI | resamples not better (macro) |",
        "| --- | --: | --: | --: | --: | --: |",
    ]
    for config in configs:
        if config == baseline:
            continue
        diff = paired_bootstrap_runs(base, counts(config), n_resamples=1000, seed=0)
        result["systems"][config] = diff
        ma, mi = diff["macro_f"], diff["micro_f"]
        lines.append(
            f"| {config} | {100 * ma['delta']:+.1f} | [{100 * ma['low']:+.1f}, {100 * ma['high']:+.1f}] "
            f"| {100 * mi['delta']:+.1f} | [{100 * mi['low']:+.1f}, {100 * mi['high']:+.1f}] | {ma['share_not_better']:.3f} |"
        )
    return result, "\n".join(lines) + "\n"


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
    need_dev_curve: bool = typer.Option(
        False, "--need-dev-curve", help="Rerun finished runs whose record has no dev curve (runs from before records kept it), for a study that chooses a setting on dev"
    ),
    root: Path = typer.Option(Path("."), "--root", help="Project folder"),
) -> None:
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
        runs_of[trial.name] = (corpus, config, seed, size)
        trials.append(trial)

    def done(trial, report: dict, n_done: int, n_all: int) -> None:
        corpus, config, seed, size = runs_of[trial.name]
        report = record_run(report, corpus, config, seed, max_steps, gpu_id, root, overrides, trial, budget, size)
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


if __name__ == "__main__":
    typer.run(main)
