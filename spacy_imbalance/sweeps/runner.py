"""Run a sweep's trials: one after another in this process's machine, or on
Ray Tune, one trial per worker (and per GPU when they train on GPUs), on
this machine's Ray or on a cluster's (``address``).

``run_trials`` runs every trial it is given; ``run_pending`` resumes: it
leaves out the trials whose records are fresh (``records.is_fresh``), so a
sweep stopped half-way runs only what is missing, with or without Ray
(``advise`` and ``spacy-imbalance benchmark run`` resume so).
"""
import contextlib
import os
import re
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Dict, Iterable, Iterator, List, Mapping, Optional, Sequence, TypedDict, Unpack

import srsly
from wasabi import msg

from .records import Record, is_fresh, read_record, write_record
from .trial import PATHS, Trial, TrialFailed, run_trial

if TYPE_CHECKING:
    # Ray is optional (the ray extra): imported where a sweep runs on it
    from ray.tune import Result

OnDone = Callable[[Trial, Dict[str, Any], int, int], None]
# the values a trial's record must hold to be reused (a config's fingerprint, a key)
ExpectedOf = Callable[[Trial], Mapping[str, Any]]
# a trial's evaluation while it trains: the trial, step, dev score (0-1), seconds
OnProgress = Callable[[Trial, int, float, float], None]
# a finished trial's record made whole before it is written (the benchmark adds its run's fields)
Complete = Callable[[Trial, Record], Record]


class RunSettings(TypedDict, total=False):
    """How ``run_trials`` runs the trials (its keyword settings but
    ``on_done``, which it documents), for the functions that pass them on."""

    workers: int
    address: Optional[str]
    gpus_per_trial: float
    storage: Optional[Path]
    name: str
    on_progress: Optional[OnProgress]


def print_progress(trial: Trial, step: int, score: float, seconds: float) -> None:
    """One line per evaluation, so a long run is never silent."""
    minutes, rest = divmod(int(seconds), 60)
    # print, not wasabi's msg.text: that wraps a long line at 80 columns
    print(f"{trial.name}: step {step}, dev score {100 * score:.1f}, {minutes}:{rest:02d} elapsed", flush=True)


def ray_available() -> bool:
    try:
        import ray  # noqa: F401
        from ray import tune  # noqa: F401
    except ImportError:
        return False
    return True


def use_ray(workers: int, address: Optional[str]) -> bool:
    """Whether a sweep with ``workers`` workers runs on Ray: with a cluster
    address, or more than one worker when Ray is installed. Without Ray, more
    than one worker runs one after another, with a warning."""
    if address is not None:
        if not ray_available():
            raise ImportError(f"--address {address} needs Ray: pip install 'spacy-imbalance[ray]'")
        return True
    if workers > 1 and not ray_available():
        msg.warn(f"{workers} workers need Ray (pip install 'spacy-imbalance[ray]'): the trials run one after another")
        return False
    return workers > 1


def run_trials(
    trials: Sequence[Trial],
    *,
    workers: int = 1,
    address: Optional[str] = None,
    gpus_per_trial: float = 0.0,
    storage: Optional[Path] = None,
    name: str = "sweep",
    on_done: Optional[OnDone] = None,
    on_progress: Optional[OnProgress] = print_progress,
) -> List[Dict[str, Any]]:
    """Each trial's report, in the order of ``trials``.

    workers (int): trials at the same time (Ray's max_concurrent_trials).
    address (Optional[str]): a Ray cluster ("auto", "ray://host:10001"); None
        starts Ray on this machine when workers > 1.
    gpus_per_trial (float): GPUs Ray gives each trial (1 for one trial per GPU).
    storage (Optional[Path]): where Ray Tune keeps its experiment state.
    name (str): the experiment's name there.
    on_done (Optional[OnDone]): called with each finished trial, its report,
        how many trials finished and how many there are (progress).
    on_progress (Optional[OnProgress]): called at each dev evaluation of a
        training trial (default: a line on stdout); None for silence.
    """
    trials = [_absolute(trial) for trial in trials]
    if not trials:
        return []
    if use_ray(workers, address):
        return _run_on_ray(trials, workers, address, gpus_per_trial, storage, name, on_done, on_progress)
    reports = []
    for i, trial in enumerate(trials, start=1):
        heard = None if on_progress is None else (lambda step, score, seconds, t=trial: on_progress(t, step, score, seconds))
        report = run_trial(trial, on_evaluation=heard)
        reports.append(report)
        if on_done is not None:
            on_done(trial, report, i, len(trials))
    return reports


