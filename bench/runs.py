"""One benchmark run: train on corpus/<corpus>/train.spacy (selecting on
dev), evaluate model-best on test, and record it in
<metrics_dir>/<corpus>/<name>-s<seed>.json with what the benchmark resumes
and compares on."""
from pathlib import Path
from typing import TYPE_CHECKING, Any, Dict, Optional, Tuple

import srsly

from .options import with_seed
from .records import missampling_record
from .train_size import train_set_size

if TYPE_CHECKING:
    from spacy_imbalance.sweeps import Trial

# spaCy and the package are imported where they are used: an invocation whose
# runs --only leaves out returns at once


def config_sha(root: Path, config: str) -> str:
    """The config's fingerprint: what it says, not how it is written (comments
    and layout do not retrain a run)."""
    from spacy_imbalance.init_config import config_fingerprint

    return config_fingerprint((root / "configs" / f"{config}.cfg").read_text(encoding="utf8"))


def is_done(
    metrics: Path, sha: str, max_steps: int, need_counts: bool, overrides: Dict[str, str], budget: str = "steps",
    need_dev_curve: bool = False,
) -> bool:
    """Whether a run's metrics are there for this config, budget and overrides
    (and hold the per-sentence counts when a paired comparison will need them,
    and the dev curve when a setting is to be chosen on dev). A record from
    before a field existed reads as its default (``RUN_DEFAULTS``: a step
    budget, no overrides); one that cannot be read is an error naming it."""
    from spacy_imbalance.scorers.pooling import RUN_DEFAULTS
    from spacy_imbalance.sweeps.records import is_fresh, read_record

    expected = {"config_sha256": sha, "max_steps": max_steps, "budget": budget, "overrides": overrides}
    requires = [field for field, needed in (("counts", need_counts), ("dev_curve", need_dev_curve)) if needed]
    return is_fresh(read_record(metrics), expected, requires, defaults=RUN_DEFAULTS)


def make_trial(
    corpus: str, config: str, seed: int, train_steps: int, gpu_id: int, root: Path,
    overrides: Dict[str, str], name: str, metrics_dir: Path, training_dir: Path,
) -> "Trial":
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
) -> Tuple[int, Optional[Dict[str, float]]]:
    """The steps a run trains, and the train-set size where that took
    counting: with ``budget="epochs"``, max_steps x the word factor of its
    train reader, as many epochs as ``max_steps`` gives the plain corpus (the
    resampling paper fixes epochs)."""
    if budget != "epochs":
        return max_steps, None
    size = train_set_size(root, config, corpus, seed, overrides)
    return max(1, round(max_steps * size["word_factor"])), size


def record_run(
    report: Dict[str, Any], corpus: str, config: str, seed: int, max_steps: int, gpu_id: int, root: Path,
    overrides: Dict[str, str], trial: "Trial", budget: str = "steps", size: Optional[Dict[str, float]] = None, *, name: str,
) -> Dict[str, Any]:
    """A finished run's report with what the benchmark resumes and compares
    on, and where it ran, written back to its metrics file; ``name`` is the
    run's (<config> or <config>-<tag>, as its file is named). Its provenance
    is the trial's (measured where it trained, its threads included), else
    measured here, with this process's command line and the overrides."""
    from spacy_imbalance.corpus.docs_io import write_text_atomic
    from spacy_imbalance.sweeps import run_provenance
    from spacy_imbalance.sweeps.provenance import command_record

    report.update(
        {
            # the run's name (<config> or <config>-<tag>), which summaries pool the seeds of; the trial's
            # name (corpus, run and seed, for progress lines) named one row per seed
            "name": name,
            "corpus": corpus,
            "config": config,
            "config_sha256": config_sha(root, config),
            "seed": seed,
            "max_steps": max_steps,
            "budget": budget,
            "overrides": overrides,
            "gpu_id": gpu_id,
            # a Ray worker's own command line says nothing of the run: this process's does
            "provenance": {
                **(report.get("provenance") or run_provenance(gpu_id, root)),
                "command": command_record(with_seed(overrides, seed)),
            },
            # counted after training, so that it never takes a core from the timed runs
            **(size or train_set_size(root, config, corpus, seed, overrides)),
            **missampling_record(Path(trial.output) / "model-last"),
        }
    )
    # compact (per-run files hold per-sentence counts), and never half written: is_done reads it back
    write_text_atomic(Path(trial.metrics), srsly.json_dumps(report, indent=0))
    return report


def run_one(
    corpus: str, config: str, seed: int, max_steps: int, gpu_id: int, root: Path,
    overrides: Dict[str, str], name: str, metrics_dir: Path, training_dir: Path, budget: str = "steps",
) -> Dict[str, Any]:
    """Train, evaluate and record one run in this process (the audit
    validation's runs, the GPU check's); its metrics report."""
    from spacy_imbalance.sweeps import run_trial

    steps, size = train_steps_of(root, config, corpus, seed, max_steps, overrides, budget)
    trial = make_trial(corpus, config, seed, steps, gpu_id, root, overrides, name, metrics_dir, training_dir)
    return record_run(run_trial(trial), corpus, config, seed, max_steps, gpu_id, root, overrides, trial, budget, size, name=name)


def print_tables(report: Dict[str, Any], trial: "Trial") -> None:
    """A run's evaluation tables (macro and micro scores, then each type), as
    ``spacy-imbalance evaluate`` prints them."""
    from spacy_imbalance.evaluation.evaluate import print_report

    print_report(report, f"{report['name']} on {trial.test}")
