"""How much gradient a fine-tuned config sends its encoder: for each config,
the squared gradient that reaches the ``transformer`` component (its entry in
``losses``) over the first updates on WNUT-2017 train sentences, on the CPU.
A head that passes nothing (a zero output layer at the encoder's rate) shows
zeros here; that is how issue 30 found the collapse.

    python dev/transformer_probe.py --config transformer/ner ... --before d375ad5 -o metrics/wnut17/transformer_probe.json

With --before REV each config is also measured as it was at git revision REV
(before a change), listed as REV:NAME. Writes the JSON and a table beside it (.md).
--only measures just the configs it names (comma-separated; the others keep
their values from the JSON already there, or show as not measured): a quick
pass of the project's workflows names none.
"""
import tempfile
import time
from pathlib import Path
from typing import List, Optional

import srsly
import typer

from spacy_imbalance.benchmark.options import only_names
from dev.transformer.probe import config_file, probe, table

ROOT = Path(__file__).resolve().parent.parent


def main(
    configs: List[str] = typer.Option(..., "--config", help="Configs under configs/, e.g. transformer/ner"),
    corpus: str = typer.Option("wnut17", "--corpus"),
    n_sentences: int = typer.Option(64, "--sentences"),
    n_updates: int = typer.Option(3, "--updates"),
    seed: int = typer.Option(0, "--seed"),
    output: Path = typer.Option(..., "-o", "--output"),
    only: Optional[str] = typer.Option(None, "--only", help="Comma-separated configs to measure; the others keep their earlier values"),
    before: Optional[str] = typer.Option(None, "--before", help="A git revision: each config is also measured as it was there (REV:NAME)"),
) -> None:
    import torch

    from spacy_imbalance.sweeps import run_provenance

    torch.set_num_threads(1)
    train = ROOT / "corpus" / corpus / "train.spacy"
    report = {
        "corpus": corpus, "sentences": n_sentences, "updates": n_updates, "seed": seed,
        "provenance": run_provenance(-1, ROOT),
        "configs": {},
    }
    configs = [name for config in configs for name in ([f"{before}:{config}"] if before else []) + [config]]
    chosen = set(configs) if only is None else only_names(only)
    earlier = srsly.read_json(output)["configs"] if output.exists() else {}
    tmp = tempfile.mkdtemp()
    for config in configs:
        if config not in chosen:
            report["configs"][config] = earlier.get(config)
            continue
        start = time.time()
        report["configs"][config] = probe(config_file(ROOT, config, Path(tmp)), train, n_sentences, n_updates, seed)
        print(f"{config}: {['%.3g' % x for x in report['configs'][config]]} ({time.time() - start:.0f} s)", flush=True)
    output.parent.mkdir(parents=True, exist_ok=True)
    srsly.write_json(output, report)
    output.with_suffix(".md").write_text(table(report), encoding="utf8")


if __name__ == "__main__":
    typer.run(main)
