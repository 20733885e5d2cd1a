"""Train and evaluate configs x corpora x seeds, then summarise (mean ± std).

Each run trains with `spacy train`, evaluates model-best on the test split with
`spacy-imbalance evaluate`, and writes metrics/<corpus>/<config>-s<seed>.json.
A finished run is skipped when its metrics file records the same config
(SHA-256 of the .cfg file) and step budget, so an interrupted benchmark resumes
where it stopped and an edited config is trained again; --force redoes all.
"""
import hashlib
import subprocess
import sys
import time
from pathlib import Path
from typing import List

import srsly
import typer


def config_sha(root: Path, config: str) -> str:
    return hashlib.sha256((root / "configs" / f"{config}.cfg").read_bytes()).hexdigest()


def is_done(metrics: Path, sha: str, max_steps: int) -> bool:
    if not metrics.exists():
        return False
    report = srsly.read_json(metrics)
    return report.get("config_sha256") == sha and report.get("max_steps") == max_steps


def run_one(corpus: str, config: str, seed: int, max_steps: int, gpu_id: int, root: Path) -> dict:
    train_dir = root / "training" / corpus / f"{config}-s{seed}"
    metrics = root / "metrics" / corpus / f"{config}-s{seed}.json"
    data = root / "corpus" / corpus
    train_dir.parent.mkdir(parents=True, exist_ok=True)
    log = train_dir.with_suffix(".log")
    train_cmd = [
        sys.executable, "-m", "spacy", "train", str(root / "configs" / f"{config}.cfg"),
        "--output", str(train_dir),
        "--paths.train", str(data / "train.spacy"),
        "--paths.dev", str(data / "dev.spacy"),
        "--system.seed", str(seed),
        "--training.max_steps", str(max_steps),
        "--gpu-id", str(gpu_id),
    ]
    start = time.perf_counter()
    with log.open("w", encoding="utf8") as out:
        code = subprocess.call(train_cmd, stdout=out, stderr=subprocess.STDOUT)
    train_seconds = time.perf_counter() - start
    if code != 0:
        raise SystemExit(f"Training failed ({code}); see {log}")
    eval_cmd = [
        sys.executable, "-m", "spacy_imbalance", "evaluate", str(train_dir / "model-best"),
        str(data / "test.spacy"), "--output", str(metrics), "--name", config, "--gpu-id", str(gpu_id),
    ]
    subprocess.run(eval_cmd, check=True, stdout=subprocess.DEVNULL)
    report = srsly.read_json(metrics)
    report.update(
        {
            "corpus": corpus,
            "config": config,
            "config_sha256": config_sha(root, config),
            "seed": seed,
            "max_steps": max_steps,
            "train_seconds": train_seconds,
        }
    )
    srsly.write_json(metrics, report)
    return report


def main(
    corpora: List[str] = typer.Option(["wnut16", "wnut17"], "--corpus", help="Corpus folders under corpus/"),
    configs: List[str] = typer.Option(["ner", "spancat", "spancat_singlelabel", "spancat_1-8"], "--config"),
    seeds: List[int] = typer.Option([0, 1, 2], "--seed"),
    max_steps: int = typer.Option(2000, "--max-steps", help="Training steps per run (bounded for a 2-core machine)"),
    gpu_id: int = typer.Option(-1, "--gpu-id"),
    force: bool = typer.Option(False, "--force", help="Rerun finished runs"),
    root: Path = typer.Option(Path("."), "--root", help="Project folder"),
) -> None:
    runs = [(c, cfg, s) for c in corpora for cfg in configs for s in seeds]
    for i, (corpus, config, seed) in enumerate(runs, start=1):
        metrics = root / "metrics" / corpus / f"{config}-s{seed}.json"
        label = f"[{i}/{len(runs)}] {corpus} {config} seed {seed}"
        if not force and is_done(metrics, config_sha(root, config), max_steps):
            print(f"{label}: done before with this config, skipped ({metrics})", flush=True)
            continue
        print(f"{label}: training ...", flush=True)
        report = run_one(corpus, config, seed, max_steps, gpu_id, root)
        print(
            f"{label}: macro-F1 {100 * report['macro']['f']:.1f}, micro-F1 {100 * report['micro']['f']:.1f} "
            f"({report['train_seconds']:.0f} s)",
            flush=True,
        )
    for corpus in corpora:
        files = [str(root / "metrics" / corpus / f"{cfg}-s{s}.json") for cfg in configs for s in seeds]
        out = root / "metrics" / corpus / "summary.md"
        plot = root / "metrics" / corpus / "per_type_f1.png"
        subprocess.run(
            [sys.executable, "-m", "spacy_imbalance", "summarize", *files, "--output", str(out),
             "--plot", str(plot), "--title", f"Per-type F1 on {corpus} test (mean of {len(seeds)} seeds)"],
            check=True,
        )


if __name__ == "__main__":
    typer.run(main)
