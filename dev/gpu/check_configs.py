"""Train and evaluate configs on a GPU for a few hundred steps and check that
they stay there: does every shipped config run with ``--gpu-id 0``?

Each config is trained with ``spacy train --gpu-id`` (scripts/benchmark.py's
run, so the same overrides and files), evaluated on the test split with
``spacy-imbalance evaluate --gpu-id``, then loaded once more on the GPU: every
weight of every pipe must be a CuPy array (no silent fallback to numpy) and
``nlp.pipe`` must annotate the test texts. A failing config does not stop the
others: its error is recorded. Writes metrics/<corpus>/<name>.json and .md.

    python dev/gpu/check_configs.py --glob "*.cfg" --glob "transformer/*.cfg" --gpu-id 0 --jobs 8
"""
import json
import sys
import threading
import time
import traceback
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, Dict, List

import typer

from spacy_imbalance.benchmark.layout import Layout
from spacy_imbalance.benchmark.options import split_sets
from spacy_imbalance.benchmark.records import stopped_at
from spacy_imbalance.benchmark.runs import Run, run_one  # one run = train + evaluate, as the benchmark's

ROOT = Path(__file__).resolve().parent.parent.parent


def placement(model: Path, corpus: Path, gpu_id: int) -> Dict[str, Any]:
    """Load ``model`` on the GPU, check its weights are there, annotate the test texts."""
    import spacy
    from spacy.tokens import DocBin
    from thinc.api import require_gpu, set_gpu_allocator

    if gpu_id >= 0:
        require_gpu(gpu_id)
        allocator = spacy.util.load_config(model / "config.cfg")["training"]["gpu_allocator"]
        if allocator:
            set_gpu_allocator(allocator)
    nlp = spacy.load(model)
    on_device = __import__("cupy").ndarray if gpu_id >= 0 else __import__("numpy").ndarray
    off_gpu, cpu_by_design = [], []
    n_params = 0
    for name, pipe in nlp.pipeline:
        model = getattr(pipe, "model", None)
        if model is None:
            continue
        # spaCy's transition-based parser builds its upper layer on the CPU on purpose (use_ops("cpu"))
        upper = {id(node) for node in model.get_ref("upper").walk()} if model.has_ref("upper") else set()
        for node in model.walk():
            for param in node.param_names:
                if node.has_param(param):
                    n_params += 1
                    if not isinstance(node.get_param(param), on_device):
                        (cpu_by_design if id(node) in upper else off_gpu).append(f"{name}:{node.name}.{param}")
    texts = [doc.text for doc in DocBin().from_disk(corpus / "test.spacy").get_docs(nlp.vocab)]
    start = time.perf_counter()
    n_ents = sum(len(doc.ents) for doc in nlp.pipe(texts, batch_size=128))
    seconds = time.perf_counter() - start
    return {"params": n_params, "off_gpu": off_gpu, "cpu_by_design": cpu_by_design, "test_docs": len(texts), "predicted_entities": n_ents, "pipe_seconds": seconds}


