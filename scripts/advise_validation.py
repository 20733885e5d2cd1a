"""Does `spacy-imbalance advise` pick what the full benchmark finds best?

For each corpus and masking probability p: the training set masked with p
(seed 0; p = 0 leaves it whole), `advise` on it and the complete dev set
within --budget minutes, then its recommendation set against the full
benchmark of the same setting (the masking study's runs, <method>-m<NN>-s<seed>
in metrics/<corpus>/, test macro-F1 over the seeds): the recommendation passes
when it is the benchmark's best method or the paired bootstrap interval of
their difference on test includes 0.

Writes metrics/<corpus>/advise_m<NN>.json per setting and
metrics/advise_validation.md over all settings. Resumable: a finished advise
run is read back (advise itself resumes its trials).

    python scripts/advise_validation.py --corpus wnut16 --p 0,0.5 --budget 20 --workers 2
"""
import json
import subprocess
import sys
from pathlib import Path
from statistics import mean
from typing import Any, Dict, List, Optional

import srsly
import typer

ROOT = Path(__file__).resolve().parent.parent
# advise's candidate names -> the benchmark's config names
CONFIG_OF = {"sampled_spancat_weighted": "sampled_spancat_weighted_v2"}


def tag(p: float) -> str:
    return f"m{round(100 * p)}"


def read_json(path: Path) -> Any:
    # the standard library's reader: srsly reads 0.3 back as 0.30000000000000004
    return json.loads(path.read_text(encoding="utf8"))


def train_file(corpus: str, p: float, folder: Path) -> Path:
    source = ROOT / "corpus" / corpus / "train.spacy"
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


def benchmark_runs(corpus: str, p: float, seeds: List[int]) -> Dict[str, List[Dict[str, Any]]]:
    """Every method of the full benchmark at this setting with all ``seeds``."""
    folder = ROOT / "metrics" / corpus
    suffix = f"-{tag(p)}-s{seeds[0]}.json"
    runs = {}
    for path in sorted(folder.glob(f"*{suffix}")):
        method = path.name[: -len(suffix)]
        files = [folder / f"{method}-{tag(p)}-s{seed}.json" for seed in seeds]
        if all(f.exists() for f in files):
            runs[method] = [read_json(f) for f in files]
    return runs


def validate(corpus: str, p: float, budget: float, workers: int, seeds: List[int], max_steps: Optional[int], work: Path) -> Dict[str, Any]:
    from spacy_imbalance.scorers.bootstrap import paired_bootstrap_runs
    from spacy_imbalance.scorers.counts import MatchCounts

    folder = work / f"{corpus}-{tag(p)}"
    out = folder / "advice"
    train = train_file(corpus, p, folder)
    cmd = [sys.executable, "-m", "spacy_imbalance", "advise", str(train), str(ROOT / "corpus" / corpus / "dev.spacy"),
           "-o", str(out), "--budget", str(budget), "--workers", str(workers),
           *(["--max-steps", str(max_steps)] if max_steps else [])]
    subprocess.run(cmd, check=True)
    seconds = trials_wall_clock(out / "trials")
    advice = read_json(out / "advice.json")
    runs = benchmark_runs(corpus, p, seeds)
    means = {method: mean(r["macro"]["f"] for r in reports) for method, reports in runs.items()}
    if not means:
        raise SystemExit(f"no full-benchmark runs *-{tag(p)}-s<seed>.json in metrics/{corpus} for seeds {seeds}")
    best = max(means, key=means.get)
    recommended = CONFIG_OF.get(advice["recommended"], advice["recommended"])
    if recommended not in runs:
        raise SystemExit(f"the full benchmark has no {recommended}-{tag(p)} runs in metrics/{corpus}: run advise-baselines")

    def counts(method: str) -> list:
        return [MatchCounts.from_sparse(r["counts"]) for r in runs[method]]

    diff = None if recommended == best else paired_bootstrap_runs(counts(best), counts(recommended), n_resamples=1000, seed=0)["macro_f"]
    passed = diff is None or diff["low"] <= 0 <= diff["high"]
    return {
        "corpus": corpus, "p": p, "budget_minutes": budget, "workers": workers, "advise_seconds": round(seconds, 1),
        "recommended": recommended, "verdict": advice["verdict"], "best": best,
        "test_macro_f": {method: round(value, 4) for method, value in sorted(means.items(), key=lambda kv: -kv[1])},
        "recommended_minus_best": diff, "within_interval": passed, "seeds": seeds,
        "advise_ranking": [{"name": r["name"], "dev_macro_f": r["mean"]} for r in advice["ranking"]],
    }


