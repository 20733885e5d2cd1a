"""Rank the candidates by dev macro-F1 and decide, with paired intervals
against spaCy's better built-in component, what to recommend."""
from dataclasses import asdict, dataclass, field
from statistics import mean, stdev
from typing import Any, Dict, List, Optional, Sequence, Tuple

from ..audit.folds import untrained_reason
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
    # per seed, from the trial's own report: the steps it trained and the
    # minutes its training run took (what the report says it trained)
    steps: List[int]
    delta: Optional[Dict[str, float]] = None
    minutes: List[float] = field(default_factory=list)

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
    # (method, why): candidates left out of the ranking because a trial of
    # theirs was scored as an untrained model (``trained``)
    untrained: List[Tuple[str, str]] = field(default_factory=list)

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
    includes 0: "no method is better than the baseline here").

    Only trained trials are ranked (``trained``): a candidate with a trial
    scored as its first-update model is left out (``Advice.untrained``), and
    a ValueError says so when no trial, or no built-in, trained, or when
    every trained trial scored 0: a recommendation of models that learned
    nothing would be noise."""
    untrained = [(c.name, _untrained_reason(reports[c.name])) for c in candidates if not all(trained(r) for r in reports[c.name])]
    if len(untrained) == len(candidates):
        raise ValueError(
            "No trial trained past its first update, so nothing is recommended: spaCy evaluates after the first "
            "update (step 0) and then every [training] eval_frequency steps, and no trial's dev score rose above "
            f"that of step 0 ({'; '.join(f'{name}: {why}' for name, why in untrained)}). "
            "Give a larger --budget or --max-steps"
        )
    left_out = {name for name, _ in untrained}
    candidates = [c for c in candidates if c.name not in left_out]
    ranked = [
        Ranked(c.name, c.reason, [r["macro"]["f"] for r in reports[c.name]], [steps_trained(r) for r in reports[c.name]],
               minutes=[minutes_trained(r) for r in reports[c.name]])
        for c in candidates
    ]
    if all(f == 0 for r in ranked for f in r.macro_f):
        # a ranking of zeros orders the methods by nothing (the sort keeps the candidates' order)
        raise ValueError(
            f"Every trained method scored 0.0 dev macro-F1 on every seed ({', '.join(r.name for r in ranked)}), so "
            "nothing is recommended: no method learned to find the dev entities. Check that DEV annotates the "
            "entity types of TRAIN, or give a larger --budget or --max-steps"
        )
    if not any(r.name in BUILTINS for r in ranked) and any(name in BUILTINS for name, _ in untrained):
        raise ValueError(
            f"spaCy's built-in components did not train past their first update "
            f"({'; '.join(f'{name}: {why}' for name, why in untrained if name in BUILTINS)}), so there is nothing to "
            "compare the other methods with and nothing is recommended. Give a larger --budget or --max-steps"
        )
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
    verdict += _builtins_left_out(untrained)
    return Advice(ranking=ranked, baseline=baseline.name, recommended=top.name, verdict=verdict, seeds=list(seeds), untrained=untrained)


def _builtins_left_out(untrained: Sequence[Tuple[str, str]]) -> str:
    """What the verdict adds when a built-in did not train: the baseline is
    then the built-in that did, not the better of the two, and nothing is
    said against the one that did not (issue 44: `ner` at 0.0 at every
    evaluation was the baseline a method was "better than")."""
    left = [(name, why) for name, why in untrained if name in BUILTINS]
    if not left:
        return ""
    named = "; ".join(f"`{name}`: {why}" for name, why in left)
    return (
        f" spaCy's {' and '.join(f'`{name}`' for name, _ in left)} did not train past its first update ({named}), "
        "so it is not compared: a larger --budget or --max-steps would compare it too."
    )


def _counts(reports: List[Dict[str, Any]]) -> List[MatchCounts]:
    return [MatchCounts.from_sparse(report["counts"]) for report in reports]


def steps_trained(report: Dict[str, Any]) -> int:
    """Steps trained: where the time budget stopped it, else its last evaluation."""
    if report.get("steps_trained") is not None:
        return int(report["steps_trained"])
    curve = report.get("dev_curve") or []
    return int(curve[-1][0]) if curve else 0


def minutes_trained(report: Dict[str, Any]) -> float:
    """The minutes of the trial's training run (``spacy train``: loading and
    initialising included), from its report like its steps."""
    return float(report.get("train_seconds") or 0.0) / 60


def checkpoint_step(report: Dict[str, Any]) -> Optional[int]:
    """The step of the model a trial was scored with (model-best): spaCy
    saves it at each evaluation that reaches the best score so far, ties
    included, so it is the last step with the best score of the dev curve;
    None without any evaluation."""
    curve = report.get("dev_curve") or []
    if not curve:
        return None
    best = max(score for _, score in curve)
    return int(max(step for step, score in curve if score == best))


def trained(report: Dict[str, Any]) -> bool:
    """Whether a trial's scored model trained past its first update: a dev
    evaluation after step 0 scored above step 0's (``audit.folds.untrained_reason``,
    the audit's rule for its folds too). spaCy evaluates after the first
    update (step 0) and keeps as model-best the last evaluation with the
    best score, so a trial stopped before its second evaluation (a short
    --budget or --max-steps), whose later evaluations were all worse, or
    that stayed at step 0's score (0.0 at every evaluation) is scored as an
    all but untrained model. Built-ins too: an untrained baseline is no
    baseline to beat."""
    return untrained_reason(report.get("dev_curve") or []) is None


def _untrained_reason(reports: List[Dict[str, Any]]) -> str:
    """Why a candidate's trials are untrained, the first such seed's."""
    report = next(r for r in reports if not trained(r))
    done = f"{steps_trained(report)} steps in {minutes_trained(report):.1f} minutes"
    return f"{untrained_reason(report.get('dev_curve') or [])} ({done})"


def _points(delta: Optional[Dict[str, float]]) -> str:
    if delta is None:
        return ""
    return f"{100 * delta['delta']:+.1f} [{100 * delta['low']:+.1f}, {100 * delta['high']:+.1f}]"
