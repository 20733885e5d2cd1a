"""Tables and a plot of a study: systems x settings (training-set sizes or
entity-token shares), each cell the mean ± std over seeds of the runs that
`benchmark.py --tag TAG` wrote to metrics/<corpus>/<config>-<TAG>-s<seed>.json.

    python scripts/study_table.py low_resource --corpus wnut17 \
        --config ner --config two_task_auc --setting n50=50 --setting n100=100 \
        --xlabel "training sentences" --baseline two_task_bce

A sweep of one setting (a loss weight, say) compares every run with one
untagged run instead: --reference token_ner pairs each <config>-<TAG> with
metrics/<corpus>/token_ner-s<seed>.json.

With --baseline, every other system is compared with the baseline in each
setting by a paired bootstrap (seeds paired: the same seed draws the same
training subset or mask for every config; 1,000 resamples of the test
sentences), written as a table of macro-F1 differences with 95 % intervals and
to <name>-paired.json.

With --choose-on-dev, each system's setting is chosen by its mean best dev
score over seeds (the runs' dev curves: the score model-best was selected
by), and the chosen setting's test score is set beside the best test score
of any setting: the number a study reports is the dev choice's, and the gap
says what choosing on test would have added. Written to <name>-dev-choice.json.
"""
from pathlib import Path
from statistics import mean, stdev
from typing import Dict, List, Optional, Tuple

import srsly
import typer

from spacy_imbalance.scorers.bootstrap import paired_bootstrap_runs
from spacy_imbalance.scorers.counts import MatchCounts


def cell(values: List[float], digits: int = 1) -> str:
    if not values:
        return "–"
    spread = stdev(values) if len(values) > 1 else 0.0
    return f"{100 * mean(values):.{digits}f} ± {100 * spread:.{digits}f}"


def tagged(config: str, tag: str) -> str:
    """A run's name: <config>-<tag>, or <config> for the empty tag (the untagged
    runs, e.g. the headline runs used as a study's p = 0 column)."""
    return f"{config}-{tag}" if tag else config


def collect(root: Path, corpus: str, configs: List[str], tags: List[str]) -> Dict[Tuple[str, str], Dict[str, List[float]]]:
    runs: Dict[Tuple[str, str], Dict[str, List[float]]] = {}
    for config in configs:
        for tag in tags:
            found = {"macro": [], "micro": [], "macro_p": [], "macro_r": [], "missampling": []}
            for path in sorted((root / "metrics" / corpus).glob(f"{tagged(config, tag)}-s*.json")):
                report = srsly.read_json(path)
                found["macro"].append(report["macro"]["f"])
                found["micro"].append(report["micro"]["f"])
                found["macro_p"].append(report["macro"]["p"])
                found["macro_r"].append(report["macro"]["r"])
                if report.get("missampling_rate") is not None:
                    found["missampling"].append(report["missampling_rate"])
            runs[config, tag] = found
    return runs


CAPTIONS = {
    "macro": "macro-F1",
    "micro": "micro-F1",
    "macro_p": "macro precision",
    "macro_r": "macro recall",
    "missampling": "missampling rate (share of sampled negatives that are masked entities, over the whole training; samplers only)",
}


def markdown(runs, configs: List[str], settings: List[Tuple[str, str]], average: str, xlabel: str) -> str:
    header = f"| system \\ {xlabel} | " + " | ".join(label for _, label in settings) + " |"
    lines = [header, "| --- |" + " --: |" * len(settings)]
    for config in configs:
        if average == "missampling" and not any(runs[config, tag][average] for tag, _ in settings):
            continue  # systems without negative sampling record no rate
        # missampling rates are a fraction of a percent
        cells = [cell(runs[config, tag][average], 2 if average == "missampling" else 1) for tag, _ in settings]
        lines.append(f"| {config} | " + " | ".join(cells) + " |")
    n_runs = sorted({len(runs[key][average]) for key in runs} - {0}) or [0]
    lines.append("")
    where = "in training" if average == "missampling" else "on the test split"
    lines.append(f"{CAPTIONS[average]} {where}, mean ± std (%) over {'/'.join(map(str, n_runs))} runs (one random draw per seed).")
    return "\n".join(lines) + "\n"


def seed_of(path: Path) -> int:
    return int(path.stem.rsplit("-s", 1)[1])


