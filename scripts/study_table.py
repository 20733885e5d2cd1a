"""Tables and a plot of a study: systems x settings (training-set sizes or
entity-token shares), each cell the mean ± std over seeds of the runs that
`benchmark.py --tag TAG` wrote to metrics/<corpus>/<config>-<TAG>-s<seed>.json.

    python scripts/study_table.py low_resource --corpus wnut17 \
        --config ner --config two_task_auc --setting n50=50 --setting n100=100 \
        --xlabel "training sentences"
"""
from pathlib import Path
from statistics import mean, stdev
from typing import Dict, List, Tuple

import srsly
import typer


def cell(values: List[float]) -> str:
    if not values:
        return "–"
    spread = stdev(values) if len(values) > 1 else 0.0
    return f"{100 * mean(values):.1f} ± {100 * spread:.1f}"


def collect(root: Path, corpus: str, configs: List[str], tags: List[str]) -> Dict[Tuple[str, str], Dict[str, List[float]]]:
    runs: Dict[Tuple[str, str], Dict[str, List[float]]] = {}
    for config in configs:
        for tag in tags:
            found = {"macro": [], "micro": [], "macro_p": [], "macro_r": [], "missampling": []}
            for path in sorted((root / "metrics" / corpus).glob(f"{config}-{tag}-s*.json")):
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
        cells = [cell(runs[config, tag][average]) for tag, _ in settings]
        lines.append(f"| {config} | " + " | ".join(cells) + " |")
    n_runs = sorted({len(runs[key][average]) for key in runs})
    lines.append("")
    where = "in training" if average == "missampling" else "on the test split"
    lines.append(f"{CAPTIONS[average]} {where}, mean ± std (%) over {'/'.join(map(str, n_runs))} runs (one random draw per seed).")
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
    settings: List[str] = typer.Option(..., "--setting", help="TAG=LABEL, in column order, e.g. n50=50"),
    xlabel: str = typer.Option("setting", "--xlabel"),
    detail: bool = typer.Option(False, "--detail", help="Also macro precision/recall and the missampling rate"),
    root: Path = typer.Option(Path("."), "--root"),
) -> None:
    pairs = []
    for item in settings:
        tag, sep, label = item.partition("=")
        if not sep:
            raise typer.BadParameter(f"expected TAG=LABEL, got {item!r}", param_hint="--setting")
        pairs.append((tag, label))
    for corpus in corpora:
        runs = collect(root, corpus, configs, [tag for tag, _ in pairs])
        missing = [f"{c}-{t}" for (c, t), found in runs.items() if not found["macro"]]
        if missing:
            typer.echo(f"{corpus}: no runs yet for {', '.join(missing)}", err=True)
        out = root / "metrics" / corpus / f"{name}.md"
        text = f"### {corpus}: macro-F1\n\n{markdown(runs, configs, pairs, 'macro', xlabel)}\n"
        text += f"### {corpus}: micro-F1\n\n{markdown(runs, configs, pairs, 'micro', xlabel)}"
        if detail:
            for average in ("macro_p", "macro_r", "missampling"):
                text += f"\n### {corpus}: {CAPTIONS[average].split(' (')[0]}\n\n{markdown(runs, configs, pairs, average, xlabel)}"
        out.write_text(text, encoding="utf8")
        plot(runs, configs, pairs, out.with_suffix(".png"), f"{corpus}: test macro-F1 by {xlabel}", xlabel)
        typer.echo(text)


if __name__ == "__main__":
    typer.run(main)
