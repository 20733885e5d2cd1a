"""How much gradient a fine-tuned config sends its encoder: for each config,
the squared gradient that reaches the ``transformer`` component (its entry in
``losses``) over the first updates on WNUT-2017 train sentences, on the CPU.
A head that passes nothing (a zero output layer at the encoder's rate) shows
zeros here; that is how issue 30 found the collapse.

    python scripts/transformer_probe.py --config transformer/ner ... --before d375ad5 -o metrics/wnut17/transformer_probe.json

With --before REV each config is also measured as it was at git revision REV
(before a change), listed as REV:NAME. Writes the JSON and a table beside it (.md).
--only measures just the configs it names (comma-separated; the others keep
their values from the JSON already there, or show as not measured): a quick
pass of the project's workflows names none.
"""
import subprocess
import tempfile
import time
from pathlib import Path
from typing import List, Optional

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


def config_file(name: str, folder: Path) -> Path:
    """configs/<name>.cfg, or for REV:NAME the file at git revision REV, copied into ``folder``."""
    if ":" not in name:
        return ROOT / "configs" / f"{name}.cfg"
    rev, path = name.split(":", 1)
    text = subprocess.run(["git", "show", f"{rev}:configs/{path}.cfg"], cwd=ROOT, capture_output=True, text=True, check=True).stdout
    out = folder / f"{rev}-{path.replace('/', '-')}.cfg"
    out.write_text(text, encoding="utf8")
    return out


def table(report: dict) -> str:
    n = report["updates"]
    lines = [
        f"Squared gradient reaching the fine-tuned encoder (`losses['transformer']`) in each of the first {n} updates "
        f"on {report['sentences']} {report['corpus']} train sentences (CPU, seed {report['seed']}); REV:config is the config at git revision REV.",
        "",
        "| config | " + " | ".join(f"update {i + 1}" for i in range(n)) + " |",
        "| --- | " + " | ".join("--:" for _ in range(n)) + " |",
    ]
    for config, values in report["configs"].items():
        cells = [f"{v:.3g}" for v in values] if values is not None else ["not measured yet"] + [""] * (n - 1)
        lines.append(f"| {config} | " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


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
    chosen = set(configs) if only is None else {name.strip() for name in only.split(",") if name.strip()}
    earlier = srsly.read_json(output)["configs"] if output.exists() else {}
    tmp = tempfile.mkdtemp()
    for config in configs:
        if config not in chosen:
            report["configs"][config] = earlier.get(config)
            continue
        start = time.time()
        report["configs"][config] = probe(config_file(config, Path(tmp)), train, n_sentences, n_updates, seed)
        print(f"{config}: {['%.3g' % x for x in report['configs'][config]]} ({time.time() - start:.0f} s)", flush=True)
    output.parent.mkdir(parents=True, exist_ok=True)
    srsly.write_json(output, report)
    output.with_suffix(".md").write_text(table(report), encoding="utf8")


if __name__ == "__main__":
    typer.run(main)
