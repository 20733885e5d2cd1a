"""Rank the candidates by dev macro-F1 and decide, with paired intervals
against spaCy's better built-in component, what to recommend."""
from dataclasses import asdict, dataclass, field
from statistics import mean, stdev
from typing import Any, Dict, List, Optional, Sequence

from ..scorers.bootstrap import paired_bootstrap_runs
from ..scorers.counts import MatchCounts
from .candidates import BUILTINS, Candidate

N_RESAMPLES = 1000


@dataclass
class Ranked:
    """A candidate's dev scores over the seeds and its paired difference with
    the best built-in (None for that built-in itself)."""

    name: str
    reason: str
    macro_f: List[float]
    steps: List[int]
    delta: Optional[Dict[str, float]] = None

    @property
    def mean(self) -> float:
        return mean(self.macro_f)

    @property
    def std(self) -> float:
        return stdev(self.macro_f) if len(self.macro_f) > 1 else 0.0


@dataclass
class Advice:
    ranking: List[Ranked]
    baseline: str
    recommended: str
    verdict: str
    seeds: List[int] = field(default_factory=list)

    def to_dict(self) -> Dict[str, Any]:
        data = asdict(self)
        for row, ranked in zip(data["ranking"], self.ranking):
            row.update(mean=ranked.mean, std=ranked.std)
        return data


def rank(candidates: Sequence[Candidate], reports: Dict[str, List[Dict[str, Any]]], seeds: List[int]) -> Advice:
    """The advice from each candidate's dev reports (one per seed, in the
    order of ``seeds``): the best built-in by mean dev macro-F1 is the
    baseline, every other method is paired with it (bootstrap over the dev
    sentences, averaged over the seeds), and the method that ranks first is
    recommended. The verdict says whether it is *better* than the baseline
    (the whole interval above 0) or only ranks first (an interval that
    includes 0: "no method is better than the baseline here")."""
    ranked = [
        Ranked(c.name, c.reason, [r["macro"]["f"] for r in reports[c.name]], [_steps(r) for r in reports[c.name]])
        for c in candidates
    ]
    builtins = [r for r in ranked if r.name in BUILTINS]
    if not builtins:
        raise ValueError(f"advise compares with spaCy's built-in components ({', '.join(BUILTINS)}); none was trained")
    baseline = max(builtins, key=lambda r: r.mean)
    base_counts = _counts(reports[baseline.name])
    for r in ranked:
        if r.name != baseline.name:
            diff = paired_bootstrap_runs(base_counts, _counts(reports[r.name]), n_resamples=N_RESAMPLES, seed=0)["macro_f"]
            r.delta = {key: float(diff[key]) for key in ("delta", "low", "high", "share_not_better")}
    ranked.sort(key=lambda r: r.mean, reverse=True)
    top = ranked[0]
    if top.name == baseline.name:
        verdict = f"No method is better than spaCy's `{baseline.name}` here: it ranks first."
    elif top.delta is not None and top.delta["low"] > 0:
        verdict = f"`{top.name}` is better than spaCy's `{baseline.name}`: {_points(top.delta)} dev macro-F1."
    else:
        # the first-ranked is the best guess of the best method; the interval
        # says how sure that guess is, and the benchmarks say methods that
        # rank above spaCy's on a short budget stay level with it or ahead
        verdict = (
            f"`{top.name}` ranks first, {_points(top.delta)} dev macro-F1 over spaCy's `{baseline.name}`, "
            f"an interval that includes 0: no method is better than `{baseline.name}` here, and "
            f"`{baseline.name}` is as sound a choice. More seeds or a larger --budget would separate them."
        )
    return Advice(ranking=ranked, baseline=baseline.name, recommended=top.name, verdict=verdict, seeds=list(seeds))


def _counts(reports: List[Dict[str, Any]]) -> List[MatchCounts]:
    return [MatchCounts.from_sparse(report["counts"]) for report in reports]


def _steps(report: Dict[str, Any]) -> int:
    """Steps trained: where the time budget stopped it, else its last evaluation."""
    if report.get("steps_trained") is not None:
        return int(report["steps_trained"])
    curve = report.get("dev_curve") or []
    return int(curve[-1][0]) if curve else 0


def _points(delta: Optional[Dict[str, float]]) -> str:
    if delta is None:
        return ""
    return f"{100 * delta['delta']:+.1f} [{100 * delta['low']:+.1f}, {100 * delta['high']:+.1f}]"
