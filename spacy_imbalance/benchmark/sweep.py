"""A benchmark: configs x corpora x seeds, with one set of overrides, run as
one sweep on the shared runner (``sweeps.run_pending``, as ``advise``
runs): a run whose record is fresh (the same config fingerprint, budget and
overrides, and the fields the comparisons need) is not trained again, so an
interrupted benchmark resumes where it stopped and an edited config is
trained again. Then each corpus's summary, and with a baseline the paired
comparison of every other config with it."""
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Callable, Dict, List, Optional

import srsly

from .layout import Layout
from .names import run_name
from .paired import compare_with_baseline
from .records import stopped_at
from .runs import Run, Size, complete_record, config_sha, expected_record, make_trial, print_tables, required_fields, train_steps_of
from .summary import write_summary

if TYPE_CHECKING:
    from spacy_imbalance.sweeps import Trial

# where progress goes (a line at a time; a test may collect them)
Say = Callable[[str], None]


def say_now(line: str) -> None:
    """A line on stdout at once: a benchmark's log is read while it runs."""
    print(line, flush=True)


@dataclass(frozen=True)
class Benchmark:
    """What a benchmark runs: every config on every corpus with every seed,
    for ``max_steps`` steps (``budget`` "epochs": as many epochs as that
    gives the plain corpus), with ``overrides``; ``tag`` names its runs
    <config>-<tag>. With ``baseline`` (one of ``configs``) a run's record
    must hold its per-sentence counts, with ``need_dev_curve`` its dev curve."""

    corpora: List[str]
    configs: List[str]
    seeds: List[int]
    max_steps: int
    overrides: Dict[str, str] = field(default_factory=dict)
    tag: Optional[str] = None
    budget: str = "steps"
    gpu_id: int = -1
    baseline: Optional[str] = None
    need_dev_curve: bool = False

    def runs(self) -> List[Run]:
        return [
            Run(corpus, config, seed, run_name(config, self.tag), self.max_steps, self.overrides, self.budget, self.gpu_id)
            for corpus in self.corpora for config in self.configs for seed in self.seeds
        ]


def train(
    benchmark: Benchmark, layout: Layout, *, force: bool = False, jobs: int = 1, address: Optional[str] = None,
    name: str = "summary", tables: bool = False, say: Say = say_now,
) -> int:
    """Train and record the benchmark's runs whose records are not fresh
    (all with ``force``): ``jobs`` at once on Ray (or a Ray cluster at
    ``address``), each one's line said when it finishes; how many trained."""
    from spacy_imbalance.scorers.pooling import RUN_DEFAULTS
    from spacy_imbalance.sweeps import pending, run_pending

    shas = {config: config_sha(layout, config) for config in benchmark.configs}
    runs: Dict[str, Run] = {}  # by trial name: "<corpus> <run> seed <seed>", one per run
    trials: List["Trial"] = []
    for run in benchmark.runs():
        trial = make_trial(layout, run, run.max_steps)
        runs[trial.name] = run
        trials.append(trial)

    def expected_of(trial: "Trial") -> Dict[str, Any]:
        run = runs[trial.name]
        return expected_record(shas[run.config], run.max_steps, run.budget, run.overrides)

    requires = required_fields(benchmark.baseline is not None, benchmark.need_dev_curve)
    todo = {trial.name for trial in (trials if force else pending(trials, expected_of, requires=requires, defaults=RUN_DEFAULTS))}
    for i, trial in enumerate(trials, start=1):
        if trial.name not in todo:
            say(f"[{i}/{len(trials)}] {trial.name}: done before with this config, skipped ({trial.metrics})")
    sizes: Dict[str, Optional[Size]] = {}
    scheduled: List["Trial"] = []
    for trial in trials:
        if trial.name in todo:
            # an epochs budget counts the train set now, for the runs that train only
            steps, sizes[trial.name] = train_steps_of(layout, runs[trial.name])
            scheduled.append(make_trial(layout, runs[trial.name], steps))

    def complete(trial: "Trial", report: Dict[str, Any]) -> Dict[str, Any]:
        return complete_record(report, layout, runs[trial.name], trial, sizes[trial.name])

    def done(trial: "Trial", report: Dict[str, Any], n_done: int, n_all: int) -> None:
        if tables:
            print_tables(report, trial)
        say(
            f"[{n_done}/{n_all} trained] {trial.name}: macro-F1 {100 * report['macro']['f']:.1f}, "
            f"micro-F1 {100 * report['micro']['f']:.1f}, size x{report['size_factor']:.2f}, "
            f"{stopped_at(report)} steps ({report['train_seconds']:.0f} s)"
        )

    if scheduled:
        say(f"Training {len(scheduled)} runs")
    # the pending trials were found above (its skip lines said which): run those
    run_pending(
        scheduled, expected_of, requires=requires, defaults=RUN_DEFAULTS, workers=jobs, address=address,
        gpus_per_trial=1.0 if benchmark.gpu_id >= 0 else 0.0, storage=layout.training / "ray", name=name,
        on_done=done, complete=complete, force=True,
    )
    return len(scheduled)


def summarize(benchmark: Benchmark, layout: Layout, name: str = "summary", plots: bool = True, say: Say = say_now) -> None:
    """Each corpus's summary of the benchmark's runs (mean ± std over the
    seeds) in metrics/<corpus>/<name>.md and .json, its per-type F1 chart
    with ``plots``, and with a baseline the paired comparison of every other
    config with it, appended to the .md and in <name>-paired.json."""
    seeds = benchmark.seeds
    names = [run_name(config, benchmark.tag) for config in benchmark.configs]
    for corpus in benchmark.corpora:
        folder = layout.metrics / corpus
        files = [layout.record(corpus, run, seed) for run in names for seed in seeds]
        out = folder / f"{name}.md"
        over = f"mean of {len(seeds)} seeds" if len(seeds) > 1 else f"seed {seeds[0]}"
        plot = folder / ("per_type_f1.png" if name == "summary" else f"{name}_per_type_f1.png")
        say(write_summary(files, out, plot if plots else None, f"Per-type F1 on {corpus} test ({over})"))
        if benchmark.baseline is not None and len(names) > 1:
            result, table = compare_with_baseline(folder, names, seeds, run_name(benchmark.baseline, benchmark.tag))
            srsly.write_json(out.with_name(f"{name}-paired.json"), result)
            with out.open("a", encoding="utf8") as f:
                f.write("\n" + table)
            say(table)