def main(
    configs: List[str] = typer.Option([], "--config", help="configs/<name>.cfg (e.g. ner, transformer/ner); repeatable"),
    globs: List[str] = typer.Option([], "--glob", help="Also every configs/<glob> (e.g. '*.cfg', 'transformer/*.cfg')"),
    skip: List[str] = typer.Option([], "--skip", help="Leave out the configs whose name contains this (e.g. minilm)"),
    corpus: str = typer.Option("wnut17", "--corpus"),
    max_steps: int = typer.Option(200, "--max-steps"),
    gpu_id: int = typer.Option(0, "--gpu-id"),
    jobs: int = typer.Option(4, "--jobs", "-j", help="Configs checked at the same time"),
    sets: List[str] = typer.Option([], "--set", help="Config override KEY=VALUE for every run, as benchmark.py --set"),
    name: str = typer.Option("gpu_check", "--name", help="Result files metrics/<corpus>/<name>.json and .md"),
    child: str = typer.Option("", "--child", hidden=True),
) -> None:
    if child:
        print(json.dumps(placement(Path(child), ROOT / "corpus" / corpus, gpu_id)))
        return
    for pattern in globs:
        configs += sorted(str(path.relative_to(ROOT / "configs").with_suffix("")) for path in (ROOT / "configs").glob(pattern))
    configs = [config for config in dict.fromkeys(configs) if not any(part in config for part in skip)]
    if not configs:
        raise typer.BadParameter("give --config or --glob")
    missing = [config for config in configs if not (ROOT / "configs" / f"{config}.cfg").is_file()]
    if missing:
        raise typer.BadParameter(f"no such config in configs/: {', '.join(missing)}", param_hint="--config")
    overrides = split_sets(sets)
    metrics_dir = Path("metrics") / name
    training_dir = Path("training") / name
    results: Dict[str, Dict[str, Any]] = {}

    def work(config: str) -> None:
        import subprocess

        run = config.replace("/", "-")
        record: Dict[str, Any] = {"config": config}
        start = time.perf_counter()
        try:
            report = run_one(Layout.at(ROOT, metrics_dir, training_dir), Run(corpus, config, 0, run, max_steps, overrides, gpu_id=gpu_id))
            record.update(
                macro_f=report["macro"]["f"], micro_f=report["micro"]["f"], train_seconds=report["train_seconds"],
                stopped_at=stopped_at(report),
            )
            model = ROOT / training_dir / corpus / f"{run}-s0" / "model-best"
            check = subprocess.run(
                [sys.executable, __file__, "--child", str(model), "--corpus", corpus, "--gpu-id", str(gpu_id)],
                capture_output=True, text=True, cwd=ROOT,
            )
            if check.returncode != 0:
                raise RuntimeError(f"placement check failed:\n{check.stderr[-3000:]}")
            record.update(json.loads(check.stdout.strip().splitlines()[-1]))
            record["ok"] = not record["off_gpu"]
        except BaseException as error:  # noqa: B036 (run_one exits with SystemExit; keep going)
            log = ROOT / training_dir / corpus / f"{run}-s0.log"
            tail = log.read_text(encoding="utf8")[-3000:] if log.is_file() else ""
            record.update(ok=False, error=f"{error}\n{tail}\n{traceback.format_exc()[-2000:]}")
        record["seconds"] = time.perf_counter() - start
        with lock:
            results[config] = record
            # written after every config: a call cut short keeps what it checked
            write(results)
        verdict = "ok" if record["ok"] else ("WEIGHTS OFF THE GPU" if "off_gpu" in record else "FAILED")
        print(f"{config}: {verdict} ({record['seconds']:.0f} s)"
              + (f", macro-F1 {100 * record['macro_f']:.1f}" if "macro_f" in record else "")
              + (f"\n  off the GPU: {record['off_gpu']}" if record.get("off_gpu") else "")
              + (f"\n  {record['error'][-1500:]}" if "error" in record else ""), flush=True)

    out = ROOT / "metrics" / corpus
    out.mkdir(parents=True, exist_ok=True)
    lock = threading.Lock()

    def write(results: Dict[str, Dict[str, Any]]) -> List[str]:
        ordered = [results[config] for config in configs if config in results]
        from spacy_imbalance.sweeps import run_provenance

        (out / f"{name}.json").write_text(json.dumps({"corpus": corpus, "max_steps": max_steps, "gpu_id": gpu_id, "overrides": overrides,
                                                      "provenance": run_provenance(gpu_id), "runs": ordered}, indent=1))
        lines = [
            f"Configs trained {max_steps} steps on corpus/{corpus} with --gpu-id {gpu_id}, evaluated on test on the GPU, then reloaded there "
            f"(every weight a CuPy array, nlp.pipe over the test texts). {sum(r['ok'] for r in ordered)} of {len(configs)} pass"
            + (f" ({len(configs) - len(ordered)} not checked yet)." if len(ordered) < len(configs) else "."),
            "",
            "| config | result | test macro-F1 | train s | weights | test docs/s |",
            "| --- | --- | --: | --: | --: | --: |",
        ]
        for r in ordered:
            if "error" in r:
                first = r["error"].strip().splitlines()[0][:120] if r["error"].strip() else "failed"
                lines.append(f"| {r['config']} | failed: {first} | | | | |")
                continue
            result = "ok" if r["ok"] else f"{len(r['off_gpu'])} weights off the GPU"
            lines.append(f"| {r['config']} | {result} | {100 * r['macro_f']:.1f} | {r['train_seconds']:.0f} | {r['params']} | "
                         f"{r['test_docs'] / r['pipe_seconds']:.0f} |")
        (out / f"{name}.md").write_text("\n".join(lines) + "\n")
        return lines

    with ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
        list(pool.map(work, configs))
    ordered = [results[config] for config in configs]
    lines = write(results)
    print("\n".join(lines))
    if not all(r["ok"] for r in ordered):
        raise typer.Exit(1)


if __name__ == "__main__":
    typer.run(main)