def pending(
    trials: Sequence[Trial], expected_of: ExpectedOf, *, requires: Iterable[str] = (),
    defaults: Optional[Mapping[str, Any]] = None,
) -> List[Trial]:
    """The trials (their paths absolute, as ``run_trials`` runs them) whose
    records are not fresh (``records.is_fresh`` with ``expected_of(trial)``,
    ``requires`` and ``defaults``). A record that cannot be read (cut off
    while written) is stale, and said to be: its trial runs again and
    writes it anew."""
    requires = tuple(requires)
    todo = []
    for trial in map(_absolute, trials):
        try:
            record = read_record(trial.metrics)
        except ValueError as err:
            msg.warn(f"{err}; {trial.name} runs again")
            record = None
        if not is_fresh(record, expected_of(trial), requires, defaults):
            todo.append(trial)
    return todo


def run_pending(
    trials: Sequence[Trial],
    expected_of: ExpectedOf,
    *,
    requires: Iterable[str] = (),
    defaults: Optional[Mapping[str, Any]] = None,
    on_done: Optional[OnDone] = None,
    complete: Optional[Complete] = None,
    force: bool = False,
    **settings: Unpack[RunSettings],
) -> List[Record]:
    """Each trial's record, in the order of ``trials``, as written: the
    trials ``pending`` finds (every trial with ``force``) run through
    ``run_trials`` (with ``settings``, and ``on_done`` as it says), the
    others are not run again. A run trial's record gets ``expected_of(trial)``
    merged in, then goes through ``complete``, and is written back in one
    piece before ``on_done`` hears of it, so that the next sweep finds it
    fresh and a stopped sweep leaves no record half made."""

    def record(trial: Trial, report: Dict[str, Any], n_done: int, n_all: int) -> None:
        report.update(expected_of(trial))
        if complete is not None:
            report = complete(trial, report)
        write_record(trial.metrics, report)
        if on_done is not None:
            on_done(trial, report, n_done, n_all)

    todo = [_absolute(trial) for trial in trials] if force else pending(trials, expected_of, requires=requires, defaults=defaults)
    run_trials(todo, on_done=record, **settings)
    return [_written(trial) for trial in map(_absolute, trials)]


def _written(trial: Trial) -> Record:
    record = read_record(trial.metrics)
    if record is None:
        raise TrialFailed(f"{trial.name} ran but left no record at {trial.metrics}")
    return record


def _absolute(trial: Trial) -> Trial:
    # Ray Tune runs each trial in its own working folder: the trial's paths
    # absolute, and the paths inside its config and overrides read from here
    workdir = Path(trial.workdir or os.getcwd()).resolve()
    paths = {key: str((workdir / getattr(trial, key)).resolve()) for key in PATHS}
    return Trial.from_dict({**trial.to_dict(), **paths, "workdir": str(workdir)})


def _trainable(config: Dict[str, Any]) -> None:
    """The Ray Tune function of a trial: it trains, reports each dev
    evaluation as it happens (the driver prints them: workers' own output is
    not sent there), evaluates, and reports the final scores (the full report
    is on disk)."""
    from ray import tune

    def heard(step: int, score: float, seconds: float) -> None:
        tune.report({"step": step, "dev_score": score, "seconds": seconds})

    report = run_trial(Trial.from_dict(config["trial"]), on_evaluation=heard)
    tune.report({"macro_f": report["macro"]["f"], "micro_f": report["micro"]["f"], "train_seconds": report["train_seconds"]})


def start_ray(workers: int, threads: int, address: Optional[str]) -> None:
    """Ray on this machine (``address`` None) with room for ``workers`` tasks
    of ``threads`` threads each, or connected to a cluster; nothing when it
    runs already."""
    import logging

    import ray

    if ray.is_initialized():
        return
    if address is None:
        # as many CPUs as the workers take, so that --jobs is what runs at once
        # Ray's banners (the local instance, its security notes) are not
        # our output for a Ray that lives as long as this sweep: errors only
        # and its workers at our priority: Ray starts them at niceness 15,
        # so on a busy machine the trials (the whole job) would wait
        with _environment({"RAY_worker_niceness": "0"}):
            ray.init(num_cpus=max(os.cpu_count() or 1, workers * threads), include_dashboard=False,
                     object_store_memory=100 * 1024 * 1024, log_to_driver=False, logging_level=logging.ERROR)
    else:
        ray.init(address=address, log_to_driver=False, logging_level=logging.WARNING)


