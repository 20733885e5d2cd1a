"""The headline's dev curves: dev macro-F1 against training steps."""
from pathlib import Path
from statistics import mean
from typing import Any, Dict, List, Mapping

from spacy_imbalance.plots import save_figure

from .systems import BUILTINS, LABELS


def plot_dev_curves(
    present: Dict[str, List[Dict[str, Any]]], path: Path, title: str, labels: Mapping[str, str] = LABELS
) -> None:
    """Dev macro-F1 against training steps: the mean over seeds up to the
    first seed's early stop (bold), then over the seeds still training (faint);
    ``labels``: each system's name in the legend (the table's)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(9, 5.5))
    for i, (system, system_runs) in enumerate(present.items()):
        by_step: Dict[int, List[float]] = {}
        for run in system_runs:
            for step, score in run.get("dev_curve", []):
                by_step.setdefault(int(step), []).append(score)
        if not by_step:
            continue
        steps = sorted(by_step)
        all_seeds = [s for s in steps if len(by_step[s]) == len(system_runs)]
        color = f"C{i % 10}"
        style = "--" if system in dict(BUILTINS) else "-"
        ax.plot(all_seeds, [100 * mean(by_step[s]) for s in all_seeds], style, color=color, label=labels[system], linewidth=1.4)
        tail = [s for s in steps if s >= all_seeds[-1]]
        if len(tail) > 1:
            ax.plot(tail, [100 * mean(by_step[s]) for s in tail], style, color=color, linewidth=0.7, alpha=0.4)
    ax.set_xlabel("training step")
    ax.set_ylabel("dev macro-F1")
    ax.set_title(title + " (mean over seeds; faint: after the first seed stopped)", fontsize=10)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=7, ncol=2)
    fig.tight_layout()
    save_figure(fig, path, dpi=110)
    plt.close(fig)