def dev_choice(root: Path, corpus: str, config: str, settings: List[Tuple[str, str]]) -> Optional[Dict[str, object]]:
    """The setting of ``config`` with the best mean dev score over its seeds,
    its test macro-F1, and the setting best on test; None when a run lacks a
    dev curve (benchmark.py --need-dev-curve reruns those) or none has run."""
    means = {}
    for tag, label in settings:
        paths = sorted((root / "metrics" / corpus).glob(f"{tagged(config, tag)}-s*.json"))
        reports = [srsly.read_json(path) for path in paths]
        if not reports or any(not report.get("dev_curve") for report in reports):
            return None
        means[label] = {
            "dev": mean(max(score for _, score in report["dev_curve"]) for report in reports),
            "test": mean(report["macro"]["f"] for report in reports),
            "runs": len(reports),
        }
    chosen = max(means, key=lambda label: means[label]["dev"])
    best_on_test = max(means, key=lambda label: means[label]["test"])
    return {"chosen": chosen, "best_on_test": best_on_test, "settings": means}


def dev_choice_markdown(choices: Dict[str, Dict[str, object]], xlabel: str) -> str:
    lines = [
        f"| system | {xlabel} chosen on dev | its dev score | its test macro-F1 | best {xlabel} on test | its test macro-F1 |",
        "| --- | --: | --: | --: | --: | --: |",
    ]
    for config, choice in choices.items():
        settings = choice["settings"]
        chosen, best = settings[choice["chosen"]], settings[choice["best_on_test"]]
        lines.append(
            f"| {config} | {choice['chosen']} | {100 * chosen['dev']:.1f} | {100 * chosen['test']:.1f} "
            f"| {choice['best_on_test']} | {100 * best['test']:.1f} |"
        )
    lines += ["", "Dev score: the mean over seeds of each run's best dev score (its model-best's selection score); test: the mean macro-F1 of the same runs."]
    return "\n".join(lines) + "\n"


def paired(
    root: Path, corpus: str, config: str, baseline: str, tag: str, baseline_tag: Optional[str] = ""
) -> Optional[Dict[str, Dict[str, float]]]:
    """Paired bootstrap of ``config`` against ``baseline`` on the seeds both
    have run, with this tag (the baseline with ``baseline_tag``: "" means the
    same tag, None untagged); None when they share no seed."""
    folder = root / "metrics" / corpus

    def by_seed(name: str) -> Dict[int, Path]:
        return {seed_of(path): path for path in folder.glob(f"{name}-s*.json")}

    base_name = baseline if baseline_tag is None else tagged(baseline, baseline_tag or tag)
    base, system = by_seed(base_name), by_seed(tagged(config, tag))
    seeds = sorted(set(base) & set(system))
    if not seeds:
        return None

    def counts(paths: Dict[int, Path]) -> List[MatchCounts]:
        reports = [srsly.read_json(paths[seed]) for seed in seeds]
        missing = [str(paths[seed]) for seed, report in zip(seeds, reports) if "counts" not in report]
        if missing:
            raise typer.BadParameter(f"no per-sentence counts (rerun with --baseline in benchmark.py): {', '.join(missing)}")
        return [MatchCounts.from_sparse(report["counts"]) for report in reports]

    result = paired_bootstrap_runs(counts(base), counts(system), n_resamples=1000, seed=0)
    return {**result, "seeds": seeds}


def paired_markdown(diffs, configs: List[str], baseline: str, settings: List[Tuple[str, str]], xlabel: str) -> str:
    header = f"| system − {baseline} \\ {xlabel} | " + " | ".join(label for _, label in settings) + " |"
    lines = [header, "| --- |" + " --: |" * len(settings)]
    for config in configs:
        if config == baseline:
            continue
        cells = []
        for tag, _ in settings:
            diff = diffs.get((config, tag))
            if diff is None:
                cells.append("–")
                continue
            macro = diff["macro_f"]
            # bold where the 95 % interval excludes zero
            text = f"{100 * macro['delta']:+.1f} [{100 * macro['low']:+.1f}, {100 * macro['high']:+.1f}]"
            cells.append(f"**{text}**" if macro["low"] > 0 or macro["high"] < 0 else text)
        lines.append(f"| {config} | " + " | ".join(cells) + " |")
    lines.append("")
    lines.append(
        f"Δ macro-F1 against `{baseline}` (points): mean over the paired seeds and paired bootstrap 95 % interval "
        "(1,000 resamples of the test sentences); bold where the interval excludes 0."
    )
    return "\n".join(lines) + "\n"


def plot(runs, configs: List[str], settings: List[Tuple[str, str]], path: Path, title: str, xlabel: str) -> None:
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
    fig.savefig(path, dpi=120, bbox_inches="tight")
    plt.close(fig)


