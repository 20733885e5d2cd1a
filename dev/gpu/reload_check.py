"""Do trained pipelines predict the same after a save and a reload, on the GPU,
and what changes when they are loaded on the CPU?

For each model folder, one child process per device predicts the test split
(on copies of the gold tokens, as ``spacy-imbalance evaluate`` does):

- ``gpu``: load on the GPU, predict; save with ``nlp.to_disk`` into a new
  folder, load that on the GPU, predict again: the two must be identical;
- ``cpu``: load the same folder on the CPU and predict: GPU and CPU runs
  are not bit-identical (CuPy's kernels, atomics in ``scatter_add``), so this
  records how many predicted spans agree, not equality.

Writes metrics/<corpus>/<name>.json (``provenance`` of the machine, and per
model its result or error with the provenance of both sides: the GPU's name,
driver, CUDA, CuPy and torch) and .md.

    python dev/gpu/reload_check.py training/wnut17/transformer/ner-s0/model-best --name reload_check_transformer
"""
import json
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, Dict, List, Optional, Set, Tuple

import typer

ROOT = Path(__file__).resolve().parent.parent.parent
Span = Tuple[int, int, int, str]  # doc index, start token, end token, label


def saved_allocator(model: Path) -> Optional[str]:
    """The GPU allocator the pipeline was trained with, as its config resolves
    it: the shipped configs write ``gpu_allocator = ${system.gpu_allocator}``,
    which only interpolation turns into "pytorch"."""
    import spacy

    return spacy.util.load_config(model / "config.cfg", interpolate=True)["training"].get("gpu_allocator")


def predicted_spans(model: Path, corpus: Path, gpu_id: int) -> List[Span]:
    """What ``model`` predicts on the test split, as (doc, start, end, label)."""
    import spacy
    from spacy_imbalance.corpus.docs_io import load_docs
    from spacy_imbalance.scorers.evaluation import pipeline_target, predict_examples
    from thinc.api import require_gpu, set_gpu_allocator

    if gpu_id >= 0:
        require_gpu(gpu_id)
        allocator = saved_allocator(model)
        if allocator:
            set_gpu_allocator(allocator)
    nlp = spacy.load(model)
    key = pipeline_target(nlp, name=f"The pipeline {model}")
    examples, _ = predict_examples(nlp, load_docs(corpus / "test.spacy", nlp.vocab))
    spans = []
    for i, example in enumerate(examples):
        doc = example.predicted
        for span in doc.ents if key is None else doc.spans.get(key, []):
            spans.append((i, span.start, span.end, span.label_))
    return spans


def child(model: Path, corpus: Path, gpu_id: int, reload: bool) -> Dict[str, Any]:
    """One device's predictions, and with ``reload`` those after a save and a reload there."""
    from spacy_imbalance.sweeps import run_provenance

    record: Dict[str, Any] = {"provenance": run_provenance(gpu_id, ROOT), "spans": predicted_spans(model, corpus, gpu_id)}
    if reload:
        import spacy

        with tempfile.TemporaryDirectory() as tmp:
            spacy.load(model).to_disk(Path(tmp) / "saved")
            record["spans_reloaded"] = predicted_spans(Path(tmp) / "saved", corpus, gpu_id)
    return record


def run_child(model: Path, corpus: str, gpu_id: int, reload: bool = False) -> Dict[str, Any]:
    """``child`` in its own process: one device per process (thinc's is global)."""
    result = subprocess.run(
        [sys.executable, __file__, str(model), "--corpus", corpus, "--child", str(gpu_id), *(["--reload"] if reload else [])],
        capture_output=True, text=True, cwd=ROOT,
    )
    if result.returncode != 0:
        return {"error": (result.stderr.strip().splitlines() or ["(no output)"])[-1][:300]}
    return json.loads(result.stdout.strip().splitlines()[-1])


def agreement(a: Set[Span], b: Set[Span]) -> float:
    """F1 of one set of predicted spans against the other (1.0 for two empty sets)."""
    return 1.0 if not a and not b else 2 * len(a & b) / (len(a) + len(b))


def main(
    models: List[Path] = typer.Argument(..., help="Trained pipeline folders (model-best)"),
    corpus: str = typer.Option("wnut17", "--corpus"),
    gpu_id: int = typer.Option(0, "--gpu-id"),
    name: str = typer.Option("reload_check", "--name", help="Result files metrics/<corpus>/<name>.json and .md"),
    child_device: int = typer.Option(-2, "--child", hidden=True),
    reload: bool = typer.Option(False, "--reload", hidden=True),
) -> None:
    if child_device != -2:
        print(json.dumps(child(models[0], ROOT / "corpus" / corpus, child_device, reload)))
        return

    def check(model: Path) -> Dict[str, Any]:
        if not (model / "config.cfg").is_file():
            return {"error": f"no pipeline at {model} (its training failed or was not run)"}
        gpu, cpu = run_child(model, corpus, gpu_id, reload=True), run_child(model, corpus, -1)
        if "error" in gpu or "error" in cpu:
            return {"error": gpu.get("error") or cpu.get("error")}
        on_gpu, reloaded = (set(map(tuple, gpu[key])) for key in ("spans", "spans_reloaded"))
        on_cpu = set(map(tuple, cpu["spans"]))
        result = {
            "spans_gpu": len(on_gpu), "spans_gpu_reloaded": len(reloaded), "identical_after_reload": on_gpu == reloaded,
            "spans_cpu": len(on_cpu), "gpu_cpu_agreement_f1": agreement(on_gpu, on_cpu),
        }
        print(f"{model}: {json.dumps(result)}", flush=True)
        return {**result, "provenance_gpu": gpu["provenance"], "provenance_cpu": cpu["provenance"]}

    # the models side by side, one process per model and device
    with ThreadPoolExecutor(max(1, len(models))) as pool:
        results: Dict[str, Any] = dict(zip(map(str, models), pool.map(check, models)))
    out = ROOT / "metrics" / corpus / name
    out.parent.mkdir(parents=True, exist_ok=True)
    # where it ran, also when every model failed (a failure is a result too)
    from spacy_imbalance.sweeps import run_provenance

    record = {"provenance": run_provenance(gpu_id, ROOT), "models": results}
    out.with_suffix(".json").write_text(json.dumps(record, indent=1) + "\n", encoding="utf8")
    lines = [
        f"Trained pipelines predicting corpus/{corpus}/test.spacy on GPU {gpu_id}, again after nlp.to_disk and a reload there, "
        "and on the CPU (agreement: F1 of the CPU's predicted spans against the GPU's).",
        "",
        "| model | spans (GPU) | identical after reload | spans (CPU) | GPU/CPU agreement |",
        "|---|--:|---|--:|--:|",
    ]
    for model, result in results.items():
        if "error" in result:
            lines.append(f"| {model} | error: {result['error']} | | | |")
        else:
            lines.append(
                f"| {model} | {result['spans_gpu']} | {'yes' if result['identical_after_reload'] else 'NO'} | "
                f"{result['spans_cpu']} | {result['gpu_cpu_agreement_f1']:.4f} |"
            )
    out.with_suffix(".md").write_text("\n".join(lines) + "\n", encoding="utf8")
    print("\n".join(lines))


if __name__ == "__main__":
    typer.run(main)
