"""The plot of a study: test macro-F1 by setting, one line per system."""
from pathlib import Path
from statistics import mean, stdev
from typing import List, Tuple

from ...plots import save_figure
from .runs import Runs


def plot(runs: Runs, configs: List[str], settings: List[Tuple[str, str]], path: Path, title: str, xlabel: str) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7, 4.5))
    xs = list(range(len(settings)))
    for config in configs:
        values = [runs[config, tag]["macro"] for tag, _ in settings]
        means = [100 * mean(v) if v else float("nan") for v in values]
        spreads = [100 * stdev(v) if len(v) > 1 else 0.0 for v in values]
        ax.errorbar(xs, means, yerr=spreads, marker="o", capsize=3, label=config)
    ax.set_xticks(xs, [label for _, label in settings])
    ax.set_xlabel(xlabel)
    ax.set_ylabel("test macro-F1")
    ax.set_title(title)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8)
    path.parent.mkdir(parents=True, exist_ok=True)
    save_figure(fig, path, dpi=120, bbox_inches="tight")
    plt.close(fig)
