"""The label-scopes study at a glance (docs/benchmarks/label_scopes.md): per
split, test macro-F1 of the best built-in and of ours on the naive merge, of
ours with the parts' scopes, and of that built-in on the complete train set
(its ceiling); each bar the mean of seeds 0-2, each seed a dot
(scripts/scopes_plot.py writes it).
"""
import json
from pathlib import Path
from statistics import mean
from typing import Dict, List, Tuple

from spacy_imbalance.plots import save_figure

from .facts import BUILT_INS, SCOPE_SPLITS, SCOPED, scope_files, seed_scores

OURS = "sampled_spancat_uniform"
# the bars of a split, in order: (label, "split" for its merge or the corpus of the runs, system or "best": the best built-in)
BARS: Tuple[Tuple[str, str, str], ...] = (
    ("best built-in, merge", "split", "best"),
    ("ours, merge", "split", OURS),
    ("ours with scopes", "split", SCOPED),
    ("best built-in, complete train set", "wnut17", "best"),
)


def bars(scores: Dict[Tuple[str, str], List[float]]) -> Dict[str, List[Tuple[str, List[float]]]]:
    """Per split, each bar's label and seed scores in points (``scores``:
    seed_scores', fractions); the best built-in is the one with the higher
    mean on that split's merge (as bench/facts.py scopes_recovery)."""
    out = {}
    for split in SCOPE_SPLITS:
        corpus = f"wnut17-{split}"
        best = max(BUILT_INS, key=lambda system: mean(scores[(corpus, system)]))
        out[split] = [
            (label.replace("best built-in", best),
             [100 * f for f in scores[(corpus if where == "split" else where, best if system == "best" else system)]])
            for label, where, system in BARS
        ]
    return out


def plot(by_split: Dict[str, List[Tuple[str, List[float]]]], path: Path, title: str) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, len(by_split), figsize=(5 * len(by_split), 4.2), sharey=True)
    for ax, (split, split_bars) in zip(axes, by_split.items()):
        for i, (label, values) in enumerate(split_bars):
            ax.bar(i, mean(values), color=f"C{i}", alpha=0.75)
            ax.plot([i] * len(values), values, "k.", markersize=5)
        ax.set_xticks(range(len(split_bars)))
        ax.set_xticklabels([label for label, _ in split_bars], rotation=20, ha="right", fontsize=8)
        ax.set_title(f"{split} split", fontsize=10)
        ax.grid(axis="y", alpha=0.3)
    axes[0].set_ylabel("test macro-F1 (mean of seeds; dots: seeds)")
    fig.suptitle(title, fontsize=10)
    fig.tight_layout()
    save_figure(fig, path, dpi=110)
    plt.close(fig)


ENCODER_NAMES = {"cnn": "CNN", "features": "frozen MiniLM features"}


def write_figure(encoder: str, root: Path, output: Path) -> None:
    """The figure of an encoder's cells (cnn or features) from root's metrics/;
    a ValueError naming a missing run."""
    if encoder not in ENCODER_NAMES:
        raise ValueError(f"{encoder!r}: give cnn or features")
    runs = [path for path in scope_files(encoder) if not path.endswith("-paired.json")]
    missing = [path for path in runs if not (root / path).is_file()]
    if missing:
        raise ValueError(f"{len(missing)} runs of the study are missing, e.g. {missing[0]}")
    loaded = [json.loads((root / path).read_text(encoding="utf8")) for path in runs]
    title = f"Label scopes on WNUT-2017, {ENCODER_NAMES[encoder]}: what the naive merge costs and scopes recover"
    plot(bars(seed_scores(loaded)), output, title)
