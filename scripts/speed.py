"""Training and inference speed and peak memory of span configs, side by side.

Each config is measured in fresh processes (one trains, one runs inference
on the model the first saved), so that the peak resident set size (RSS) of
each phase is its own:

* training words/s: ``--steps`` updates on fixed batches of about
  ``--batch-words`` words from the train split (after ``--warmup`` updates
  that are not timed), dropout 0.1;
* inference words/s: ``nlp.pipe`` over the test split's texts, ``--batch-size``
  docs per batch, best of ``--repeats`` passes;
* peak RSS (MiB) of the training and of the inference process;
* with ``--gpu-id``, the peak GPU memory (MiB) each process held: CuPy's
  memory pool plus PyTorch's peak reservation (a transformer's allocator).

Ratios are against the first config. ``--set KEY=VALUE`` overrides every config
(e.g. the transformer's folder on a machine without the model package), and
``--name`` names the result files (speed_gpu.json for a GPU run beside the CPU
one). ``--profile`` also writes the cProfile
top functions of each training run next to the summary (profile before
optimising). Results go to metrics/<corpus>/<name>.json and <name>.md (name: speed).
"""
import cProfile
import io
import json
import pstats
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Dict, List, Tuple

import typer

ROOT = Path(__file__).resolve().parent.parent


def peak_rss_mib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # KiB on Linux


def use_device(gpu_id: int, allocator: Any) -> None:
    """What ``spacy train --gpu-id`` does: the GPU and the config's allocator."""
    if gpu_id < 0:
        return
    from thinc.api import require_gpu, set_gpu_allocator

    require_gpu(gpu_id)
    if allocator:
        set_gpu_allocator(allocator)


def peak_gpu_mib(gpu_id: int) -> float:
    """The GPU memory the process held at its peak: CuPy's pool (it keeps what
    it has allocated, so its total is its peak) and PyTorch's peak reservation."""
    if gpu_id < 0:
        return 0.0
    import cupy

    held = cupy.get_default_memory_pool().total_bytes()
    try:
        import torch

        held += torch.cuda.max_memory_reserved()
    except ImportError:
        pass
    return held / 2**20


def off_gpu(nlp: Any) -> List[str]:
    """The weights that are not on the GPU (a silent fallback to numpy), with their types."""
    import cupy

    found = []
    for name, pipe in nlp.pipeline:
        model = getattr(pipe, "model", None)
        if model is None:
            continue
        for node in model.walk():
            for param in node.param_names:
                if node.has_param(param) and not isinstance(node.get_param(param), cupy.ndarray):
                    found.append(f"{name}:{node.name}.{param} ({type(node.get_param(param)).__name__}, {type(node.ops).__name__})")
    return found


def train_child(config_path: Path, corpus: Path, model_out: Path, steps: int, warmup: int, batch_words: int, seed: int, profile_out: str, gpu_id: int = -1, overrides: Dict[str, Any] = {}) -> Dict[str, Any]:
    from spacy.training import Corpus
    from spacy.training.initialize import init_nlp
    from spacy.util import fix_random_seed, load_config

    corpus = Path(corpus)
    config = load_config(
        config_path, overrides={**overrides, "paths.train": str(corpus / "train.spacy"), "paths.dev": str(corpus / "dev.spacy"), "system.seed": seed},
        interpolate=True,  # nlp.create_optimizer() resolves [training.optimizer] alone: its schedule may name training.max_steps
    )
    use_device(gpu_id, config["training"]["gpu_allocator"])
    nlp = init_nlp(config)
    not_on_gpu = off_gpu(nlp) if gpu_id >= 0 else []
    fix_random_seed(seed)
    examples = list(Corpus(corpus / "train.spacy", gold_preproc=True)(nlp))
    # fixed batches of about batch_words words, cycled: every config sees the same data
    batches, batch, n = [], [], 0
    for eg in examples:
        batch.append(eg)
        n += len(eg.predicted)
        if n >= batch_words:
            batches.append(batch)
            batch, n = [], 0
    optimizer = nlp.create_optimizer()  # the config's [training.optimizer]
    profiler = cProfile.Profile() if profile_out else None
    words = 0
    start = 0.0
    for step in range(warmup + steps):
        if step == warmup:
            start = time.perf_counter()
            if profiler:
                profiler.enable()
        batch = batches[step % len(batches)]
        losses: Dict[str, float] = {}
        nlp.update(batch, sgd=optimizer, drop=0.1, losses=losses)
        if step >= warmup:
            words += sum(len(eg.predicted) for eg in batch)
    sum(losses.values())  # the losses are host floats: the GPU has finished the last update
    elapsed = time.perf_counter() - start
    if profiler:
        profiler.disable()
        out = io.StringIO()
        pstats.Stats(profiler, stream=out).sort_stats("cumulative").print_stats(30)
        Path(profile_out).write_text(out.getvalue())
    nlp.to_disk(model_out)
    return {"train_words": words, "train_seconds": elapsed, "train_wps": words / elapsed, "train_peak_rss_mib": peak_rss_mib(),
            "train_peak_gpu_mib": peak_gpu_mib(gpu_id), "train_off_gpu": not_on_gpu}