def write_summary() -> str:
    """metrics/advise_validation.md from every corpus's advise_m*.json."""
    rows = []
    for folder in sorted(path for path in (ROOT / "metrics").iterdir() if path.is_dir()):
        corpus = folder.name
        for path in sorted(folder.glob("advise_m*.json")):
            r = read_json(path)
            d = r["recommended_minus_best"]
            delta = "– (the same)" if d is None else f"{100 * d['delta']:+.1f} [{100 * d['low']:+.1f}, {100 * d['high']:+.1f}]"
            rows.append(
                f"| {corpus} | {r['p']:g} | `{r['recommended']}` ({100 * r['test_macro_f'][r['recommended']]:.1f}) "
                f"| `{r['best']}` ({100 * r['test_macro_f'][r['best']]:.1f}) | {delta} | {'yes' if r['within_interval'] else '**no**'} "
                f"| {r['advise_seconds'] / 60:.1f} |"
            )
    text = "\n".join([
        "`spacy-imbalance advise` on each training set (masked with p, seed 0), against the full benchmark of the same "
        "setting (test macro-F1, mean of its seeds, in parentheses; Δ: paired bootstrap on test, 95 % interval):",
        "",
        "| corpus | p | advise recommends | full benchmark's best | recommended − best | within the interval | advise minutes |",
        "| --- | --: | --- | --- | --: | --- | --: |",
        *rows,
    ]) + "\n"
    (ROOT / "metrics" / "advise_validation.md").write_text(text, encoding="utf8")
    return text


def main(
    corpora: List[str] = typer.Option(["wnut16", "wnut17"], "--corpus"),
    p_values: str = typer.Option("0,0.5", "--p", help="Masking probabilities, comma-separated"),
    budget: float = typer.Option(20.0, "--budget", help="advise's budget in minutes"),
    workers: int = typer.Option(2, "--workers", help="advise's workers (Ray)"),
    seed_values: str = typer.Option("0,1,2", "--seed", help="The full benchmark's seeds"),
    max_steps: Optional[int] = typer.Option(None, "--max-steps", help="advise's step limit per trial (smoke runs)"),
    work_dir: Path = typer.Option(Path("training/advise_validation"), "--work-dir"),
    only: str = typer.Option("", "--only", help="Comma-separated settings to run (advise/wnut16-m50, as the work folders); empty: all"),
    summary: bool = typer.Option(False, "--summary", help="Only rewrite metrics/advise_validation.md"),
) -> None:
    names = {name.strip() for name in only.split(",") if name.strip()}
    if not summary:
        seeds = [int(s) for s in seed_values.split(",") if s.strip()]
        for corpus in corpora:
            for p in [float(v) for v in p_values.split(",") if v.strip()]:
                if names and f"advise/{corpus}-{tag(p)}" not in names:
                    continue
                print(f"{corpus}, p = {p:g}", flush=True)
                result = validate(corpus, p, budget, workers, seeds, max_steps, ROOT / work_dir)
                out = ROOT / "metrics" / corpus / f"advise_{tag(p)}.json"
                srsly.write_json(out, result, indent=2)
                print(f"  advise: {result['recommended']}; best: {result['best']}; within the interval: {result['within_interval']}", flush=True)
    print(write_summary())


if __name__ == "__main__":
    typer.run(main)
