"""The advice as people read it: a Markdown report, a plot of each
candidate's dev macro-F1 over the seeds, and the JSON behind both."""
from pathlib import Path
from typing import Any, Dict, List, Optional, Sequence, Tuple

import srsly

from ..plots import save_figure
from .candidates import BUILTINS
from .ranking import Advice, Ranked


def markdown(
    advice: Advice, stats: Sequence[Tuple[str, str]], left_out: Sequence[Tuple[str, str]], settings: Dict[str, Any],
    plot: Optional[str],
) -> str:
    lines = [
        "# Which method for this corpus",
        "",
        f"**Recommended: `{advice.recommended}`** (config: `recommended.cfg`). {advice.verdict}",
        "",
        "## The corpus",
        "",
        "| statistic | value |",
        "| --- | --: |",
        *[f"| {name} | {value} |" for name, value in stats],
        "",
        "## The candidates on dev",
        "",
        f"Each trial (seeds {', '.join(map(str, advice.seeds))}; {settings['encoder']} encoder) trained until "
        f"its share of the {settings['budget_minutes']:g}-minute budget ({settings['trial_minutes']:.1f} minutes of "
        f"updates){_step_limit(settings)} ran out; \"trained\" gives the steps and the minutes of the training run "
        "(loading included) that each trial's own report records, the range over the seeds. Each is evaluated on "
        f"the dev set that also picked its best checkpoint. Δ: paired bootstrap against `{advice.baseline}`, "
        f"{_baseline_is(advice)} (mean difference over the seeds, 95 % interval over 1,000 resamples of the "
        "dev sentences).",
        "",
        "| method | dev macro-F1 | Δ vs " + f"`{advice.baseline}` | trained | why it was tried |",
        "| --- | --: | --: | --: | --- |",
        *[_row(r, advice.baseline) for r in advice.ranking],
        "",
    ]
    if plot:
        lines += [f"![dev macro-F1 per method]({plot})", ""]
    lines += [
        "## Left out",
        "",
        *[f"- {name}: {reason}." for name, reason in left_out],
        *[f"- {name}: trained, but not ranked: {reason}; its scores are those of an untrained model." for name, reason in advice.untrained],
        "",
        "Short budgets rank methods that learn fast; the dev set both picks checkpoints and ranks, so its scores",
        "run high. Confirm the winner on a test set with `spacy-imbalance evaluate`.",
    ]
    return "\n".join(lines) + "\n"


def _baseline_is(advice: Advice) -> str:
    """What the baseline is: the better of spaCy's built-ins, or the only
    one that trained (the other is no baseline: ``ranking.trained``)."""
    left = [name for name, _ in advice.untrained if name in BUILTINS]
    if left:
        return f"the only built-in of spaCy that trained (`{'`, `'.join(left)}` did not train past its first update)"
    return "spaCy's better built-in here"


def _row(r: Ranked, baseline: str) -> str:
    delta = "–" if r.delta is None else (
        f"{100 * r.delta['delta']:+.1f} [{100 * r.delta['low']:+.1f}, {100 * r.delta['high']:+.1f}]"
    )
    if r.delta is not None and r.delta["low"] > 0:
        delta = f"**{delta}**"
    return f"| `{r.name}` | {100 * r.mean:.1f} ± {100 * r.std:.1f} | {delta} | {trained_text(r)} | {r.reason} |"


def trained_text(r: Ranked) -> str:
    """The steps and minutes a method's trials trained, as ranges over the
    seeds: "1,200 steps, 2.1 min" or "1,000–1,200 steps, 2.0–2.1 min"."""
    text = f"{_range(r.steps, '{:,}')} steps"
    if r.minutes:
        text += f", {_range(r.minutes, '{:.1f}')} min"
    return text


def _range(values: Sequence[float], fmt: str) -> str:
    low, high = fmt.format(min(values)), fmt.format(max(values))
    return low if low == high else f"{low}–{high}"


def _step_limit(settings: Dict[str, Any]) -> str:
    return f" or its {settings['max_steps']:,} steps (--max-steps)" if settings.get("max_steps") is not None else ""


def plot_advice(advice: Advice, path: Path) -> bool:
    """Each candidate's dev macro-F1, one dot per seed and a bar for the mean;
    False when matplotlib is missing (the plots extra)."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return False
    ranking: List[Ranked] = list(reversed(advice.ranking))
    fig, ax = plt.subplots(figsize=(7, 0.5 * len(ranking) + 1.2))
    for y, r in enumerate(ranking):
        colour = "tab:green" if r.name == advice.recommended else ("tab:grey" if r.name == advice.baseline else "tab:blue")
        ax.barh(y, 100 * r.mean, color=colour, alpha=0.35)
        ax.scatter([100 * f for f in r.macro_f], [y] * len(r.macro_f), color=colour, zorder=3, s=18)
    ax.set_yticks(range(len(ranking)))
    ax.set_yticklabels([r.name for r in ranking])
    ax.set_xlabel("dev macro-F1 (%): bar the mean, dots the seeds")
    ax.set_title(f"recommended: {advice.recommended} (green); baseline: {advice.baseline} (grey)", fontsize=9)
    fig.tight_layout()
    save_figure(fig, path, dpi=120)
    plt.close(fig)
    return True


def write_advice(
    out: Path, advice: Advice, stats: Sequence[Tuple[str, str]], left_out: Sequence[Tuple[str, str]],
    settings: Dict[str, Any], recommended_config: str,
) -> Dict[str, Path]:
    """advice.md, advice.json, advice.png (with the plots extra) and
    recommended.cfg in ``out``."""
    paths = {"report": out / "advice.md", "json": out / "advice.json", "plot": out / "advice.png", "config": out / "recommended.cfg"}
    has_plot = plot_advice(advice, paths["plot"])
    if not has_plot:
        del paths["plot"]
    paths["report"].write_text(markdown(advice, stats, left_out, settings, "advice.png" if has_plot else None), encoding="utf8")
    srsly.write_json(paths["json"], {**advice.to_dict(), "corpus": dict(stats), "left_out": dict(left_out), "settings": settings})
    paths["config"].write_text(recommended_config, encoding="utf8")
    return paths
