"""How much gradient a fine-tuned config sends its encoder: for each config,
the squared gradient that reaches the ``transformer`` component (its entry in
``losses``) over the first updates on WNUT-2017 train sentences, on the CPU.
A head that passes nothing (a zero output layer at the encoder's rate) shows
zeros here; that is how issue 30 found the collapse.

    python scripts/transformer_probe.py --config transformer/sampled_spancat_uniform ... -o metrics/wnut17/transformer_probe.json
"""
import platform
import time
from pathlib import Path
from typing import List

import srsly
import typer

ROOT = Path(__file__).resolve().parent.parent


def probe(config_path: Path, train: Path, n_sentences: int, n_updates: int, seed: int) -> List[float]:
    import spacy
    from spacy.training import Corpus
    from spacy.util import fix_random_seed, load_config

    fix_random_seed(seed)
    config = load_config(config_path, overrides={"paths.train": str(train), "paths.dev": str(train)}, interpolate=True)
    nlp = spacy.util.load_model_from_config(config, auto_fill=True, validate=True)
    examples = list(Corpus(str(train), gold_preproc=True)(nlp))[:n_sentences]
    optimizer = nlp.initialize(lambda: examples)
    squared = []
    for _ in range(n_updates):
        losses: dict = {}
        nlp.update(examples, sgd=optimizer, losses=losses)
        squared.append(float(losses.get("transformer", 0.0)))
    return squared


def main(
    configs: List[str] = typer.Option(..., "--config", help="Configs under configs/, e.g. transformer/ner"),
    corpus: str = typer.Option("wnut17", "--corpus"),
    n_sentences: int = typer.Option(64, "--sentences"),
    n_updates: int = typer.Option(3, "--updates"),
    seed: int = typer.Option(0, "--seed"),
    output: Path = typer.Option(..., "-o", "--output"),
) -> None:
    import torch

    torch.set_num_threads(1)
    train = ROOT / "corpus" / corpus / "train.spacy"
    report = {
        "corpus": corpus, "sentences": n_sentences, "updates": n_updates, "seed": seed,
        "device": {"cpu": platform.processor() or platform.machine(), "threads": torch.get_num_threads(), "torch": torch.__version__},
        "configs": {},
    }
    for config in configs:
        start = time.time()
        report["configs"][config] = probe(ROOT / "configs" / f"{config}.cfg", train, n_sentences, n_updates, seed)
        print(f"{config}: {['%.3g' % x for x in report['configs'][config]]} ({time.time() - start:.0f} s)", flush=True)
    srsly.write_json(output, report)


if __name__ == "__main__":
    typer.run(main)
