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
from typing import List

import srsly
import typer

from bench.cells import over_seeds
from bench.names import run_name
from bench.paired import paired_by_seed
from bench.study.markdown import CAPTIONS, dev_choice_markdown, markdown, paired_markdown
from bench.study.plot import plot
from bench.study.runs import collect, dev_choice


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
        missing = [run_name(c, t) for (c, t), found in runs.items() if not found["macro"]]
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
                (config, tag): paired_by_seed(root, corpus, config, baseline, tag)
                for config in configs if config != baseline for tag, _ in pairs
            }
            diffs = {key: diff for key, diff in diffs.items() if diff is not None}
            comparisons[baseline] = {run_name(config, tag): diff for (config, tag), diff in diffs.items()}
            text += f"\n### {corpus}: paired against {baseline}\n\n{paired_markdown(diffs, configs, baseline, pairs, xlabel)}"
        for reference in references:
            diffs = {(config, tag): paired_by_seed(root, corpus, config, reference, tag, None) for config in configs for tag, _ in pairs}
            diffs = {key: diff for key, diff in diffs.items() if diff is not None}
            comparisons[reference] = {run_name(config, tag): diff for (config, tag), diff in diffs.items()}
            base = [srsly.read_json(p)["macro"]["f"] for p in sorted((root / "metrics" / corpus).glob(f"{reference}-s*.json"))]
            text += (
                f"\n### {corpus}: paired against {reference}\n\n`{reference}` (untagged): macro-F1 {over_seeds(base)} "
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