def _run_on_ray(
    trials: List[Trial], workers: int, address: Optional[str], gpus: float, storage: Optional[Path], name: str,
    on_done: Optional[OnDone], on_progress: Optional[OnProgress],
) -> List[Dict[str, Any]]:
    from ray import tune

    start_ray(workers, max(trial.threads for trial in trials), address)
    by_metrics = {trial.metrics: trial for trial in trials}
    finished: List[str] = []

    class Progress(tune.Callback):
        def on_trial_start(self, iteration: int, trials: list, trial: Any, **info: Any) -> None:
            msg.text(f"started: {trial.config['trial']['name']}")

        def on_trial_result(self, iteration: int, trials: list, trial: Any, result: Dict[str, Any], **info: Any) -> None:
            if on_progress is not None and "dev_score" in result:
                done = by_metrics[trial.config["trial"]["metrics"]]
                on_progress(done, int(result["step"]), float(result["dev_score"]), float(result["seconds"]))

        def on_trial_complete(self, iteration: int, trials: list, trial: Any, **info: Any) -> None:
            done = by_metrics[trial.config["trial"]["metrics"]]
            finished.append(done.metrics)
            if on_done is not None:
                on_done(done, srsly.read_json(done.metrics), len(finished), len(by_metrics))

    resources = {"cpu": max(trial.threads for trial in trials), "gpu": gpus}
    tuner = tune.Tuner(
        tune.with_resources(_trainable, resources),
        param_space={"trial": tune.grid_search([trial.to_dict() for trial in trials])},
        tune_config=tune.TuneConfig(
            max_concurrent_trials=workers,
            trial_name_creator=lambda t: _safe(t.config["trial"]["name"]),
            trial_dirname_creator=lambda t: f"{_safe(t.config['trial']['name'])}-{t.trial_id}",
        ),
        run_config=tune.RunConfig(
            name=f"{_safe(name)}-{time.strftime('%Y%m%d-%H%M%S')}",
            storage_path=str((storage or Path("training") / "ray").resolve()),
            callbacks=[Progress()],
            failure_config=tune.FailureConfig(max_failures=0),
            # our own progress lines (Progress) instead of Tune's tables of every trial's settings
            verbose=0,
        ),
    )
    # Tune without its own output (a results-folder banner, a TensorBoard
    # hint): the reports and our progress lines say it all
    with _environment({"RAY_AIR_NEW_OUTPUT": "0"}):
        grid = tuner.fit()
    # by index: a ResultGrid is a sequence by __len__ and __getitem__, with no __iter__
    results = [grid[i] for i in range(len(grid))]
    failed = [(result, result.error) for result in results if result.error is not None]
    if failed:
        names = "; ".join(f"{_failed_trial(result)}: {_first_line(error)}" for result, error in failed)
        raise TrialFailed(f"{len(failed)} of {len(trials)} trials failed on Ray: {names}")
    return [srsly.read_json(trial.metrics) for trial in trials]


@contextlib.contextmanager
def _environment(settings: Dict[str, str]) -> Iterator[None]:
    """``settings`` in os.environ for the block, then as before; a setting
    the user made in the environment wins."""
    before = {key: os.environ.get(key) for key in settings}
    for key, value in settings.items():
        os.environ.setdefault(key, value)
    try:
        yield
    finally:
        for key, earlier in before.items():
            if earlier is None:
                os.environ.pop(key, None)


def _safe(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", name)


def _failed_trial(result: "Result") -> str:
    """What names a failed trial: its name, from the config Tune keeps with
    its last result, or, for a trial that failed before Tune kept any (no
    config), its folder, which trial_dirname_creator names after it."""
    config = result.config
    if config is None:
        return f"the trial in {result.path}"
    return str(config["trial"]["name"])


def _first_line(error: BaseException) -> str:
    text = str(error).strip().splitlines()
    return text[-1] if text else type(error).__name__
