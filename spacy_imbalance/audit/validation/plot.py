"""The plot of the summary: the miss-rate estimates against the truth, and
precision@k of the audit (and cleanlab, where it ran) per p."""
from pathlib import Path
from typing import Any, Dict, Sequence, Tuple

from ...plots import save_figure

Groups = Dict[str, Dict[str, Tuple[float, float, int]]]
BARS = [("audit P@k", "#4c72b0", ""), ("audit P@k overlap", "#4c72b0", "//"), ("cleanlab P@k", "#dd8452", ""),
        ("cleanlab P@k overlap", "#dd8452", "//")]


def plot_summary(reports: Sequence[Dict[str, Any]], groups: Groups, path: Path, corpus: str) -> bool:
    """Draw the plot to ``path``; False when matplotlib is not installed."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return False
    import numpy

    fig, (left, right) = plt.subplots(1, 2, figsize=(10, 4))
    for report in reports:
        row = report["estimate"]["total"]
        # the interval as it is (a percentile bootstrap interval need not hold its point)
        left.vlines(100 * row["true"], 100 * row["low"], 100 * row["high"], color="#4c72b0")
        left.plot(100 * row["true"], 100 * row["estimate"], "o", color="#4c72b0")
    top = max([100 * r["estimate"]["total"]["high"] for r in reports] + [100 * r["estimate"]["total"]["true"] for r in reports] + [1.0])
    left.plot([0, top], [0, top], ls=":", color="black")
    left.set_xlabel("true miss rate (%)")
    left.set_ylabel("estimated miss rate (%)")
    left.set_title("Miss-rate estimate (one point per seed)")
    bars = [bar for bar in BARS if any(bar[0] in g for g in groups.values())]
    x = numpy.arange(len(groups))  # the bars' places
    width = 0.8 / max(len(bars), 1)
    for b, (column, color, hatch) in enumerate(bars):
        stats = [g.get(column, (0.0, 0.0, 0)) for g in groups.values()]
        right.bar(x + b * width, [100 * s[0] for s in stats], width, yerr=[100 * s[1] for s in stats],
                  color=color, hatch=hatch, edgecolor="white", label=column, capsize=2)
    right.set_xticks(x + 0.4 - width / 2, [f"p = {label}".replace(" (re-validation)", "\nre-validation") for label in groups])
    right.set_ylabel("precision@k (%)")
    right.set_title("Removed entities in the top k (k = number removed)")
    right.legend(fontsize=7)
    fig.suptitle(f"Audit validation on {corpus}")
    fig.tight_layout()
    save_figure(fig, path, dpi=120)
    plt.close(fig)
    return True
