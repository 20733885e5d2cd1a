"""One benchmark run: train a config on corpus/<corpus>/train.spacy
(selecting on dev), evaluate model-best on test, and record it in
metrics/<corpus>/<run>-s<seed>.json with what the benchmark resumes and
compares on (``Layout`` says where those folders are)."""
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Dict, Optional, Tuple

from .layout import Layout
from .options import with_seed
from .records import missampling_record
from .train_size import train_set_size

if TYPE_CHECKING:
    from spacy_imbalance.sweeps import Trial

# spaCy and the package are imported where they are used: an invocation whose
# runs --only leaves out, or whose records are all fresh, returns at once

# what a run's record holds besides its evaluation: the train-set size fields
Size = Dict[str, float]


@dataclass(frozen=True)
class Run:
    """One run: ``config`` trained on ``corpus`` with ``seed`` for
    ``max_steps`` steps (``budget`` "epochs": as many epochs as that gives
    the plain corpus), with the config ``overrides`` ({seed} filled in per
    run), named ``name`` (<config> or <config>-<tag>) in its files."""

    corpus: str
    config: str
    seed: int
    name: str
    max_steps: int
    overrides: Dict[str, str] = field(default_factory=dict)
    budget: str = "steps"
    gpu_id: int = -1


def config_sha(layout: Layout, config: str) -> str:
    """The config's fingerprint: what it says, not how it is written (comments
    and layout do not retrain a run)."""
    from spacy_imbalance.init_config import config_fingerprint

    return config_fingerprint(layout.config(config).read_text(encoding="utf8"))


def expected_record(sha: str, max_steps: int, budget: str, overrides: Dict[str, str]) -> Dict[str, Any]:
    """The values a run's record must hold to be reused: the same config,
    budget and overrides (written into every record the benchmark runs)."""
    return {"config_sha256": sha, "max_steps": max_steps, "budget": budget, "overrides": overrides}


def required_fields(need_counts: bool, need_dev_curve: bool) -> Tuple[str, ...]:
    """The fields a reused record must have: the per-sentence counts a
    paired comparison reads, the dev curve a choice on dev reads."""
    return tuple(name for name, needed in (("counts", need_counts), ("dev_curve", need_dev_curve)) if needed)


def is_done(
    metrics: Path, sha: str, max_steps: int, need_counts: bool, overrides: Dict[str, str], budget: str = "steps",
    need_dev_curve: bool = False,
) -> bool:
    """Whether a run's record at ``metrics`` is fresh for this config, budget
    and overrides (``expected_record``, ``required_fields``). A record from
    before a field existed reads as its default (``RUN_DEFAULTS``: a step
    budget, no overrides); one that cannot be read is an error naming it."""
    from spacy_imbalance.scorers.pooling import RUN_DEFAULTS
    from spacy_imbalance.sweeps.records import is_fresh, read_record

    expected = expected_record(sha, max_steps, budget, overrides)
    return is_fresh(read_record(metrics), expected, required_fields(need_counts, need_dev_curve), defaults=RUN_DEFAULTS)


def make_trial(layout: Layout, run: Run, train_steps: int) -> "Trial":
    """The sweep trial of ``run``, training ``train_steps`` steps: train on
    the corpus's train split, select on dev, evaluate model-best on test."""
    from spacy_imbalance.sweeps import Trial

    return Trial(
        name=f"{run.corpus} {run.name} seed {run.seed}",
        config=str(layout.config(run.config)),
        output=str(layout.output(run.corpus, run.name, run.seed)),
        metrics=str(layout.record(run.corpus, run.name, run.seed)),
        train=str(layout.corpus(run.corpus, "train")),
        dev=str(layout.corpus(run.corpus, "dev")),
        test=str(layout.corpus(run.corpus, "test")),
        seed=run.seed, max_steps=train_steps, overrides=with_seed(run.overrides, run.seed), gpu_id=run.gpu_id,
    )


def train_steps_of(layout: Layout, run: Run) -> Tuple[int, Optional[Size]]:
    """The steps ``run`` trains, and the train-set size where that took
    counting: with ``budget="epochs"``, max_steps x the word factor of its
    train reader, as many epochs as ``max_steps`` gives the plain corpus (the
    resampling paper fixes epochs)."""
    if run.budget != "epochs":
        return run.max_steps, None
    size = train_set_size(layout, run.config, run.corpus, run.seed, run.overrides)
    return max(1, round(run.max_steps * size["word_factor"])), size


def complete_record(
    report: Dict[str, Any], layout: Layout, run: Run, trial: "Trial", size: Optional[Size] = None
) -> Dict[str, Any]:
    """A finished run's report with what the benchmark resumes and compares
    on, and where it ran. Its provenance is the trial's (measured where it
    trained, its threads included), else measured here, with this process's
    command line and the run's overrides."""
    from spacy_imbalance.sweeps import run_provenance
    from spacy_imbalance.sweeps.provenance import command_record

    report.update(
        {
            # the run's name, which summaries pool the seeds of; the trial's name
            # (corpus, run and seed, for progress lines) named one row per seed
            "name": run.name,
            "corpus": run.corpus,
            "config": run.config,
            **expected_record(config_sha(layout, run.config), run.max_steps, run.budget, run.overrides),
            "seed": run.seed,
            "gpu_id": run.gpu_id,
            # a Ray worker's own command line says nothing of the run: this process's does
            "provenance": {
                **(report.get("provenance") or run_provenance(run.gpu_id)),
                "command": command_record(with_seed(run.overrides, run.seed)),
            },
            # counted after training, so that it never takes a core from the timed runs
            **(size or train_set_size(layout, run.config, run.corpus, run.seed, run.overrides)),
            **missampling_record(Path(trial.output) / "model-last"),
        }
    )
    return report


def record_run(
    report: Dict[str, Any], layout: Layout, run: Run, trial: "Trial", size: Optional[Size] = None
) -> Dict[str, Any]:
    """``complete_record``, written to the trial's metrics file whole or not
    at all (``is_done`` reads it back)."""
    from spacy_imbalance.sweeps.records import write_record

    record = complete_record(report, layout, run, trial, size)
    write_record(trial.metrics, record)
    return record


def run_one(layout: Layout, run: Run) -> Dict[str, Any]:
    """Train, evaluate and record ``run`` in this process (the audit
    validation's runs, the GPU check's); its record."""
    from spacy_imbalance.sweeps import run_trial

    steps, size = train_steps_of(layout, run)
    trial = make_trial(layout, run, steps)
    return record_run(run_trial(trial), layout, run, trial, size)


def print_tables(report: Dict[str, Any], trial: "Trial") -> None:
    """A run's evaluation tables (macro and micro scores, then each type), as
    ``spacy-imbalance evaluate`` prints them."""
    from spacy_imbalance.evaluation.evaluate import print_report

    print_report(report, f"{report['name']} on {trial.test}")
