"""Issue 47's dev trials: how much of an unannotated candidate of a scoped
document sampled_spancat trains as "no entity" (``scope_o_weight``), chosen
on WNUT-2017 dev before any benchmark run.

WNUT-2017 train is split in two parts by ``spacy-imbalance scope-split``
(seed 0): "even" annotates person, group, product in one part and location,
corporation, creative-work in the other; "uneven" person alone in one and the
other five in the other. Each trial trains configs/sampled_spancat_uniform.cfg
(the CNN, or frozen MiniLM features with --encoder features; seed 0, one thread) for --steps steps on the parts with their scopes
at one weight, on their naive merge (no scopes), or on the complete train set
(the ceiling), and records model-best's dev scores in
metrics/wnut17/scope_trials*/<trial>.json; a finished trial is skipped.

    python dev/scope_trials.py                    # every trial (CNN)
    python dev/scope_trials.py --encoder features --only even-w0,even-naive
    python dev/scope_trials.py --only even-w0     # some
    python dev/scope_trials.py --table            # the summary only
"""
import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Dict, List, Optional

import typer
from spacy.util import load_config

from spacy_imbalance.sweeps import run_provenance

ROOT = Path(__file__).resolve().parent.parent
SPLITS = {
    "even": ["person,group,product", "location,corporation,creative-work"],
    "uneven": ["person", "location,group,corporation,product,creative-work"],
}
WEIGHTS = [0.0, 0.1, 0.3, 0.6]
CONFIG = "sampled_spancat_uniform"
# the budgets of study-scopes: CNN at project.yml's max_steps, features at the headline's
ENCODERS = {"cnn": ("", 2000, None), "features": ("features/", 4000, 1000)}


def trials() -> Dict[str, Dict[str, object]]:
    """Name -> what it trains on: a split's parts with their scopes at a
    weight, its naive merge, or the complete train set."""
    found: Dict[str, Dict[str, object]] = {"full": {"train": "full"}}
    for split in SPLITS:
        found[f"{split}-naive"] = {"train": "naive", "split": split}
        for weight in WEIGHTS:
            found[f"{split}-w{round(weight * 100)}"] = {"train": "scoped", "split": split, "weight": weight}
    return found


def split_folder(corpus: Path, split: str) -> Path:
    folder = corpus.parent / f"{corpus.name}-scopes" / split
    if not (folder / "parts.json").exists():
        groups = [arg for group in SPLITS[split] for arg in ("--group", group)]
        subprocess.run([sys.executable, "-m", "spacy_imbalance", "scope-split", str(corpus / "train.spacy"), str(folder), *groups], check=True)
    return folder


def write_config(trial: Dict[str, object], corpus: Path, encoder: str, steps: int, out: Path) -> Path:
    folder_of, _, patience = ENCODERS[encoder]
    config = load_config(ROOT / "configs" / f"{folder_of}{CONFIG}.cfg")
    config["training"]["max_steps"] = steps
    if patience is not None:
        config["training"]["patience"] = patience
    config["paths"]["dev"] = str(corpus / "dev.spacy")
    train = dict(config["corpora"]["train"])
    if trial["train"] == "full":
        config["paths"]["train"] = str(corpus / "train.spacy")
    else:
        folder = split_folder(corpus, str(trial["split"]))
        if trial["train"] == "naive":
            config["paths"]["train"] = str(folder / "merged.spacy")
        else:
            parts = json.loads((folder / "parts.json").read_text(encoding="utf8"))["parts"]
            readers = {}
            for part in parts:
                reader = {key: value for key, value in train.items() if key not in ("@readers", "path")}
                readers[Path(part["file"]).stem] = {
                    "@readers": "spacy-imbalance.ScopedCorpus.v1", "path": str(folder / part["file"]), "labels": part["labels"], **reader,
                }
            config["paths"]["train"] = str(folder / "merged.spacy")  # unused: the parts are read
            config["corpora"]["train"] = {"@readers": "spacy-imbalance.CombinedCorpus.v1", "corpora": readers}
            config["components"]["sampled_spancat"]["scope_o_weight"] = trial["weight"]
    out.mkdir(parents=True, exist_ok=True)
    path = out / "config.cfg"
    config.to_disk(path)
    return path


