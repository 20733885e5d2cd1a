"""The threshold search of `spacy-imbalance calibrate`, chosen on dev: the
argmax rule and four searches, each finished sampled_spancat run scored under
each (scripts/calibration_variants.py).

Each search is scored out of sample on dev alone by two-fold cross-fitting:
thresholds searched on the even dev documents are scored on the odd ones and
the other way round (``cross_fitted``). The search with the highest mean
cross-fitted dev macro-F1 over every run is chosen (``chosen_on_dev``), before
and without any test score; the test scores (thresholds searched on all of
dev) are reported beside it, and the search the test would have picked."""
from pathlib import Path
from statistics import mean
from typing import TYPE_CHECKING, Any, Dict, List, Optional, Sequence, Tuple

from spacy_imbalance.benchmark.cells import over_seeds
from spacy_imbalance.benchmark.tables import head, row

if TYPE_CHECKING:
    from spacy_imbalance.evaluation.matching import DevMatcher

# name -> search settings (None: the argmax rule, no search)
VARIANTS: Dict[str, Optional[Dict[str, Any]]] = {
    "argmax": None,
    "per-label": {"shared": False, "min_gain": 0.0},
    "shared": {"shared": True, "min_gain": 0.999},
    "shared, then per-label +0.5 (default)": {"shared": True, "min_gain": 0.005},
    "per-label +0.5": {"shared": False, "min_gain": 0.005},
}

# a variant's dev and test macro-F1 on one run
Scores = Dict[str, Dict[str, float]]


def run_variants(model: Path, dev: List[Any], test: List[Any], component: str) -> Scores:
    import spacy

    from spacy_imbalance.evaluation.thresholds.grid import default_grid
    from spacy_imbalance.evaluation.thresholds.spans import dev_matcher, score_thresholds, search_thresholds

    nlp = spacy.load(model)
    grid = default_grid(0.05)
    on_dev = dev_matcher(nlp, component, dev, floor=min(grid))
    on_test = dev_matcher(nlp, component, test, floor=min(grid))
    halves = (dev_matcher(nlp, component, dev[0::2], floor=min(grid)), dev_matcher(nlp, component, dev[1::2], floor=min(grid)))
    scores = {}
    for name, settings in VARIANTS.items():
        thresholds = {} if settings is None else search_thresholds(on_dev, {}, grid, **settings).best
        scores[name] = {
            "dev": score_thresholds(on_dev, thresholds)[0], "test": score_thresholds(on_test, thresholds)[0],
            "dev_cross": cross_fitted(halves, settings, grid),
        }
    return scores


def cross_fitted(halves: Tuple["DevMatcher", "DevMatcher"], settings: Optional[Dict[str, Any]], grid: Sequence[float]) -> float:
    """Mean macro-F1 of each dev half decided with the thresholds that
    ``settings`` searched on the other half (None: the argmax rule): the
    search's score on dev documents it did not see."""
    from spacy_imbalance.evaluation.thresholds.spans import score_thresholds, search_thresholds

    scores = []
    for tuned_on, scored_on in (halves, halves[::-1]):
        thresholds = {} if settings is None else search_thresholds(tuned_on, {}, grid, **settings).best
        scores.append(score_thresholds(scored_on, thresholds)[0])
    return mean(scores)


def chosen_on_dev(results: Dict[str, Scores], runs: Sequence[str]) -> str:
    """The variant with the highest mean cross-fitted dev macro-F1 over
    ``runs`` (the first of equals, in VARIANTS' order: argmax before any
    search)."""
    missing = [run for run in runs if any("dev_cross" not in results[run][variant] for variant in VARIANTS)]
    if missing:
        raise ValueError(f"no cross-fitted dev scores for {', '.join(missing)}: score them again (their models are needed)")
    best = max(VARIANTS, key=lambda variant: (mean(results[run][variant]["dev_cross"] for run in runs), -list(VARIANTS).index(variant)))
    return best


def variants_table(results: Dict[str, Scores], configs: List[str], seeds: List[int]) -> List[str]:
    """Per config and variant: test macro-F1 over the seeds (cross-fitted
    dev in brackets) and the mean test change against argmax, in points; then
    the variant chosen on dev, and the one the test would have picked."""
    lines = [
        f"Test macro-F1 (cross-fitted dev in brackets), mean over seeds {', '.join(map(str, seeds))}, and the mean test change against argmax:",
        "",
        *head(["system", *VARIANTS], "l" + "r" * len(VARIANTS)),
    ]
    runs = [f"{config}-s{seed}" for config in configs for seed in seeds]
    for config in configs:
        scored = [results[f"{config}-s{seed}"] for seed in seeds]
        cells = []
        for variant in VARIANTS:
            test_f = [100 * r[variant]["test"] for r in scored]
            dev_f = [100 * r[variant].get("dev_cross", float("nan")) for r in scored]
            delta = [t - 100 * r["argmax"]["test"] for t, r in zip(test_f, scored)]
            change = "" if variant == "argmax" else f", {mean(delta):+.1f}"
            # the values are in points already
            cells.append(f"{over_seeds(test_f, scale=1, alone=True)} ({mean(dev_f):.1f}){change}")
        lines.append(row([config, *cells]))
    if all("dev_cross" in results[run][variant] for run in runs for variant in VARIANTS):
        choice = chosen_on_dev(results, runs)
        on_test = max(VARIANTS, key=lambda variant: mean(results[run][variant]["test"] for run in runs))
        lines += ["", f"Chosen on dev (the highest mean cross-fitted dev macro-F1 over the {len(runs)} runs): **{choice}**; "
                  f"the test would have picked {on_test}."]
    else:
        lines += ["", "Runs scored before the cross-fitted dev scores existed: no choice on dev (score them again)."]
    return lines
