"""What the benchmark records of a run, in its metrics file, beyond the
evaluation report (written by ``runs.complete_record``), and how the
studies read it back."""
import json
from pathlib import Path
from typing import Any, Dict

import srsly


def device_words(provenance: Dict[str, Any]) -> str:
    """Where a run ran, in words, from its provenance record: the CPU and its
    cores, or the GPU with its driver, CUDA, CuPy and torch."""
    cores = provenance["cpu_cores"]
    cpu = f"{provenance['cpu']} ({cores} {'core' if cores == 1 else 'cores'})"
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
