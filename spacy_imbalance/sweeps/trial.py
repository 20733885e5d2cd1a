"""One trial of a sweep: train a config with ``spacy train`` in its own
process, evaluate its best checkpoint, and return the evaluation report.

A trial is plain data (paths, settings), so that Ray can send it to a worker
on another machine; its paths must then be on storage every node sees.
"""
import contextlib
import io
import os
import re
import subprocess
import sys
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Callable, Dict, Iterator, List, Optional

import srsly

from .records import write_record

# called at each of a training's evaluations with its step, dev score (0-1)
# and the seconds since training began
OnEvaluation = Callable[[int, float, float], None]


# wasabi's colours, left out of an error message
ANSI = re.compile(r"\x1b\[[0-9;]*m")
# the fields of a Trial that are paths
PATHS = ("config", "output", "metrics", "train", "dev", "test")


@dataclass(frozen=True)
class Trial:
    """A training run and its evaluation.

    name (str): how progress and errors name it.
    config (str): the .cfg file.
    output (str): the training folder (model-best, model-last; the log beside it).
    metrics (str): the evaluation report written there (JSON).
    train (str), dev (str): the corpora of paths.train and paths.dev.
    test (str): the corpus model-best is evaluated on.
    seed (int): system.seed.
    max_steps (int): training.max_steps.
    overrides (Dict[str, str]): more ``--key value`` settings of spacy train.
    gpu_id (int): the GPU to train and evaluate on, -1 for the CPU.
    threads (int): the CPU threads of its process (OMP and BLAS).
    workdir (Optional[str]): the folder where training and evaluation run,
        which relative paths in the overrides and in the config (a sourced
        pipeline, ``[initialize] vectors``) are read from; None: this
        process's. ``run_trials`` sets the caller's folder, because Ray Tune
        starts every trial in a folder of its own.
    """

    name: str
    config: str
    output: str
    metrics: str
    train: str
    dev: str
    test: str
    seed: int = 0
    max_steps: int = 2000
    overrides: Dict[str, str] = field(default_factory=dict)
    gpu_id: int = -1
    threads: int = 1
    workdir: Optional[str] = None

    @property
    def log(self) -> Path:
        return Path(self.output).with_suffix(".log")

    def to_dict(self) -> Dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: Dict[str, Any]) -> "Trial":
        return cls(**data)


class TrialFailed(RuntimeError):
    """A trial's training or evaluation exited with an error; the message
    names the trial and its log."""


def run_trial(trial: Trial, on_evaluation: Optional[OnEvaluation] = None) -> Dict[str, Any]:
    """Train and evaluate ``trial``; its report (macro and micro scores, per
    type, per-sentence counts, the training time and dev curve, the steps it
    trained and where it ran), written to ``trial.metrics`` and returned.
    ``on_evaluation`` hears of each dev evaluation while training runs."""
    from .provenance import run_provenance

    if trial.workdir is not None:
        # this process reads the trial's own paths as its training process does
        workdir = Path(trial.workdir).resolve()
        located = {key: str(workdir / getattr(trial, key)) for key in PATHS}
        trial = Trial.from_dict({**trial.to_dict(), **located, "workdir": str(workdir)})
    output, metrics = Path(trial.output), Path(trial.metrics)
    output.parent.mkdir(parents=True, exist_ok=True)
    metrics.parent.mkdir(parents=True, exist_ok=True)
    train_cmd = [
        sys.executable, "-m", "spacy", "train", trial.config,
        "--output", str(output),
        "--paths.train", trial.train,
        "--paths.dev", trial.dev,
        "--system.seed", str(trial.seed),
        "--training.max_steps", str(trial.max_steps),
        "--gpu-id", str(trial.gpu_id),
        *[arg for key, value in trial.overrides.items() for arg in (f"--{key}", str(value))],
    ]
    # each trial its own threads: trials side by side share the cores instead of fighting over them
    threads = str(trial.threads)
    env = dict(os.environ, OMP_NUM_THREADS=threads, OPENBLAS_NUM_THREADS=threads, MKL_NUM_THREADS=threads)
    start = time.perf_counter()
    with trial.log.open("w", encoding="utf8") as out:
        code = _train(train_cmd, env, out, start, on_evaluation, cwd=trial.workdir)
    train_seconds = time.perf_counter() - start
    budget_step = _budget_step(trial.log) if code != 0 else None
    stopped_by_budget = budget_step is not None and (output / "model-best").exists()
    if code != 0 and not stopped_by_budget:
        raise TrialFailed(f"Training {trial.name} failed (exit code {code}); see {trial.log}")
    _evaluate(trial, output / "model-best", metrics, env)
    report = srsly.read_json(metrics)
    report.update(
        {
            "train_seconds": train_seconds,
            "train_steps": trial.max_steps,
            # [step, dev score] at each evaluation; its last step is where training stopped
            "dev_curve": dev_curve(trial.log),
            # a [training.before_update] time budget (spacy-imbalance.time_budget.v1) ended it
            "stopped_by_budget": stopped_by_budget,
            **({"steps_trained": budget_step} if stopped_by_budget else {}),
            "wall_seconds": time.perf_counter() - start,
            # this process's record, with the threads its training process had
            "provenance": {**run_provenance(trial.gpu_id), "omp_threads": trial.threads, "torch_threads": trial.threads},
        }
    )
    report.update(step_record(report))
    write_record(metrics, report)
    # as read back (JSON keeps 10 digits): the same report here and from a Ray worker
    return srsly.read_json(metrics)