def main(
    name: str = typer.Argument(..., help="Study name: writes metrics/<corpus>/<name>.md and <name>.png"),
    corpora: List[str] = typer.Option(..., "--corpus"),
    configs: List[str] = typer.Option(..., "--config"),
    settings: List[str] = typer.Option(..., "--setting", help="TAG=LABEL, in column order, e.g. n50=50; an empty TAG (=0) is the untagged runs"),
    xlabel: str = typer.Option("setting", "--xlabel"),
    detail: bool = typer.Option(False, "--detail", help="Also macro precision/recall and the missampling rate"),
    baselines: List[str] = typer.Option([], "--baseline", help="Compare every other system with this one (paired bootstrap); repeatable"),
    references: List[str] = typer.Option([], "--reference", help="An untagged run (e.g. token_ner) to pair every <config>-<TAG> with; repeatable"),
    root: Path = typer.Option(Path("."), "--root"),
    choose_on_dev: bool = typer.Option(False, "--choose-on-dev", help="Choose each system's setting by its mean dev score and report that choice's test score"),
) -> None:
    pairs = []
    for item in settings:
        tag, sep, label = item.partition("=")
        if not sep:
            raise typer.BadParameter(f"expected TAG=LABEL, got {item!r}", param_hint="--setting")
        pairs.append((tag, label))
    unknown = [b for b in baselines if b not in configs]
    if unknown:
        raise typer.BadParameter(f"{unknown} not among the --config values {configs}", param_hint="--baseline")
    for corpus in corpora:
        runs = collect(root, corpus, configs, [tag for tag, _ in pairs])
        missing = [tagged(c, t) for (c, t), found in runs.items() if not found["macro"]]
        if missing:
            typer.echo(f"{corpus}: no runs yet for {', '.join(missing)}", err=True)
        out = root / "metrics" / corpus / f"{name}.md"
        text = f"### {corpus}: macro-F1\n\n{markdown(runs, configs, pairs, 'macro', xlabel)}\n"
        text += f"### {corpus}: micro-F1\n\n{markdown(runs, configs, pairs, 'micro', xlabel)}"
        if detail:
            for average in ("macro_p", "macro_r", "missampling"):
                if average == "missampling" and not any(found["missampling"] for found in runs.values()):
                    continue  # no sampler among the systems: no rate to show
                text += f"\n### {corpus}: {CAPTIONS[average].split(' (')[0]}\n\n{markdown(runs, configs, pairs, average, xlabel)}"
        comparisons = {}
        for baseline in baselines:
            diffs = {
                (config, tag): paired(root, corpus, config, baseline, tag)
                for config in configs if config != baseline for tag, _ in pairs
            }
            diffs = {key: diff for key, diff in diffs.items() if diff is not None}
            comparisons[baseline] = {tagged(config, tag): diff for (config, tag), diff in diffs.items()}
            text += f"\n### {corpus}: paired against {baseline}\n\n{paired_markdown(diffs, configs, baseline, pairs, xlabel)}"
        for reference in references:
            diffs = {(config, tag): paired(root, corpus, config, reference, tag, None) for config in configs for tag, _ in pairs}
            diffs = {key: diff for key, diff in diffs.items() if diff is not None}
            comparisons[reference] = {tagged(config, tag): diff for (config, tag), diff in diffs.items()}
            base = [srsly.read_json(p)["macro"]["f"] for p in sorted((root / "metrics" / corpus).glob(f"{reference}-s*.json"))]
            text += (
                f"\n### {corpus}: paired against {reference}\n\n`{reference}` (untagged): macro-F1 {cell(base)} "
                f"over {len(base)} runs.\n\n{paired_markdown(diffs, configs, reference, pairs, xlabel)}"
            )
        if baselines or references:
            srsly.write_json(out.with_name(f"{name}-paired.json"), comparisons)
        if choose_on_dev:
            choices = {config: dev_choice(root, corpus, config, pairs) for config in configs}
            lacking = [config for config, choice in choices.items() if choice is None]
            if lacking:
                typer.echo(f"{corpus}: {', '.join(lacking)} cannot be chosen on dev: a run has no dev curve (rerun: benchmark.py --need-dev-curve)", err=True)
            choices = {config: choice for config, choice in choices.items() if choice is not None}
            if choices:
                srsly.write_json(out.with_name(f"{name}-dev-choice.json"), choices)
                text += f"\n### {corpus}: {xlabel} chosen on dev\n\n{dev_choice_markdown(choices, xlabel)}"
        out.write_text(text, encoding="utf8")
        plot(runs, configs, pairs, out.with_suffix(".png"), f"{corpus}: test macro-F1 by {xlabel}", xlabel)
        typer.echo(text)


if __name__ == "__main__":
    typer.run(main)
