"""What the feature cache of ``spacy-imbalance.TransformerFeatures.v1`` buys,
against fine-tuning the same transformer.

Trains a frozen-features config (default configs/features/ner.cfg) for
``--epochs`` epochs over the train split, timing each epoch: epoch 1 computes
every document's transformer features, later epochs read them from the cache.
Then checks that the cache changes nothing: the dev predictions of the trained
pipeline with a warm cache, and of a copy restored from bytes (cold cache:
every feature recomputed), and with the cache turned off, must be identical.
Last, times ``--finetune-steps`` updates of the fine-tuned transformer config
(default configs/ner_minilm.cfg) on batches of the same size and extrapolates
one epoch from its words/s.

    python scripts/feature_cache.py --corpus wnut17

Writes metrics/<corpus>/feature_cache.json and .md (``--name``). Both measurements run in
this one process, one after the other, with the threads torch is given
(``--threads``); compare figures only within one run.
"""
import random
import time
from pathlib import Path

import srsly
import typer

from bench.feature_cache import features_shim, init, predictions
from spacy_imbalance.benchmark.batches import word_batches
from spacy_imbalance.benchmark.tables import head, row

ROOT = Path(__file__).resolve().parent.parent


def main(
    corpus: str = typer.Option("wnut17", "--corpus", help="A corpus folder under corpus/"),
    config: str = typer.Option("features/ner", "--config", help="A frozen-features config of configs/"),
    finetune: str = typer.Option("ner_minilm", "--finetune", help="The fine-tuned transformer config to compare with"),
    epochs: int = typer.Option(3, "--epochs"),
    batch_words: int = typer.Option(1000, "--batch-words"),
    finetune_steps: int = typer.Option(20, "--finetune-steps", help="Timed updates of the fine-tuned config"),
    threads: int = typer.Option(2, "--threads", help="torch threads"),
    seed: int = typer.Option(0, "--seed"),
    name: str = typer.Option("feature_cache", "--name", help="Writes metrics/<corpus>/<name>.json and .md"),
    root: Path = typer.Option(ROOT, "--root"),
) -> None:
    import torch

    torch.set_num_threads(threads)
    data = root / "corpus" / corpus
    nlp, train, dev = init(root / "configs" / f"{config}.cfg", data, seed)
    shim = features_shim(nlp)
    shim.cache.clear()
    optimizer = nlp.create_optimizer()
    n_words = sum(len(eg.predicted) for eg in train)
    rng = random.Random(seed)
    epoch_seconds = []
    for epoch in range(1, epochs + 1):
        order = list(train)
        rng.shuffle(order)
        start = time.perf_counter()
        for batch in word_batches(order, batch_words):
            nlp.update(batch, sgd=optimizer, drop=0.1)
        epoch_seconds.append(time.perf_counter() - start)
        typer.echo(f"{config} epoch {epoch}: {epoch_seconds[-1]:.1f} s ({n_words / epoch_seconds[-1]:,.0f} words/s), cache {len(shim.cache)} docs")

    # the cache changes nothing: warm cache, cold cache (restored copy), no cache
    warm = predictions(nlp, dev)
    from spacy.util import load_model_from_config

    cold_nlp = load_model_from_config(nlp.config, auto_fill=True)
    cold_nlp.from_bytes(nlp.to_bytes())
    cold_shim = features_shim(cold_nlp)
    assert not cold_shim.cache, "a restored pipeline starts with an empty cache"
    start = time.perf_counter()
    cold = predictions(cold_nlp, dev)
    cold_seconds = time.perf_counter() - start
    cold_shim.cache_size = 0
    cold_shim.cache.clear()
    uncached = predictions(cold_nlp, dev)
    same = warm == cold == uncached

    # fine-tuning the same transformer: words/s of updates on batches of the same size
    ft_nlp, ft_train, _ = init(root / "configs" / f"{finetune}.cfg", data, seed)
    ft_optimizer = ft_nlp.create_optimizer()
    ft_batches = word_batches(ft_train, batch_words)[: finetune_steps + 1]
    ft_nlp.update(ft_batches[0], sgd=ft_optimizer, drop=0.1)  # warm-up, not timed
    start = time.perf_counter()
    ft_words = 0
    for batch in ft_batches[1:]:
        ft_nlp.update(batch, sgd=ft_optimizer, drop=0.1)
        ft_words += sum(len(eg.predicted) for eg in batch)
    ft_seconds = time.perf_counter() - start
    ft_epoch = n_words / (ft_words / ft_seconds)
    typer.echo(f"{finetune}: {ft_words / ft_seconds:,.0f} words/s, about {ft_epoch:.0f} s per epoch")

    later = sum(epoch_seconds[1:]) / max(1, len(epoch_seconds) - 1)
    report = {
        "corpus": corpus, "config": config, "finetune": finetune, "threads": threads, "batch_words": batch_words,
        "train_words": n_words, "epoch_seconds": epoch_seconds, "speedup_after_epoch_1": epoch_seconds[0] / later,
        "dev_docs": len(dev), "cold_cache_dev_seconds": cold_seconds, "same_predictions": same,
        "finetune_words_per_second": ft_words / ft_seconds, "finetune_epoch_seconds": ft_epoch,
        "finetune_over_cached_epoch": ft_epoch / later,
    }
    out = root / "metrics" / corpus / f"{name}.json"
    srsly.write_json(out, report, indent=0)
    md = [
        f"Frozen all-MiniLM-L6-v2 features (`{config}`) against fine-tuning (`{finetune}`) on {corpus} train "
        f"({n_words:,} words, batches of about {batch_words} words, {threads} torch threads, one process, measured side by side):",
        "",
        *head(["encoder", "seconds per epoch", "words/s"], "lrr"),
        *[row([f"features, epoch {i} ({'computes and caches' if i == 1 else 'from the cache'})", f"{sec:.1f}", f"{n_words / sec:,.0f}"])
          for i, sec in enumerate(epoch_seconds, start=1)],
        row([f"fine-tuning (from {finetune_steps} updates)", f"{ft_epoch:.0f}", f"{ft_words / ft_seconds:,.0f}"]),
        "",
        f"Epochs 2+ are {report['speedup_after_epoch_1']:.1f}x faster than epoch 1 and {report['finetune_over_cached_epoch']:.0f}x "
        f"faster than a fine-tuning epoch. Dev predictions with a warm cache, a cold cache and no cache are "
        f"{'identical' if same else 'NOT identical'} ({len(dev)} documents).",
    ]
    out.with_suffix(".md").write_text("\n".join(md) + "\n", encoding="utf8")
    typer.echo("\n".join(md))
    if not same:
        raise typer.Exit(1)


if __name__ == "__main__":
    typer.run(main)
