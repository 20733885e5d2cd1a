"""The Markdown tables of a study: a score per system and setting, the
paired differences against a baseline, and the settings chosen on dev."""
from typing import Any, Dict, List, Mapping, Optional, Tuple

from ..cells import MISSING, interval, over_seeds, points
from ..tables import head, row
from .runs import Runs

CAPTIONS = {
    "macro": "macro-F1",
    "micro": "micro-F1",
    "macro_p": "macro precision",
    "macro_r": "macro recall",
    "missampling": "missampling rate (share of sampled negatives that are masked entities, over the whole training; samplers only)",
}


def markdown(runs: Runs, configs: List[str], settings: List[Tuple[str, str]], average: str, xlabel: str) -> str:
    lines = head([f"system \\ {xlabel}", *(label for _, label in settings)], "l" + "r" * len(settings))
    for config in configs:
        if average == "missampling" and not any(runs[config, tag][average] for tag, _ in settings):
            continue  # systems without negative sampling record no rate
        # missampling rates are a fraction of a percent
        cells = [over_seeds(runs[config, tag][average], 2 if average == "missampling" else 1) for tag, _ in settings]
        lines.append(row([config, *cells]))
    n_runs = sorted({len(runs[key][average]) for key in runs} - {0}) or [0]
    lines.append("")
    where = "in training" if average == "missampling" else "on the test split"
    lines.append(f"{CAPTIONS[average]} {where}, mean ± std (%) over {'/'.join(map(str, n_runs))} runs (one random draw per seed).")
    return "\n".join(lines) + "\n"


def paired_markdown(
    diffs: Mapping[Tuple[str, str], Optional[Dict[str, Any]]], configs: List[str], baseline: str,
    settings: List[Tuple[str, str]], xlabel: str,
) -> str:
    lines = head([f"system − {baseline} \\ {xlabel}", *(label for _, label in settings)], "l" + "r" * len(settings))
    for config in configs:
        if config == baseline:
            continue
        cells = []
        for tag, _ in settings:
            diff = diffs.get((config, tag))
            cells.append(MISSING if diff is None else interval(diff["macro_f"], bold=True))
        lines.append(row([config, *cells]))
    lines.append("")
    lines.append(
        f"Δ macro-F1 against `{baseline}` (points): mean over the paired seeds and paired bootstrap 95 % interval "
        "(1,000 resamples of the test sentences); bold where the interval excludes 0."
    )
    return "\n".join(lines) + "\n"


def dev_choice_markdown(choices: Dict[str, Dict[str, Any]], xlabel: str) -> str:
    lines = head(
        ["system", f"{xlabel} chosen on dev", "its dev score", "its test macro-F1", f"best {xlabel} on test", "its test macro-F1"],
        "lrrrrr",
    )
    for config, choice in choices.items():
        settings = choice["settings"]
        chosen, best = settings[choice["chosen"]], settings[choice["best_on_test"]]
        lines.append(row([
            config, choice["chosen"], points(chosen["dev"]), points(chosen["test"]), choice["best_on_test"], points(best["test"]),
        ]))
    lines += ["", "Dev score: the mean over seeds of each run's best dev score (its model-best's selection score); test: the mean macro-F1 of the same runs."]
    return "\n".join(lines) + "\n"