def _evaluate(trial: Trial, model: Path, metrics: Path, env: Dict[str, str]) -> None:
    """``spacy-imbalance evaluate`` of ``model`` on the trial's test set,
    its report written to ``metrics``. On the CPU in this process, with the
    trial's threads: a process of its own would import spaCy, torch and every
    package that registers with spaCy again, seconds a trial, as long as a
    small model's training. On a GPU in a process of its own, which gives
    the GPU's memory back when it ends."""
    if trial.gpu_id >= 0:
        command = [
            sys.executable, "-m", "spacy_imbalance", "evaluate", str(model), trial.test,
            "--output", str(metrics), "--name", trial.name, "--gpu-id", str(trial.gpu_id),
        ]
        done = subprocess.run(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env, cwd=trial.workdir)
        if done.returncode != 0:
            raise TrialFailed(f"Evaluating {trial.name} failed (exit code {done.returncode}): {done.stdout[-2000:]}")
        return
    from ..evaluation.evaluate import EvaluationError, evaluate_model

    said = io.StringIO()
    try:
        # its messages only for an error, as from the process above
        with contextlib.redirect_stdout(said), contextlib.redirect_stderr(said), _torch_threads(trial.threads):
            report = evaluate_model(str(model), Path(trial.test), name=trial.name)
            write_record(metrics, report)
    except Exception as err:
        said_plain = ANSI.sub("", said.getvalue())[-2000:].strip()
        # a pipeline or data that cannot be scored: the message says what is wrong; a crash inside a component or torch: named too
        crash = f"{err}\n" if isinstance(err, EvaluationError) else f"{type(err).__name__}: {err}\n"
        raise TrialFailed(f"Evaluating {trial.name} failed: {(crash + said_plain).strip() or err}") from err


@contextlib.contextmanager
def _torch_threads(threads: int) -> Iterator[None]:
    """torch's intra-op threads set to ``threads`` (where torch is loaded),
    as OMP_NUM_THREADS sets them for a process of the trial's own."""
    torch = sys.modules.get("torch")
    before = torch.get_num_threads() if torch else None
    if torch:
        torch.set_num_threads(threads)
    try:
        yield
    finally:
        if torch:
            torch.set_num_threads(before)


def _train(
    command: List[str], env: Dict[str, str], log: Any, start: float, on_evaluation: Optional[OnEvaluation], cwd: Optional[str]
) -> int:
    """Run ``spacy train`` in ``cwd``, its output to ``log`` line by line
    (readable while it runs), telling ``on_evaluation`` of each evaluation row."""
    process = subprocess.Popen(
        command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, env=env, cwd=cwd, text=True, encoding="utf8", errors="replace"
    )
    assert process.stdout is not None
    for line in process.stdout:
        log.write(line)
        log.flush()
        match = TRAIN_ROW.match(line)
        if match and on_evaluation is not None:
            on_evaluation(int(match.group(1)), float(match.group(2)), time.perf_counter() - start)
    return process.wait()


def step_record(report: Dict[str, Any]) -> Dict[str, Any]:
    """The steps a run trained (its last evaluation), and whether the step
    cap ended it while dev was still improving (its best score at the last
    evaluation): a run a longer budget might have improved."""
    curve = report.get("dev_curve") or []
    if not curve:
        return {}
    steps = report.get("steps_trained") or curve[-1][0]
    best = max(score for _, score in curve)
    return {"steps_trained": steps, "cut_by_step_cap": steps >= report["train_steps"] and curve[-1][1] >= best}


def _budget_step(log: Path) -> Optional[int]:
    """The step before which a time budget stopped the training, if one did."""
    from .budget import STOPPED_BY_BUDGET

    match = STOPPED_BY_BUDGET.search(log.read_text(encoding="utf8"))
    return int(match.group(1)) if match else None


# a row of spaCy's console training table: epoch, step, losses and scores, then SCORE
TRAIN_ROW = re.compile(r"^\s*\d+\s+(\d+)\s.*\s(\d+\.\d+)\s*$")


def dev_curve(log: Path) -> List[List[float]]:
    """[step, dev score (0-1)] at each evaluation of a training log, the
    checkpoint-selection score."""
    return dev_curve_of(log.read_text(encoding="utf8"))


def dev_curve_of(text: str) -> List[List[float]]:
    """``dev_curve`` of a training log's text."""
    curve = []
    for line in text.splitlines():
        match = TRAIN_ROW.match(line)
        if match:
            curve.append([int(match.group(1)), float(match.group(2))])
    return curve


def best_dev_score(report: Dict[str, Any]) -> Optional[float]:
    """The best dev score of a trial's curve (None before any evaluation)."""
    curve = report.get("dev_curve") or []
    return max(score for _, score in curve) if curve else None