def infer_child(model: Path, corpus: Path, batch_size: int, repeats: int, gpu_id: int = -1) -> Dict[str, Any]:
    import spacy
    from spacy.tokens import DocBin

    allocator = spacy.util.load_config(Path(model) / "config.cfg")["training"]["gpu_allocator"]
    use_device(gpu_id, allocator)
    nlp = spacy.load(model)
    not_on_gpu = off_gpu(nlp) if gpu_id >= 0 else []
    docs = list(DocBin().from_disk(Path(corpus) / "test.spacy").get_docs(nlp.vocab))
    texts = [doc.text for doc in docs]
    words = sum(len(nlp.make_doc(text)) for text in texts)
    best = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        for _doc in nlp.pipe(texts, batch_size=batch_size):
            pass
        best = min(best, time.perf_counter() - start)
    return {"infer_words": words, "infer_seconds": best, "infer_wps": words / best, "infer_peak_rss_mib": peak_rss_mib(),
            "infer_peak_gpu_mib": peak_gpu_mib(gpu_id), "infer_off_gpu": not_on_gpu}


def run_child(args: List[str]) -> Dict[str, Any]:
    result = subprocess.run([sys.executable, __file__, *args], capture_output=True, text=True, cwd=ROOT)
    if result.returncode != 0:
        sys.stderr.write(result.stdout + result.stderr)
        raise SystemExit(f"speed.py child failed: {' '.join(args)}")
    return json.loads(result.stdout.strip().splitlines()[-1])


