"""The headline table of one encoder: every system against the best spaCy
built-in trained on the same encoder and budget, with each method's own claim
re-tested, training time, and the dev curves that show the runs converged.

Reads the runs that `benchmark.py` wrote to
metrics/<corpus>/<encoder>/<system>-s<seed>.json and writes
metrics/<corpus>/<name>.md, <name>.json and <name>_dev.png.

    python scripts/headline_table.py headline_vectors --corpus wnut17 --encoder vectors

The reference of the paired bootstrap is the built-in (spaCy's ner,
spancat_singlelabel, spancat) with the best mean test macro-F1: choosing it on
test makes every comparison harder for the other systems, never easier. A
system with seeds missing is shown as missing, not averaged over fewer seeds.
"""
from pathlib import Path
from statistics import mean, stdev
from typing import Dict, List, Optional, Tuple

import srsly
import typer

from spacy_imbalance.scorers.bootstrap import paired_bootstrap_runs
from spacy_imbalance.scorers.counts import MatchCounts

BUILTINS = [
    ("ner", "spaCy ner"),
    ("spancat_singlelabel", "spaCy spancat_singlelabel"),
    ("spancat", "spaCy spancat"),
]
METHODS = [
    ("sampled_spancat_uniform", "sampled_spancat, uniform negatives"),
    ("sampled_spancat_weighted_v2", "sampled_spancat, weighted negatives (v2)"),
    ("sampled_spancat_top_v2", "sampled_spancat, Top-Neg (v2)"),
    ("sampled_spancat_all", "sampled_spancat, all negatives"),
    ("token_ner", "token_ner, cross entropy"),
    ("token_ner_wce2", "token_ner, WCE-2"),
    ("token_ner_mom_v2-l50", "token_ner, MoM (v2, λ 0.5) over CE"),
    ("two_task_auc_type_head-fitted", "two_task_ner, AUC-2T (fitted thresholds)"),
    ("two_task_bce-fitted", "two_task_ner, CE-2T (fitted thresholds)"),
    ("ner_sCRD", "ner on sCRD-resampled data"),
]
# each method's claim in its paper, in its direction: (method, reference)
CLAIMS = [
    ("token_ner_mom_v2-l50", "token_ner", "MoM over its base loss"),
    ("token_ner_wce2", "token_ner", "WCE-2 over cross entropy"),
    ("two_task_auc_type_head-fitted", "two_task_bce-fitted", "AUC-2T over CE-2T"),
    ("sampled_spancat_weighted_v2", "sampled_spancat_uniform", "weighted over uniform negatives"),
    ("sampled_spancat_top_v2", "sampled_spancat_uniform", "Top-Neg over uniform negatives"),
    ("sampled_spancat_top_v2", "sampled_spancat_all", "Top-Neg over all negatives"),
    ("sampled_spancat_uniform", "sampled_spancat_all", "uniform over all negatives"),
    ("ner_sCRD", "ner", "sCRD over no resampling"),
]


def load_runs(folder: Path, system: str, seeds: List[int]) -> Optional[List[dict]]:
    paths = [folder / f"{system}-s{seed}.json" for seed in seeds]
    if not all(path.is_file() for path in paths):
        return None
    return [srsly.read_json(path) for path in paths]


def spread(values: List[float]) -> str:
    sd = stdev(values) if len(values) > 1 else 0.0
    return f"{100 * mean(values):.1f} ± {100 * sd:.1f}"


def counts(runs: List[dict]) -> List[MatchCounts]:
    return [MatchCounts.from_sparse(run["counts"]) for run in runs]


def paired(base: List[dict], other: List[dict]) -> dict:
    return paired_bootstrap_runs(counts(base), counts(other), n_resamples=1000, seed=0)["macro_f"]


def interval(diff: dict) -> str:
    return f"{100 * diff['delta']:+.1f} [{100 * diff['low']:+.1f}, {100 * diff['high']:+.1f}]"


def verdict(diff: dict) -> str:
    if diff["low"] > 0:
        return "holds"
    if diff["high"] < 0:
        return "reversed"
    return "not shown (interval spans 0)"


def per_type_mean(runs: List[dict]) -> Dict[str, float]:
    labels = sorted({label for run in runs for label in run["per_type"]})
    return {label: mean(run["per_type"].get(label, {}).get("f", 0.0) for run in runs) for label in labels}


def best_step(run: dict) -> Tuple[int, int]:
    """The step of the best dev score (model-best) and the last step trained."""
    curve = run.get("dev_curve") or [[run.get("train_steps", 0), 0.0]]
    best = max(curve, key=lambda point: point[1])
    return int(best[0]), int(curve[-1][0])


