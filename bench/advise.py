"""Does `spacy-imbalance advise` pick what the full benchmark finds best?
Each setting's recommendation against the masking study's runs of the same
setting (scripts/advise_validation.py)."""
import subprocess
import sys
from pathlib import Path
from statistics import mean
from typing import Any, Dict, List, Optional

from spacy_imbalance.benchmark.cells import interval
from spacy_imbalance.benchmark.paired import paired_runs
from spacy_imbalance.benchmark.records import read_json
from spacy_imbalance.benchmark.tables import head

# advise's candidate names -> the benchmark's config names
CONFIG_OF = {"sampled_spancat_weighted": "sampled_spancat_weighted_v2"}
# the settings advise's rule was designed and first checked on; any other is a
# re-validation (issue 32: the rule unchanged, on data its design never saw)
DESIGN_SETTINGS = {("wnut16", 0.0), ("wnut16", 0.5), ("wnut17", 0.0), ("wnut17", 0.5)}


def tag(p: float) -> str:
    """The masking study's tag of masking probability ``p``: m50 for 0.5."""
    return f"m{round(100 * p)}"


def train_file(root: Path, corpus: str, p: float, folder: Path) -> Path:
    """The training set masked with ``p`` (seed 0), in ``folder``; the
    corpus's own for p = 0."""
    source = root / "corpus" / corpus / "train.spacy"
    if p == 0:
        return source
    masked = folder / "train.spacy"
    if not masked.exists():
        folder.mkdir(parents=True, exist_ok=True)
        subprocess.run([sys.executable, "-m", "spacy_imbalance", "mask", str(source), str(masked), "--p", str(p), "--seed", "0"], check=True)
    return masked


def trials_wall_clock(folder: Path) -> float:
    """Seconds from the first trial's start to the last trial's end, from the
    trials' reports (their file times less their training time), so that a
    resumed or re-ranked advise run reports when its trials trained."""
    ends, starts = [], []
    for path in folder.glob("*.json"):
        end = path.stat().st_mtime
        ends.append(end)
        starts.append(end - read_json(path)["train_seconds"])
    return max(ends) - min(starts) if ends else 0.0


def benchmark_runs(root: Path, corpus: str, p: float, seeds: List[int]) -> Dict[str, List[Dict[str, Any]]]:
    """Every method of the full benchmark at this setting with all ``seeds``."""
    folder = root / "metrics" / corpus
    suffix = f"-{tag(p)}-s{seeds[0]}.json"
    runs = {}
    for path in sorted(folder.glob(f"*{suffix}")):
        method = path.name[: -len(suffix)]
        files = [folder / f"{method}-{tag(p)}-s{seed}.json" for seed in seeds]
        if all(f.exists() for f in files):
            runs[method] = [read_json(f) for f in files]
    return runs


def validate(
    root: Path, corpus: str, p: float, budget: float, workers: int, seeds: List[int], max_steps: Optional[int], work: Path
) -> Dict[str, Any]:
    """advise on the setting's training set, and its recommendation against
    the full benchmark's best method (paired bootstrap on test), with where,
    when and how it ran."""
    from spacy_imbalance.sweeps import run_provenance

    folder = work / f"{corpus}-{tag(p)}"
    out = folder / "advice"
    train = train_file(root, corpus, p, folder)
    cmd = [sys.executable, "-m", "spacy_imbalance", "advise", str(train), str(root / "corpus" / corpus / "dev.spacy"),
           "-o", str(out), "--budget", str(budget), "--workers", str(workers),
           *(["--max-steps", str(max_steps)] if max_steps else [])]
    subprocess.run(cmd, check=True)
    seconds = trials_wall_clock(out / "trials")
    advice = read_json(out / "advice.json")
    runs = benchmark_runs(root, corpus, p, seeds)
    means = {method: mean(r["macro"]["f"] for r in reports) for method, reports in runs.items()}
    if not means:
        raise SystemExit(f"no full-benchmark runs *-{tag(p)}-s<seed>.json in metrics/{corpus} for seeds {seeds}")
    best = max(means, key=means.__getitem__)
    recommended = CONFIG_OF.get(advice["recommended"], advice["recommended"])
    if recommended not in runs:
        raise SystemExit(f"the full benchmark has no {recommended}-{tag(p)} runs in metrics/{corpus}: run advise-baselines")
    diff = None if recommended == best else paired_runs(runs[best], runs[recommended])["macro_f"]
    passed = diff is None or diff["low"] <= 0 <= diff["high"]
    return {
        "corpus": corpus, "p": p, "budget_minutes": budget, "workers": workers, "advise_seconds": round(seconds, 1),
        "recommended": recommended, "verdict": advice["verdict"], "best": best,
        "test_macro_f": {method: round(value, 4) for method, value in sorted(means.items(), key=lambda kv: -kv[1])},
        "recommended_minus_best": diff, "within_interval": passed, "seeds": seeds,
        "advise_ranking": [{"name": r["name"], "dev_macro_f": r["mean"]} for r in advice["ranking"]],
        "provenance": run_provenance(-1, root),
    }


def write_summary(root: Path) -> str:
    """metrics/advise_validation.md from every corpus's advise_m*.json."""
    rows = []
    for folder in sorted(path for path in (root / "metrics").iterdir() if path.is_dir()):
        corpus = folder.name
        for path in sorted(folder.glob("advise_m*.json")):
            r = read_json(path)
            d = r["recommended_minus_best"]
            delta = "– (the same)" if d is None else interval(d)
            rows.append(
                f"| {corpus} | {r['p']:g} | `{r['recommended']}` ({100 * r['test_macro_f'][r['recommended']]:.1f}) "
                f"| `{r['best']}` ({100 * r['test_macro_f'][r['best']]:.1f}) | {delta} | {'yes' if r['within_interval'] else '**no**'} "
                f"| {r['advise_seconds'] / 60:.1f} | {'design' if (corpus, float(r['p'])) in DESIGN_SETTINGS else 're-validation'} |"
            )
    text = "\n".join([
        "`spacy-imbalance advise` on each training set (masked with p, seed 0), against the full benchmark of the same "
        "setting (test macro-F1, mean of its seeds, in parentheses; Δ: paired bootstrap on test, 95 % interval). Settings "
        "marked design are those its rule was written and first checked on; re-validation rows ran later, the rule unchanged:",
        "",
        *head(["corpus", "p", "advise recommends", "full benchmark's best", "recommended − best", "within the interval", "advise minutes",
               "setting"], "lrllrlrl"),
        *rows,
    ]) + "\n"
    (root / "metrics" / "advise_validation.md").write_text(text, encoding="utf8")
    return text
