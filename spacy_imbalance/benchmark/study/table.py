"""A study's tables and plot, written to metrics/<corpus>/<name>.md and .png:
each system's macro- and micro-F1 by setting, optionally precision, recall
and the missampling rate, the paired differences against baselines (in each
setting) and references (one untagged run paired with every setting), and
the setting each system chooses on dev."""
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Dict, List, Optional, Tuple

import srsly

from ..cells import over_seeds
from ..names import run_name, system_run
from ..paired import paired_by_seed
from .markdown import CAPTIONS, dev_choice_markdown, markdown, paired_markdown
from .runs import collect, dev_choice

# a warning about runs the tables lack (said on stderr by the command)
Warn = Callable[[str], None]


@dataclass(frozen=True)
class Study:
    """The systems (``configs``) of a study by setting (``settings``: (tag,
    column label) pairs, in column order; an empty tag is the untagged runs),
    compared with ``baselines`` (among the configs) and ``references``."""

    name: str
    configs: List[str]
    settings: List[Tuple[str, str]]
    xlabel: str = "setting"
    detail: bool = False
    baselines: List[str] = field(default_factory=list)
    references: List[str] = field(default_factory=list)
    choose_on_dev: bool = False


def parse_settings(settings: List[str]) -> List[Tuple[str, str]]:
    """--setting TAG=LABEL values as (tag, label) pairs; a ValueError names a bad one."""
    pairs = []
    for item in settings:
        tag, sep, label = item.partition("=")
        if not sep:
            raise ValueError(f"--setting: expected TAG=LABEL, got {item!r}")
        pairs.append((tag, label))
    return pairs


def write_study(study: Study, folder: Path, corpus: str, plots: bool = True, warn: Warn = print) -> str:
    """The study's tables of the runs in ``folder`` (metrics/<corpus>),
    written to <folder>/<name>.md (comparisons to <name>-paired.json, the dev
    choices to <name>-dev-choice.json) and, with ``plots``, its plot to
    <name>.png; the tables' text."""
    configs, pairs, xlabel = study.configs, study.settings, study.xlabel
    runs = collect(folder, configs, [tag for tag, _ in pairs])
    missing = [run_name(*system_run(c, t)) for (c, t), found in runs.items() if not found["macro"]]
    if missing:
        warn(f"{corpus}: no runs yet for {', '.join(missing)}")
    out = folder / f"{study.name}.md"
    text = f"### {corpus}: macro-F1\n\n{markdown(runs, configs, pairs, 'macro', xlabel)}\n"
    text += f"### {corpus}: micro-F1\n\n{markdown(runs, configs, pairs, 'micro', xlabel)}"
    if study.detail:
        for average in ("macro_p", "macro_r", "missampling"):
            if average == "missampling" and not any(found["missampling"] for found in runs.values()):
                continue  # no sampler among the systems: no rate to show
            text += f"\n### {corpus}: {CAPTIONS[average].split(' (')[0]}\n\n{markdown(runs, configs, pairs, average, xlabel)}"
    comparisons: Dict[str, Dict[str, Any]] = {}
    for baseline in study.baselines:
        diffs = {(config, tag): _pair(folder, config, baseline, tag) for config in configs if config != baseline for tag, _ in pairs}
        text += _paired(comparisons, diffs, study, baseline, f"\n### {corpus}: paired against {baseline}\n\n")
    for reference in study.references:
        diffs = {(config, tag): _pair(folder, config, reference, tag, untagged=True) for config in configs for tag, _ in pairs}
        base = [srsly.read_json(path)["macro"]["f"] for path in sorted(folder.glob(f"{reference}-s*.json"))]
        text += _paired(comparisons, diffs, study, reference, (
            f"\n### {corpus}: paired against {reference}\n\n`{reference}` (untagged): macro-F1 {over_seeds(base)} over {len(base)} runs.\n\n"
        ))
    if study.baselines or study.references:
        srsly.write_json(out.with_name(f"{study.name}-paired.json"), comparisons)
    if study.choose_on_dev:
        text += _dev_choices(study, folder, corpus, out, warn)
    out.write_text(text, encoding="utf8")
    if plots:
        from .plot import plot

        plot(runs, configs, pairs, out.with_suffix(".png"), f"{corpus}: test macro-F1 by {xlabel}", xlabel)
    return text


def _pair(folder: Path, system: str, against: str, tag: str, untagged: bool = False) -> Optional[Dict[str, Any]]:
    """``system`` paired with ``against`` in the setting ``tag`` (each a
    config or CONFIG@VARIANT; ``untagged``: the reference's untagged run)."""
    config, run_tag = system_run(system, tag)
    base, base_tag = (against, None) if untagged else system_run(against, tag)
    return paired_by_seed(folder, config, base, run_tag or "", base_tag)


def _paired(
    comparisons: Dict[str, Dict[str, Any]], diffs: Dict[Tuple[str, str], Any], study: Study, against: str, heading: str
) -> str:
    """The paired table against ``against`` (its comparisons kept in ``comparisons``)."""
    found = {key: diff for key, diff in diffs.items() if diff is not None}
    comparisons[against] = {run_name(*system_run(config, tag)): diff for (config, tag), diff in found.items()}
    return heading + paired_markdown(found, study.configs, against, study.settings, study.xlabel)


def _dev_choices(study: Study, folder: Path, corpus: str, out: Path, warn: Warn) -> str:
    choices = {config: dev_choice(folder, config, study.settings) for config in study.configs}
    lacking = [config for config, choice in choices.items() if choice is None]
    if lacking:
        warn(f"{corpus}: {', '.join(lacking)} cannot be chosen on dev: a run has no dev curve (rerun: benchmark run --need-dev-curve)")
    chosen = {config: choice for config, choice in choices.items() if choice is not None}
    if not chosen:
        return ""
    srsly.write_json(out.with_name(f"{study.name}-dev-choice.json"), chosen)
    return f"\n### {corpus}: {study.xlabel} chosen on dev\n\n{dev_choice_markdown(chosen, study.xlabel)}"