def table(corpus: str, encoder: str, seeds: List[int], root: Path) -> Tuple[str, dict, Dict[str, List[dict]]]:
    folder = root / "metrics" / corpus / encoder
    labels = dict(BUILTINS + METHODS)
    runs = {system: load_runs(folder, system, seeds) for system in labels}
    present = {system: r for system, r in runs.items() if r is not None}
    builtins = [system for system, _ in BUILTINS if system in present]
    missing = [system for system in labels if system not in present]
    result: dict = {"corpus": corpus, "encoder": encoder, "seeds": seeds, "missing": missing, "systems": {}}
    lines = [f"Test scores on {corpus}, {encoder} encoder (mean ± std over seeds {', '.join(map(str, seeds))}; in points)."]
    if not builtins:
        lines.append("\nNo built-in has all its runs yet: nothing to compare with.")
        return "\n".join(lines) + "\n", result, present
    reference = max(builtins, key=lambda s: mean(run["macro"]["f"] for run in present[s]))
    found_by_builtin = {
        label for system in builtins for label, f in per_type_mean(present[system]).items() if f > 0
    }
    result["reference"] = reference
    lines += [
        f"Δ: paired bootstrap against the best built-in, **{labels[reference]}** "
        "(seeds paired, 1,000 resamples of the test sentences, 95 % interval). "
        "Types at 0: entity types the system never gets right while a built-in does. "
        "Steps: where the dev macro-F1 peaked (model-best) / where training stopped, mean over seeds.",
        "",
        "| system | macro-F1 | micro-F1 | Δ macro-F1 vs best built-in | types at 0 | train time (min) | steps: best / stopped |",
        "| --- | --: | --: | --: | --- | --: | --: |",
    ]
    for system in labels:
        if system not in present:
            continue
        system_runs = present[system]
        macro = [run["macro"]["f"] for run in system_runs]
        micro = [run["micro"]["f"] for run in system_runs]
        zeros = sorted(label for label, f in per_type_mean(system_runs).items() if f == 0 and label in found_by_builtin)
        steps = [best_step(run) for run in system_runs]
        minutes = mean(run["train_seconds"] for run in system_runs) / 60
        diff = None if system == reference else paired(present[reference], system_runs)
        result["systems"][system] = {
            "macro_f": macro, "micro_f": micro, "types_at_zero": zeros, "train_seconds": [run["train_seconds"] for run in system_runs],
            "steps": steps, "vs_reference": diff, "per_type_f": per_type_mean(system_runs),
        }
        lines.append(
            f"| {labels[system]} | {spread(macro)} | {spread(micro)} | {'reference' if diff is None else interval(diff)} "
            f"| {', '.join(zeros) or '–'} | {minutes:.1f} | {mean(s[0] for s in steps):.0f} / {mean(s[1] for s in steps):.0f} |"
        )
    claim_lines = []
    for method, base, claim in CLAIMS:
        if method in present and base in present:
            diff = paired(present[base], present[method])
            result.setdefault("claims", {})[claim] = diff
            claim_lines.append(f"| {claim} | {labels[method]} vs {labels[base]} | {interval(diff)} | {verdict(diff)} |")
    if claim_lines:
        lines += [
            "",
            "Each method's claim, re-tested in its direction (Δ macro-F1, paired, 95 % interval):",
            "",
            "| claim | runs | Δ macro-F1 | at this scale |",
            "| --- | --- | --: | --- |",
            *claim_lines,
        ]
    types = sorted({label for system_runs in present.values() for label in per_type_mean(system_runs)})
    lines += [
        "",
        "Per-type F1 (mean over seeds):",
        "",
        "| system | " + " | ".join(types) + " |",
        "| --- | " + " | ".join("--:" for _ in types) + " |",
    ]
    for system in labels:
        if system in present:
            f = per_type_mean(present[system])
            lines.append(f"| {labels[system]} | " + " | ".join(f"{100 * f.get(t, 0.0):.1f}" for t in types) + " |")
    if missing:
        lines += ["", "Not run yet (or seeds missing): " + ", ".join(f"`{encoder}/{s}`" for s in missing) + "."]
    lines += ["", f"![dev curves](../../metrics/{corpus}/{{name}}_dev.png)"]
    return "\n".join(lines) + "\n", result, present


def plot_dev_curves(present: Dict[str, List[dict]], path: Path, title: str) -> None:
    """Dev macro-F1 against training steps: the mean over seeds up to the
    first seed's early stop (bold), then over the seeds still training (faint)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    labels = dict(BUILTINS + METHODS)
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
    fig.savefig(path, dpi=110)
    plt.close(fig)


def main(
    name: str = typer.Argument(..., help="Writes metrics/<corpus>/<name>.md, .json and _dev.png"),
    corpora: List[str] = typer.Option(..., "--corpus"),
    encoder: str = typer.Option(..., "--encoder", help="The config folder of the runs: vectors or features"),
    seeds: str = typer.Option("0,1,2", "--seed", help="Comma-separated seeds"),
    root: Path = typer.Option(Path("."), "--root"),
) -> None:
    seed_list = [int(s) for s in seeds.split(",") if s.strip()]
    for corpus in corpora:
        text, result, present = table(corpus, encoder, seed_list, root)
        out = root / "metrics" / corpus / f"{name}.md"
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(text.replace("{name}", name), encoding="utf8")
        srsly.write_json(out.with_suffix(".json"), result, indent=0)
        if present:
            plot_dev_curves(present, out.with_name(f"{name}_dev.png"), f"Dev macro-F1, {corpus}, {encoder} encoder")
        typer.echo(text.replace("{name}", name))


if __name__ == "__main__":
    typer.run(main)
