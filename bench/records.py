"""What the benchmark records of a run, in its metrics file, beyond the
evaluation report: written by ``runs.record_run``, read by the studies."""
import json
from pathlib import Path
from typing import Any, Dict

import srsly


def device_words(provenance: Dict[str, Any]) -> str:
    """Where a run ran, in words, from its provenance record: the CPU and its
    cores, or the GPU with its driver, CUDA, CuPy and torch."""
    cpu = f"{provenance['cpu']} ({provenance['cpu_cores']} cores)"
    if provenance["device"] != "gpu":
        return cpu
    gpu = provenance.get("gpu", "an unnamed GPU")
    return f"{gpu}, driver {provenance.get('driver', '?')}, CUDA {provenance.get('cuda_runtime', '?')}, CuPy {provenance.get('cupy', '?')}, torch {provenance.get('torch', '?')}; host {cpu}"


def read_json(path: Path) -> Any:
    """A JSON file read by the standard library, whose floats come back as
    written: srsly reads 0.3 back as 0.30000000000000004."""
    return json.loads(path.read_text(encoding="utf8"))


def missampling_record(model: Path) -> Dict[str, Any]:
    """The missampling rate over the whole training, from the counts a
    sampled_spancat component keeps in its cfg (empty for other pipelines,
    or when the training data had no masked entities)."""
    for cfg_path in sorted(model.glob("*/cfg")):
        cfg = srsly.read_json(cfg_path)
        masked, drawn = cfg.get("missampled") or (0, 0)
        if drawn:
            return {"missampling_rate": masked / drawn, "missampled": [masked, drawn]}
    return {}


def stopped_at(report: Dict[str, Any]) -> str:
    """The steps a run trained, "of" its budget when early stopping ended it."""
    curve = report.get("dev_curve") or []
    if curve and curve[-1][0] < report["train_steps"]:
        return f"{curve[-1][0]} of {report['train_steps']}"
    return str(report["train_steps"])


def compact_counts(root: Path) -> int:
    """Rewrite the metrics files under ``root`` whose match counts are in the
    earlier list-of-rows form into the compact one (``MatchCounts.to_sparse``),
    every other field as it is, each checked to give the same counts back;
    the number rewritten."""
    import numpy

    from spacy_imbalance.scorers.counts import MatchCounts

    rewritten = 0
    for path in sorted(root.rglob("*.json")):
        data = srsly.read_json(path)
        counts = data.get("counts") if isinstance(data, dict) else None
        if not isinstance(counts, dict) or "rows" not in counts:
            continue
        table = MatchCounts.from_sparse(counts)
        data["counts"] = table.to_sparse()
        numpy.testing.assert_array_equal(MatchCounts.from_sparse(data["counts"]).table, table.table)
        srsly.write_json(path, data, indent=0)
        rewritten += 1
    return rewritten


def name_runs(root: Path) -> int:
    """Give the run records under ``root`` that are named by their trial
    ("<corpus> <run> seed <seed>", written between the sweeps-based runner
    and ``record_run``'s ``name``) their run's name, the path under
    .../<corpus>/ without -s<seed>.json, so that summaries pool their seeds;
    every other field as it is; the number renamed."""
    renamed = 0
    for path in sorted(root.rglob("*-s[0-9]*.json")):
        data = read_json(path)  # the floats as written: they are written back
        if not isinstance(data, dict) or not {"corpus", "seed", "name"} <= set(data):
            continue
        corpus, seed = data["corpus"], data["seed"]
        parts = path.relative_to(root).parts
        if corpus not in parts or not path.name.endswith(f"-s{seed}.json"):
            continue
        below = parts[len(parts) - 1 - parts[::-1].index(corpus) + 1:]
        run = "/".join(below)[: -len(f"-s{seed}.json")]
        if data["name"] == f"{corpus} {run} seed {seed}":
            data["name"] = run
            srsly.write_json(path, data, indent=0)
            renamed += 1
    return renamed
