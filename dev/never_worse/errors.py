"""What a trial's false positives are, on WNUT-2017 dev: a predicted entity
that is not gold is the same span as a gold entity with another label,
inside a gold entity ("martin" of "martin short"), around one, crossing
one, or apart from every gold entity. Read at the decoding each system is
scored on (ours without correction, a span system's spans decoded to
non-overlapping entities, ``ner``'s entities): which errors a change of
training removes (issue 42's overlapping negatives) and which it leaves."""
from pathlib import Path
from typing import Any, Dict, Iterable, List

import srsly

KINDS = ("other label", "inside gold", "around gold", "crossing gold", "apart from gold")


def error_kinds(examples: Iterable[Any]) -> Dict[str, int]:
    """Counts of each kind of false positive (``KINDS``) over ``examples``
    (their predicted entities against their reference's), and ``fp``."""
    counts = dict.fromkeys(KINDS, 0)
    for eg in examples:
        gold = {(ent.start, ent.end): ent.label_ for ent in eg.reference.ents}
        for ent in eg.predicted.ents:
            key = (ent.start, ent.end)
            if gold.get(key) == ent.label_:
                continue
            counts[_kind(key, gold)] += 1
    return {**counts, "fp": sum(counts.values())}


def _kind(span: Any, gold: Dict[Any, str]) -> str:
    start, end = span
    if span in gold:
        return "other label"
    overlapping = [(s, e) for s, e in gold if s < end and start < e]
    if not overlapping:
        return "apart from gold"
    if any(s <= start and end <= e for s, e in overlapping):
        return "inside gold"
    if any(start <= s and e <= end for s, e in overlapping):
        return "around gold"
    return "crossing gold"


def count_trials(folder: Path, dev: Path, out: Path) -> Dict[str, Dict[str, Any]]:
    """Each trial record of ``folder`` whose model-best is still on disk,
    predicted on ``dev`` once; kept in ``out`` by trial and model, so a
    trial counted before is skipped."""
    from .trials import decoded_examples

    counted: Dict[str, Dict[str, Any]] = srsly.read_json(out) if out.exists() else {}
    for path in sorted(folder.glob("*.json")):
        record = srsly.read_json(path)
        name, model = record.get("trial"), record.get("model")
        if not name or not model or not Path(model).is_dir():
            continue
        if counted.get(name, {}).get("model") == model:
            continue
        print(f"{name}: counting its false positives on dev ...", flush=True)
        counted[name] = {"model": model, **error_kinds(decoded_examples(Path(model), dev))}
        srsly.write_json(out, counted, indent=2)
    return counted


def errors_table(counted: Dict[str, Dict[str, Any]], order: List[str]) -> str:
    """A markdown table of the counts, trials in ``order`` (the trials file's)."""
    head = "| trial | false positives | " + " | ".join(KINDS) + " |\n| --- | --: |" + " --: |" * len(KINDS) + "\n"
    rows = [
        f"| {name} | {counted[name]['fp']} | " + " | ".join(str(counted[name][kind]) for kind in KINDS) + " |"
        for name in order if name in counted
    ]
    return head + "\n".join(rows) + "\n" if rows else "No trial's false positives counted yet.\n"
