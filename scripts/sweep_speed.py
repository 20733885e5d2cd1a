"""What Ray buys a sweep: the same trials timed one after another and on Ray
with --workers workers, side by side on this machine.

The trials are the benchmark's (configs x seeds on a corpus, each trial one
thread, as scripts/benchmark.py runs them); each mode trains them into its
own folder. Writes metrics/<corpus>/sweep_speed.json and .md. Run it alone on
the machine: it times.

    python scripts/sweep_speed.py --corpus wnut16 --config ner --config sampled_spancat_uniform \\
        --config token_ner --config spancat_singlelabel --seed 0,1 --max-steps 300 --workers 2
"""
import time
from pathlib import Path
from typing import List

import srsly
import typer

from bench.options import only_names, parse_list
from bench.sweep_speed import trials_for
from bench.tables import head, row
from spacy_imbalance.sweeps import ray_available, run_trials

ROOT = Path(__file__).resolve().parent.parent


def main(
    corpus: str = typer.Option("wnut16", "--corpus"),
    configs: List[str] = typer.Option(["ner", "spancat_singlelabel", "sampled_spancat_uniform", "token_ner"], "--config"),
    seed_values: str = typer.Option("0,1", "--seed", help="Comma-separated seeds"),
    max_steps: int = typer.Option(300, "--max-steps"),
    workers: int = typer.Option(2, "--workers"),
    work_dir: Path = typer.Option(Path("training/sweep_speed"), "--work-dir"),
    metrics_dir: Path = typer.Option(Path("metrics"), "--metrics-dir"),
    only: str = typer.Option("", "--only", help="Comma-separated run names; runs only when empty or naming sweep-speed"),
) -> None:
    out = ROOT / metrics_dir / corpus / "sweep_speed.json"
    if only.strip() and "sweep-speed" not in only_names(only):
        print(f"--only {only}: the sweep-speed benchmark is not selected", flush=True)
        if not out.with_suffix(".md").exists():  # the write-up includes it: say it has not run
            out.parent.mkdir(parents=True, exist_ok=True)
            out.with_suffix(".md").write_text("No sweep-speed run yet (`spacy project run sweep-speed`).\n", encoding="utf8")
        return
    if not ray_available():
        raise typer.BadParameter("needs Ray: pip install 'spacy-imbalance[ray]'", param_hint="--workers")
    seeds = parse_list(seed_values, int, "--seed")
    modes = [("one after another", 1), (f"Ray, {workers} workers", workers)]
    rows = []
    scores = {}
    for label, n_workers in modes:
        folder = ROOT / work_dir / f"workers-{n_workers}"
        trials = trials_for(ROOT, corpus, configs, seeds, max_steps, folder)
        print(f"{label}: {len(trials)} trials ...", flush=True)
        start = time.perf_counter()
        reports = run_trials(trials, workers=n_workers, storage=ROOT / work_dir / "ray", name=f"sweep-speed-{n_workers}")
        seconds = time.perf_counter() - start
        train = sum(r["train_seconds"] for r in reports)
        scores[label] = [r["macro"]["f"] for r in reports]
        rows.append({"mode": label, "workers": n_workers, "seconds": round(seconds, 1), "trial_seconds": round(train, 1)})
        print(f"{label}: {seconds:.0f} s", flush=True)
    base = rows[0]["seconds"]
    for timed in rows:
        timed["ratio"] = round(timed["seconds"] / base, 3)
    same = scores[modes[0][0]] == scores[modes[1][0]]
    result = {"corpus": corpus, "configs": configs, "seeds": seeds, "max_steps": max_steps, "modes": rows,
              "same_scores": same}
    out.parent.mkdir(parents=True, exist_ok=True)
    srsly.write_json(out, result, indent=2)
    lines = [
        f"{len(configs) * len(seeds)} trials ({', '.join(configs)}; seeds {seed_values}; {max_steps} steps each, one thread "
        f"per trial) on {corpus}, timed side by side on this machine:",
        "",
        *head(["mode", "wall-clock s", "x one after another", "sum of trial training s"], "lrrr"),
        *[row([r["mode"], f"{r['seconds']:.0f}", f"{r['ratio']:.2f}", f"{r['trial_seconds']:.0f}"]) for r in rows],
        "",
        f"Test macro-F1 of every trial {'identical' if same else 'NOT identical'} in both modes (same seeds, one thread each).",
    ]
    out.with_suffix(".md").write_text("\n".join(lines) + "\n", encoding="utf8")
    print("\n".join(lines))


if __name__ == "__main__":
    typer.run(main)
