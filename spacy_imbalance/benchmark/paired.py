"""Paired comparisons of runs: the bootstrap of spacy_imbalance.scorers
over run records (seeds paired, the same resampled test sentences), with the
settings every write-up of the benchmark uses."""
from pathlib import Path
from typing import TYPE_CHECKING, Any, Dict, List, Optional, Sequence, Tuple

import srsly
import typer

from .cells import bounds, signed
from .names import run_name, seed_of
from .tables import head

if TYPE_CHECKING:
    from spacy_imbalance.scorers.counts import MatchCounts

# resamples of the test sentences, and the seed that draws them
N_RESAMPLES = 1000
SEED = 0


def match_counts(reports: Sequence[Dict[str, Any]]) -> List["MatchCounts"]:
    """The per-sentence match counts of run records."""
    from spacy_imbalance.scorers.counts import MatchCounts

    return [MatchCounts.from_sparse(report["counts"]) for report in reports]


def bootstrap(base: Sequence["MatchCounts"], other: Sequence["MatchCounts"]) -> Dict[str, Dict[str, float]]:
    """``other`` against ``base`` (run i of one paired with run i of the
    other): per average, the mean difference over the pairs and its interval."""
    from spacy_imbalance.scorers.bootstrap import paired_bootstrap_runs

    return paired_bootstrap_runs(base, other, n_resamples=N_RESAMPLES, seed=SEED)


def paired_runs(base: Sequence[Dict[str, Any]], other: Sequence[Dict[str, Any]]) -> Dict[str, Dict[str, float]]:
    """``bootstrap`` of two lists of run records, seeds in the same order."""
    return bootstrap(match_counts(base), match_counts(other))


def paired_by_seed(
    folder: Path, config: str, baseline: str, tag: str, baseline_tag: Optional[str] = ""
) -> Optional[Dict[str, Any]]:
    """Paired bootstrap of ``config`` against ``baseline`` on the seeds both
    have run in ``folder`` (metrics/<corpus>), with this tag (the baseline
    with ``baseline_tag``: "" means the same tag, None untagged); None when
    they share no seed."""

    def by_seed(name: str) -> Dict[int, Path]:
        return {seed_of(path): path for path in folder.glob(f"{name}-s*.json")}

    base_name = baseline if baseline_tag is None else run_name(baseline, baseline_tag or tag)
    base, system = by_seed(base_name), by_seed(run_name(config, tag))
    seeds = sorted(set(base) & set(system))
    if not seeds:
        return None

    def counts(paths: Dict[int, Path]) -> List["MatchCounts"]:
        reports = [srsly.read_json(paths[seed]) for seed in seeds]
        missing = [str(paths[seed]) for seed, report in zip(seeds, reports) if "counts" not in report]
        if missing:
            raise typer.BadParameter(f"no per-sentence counts (rerun them with `spacy-imbalance benchmark run --baseline`): {', '.join(missing)}")
        return match_counts(reports)

    return {**bootstrap(counts(base), counts(system)), "seeds": seeds}


def compare_with_baseline(folder: Path, configs: List[str], seeds: List[int], baseline: str) -> Tuple[Dict[str, Any], str]:
    """Paired bootstrap of each config against ``baseline``, seeds paired
    (runs read from ``folder``, i.e. metrics/<corpus>); the results and their
    Markdown table."""

    def counts(config: str) -> List["MatchCounts"]:
        return match_counts([srsly.read_json(folder / f"{config}-s{s}.json") for s in seeds])

    base = counts(baseline)
    over_seeds = f"mean difference over seeds {', '.join(map(str, seeds))}" if len(seeds) > 1 else f"seed {seeds[0]}"
    result: Dict[str, Any] = {"baseline": baseline, "seeds": seeds, "n_resamples": N_RESAMPLES, "systems": {}}
    lines = [
        f"Paired bootstrap against `{baseline}` ({over_seeds}, "
        "1,000 resamples of the test sentences; in points):",
        "",
        *head(["system", "Δ macro-F1", "95 % CI", "Δ micro-F1", "95 % CI", "resamples not better (macro)"], "lrrrrr"),
    ]
    for config in configs:
        if config == baseline:
            continue
        diff = bootstrap(base, counts(config))
        result["systems"][config] = diff
        ma, mi = diff["macro_f"], diff["micro_f"]
        lines.append(
            f"| {config} | {signed(ma['delta'])} | {bounds(ma)} "
            f"| {signed(mi['delta'])} | {bounds(mi)} | {ma['share_not_better']:.3f} |"
        )
    return result, "\n".join(lines) + "\n"
