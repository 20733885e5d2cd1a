"""``spacy-imbalance scope-split``: a fully annotated corpus as parts that each
annotate some types (label scopes), and their naive merge."""
import json
from pathlib import Path
from typing import Any, Dict, List

import typer
from wasabi import msg

from ..corpus.docs_io import write_docbins, write_text_atomic
from ..corpus.scopes import SCOPE_KEY
from ..corpus.scopes.split import check_groups, split_by_types
from ._app import app, check_outputs_are_not_inputs, fail
from .transform import read_sentences


@app.command("scope-split")
def scope_split_cli(
    input_path: Path = typer.Argument(..., metavar="INPUT", help="A fully annotated .spacy or CoNLL file (entities in doc.ents)"),
    output_dir: Path = typer.Argument(..., metavar="OUTPUT_DIR", help="Folder for part-1.spacy, part-2.spacy, ..., merged.spacy and parts.json"),
    groups: List[str] = typer.Option(..., "--group", help="The types one part annotates, comma-separated (repeat: one part per --group)"),
    seed: int = typer.Option(0, "--seed", help="Seed of the shuffle that deals the documents to the parts"),
    merged_name: str = typer.Option("merged.spacy", "--merged", help="File name of the naive merge in OUTPUT_DIR (e.g. train.spacy, to train on the folder as a corpus)"),
) -> None:
    """Split a corpus into parts that each annotate only their --group's types (a label scope per part), to train
    and compare on corpora that annotate different types. The merge (--merged, merged.spacy) is the parts together
    without scopes: what a pipeline that knows nothing of scopes trains on."""
    if Path(merged_name).name != merged_name or not merged_name.endswith(".spacy") or merged_name.startswith("part-"):
        fail(f"--merged: a file name ending in .spacy, not a path nor part-N.spacy (the parts' names), got {merged_name!r}")
    outputs = [output_dir / f"part-{i + 1}.spacy" for i in range(len(groups))] + [output_dir / merged_name]
    check_outputs_are_not_inputs([input_path], outputs)
    docs = read_sentences(input_path)
    labels = sorted({ent.label_ for doc in docs for ent in doc.ents})
    try:
        checked = check_groups([[label.strip() for label in group.split(",")] for group in groups], labels)
    except ValueError as err:
        fail(f"--group: {err}")
    left_out = sorted(set(labels) - {label for group in checked for label in group})
    parts = split_by_types(docs, checked, seed)
    merged = []
    for part in parts:
        for doc in part:
            plain = doc.copy()
            plain.user_data.pop(SCOPE_KEY, None)
            merged.append(plain)
    output_dir.mkdir(parents=True, exist_ok=True)
    write_docbins({**dict(zip(outputs, parts)), outputs[-1]: merged})
    kept = sum(len(doc.ents) for part in parts for doc in part)
    total = sum(len(doc.ents) for doc in docs)
    rows: List[Dict[str, Any]] = [
        {"file": out.name, "labels": list(group), "docs": len(part), "entities": sum(len(d.ents) for d in part)}
        for out, group, part in zip(outputs, checked, parts)
    ]
    summary = {"input": str(input_path), "seed": seed, "entities": total, "kept": kept, "left_out_types": left_out, "merged": merged_name, "parts": rows}
    write_text_atomic(output_dir / "parts.json", json.dumps(summary, indent=2) + "\n")
    for row in rows:
        msg.info(f"{row['file']}: {row['docs']} documents annotating {', '.join(row['labels'])} ({row['entities']} entities)")
    msg.good(f"{kept} of {total} entities kept; {merged_name} holds every part without scopes"
             + (f"; types in no group, removed everywhere: {', '.join(left_out)}" if left_out else ""))
