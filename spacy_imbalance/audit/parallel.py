"""The audit's fold models trained in parallel on Ray (``audit --workers N
[--address ...]``): the k folds are independent runs of ``spacy train``.

Each fold trains in a task of its own, a ``spacy train`` process with one
thread (so N workers use N cores), its console output in the fold's
``train.log`` (whose dev curve ``finish_fold`` records). The folds' corpora
are written, and their records kept, exactly as in the sequential run, so an
audit resumes per fold whichever way it ran before, and gives the same folds.
"""
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any, Dict, List, Optional

from wasabi import msg

from .folds import TRAIN_LOG, FoldJob

THREADS = {key: "1" for key in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS")}


def train_command(config: Path, job: FoldJob, gpu_id: int) -> List[str]:
    """``spacy train`` for one fold, its overrides as options."""
    # values as spacy train's command line reads them back (JSON where not a plain string)
    options = [arg for key, value in job.overrides.items() for arg in (f"--{key}", value if isinstance(value, str) else json.dumps(value))]
    return [sys.executable, "-m", "spacy", "train", str(config), "--output", str(job.output), "--gpu-id", str(gpu_id), *options]


def _train_in_task(command: List[str], log: str) -> int:
    with open(log, "w", encoding="utf8") as out:
        return subprocess.run(command, stdout=out, stderr=subprocess.STDOUT, env={**os.environ, **THREADS}).returncode


def train_on_ray(config: Path, jobs: List[FoldJob], *, workers: int, address: Optional[str], gpu_id: int) -> None:
    """Train ``jobs`` with at most ``workers`` at once (Ray's resources: one
    CPU each, and one GPU each when ``gpu_id`` >= 0); an error names the
    folds that failed and their logs."""
    import ray

    from ..sweeps import start_ray

    start_ray(workers, 1, address)
    # on a GPU, Ray gives each task its own device as device 0
    task = ray.remote(num_cpus=1, num_gpus=1 if gpu_id >= 0 else 0)(_train_in_task)
    device = 0 if gpu_id >= 0 else -1
    pending: Dict[Any, FoldJob] = {}
    queue = list(jobs)
    failed: List[str] = []
    done = 0
    while queue or pending:
        while queue and len(pending) < workers:
            job = queue.pop(0)
            msg.text(f"Fold {job.fold + 1}: training on Ray (log: {job.output / TRAIN_LOG})")
            pending[task.remote(train_command(config, job, device), str(job.output / TRAIN_LOG))] = job
        ready, _ = ray.wait(list(pending), num_returns=1)
        job = pending.pop(ready[0])
        done += 1
        exit_code = ray.get(ready[0])
        if exit_code != 0:
            failed.append(f"fold {job.fold + 1} ({job.output / TRAIN_LOG})")
        msg.text(f"Fold {job.fold + 1}: {'failed' if exit_code else 'trained'} ({done}/{len(jobs)})")
    if failed:
        raise RuntimeError(f"training failed on Ray for {', '.join(failed)}")
