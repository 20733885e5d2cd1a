"""How the threshold search of `spacy-imbalance calibrate` was chosen: the
argmax rule and four searches, each finished sampled_spancat run scored on
dev and test under each (scripts/calibration_variants.py)."""
from pathlib import Path
from statistics import mean
from typing import Any, Dict, List, Optional

from spacy_imbalance.benchmark.cells import over_seeds
from spacy_imbalance.benchmark.tables import head, row

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
    scores = {}
    for name, settings in VARIANTS.items():
        thresholds = {} if settings is None else search_thresholds(on_dev, {}, grid, **settings).best
        scores[name] = {"dev": score_thresholds(on_dev, thresholds)[0], "test": score_thresholds(on_test, thresholds)[0]}
    return scores


def variants_table(results: Dict[str, Scores], configs: List[str], seeds: List[int]) -> List[str]:
    """Per config and variant: test macro-F1 over the seeds (dev in
    brackets) and the mean test change against argmax, in points."""
    lines = [
        f"Test macro-F1 (dev in brackets), mean over seeds {', '.join(map(str, seeds))}, and the mean test change against argmax:",
        "",
        *head(["system", *VARIANTS], "l" + "r" * len(VARIANTS)),
    ]
    for config in configs:
        runs = [results[f"{config}-s{seed}"] for seed in seeds]
        cells = []
        for variant in VARIANTS:
            test_f = [100 * r[variant]["test"] for r in runs]
            dev_f = [100 * r[variant]["dev"] for r in runs]
            delta = [t - 100 * r["argmax"]["test"] for t, r in zip(test_f, runs)]
            change = "" if variant == "argmax" else f", {mean(delta):+.1f}"
            # the values are in points already
            cells.append(f"{over_seeds(test_f, scale=1, alone=True)} ({mean(dev_f):.1f}){change}")
        lines.append(row([config, *cells]))
    return lines
