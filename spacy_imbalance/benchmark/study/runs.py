"""The runs of a study, read from metrics/<corpus>/<config>-<tag>-s<seed>.json
(``folder``: metrics/<corpus>)."""
from pathlib import Path
from statistics import mean
from typing import Any, Dict, List, Optional, Tuple

import srsly

from ..names import run_name, system_run

# (config, tag) -> each score's values, one per seed
Runs = Dict[Tuple[str, str], Dict[str, List[float]]]


def collect(folder: Path, configs: List[str], tags: List[str]) -> Runs:
    """Each (system, tag)'s scores, one per seed that has run (a system is a
    config or CONFIG@VARIANT: ``names.system_run``)."""
    runs: Runs = {}
    for config in configs:
        for tag in tags:
            found: Dict[str, List[float]] = {"macro": [], "micro": [], "macro_p": [], "macro_r": [], "missampling": []}
            for path in sorted(folder.glob(f"{run_name(*system_run(config, tag))}-s*.json")):
                report = srsly.read_json(path)
                found["macro"].append(report["macro"]["f"])
                found["micro"].append(report["micro"]["f"])
                found["macro_p"].append(report["macro"]["p"])
                found["macro_r"].append(report["macro"]["r"])
                if report.get("missampling_rate") is not None:
                    found["missampling"].append(report["missampling_rate"])
            runs[config, tag] = found
    return runs


def dev_choice(folder: Path, config: str, settings: List[Tuple[str, str]]) -> Optional[Dict[str, Any]]:
    """The setting of ``config`` with the best mean dev score over its seeds,
    its test macro-F1, and the setting best on test; None when a run lacks a
    dev curve (`benchmark run --need-dev-curve` reruns those) or none has run."""
    means = {}
    for tag, label in settings:
        paths = sorted(folder.glob(f"{run_name(*system_run(config, tag))}-s*.json"))
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
