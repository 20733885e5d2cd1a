"""The headline table's Markdown, from the runs of
metrics/<corpus>/<encoder>/<system>-s<seed>.json."""
from pathlib import Path
from statistics import mean
from typing import Any, Dict, Iterable, List, Optional, Set, Tuple

import srsly

from spacy_imbalance.benchmark.cells import MISSING, interval, over_seeds, points
from spacy_imbalance.benchmark.paired import paired_runs
from spacy_imbalance.benchmark.records import device_words
from spacy_imbalance.benchmark.tables import head, row

from .systems import BUILTINS, DEFAULT_MOM_TAG, systems


def load_runs(folder: Path, system: str, seeds: List[int]) -> Optional[List[Dict[str, Any]]]:
    """The system's runs of all ``seeds``; None when one is missing."""
    paths = [folder / f"{system}-s{seed}.json" for seed in seeds]
    if not all(path.is_file() for path in paths):
        return None
    return [srsly.read_json(path) for path in paths]


def paired(base: List[Dict[str, Any]], other: List[Dict[str, Any]]) -> Dict[str, float]:
    """The macro-F1 difference of ``other`` against ``base``, seeds paired."""
    return paired_runs(base, other)["macro_f"]


def verdict(diff: Dict[str, float]) -> str:
    if diff["low"] > 0:
        return "holds"
    if diff["high"] < 0:
        return "reversed"
    return "not shown (interval spans 0)"


def per_type_mean(runs: List[Dict[str, Any]]) -> Dict[str, float]:
    labels = sorted({label for run in runs for label in run["per_type"]})
    return {label: mean(run["per_type"].get(label, {}).get("f", 0.0) for run in runs) for label in labels}


def best_step(run: Dict[str, Any]) -> Tuple[int, int]:
    """The step of the best dev score (model-best) and the last step trained."""
    curve = run.get("dev_curve") or [[run.get("train_steps", 0), 0.0]]
    best = max(curve, key=lambda point: point[1])
    return int(best[0]), int(curve[-1][0])


def run_device(run: Dict[str, Any]) -> str:
    """Where a run trained, in words ("unrecorded" for runs without provenance)."""
    provenance = run.get("provenance")
    return device_words(provenance) if provenance else "unrecorded"


def machines(runs: Iterable[Dict[str, Any]]) -> Set[str]:
    """The machines ``runs`` recorded training on; a run without provenance names none (it is not a machine of
    its own: the provenance note of the table names those runs)."""
    return {run_device(run) for run in runs} - {"unrecorded"}


def train_minutes(runs: List[Dict[str, Any]]) -> str:
    """The mean training time, or each seed's time when the seeds trained on
    different machines: a mean of CPU hours and GPU minutes describes neither."""
    minutes = [run["train_seconds"] / 60 for run in runs]
    if len(machines(runs)) > 1:
        return " / ".join(f"{m:.1f}" for m in minutes)
    return f"{mean(minutes):.1f}"


def devices_note(present: Dict[str, List[Dict[str, Any]]], seeds: List[int]) -> List[str]:
    """Which seeds trained where, when that is more than one machine."""
    where: Dict[str, List[int]] = {}
    for seed, runs in zip(seeds, zip(*present.values())):
        for device in machines(runs):
            where.setdefault(device, []).append(seed)
    if len(where) < 2:
        return []
    return ["", "Trained on more than one machine (train time per seed, in seed order): " + "; ".join(
        f"seed{'s' if len(s) > 1 else ''} {', '.join(map(str, s))} on {device}" for device, s in where.items()
    ) + "."]


def table(
    corpus: str, encoder: str, seeds: List[int], root: Path, mom: str = DEFAULT_MOM_TAG
) -> Tuple[str, Dict[str, Any], Dict[str, List[Dict[str, Any]]]]:
    """The table's Markdown (``{name}`` standing for the table's name), its
    numbers, and the runs of each system that has all its seeds (MoM's runs
    tagged ``mom``: the λ the corpus's dev chose)."""
    LABELS, CLAIMS = systems(mom)
    folder = root / "metrics" / corpus / encoder
    runs = {system: load_runs(folder, system, seeds) for system in LABELS}
    present = {system: r for system, r in runs.items() if r is not None}
    builtins = [system for system, _ in BUILTINS if system in present]
    missing = [system for system in LABELS if system not in present]
    result: Dict[str, Any] = {"corpus": corpus, "encoder": encoder, "seeds": seeds, "missing": missing, "systems": {}}
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
        f"Δ: paired bootstrap against the best built-in, **{LABELS[reference]}** "
        "(seeds paired, 1,000 resamples of the test sentences, 95 % interval). "
        "Types at 0: entity types the system never gets right while a built-in does. "
        "Steps: where the dev macro-F1 peaked (model-best) / where training stopped, mean over seeds.",
        "",
        *head(["system", "macro-F1", "micro-F1", "Δ macro-F1 vs best built-in", "types at 0", "train time (min)", "steps: best / stopped"], "lrrrlrr"),
    ]
    for system in LABELS:
        if system not in present:
            continue
        system_runs = present[system]
        macro = [run["macro"]["f"] for run in system_runs]
        micro = [run["micro"]["f"] for run in system_runs]
        zeros = sorted(label for label, f in per_type_mean(system_runs).items() if f == 0 and label in found_by_builtin)
        steps = [best_step(run) for run in system_runs]
        diff = None if system == reference else paired(present[reference], system_runs)
        result["systems"][system] = {
            "macro_f": macro, "micro_f": micro, "types_at_zero": zeros, "train_seconds": [run["train_seconds"] for run in system_runs],
            "steps": steps, "devices": [run_device(run) for run in system_runs], "vs_reference": diff, "per_type_f": per_type_mean(system_runs),
        }
        lines.append(
            f"| {LABELS[system]} | {over_seeds(macro)} | {over_seeds(micro)} | {'reference' if diff is None else interval(diff)} "
            f"| {', '.join(zeros) or MISSING} | {train_minutes(system_runs)} | {mean(s[0] for s in steps):.0f} / {mean(s[1] for s in steps):.0f} |"
        )
    lines += devices_note(present, seeds)
    claim_lines = []
    for method, base, claim in CLAIMS:
        if method in present and base in present:
            diff = paired(present[base], present[method])
            result.setdefault("claims", {})[claim] = diff
            claim_lines.append(row([claim, f"{LABELS[method]} vs {LABELS[base]}", interval(diff), verdict(diff)]))
    if claim_lines:
        lines += [
            "",
            "Each method's claim, re-tested in its direction (Δ macro-F1, paired, 95 % interval):",
            "",
            *head(["claim", "runs", "Δ macro-F1", "at this scale"], "llrl"),
            *claim_lines,
        ]
    types = sorted({label for system_runs in present.values() for label in per_type_mean(system_runs)})
    lines += [
        "",
        "Per-type F1 (mean over seeds):",
        "",
        *head(["system", *types], "l" + "r" * len(types)),
    ]
    for system in LABELS:
        if system in present:
            f = per_type_mean(present[system])
            lines.append(row([LABELS[system], *(points(f.get(t, 0.0)) for t in types)]))
    if missing:
        lines += ["", "Not run yet (or seeds missing): " + ", ".join(f"`{encoder}/{s}`" for s in missing) + "."]
    lines += ["", f"![dev curves](../../metrics/{corpus}/{{name}}_dev.png)"]
    return "\n".join(lines) + "\n", result, present