def write(results: Dict[str, Dict[str, Any]], configs: List[str], corpus: str, steps: int, warmup: int, batch_words: int, batch_size: int,
          repeats: int, seed: int, gpu_id: int, overrides: Dict[str, Any], out_dir: Path, name: str) -> List[str]:
    configs = [config for config in configs if config in results]
    base = results[configs[0]]
    device = f"GPU {gpu_id}" if gpu_id >= 0 else "CPU"
    lines = [
        f"Speed and memory on corpus/{corpus}, {device} ({steps} training steps of ~{batch_words} words after {warmup} warm-up; "
        f"inference over test, batch {batch_size}, best of {repeats}); ratios against {configs[0]}.",
        "",
        "| config | train words/s | ratio | inference words/s | ratio | peak RSS train (MiB) | ratio | peak RSS inference (MiB) | ratio |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    if gpu_id >= 0:
        lines[2] = lines[2][:-1] + " peak GPU train (MiB) | peak GPU inference (MiB) |"
        lines[3] += "---|---|"
    for config, r in results.items():
        r["ratios"] = {key: r[key] / base[key] for key in ("train_wps", "infer_wps", "train_peak_rss_mib", "infer_peak_rss_mib")}
        q = r["ratios"]
        line = (f"| {config} | {r['train_wps']:.0f} | {q['train_wps']:.2f} | {r['infer_wps']:.0f} | {q['infer_wps']:.2f} | "
                f"{r['train_peak_rss_mib']:.0f} | {q['train_peak_rss_mib']:.2f} | {r['infer_peak_rss_mib']:.0f} | {q['infer_peak_rss_mib']:.2f} |")
        if gpu_id >= 0:
            line += f" {r['train_peak_gpu_mib']:.0f} | {r['infer_peak_gpu_mib']:.0f} |"
        lines.append(line)
    settings = {"steps": steps, "warmup": warmup, "batch_words": batch_words, "batch_size": batch_size, "repeats": repeats, "seed": seed,
                "device": device, "overrides": overrides}
    from spacy_imbalance.sweeps import run_provenance

    # where it ran: a GPU's name, driver, CUDA and CuPy, and the CPU cores the process had
    provenance = run_provenance(gpu_id)
    lines[0] += f" Ran on {_device_words(provenance)}."
    (out_dir / f"{name}.json").write_text(json.dumps({"corpus": corpus, "baseline": configs[0], "settings": settings, "provenance": provenance, "results": results}, indent=2))
    (out_dir / f"{name}.md").write_text("\n".join(lines) + "\n")
    return lines


def _device_words(provenance: Dict[str, Any]) -> str:
    cpu = f"{provenance['cpu']} ({provenance['cpu_cores']} cores)"
    if provenance["device"] != "gpu":
        return cpu
    gpu = provenance.get("gpu", "an unnamed GPU")
    return f"{gpu}, driver {provenance.get('driver', '?')}, CUDA {provenance.get('cuda_runtime', '?')}, CuPy {provenance.get('cupy', '?')}, torch {provenance.get('torch', '?')}; host {cpu}"


def main(
    corpus: str = typer.Option("wnut17", "--corpus", help="corpus/<name> with train/dev/test.spacy"),
    configs: List[str] = typer.Option([], "--config", help="configs/<name>.cfg; the first is the baseline of the ratios"),
    steps: int = typer.Option(100, "--steps", help="Timed training updates"),
    warmup: int = typer.Option(5, "--warmup", help="Untimed updates first"),
    batch_words: int = typer.Option(1000, "--batch-words", help="Words per training batch"),
    batch_size: int = typer.Option(128, "--batch-size", help="Docs per nlp.pipe batch"),
    repeats: int = typer.Option(3, "--repeats", help="Inference passes; the fastest counts"),
    seed: int = typer.Option(0, "--seed"),
    profile: bool = typer.Option(False, "--profile", help="Write cProfile top functions of each training run"),
    only: str = typer.Option("", "--only", help="Comma-separated configs to measure (a quick pass, as benchmark.py --only); empty: all"),
    gpu_id: int = typer.Option(-1, "--gpu-id", help="GPU to train and predict on; -1: the CPU"),
    sets: List[str] = typer.Option([], "--set", help="Config override KEY=VALUE for every config"),
    name: str = typer.Option("speed", "--name", help="Result files metrics/<corpus>/<name>.json and .md"),
    child: str = typer.Option("", "--child", hidden=True),
    child_args: str = typer.Option("", "--child-args", hidden=True),
) -> None:
    if child:
        params = json.loads(child_args)
        result = train_child(**params) if child == "train" else infer_child(**params)
        print(json.dumps(result))
        return
    names = {name.strip() for name in only.split(",") if name.strip()}
    if names:
        configs = [name for name in configs if name in names]
        if not configs:
            typer.echo(f"--only {only}: no config of the speed benchmark is selected")
            return
    if not configs:
        raise typer.BadParameter("give at least one --config")
    overrides = {}
    for item in sets:
        key, sep, value = item.partition("=")
        if not sep:
            raise typer.BadParameter(f"expected KEY=VALUE, got {item!r}", param_hint="--set")
        try:
            overrides[key] = json.loads(value)
        except json.JSONDecodeError:
            overrides[key] = value
    corpus_dir = ROOT / "corpus" / corpus
    out_dir = ROOT / "metrics" / corpus
    out_dir.mkdir(parents=True, exist_ok=True)
    results: Dict[str, Dict[str, Any]] = {}
    def measure(config: str, model: Path, profile_out: str) -> Tuple[Dict[str, Any], Dict[str, Any]]:
        train = run_child(["--child", "train", "--child-args", json.dumps({
            "config_path": str(ROOT / "configs" / f"{config}.cfg"), "corpus": str(corpus_dir), "model_out": str(model),
            "steps": steps, "warmup": warmup, "batch_words": batch_words, "seed": seed, "profile_out": profile_out,
            "gpu_id": gpu_id, "overrides": overrides})])
        typer.echo(f"{config}: inference ...")
        infer = run_child(["--child", "infer", "--child-args", json.dumps({
            "model": str(model), "corpus": str(corpus_dir), "batch_size": batch_size, "repeats": repeats, "gpu_id": gpu_id})])
        return train, infer

    lines: List[str] = []
    with tempfile.TemporaryDirectory() as tmp:
        for config in configs:
            model = Path(tmp) / config.replace("/", "_")
            profile_out = str(out_dir / f"speed_profile_{config.replace('/', '_')}.txt") if profile else ""
            typer.echo(f"{config}: training {steps} steps ...")
            try:
                train, infer = measure(config, model, profile_out)
            except SystemExit as error:  # a config that fails is reported; the others are still measured
                typer.echo(f"{config}: failed: {error}", err=True)
                continue
            results[config] = {**train, **infer}
            # written after every config: a run cut short keeps what it measured
            lines = write(results, configs, corpus, steps, warmup, batch_words, batch_size, repeats, seed, gpu_id, overrides, out_dir, name)
            off = train.get("train_off_gpu", []) + infer.get("infer_off_gpu", [])
            typer.echo(f"{config}: train {train['train_wps']:.0f} words/s, inference {infer['infer_wps']:.0f} words/s, "
                       f"peak RSS {train['train_peak_rss_mib']:.0f} / {infer['infer_peak_rss_mib']:.0f} MiB"
                       + (f", peak GPU {train['train_peak_gpu_mib']:.0f} / {infer['infer_peak_gpu_mib']:.0f} MiB" if gpu_id >= 0 else "")
                       + (f", NOT ON THE GPU: {off}" if off else ""))
    typer.echo("\n".join(lines))

if __name__ == "__main__":
    typer.run(main)