def run(name: str, trial: Dict[str, object], corpus: Path, encoder: str, steps: int, records: Path, work: Path) -> Optional[dict]:
    record = records / f"{name}.json"
    if record.exists():
        return json.loads(record.read_text(encoding="utf8"))
    out = work / name
    config = write_config(trial, corpus, encoder, steps, out)
    start = time.time()
    env = {**os.environ, "OMP_NUM_THREADS": "1"}
    result = subprocess.run([sys.executable, "-m", "spacy", "train", str(config), "--output", str(out)], capture_output=True, text=True, env=env)
    if result.returncode != 0:
        print(f"{name} failed:\n{result.stderr[-3000:]}", file=sys.stderr)
        return None
    meta = json.loads((out / "model-best" / "meta.json").read_text(encoding="utf8"))
    performance = meta["performance"]
    row = {
        "trial": name, **trial, "encoder": encoder, "config": CONFIG, "steps": steps, "seed": 0, "seconds": round(time.time() - start),
        "dev_macro_f": performance.get("ents_macro_f"), "dev_micro_f": performance.get("ents_f"),
        "dev_p": performance.get("ents_p"), "dev_r": performance.get("ents_r"), "per_type": performance.get("ents_per_type"),
    }
    # where, when and how it ran (issue 45: every record carries it)
    row["provenance"] = run_provenance(-1)
    records.mkdir(parents=True, exist_ok=True)
    record.write_text(json.dumps(row, indent=1) + "\n", encoding="utf8")
    return row


def table(rows: List[dict]) -> str:
    lines = ["| trial | dev macro-F1 | dev micro-F1 | P | R |", "| --- | --: | --: | --: | --: |"]
    for row in rows:
        cells = [100 * row[key] for key in ("dev_macro_f", "dev_micro_f", "dev_p", "dev_r")]
        lines.append(f"| {row['trial']} | " + " | ".join(f"{cell:.1f}" for cell in cells) + " |")
    return "\n".join(lines) + "\n"


def main(
    only: str = typer.Option("", "--only", help="Comma-separated trial names; empty: all"),
    encoder: str = typer.Option("cnn", "--encoder", help="cnn or features (configs/features/, the frozen MiniLM features)"),
    steps: int = typer.Option(0, "--steps", help="Training steps of each trial; 0: the encoder's study budget (ENCODERS)"),
    corpus: Path = typer.Option(ROOT / "corpus" / "wnut17", "--corpus", help="Folder with train.spacy and dev.spacy"),
    table_only: bool = typer.Option(False, "--table", help="Write the summary only"),
) -> None:
    if encoder not in ENCODERS:
        raise typer.BadParameter(f"{encoder!r}: use one of {sorted(ENCODERS)}", param_hint="--encoder")
    steps = steps or ENCODERS[encoder][1]
    # the CNN trials at 1000 steps came first: their records keep the folder without a suffix
    records = ROOT / "metrics" / "wnut17" / ("scope_trials" if encoder == "cnn" and steps == 1000 else f"scope_trials_{encoder}_{steps}")
    selected = [name for name in (only.split(",") if only else trials())]
    unknown = sorted(set(selected) - set(trials()))
    if unknown:
        raise typer.BadParameter(f"unknown trials {unknown}; known: {sorted(trials())}", param_hint="--only")
    rows = []
    for name in trials():
        if name not in selected:
            continue
        work = ROOT / "training" / records.name
        row = None if table_only and not (records / f"{name}.json").exists() else run(name, trials()[name], corpus, encoder, steps, records, work)
        if row is not None:
            rows.append(row)
            print(f"{name}: dev macro-F1 {100 * row['dev_macro_f']:.1f}", flush=True)
    (records.parent / f"{records.name}.md").write_text(table(rows), encoding="utf8")


if __name__ == "__main__":
    typer.run(main)
