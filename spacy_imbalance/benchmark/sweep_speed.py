"""What Ray buys a sweep: the same trials (configs x seeds on a corpus, one
thread each, as ``benchmark run`` trains them) timed one after another and
on Ray with some workers, side by side on this machine; each mode trains
them into a folder of its own."""
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any, Dict, List

from .layout import Layout
from .sweep import Say, say_now
from .tables import head, row

if TYPE_CHECKING:
    from spacy_imbalance.sweeps import Trial


def trials_for(layout: Layout, corpus: str, configs: List[str], seeds: List[int], steps: int, folder: Path) -> List["Trial"]:
    """The trials of configs x seeds on ``corpus``, trained into ``folder``."""
    from spacy_imbalance.sweeps import Trial

    return [
        Trial(
            name=f"{config} seed {seed}", config=str(layout.config(config)),
            output=str(folder / f"{config}-s{seed}"), metrics=str(folder / f"{config}-s{seed}.json"),
            train=str(layout.corpus(corpus, "train")), dev=str(layout.corpus(corpus, "dev")), test=str(layout.corpus(corpus, "test")),
            seed=seed, max_steps=steps,
        )
        for config in configs
        for seed in seeds
    ]


def time_modes(
    layout: Layout, corpus: str, configs: List[str], seeds: List[int], max_steps: int, workers: int, work_dir: Path,
    say: Say = say_now,
) -> Dict[str, Any]:
    """The trials timed one after another, then on Ray with ``workers``
    workers: each mode's wall-clock seconds, its ratio to the first, the sum
    of the trials' training seconds, and whether both gave the same scores."""
    from spacy_imbalance.sweeps import run_trials

    modes = [("one after another", 1), (f"Ray, {workers} workers", workers)]
    rows: List[Dict[str, Any]] = []
    scores = []
    for label, n_workers in modes:
        trials = trials_for(layout, corpus, configs, seeds, max_steps, work_dir / f"workers-{n_workers}")
        say(f"{label}: {len(trials)} trials ...")
        start = time.perf_counter()
        reports = run_trials(trials, workers=n_workers, storage=work_dir / "ray", name=f"sweep-speed-{n_workers}")
        seconds = time.perf_counter() - start
        scores.append([report["macro"]["f"] for report in reports])
        rows.append({"mode": label, "workers": n_workers, "seconds": round(seconds, 1),
                     "trial_seconds": round(sum(report["train_seconds"] for report in reports), 1)})
        say(f"{label}: {seconds:.0f} s")
    for timed in rows:
        timed["ratio"] = round(timed["seconds"] / rows[0]["seconds"], 3)
    return {"corpus": corpus, "configs": configs, "seeds": seeds, "max_steps": max_steps, "modes": rows,
            "same_scores": scores[0] == scores[1]}


def table(result: Dict[str, Any]) -> str:
    """The Markdown of ``time_modes``'s result."""
    configs, seeds = result["configs"], result["seeds"]
    lines = [
        f"{len(configs) * len(seeds)} trials ({', '.join(configs)}; seeds {','.join(map(str, seeds))}; {result['max_steps']} steps "
        f"each, one thread per trial) on {result['corpus']}, timed side by side on this machine:",
        "",
        *head(["mode", "wall-clock s", "x one after another", "sum of trial training s"], "lrrr"),
        *[row([r["mode"], f"{r['seconds']:.0f}", f"{r['ratio']:.2f}", f"{r['trial_seconds']:.0f}"]) for r in result["modes"]],
        "",
        f"Test macro-F1 of every trial {'identical' if result['same_scores'] else 'NOT identical'} in both modes (same seeds, one thread each).",
    ]
    return "\n".join(lines) + "\n"
