"""The expensive steps of a check, each skipped when its output exists:
hiding the entities, the audit, and their logs and timings in the work
folder. Each runs the package's own command (``mask``, ``audit``,
``subsample``) as a user runs it, its console output in a log."""
import json
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any, Dict, List, Mapping, Tuple

from ...benchmark.records import read_json
from .matching import SpanKey
from .setting import Setting


class StepFailed(RuntimeError):
    """A step's command exited with an error; the message names its log."""


def run_logged(cmd: List[str], log: Path, what: str) -> None:
    with log.open("w", encoding="utf8") as out:
        code = subprocess.call(cmd, stdout=out, stderr=subprocess.STDOUT)
    if code != 0:
        raise StepFailed(f"{what} failed ({code}); see {log}")


def cli_args(overrides: Mapping[str, Any]) -> List[str]:
    return [arg for key, value in overrides.items() for arg in (f"--{key}", str(value))]


def package_command(*args: str) -> List[str]:
    """``python -m spacy_imbalance ARGS`` with this interpreter."""
    return [sys.executable, "-m", "spacy_imbalance", *args]


def subprocess_trainer(config: Path, output: Path, overrides: Dict[str, Any], gpu_id: int) -> None:
    """A fold's `spacy train`, its console log in OUTPUT.log."""
    cmd = [sys.executable, "-m", "spacy", "train", str(config), "--output", str(output), "--gpu-id", str(gpu_id), *cli_args(overrides)]
    run_logged(cmd, output.with_suffix(".log"), f"Training {output}")


class Timer:
    """Seconds per step, kept in the work folder across resumed runs."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.seconds: Dict[str, float] = read_json(path) if path.exists() else {}

    def record(self, step: str, start: float) -> None:
        self.seconds[step] = round(time.perf_counter() - start, 1)
        self.path.write_text(json.dumps(self.seconds) + "\n", encoding="utf8")


def check_work_folder(setting: Setting) -> None:
    """A work folder made with other settings is refused, not reused."""
    folder = setting.folder
    record = folder / "setting.json"
    shaping = json.loads(json.dumps(setting.shaping()))
    if record.exists() and read_json(record) != shaping:
        raise ValueError(f"{folder} was made with other settings ({read_json(record)}); delete it to start over")
    folder.mkdir(parents=True, exist_ok=True)
    record.write_text(json.dumps(shaping) + "\n", encoding="utf8")


def train_corpus(setting: Setting) -> Path:
    """The training corpus, or its seeded --limit sample."""
    if not setting.limit:
        return setting.train
    sample = setting.work / f"{setting.corpus}{setting.limit_tag}" / "train.spacy"
    if not sample.exists():
        sample.parent.mkdir(parents=True, exist_ok=True)
        cmd = package_command("subsample", str(setting.train), str(sample), "--n", str(setting.limit), "--seed", "0")
        run_logged(cmd, sample.with_suffix(".log"), "Subsampling")
    return sample


def mask_step(setting: Setting, timer: Timer) -> Path:
    """The corpus with a share p of its entities hidden (in doc.spans["masked"])."""
    masked = setting.folder / "masked.spacy"
    if masked.exists():
        return masked
    start = time.perf_counter()
    cmd = package_command("mask", str(train_corpus(setting)), str(masked), "--p", str(setting.p), "--seed", str(setting.seed))
    run_logged(cmd, setting.folder / "mask.log", "Masking")
    timer.record("mask", start)
    return masked


def audit_step(setting: Setting, masked: Path, timer: Timer) -> Path:
    """``spacy-imbalance audit`` of the masked corpus; its output folder."""
    out = setting.folder / "audit"
    if (out / "scored_spans.tsv").exists() and (out / "summary.json").exists():
        return out
    print(f"  audit: {setting.folds} folds x {setting.steps} steps (log: {setting.folder / 'audit.log'})", flush=True)
    start = time.perf_counter()
    encoder = {"vectors": ["--vectors", str(setting.vectors)], "features": ["--features"], "default": []}[setting.encoder]
    cmd = package_command(
        "audit", str(masked), "--dev", str(setting.dev), "-o", str(out), "--folds", str(setting.folds),
        "--seed", str(setting.seed), "--threshold", str(setting.threshold), *encoder,
        "--resamples", str(setting.resamples), "--gpu-id", str(setting.gpu_id), *cli_args(setting.training_overrides()),
    )
    run_logged(cmd, setting.folder / "audit.log", "The audit")
    timer.record("audit", start)
    return out


def read_scored_spans(path: Path) -> List[Tuple[SpanKey, float]]:
    """The audit's ranking (best first) with calibrated probabilities."""
    rows = []
    for line in path.read_text(encoding="utf8").splitlines()[1:]:
        doc, start, end, label, prob = line.split("\t", 7)[:5]
        rows.append(((int(doc), int(start), int(end), label), float(prob)))
    return rows


def prune(folder: Path) -> None:
    """Delete the model-last folders of the fold models and runs (a model
    with static vectors carries them, about 50 MB each); model-best stays."""
    for path in sorted(folder.rglob("model-last")) if folder.exists() else []:
        shutil.rmtree(path)
