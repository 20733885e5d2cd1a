"""How `sampled_spancat` training and `spacy-imbalance audit` grow with the
corpus (issue 34, item 6): the default corpus's training set repeated 1x, 5x,
10x and 20x (each copy shuffled with its own seed: a repeated corpus, not a
larger one, so it measures cost, not accuracy), one epoch of training each
(`--training.max_epochs 1`, no step cap: the work grows with the corpus), and
an audit of 5 folds of one epoch each. Wall time and peak memory (the largest
resident set of the measured process and its children), one process at a
time; a factor already measured is skipped (resume).

    python scripts/scale.py --factors 1,5,10,20
Writes metrics/wnut16/scale.json, scale.md and scale.png.
"""
import json
import random
import sys
from pathlib import Path
from typing import Any, Dict, List

import typer

from spacy_imbalance.benchmark.options import parse_list
from spacy_imbalance.benchmark.processes import measured
from spacy_imbalance.benchmark.records import device_words
from spacy_imbalance.benchmark.tables import head, row
from spacy_imbalance.plots import save_figure

ROOT = Path(__file__).resolve().parent.parent
CONFIG = ROOT / "configs" / "sampled_spancat_uniform.cfg"
# one epoch, whatever its number of steps; the dev set is evaluated at the end only
ONE_EPOCH = ["--training.max_epochs", "1", "--training.max_steps", "0", "--training.eval_frequency", "1000000"]


def repeated_corpus(factor: int, out: Path) -> Dict[str, int]:
    import spacy
    from spacy.tokens import DocBin

    nlp = spacy.blank("en")
    docs = list(DocBin().from_disk(ROOT / "corpus" / "wnut16" / "train.spacy").get_docs(nlp.vocab))
    copies = []
    for copy in range(factor):
        shuffled = list(docs)
        random.Random(copy).shuffle(shuffled)
        copies.extend(shuffled)
    out.parent.mkdir(parents=True, exist_ok=True)
    DocBin(docs=copies, store_user_data=True).to_disk(out)
    return {"sentences": len(copies), "words": sum(len(doc) for doc in copies)}


def main(
    factors: str = typer.Option("1,5,10,20", "--factors", help="How many times the training set is repeated, comma-separated"),
    work: Path = typer.Option(Path("training/scale"), "--work-dir"),
    metrics: Path = typer.Option(Path("metrics/wnut16/scale.json"), "--output"),
) -> None:
    records: Dict[str, Any] = json.loads(metrics.read_text()) if metrics.exists() else {"rows": []}
    done = {row["factor"] for row in records["rows"]}
    dev = ROOT / "corpus" / "wnut16" / "dev.spacy"
    for factor in parse_list(factors, int, "--factors"):
        if factor in done:
            print(f"x{factor}: measured before", flush=True)
            continue
        corpus = work / f"x{factor}" / "train.spacy"
        row: Dict[str, Any] = {"factor": factor, **repeated_corpus(factor, corpus)}
        print(f"x{factor}: {row['sentences']:,} sentences; training one epoch", flush=True)
        row["train"] = measured([sys.executable, "-m", "spacy", "train", str(CONFIG), "--output", str(work / f"x{factor}" / "model"),
                                 "--paths.train", str(corpus), "--paths.dev", str(dev), *ONE_EPOCH])
        print(f"x{factor}: {row['train']}; auditing (5 folds of one epoch)", flush=True)
        row["audit"] = measured([sys.executable, "-m", "spacy_imbalance", "audit", str(corpus), "--dev", str(dev), "-o",
                                 str(work / f"x{factor}" / "audit"), "--folds", "5", "--resamples", "0", *ONE_EPOCH])
        print(f"x{factor}: {row['audit']}", flush=True)
        records["rows"] = sorted([*records["rows"], row], key=lambda r: r["factor"])
        from spacy_imbalance.sweeps import run_provenance

        records["provenance"] = run_provenance(root=ROOT)
        metrics.parent.mkdir(parents=True, exist_ok=True)
        metrics.write_text(json.dumps(records, indent=1) + "\n", encoding="utf8")
    write_table(records, metrics)


def write_table(records: Dict[str, Any], metrics: Path) -> None:
    rows = records["rows"]
    if not rows:
        return
    lines = [
        "The default corpus's training set repeated and shuffled (a repeated corpus: cost, not accuracy), one epoch of "
        f"sampled_spancat (uniform) and an audit of 5 folds of one epoch, one process at a time on {device_words(records['provenance'])}:",
        "",
        *head(["repeats", "sentences", "train s", "train peak MB", "audit s", "audit peak MB"], "rrrrrr"),
        *[row([str(r["factor"]), f"{r['sentences']:,}", f"{r['train']['seconds']:.0f}", f"{r['train']['peak_mb']:.0f}",
               f"{r['audit']['seconds']:.0f}", f"{r['audit']['peak_mb']:.0f}"]) for r in rows],
    ]
    metrics.with_suffix(".md").write_text("\n".join(lines) + "\n", encoding="utf8")
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return
    fig, (left, right) = plt.subplots(1, 2, figsize=(9, 3.5))
    x = [r["sentences"] for r in rows]
    for key, color in (("train", "#4c72b0"), ("audit", "#dd8452")):
        left.plot(x, [r[key]["seconds"] for r in rows], "o-", color=color, label=key)
        right.plot(x, [r[key]["peak_mb"] for r in rows], "o-", color=color, label=key)
    left.set(xlabel="training sentences", ylabel="wall seconds", title="Time (one epoch)")
    right.set(xlabel="training sentences", ylabel="peak MB", title="Peak memory")
    left.legend()
    fig.tight_layout()
    save_figure(fig, metrics.with_suffix(".png"), dpi=120)
    plt.close(fig)


if __name__ == "__main__":
    typer.run(main)
