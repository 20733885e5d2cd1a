"""Training and inference speed and peak memory of configs, side by side.

Each config is measured in fresh processes (``python -m
spacy_imbalance.benchmark.speed PHASE PARAMS``: one trains, one runs
inference on the model the first saved), so that the peak resident set size
of each phase is its own; ``measure`` runs them, in interleaved rounds, and
writes the table (``speed_table``) after every measurement.
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
from typing import Any, Callable, Dict, List, Optional, Tuple

from .batches import word_batches
from .layout import Layout
from .speed_table import Settings, combine_rounds, write_results
from .sweep import Say, say_now


class MeasurementFailed(RuntimeError):
    """A measuring process exited with an error; the message holds its output's end."""


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


def train_child(
    config_path: str, corpus: str, model_out: str, steps: int, warmup: int, batch_words: int, seed: int, profile_out: str,
    gpu_id: int = -1, overrides: Optional[Dict[str, Any]] = None,
) -> Dict[str, Any]:
    """``steps`` timed updates (after ``warmup`` untimed ones) on fixed
    batches of about ``batch_words`` words of the train split; the model is
    saved to ``model_out`` for ``infer_child``."""
    from spacy.training import Corpus
    from spacy.training.initialize import init_nlp
    from spacy.util import fix_random_seed, load_config

    folder = Path(corpus)
    config = load_config(
        config_path,
        overrides={**(overrides or {}), "paths.train": str(folder / "train.spacy"), "paths.dev": str(folder / "dev.spacy"), "system.seed": seed},
        interpolate=True,  # nlp.create_optimizer() resolves [training.optimizer] alone: its schedule may name training.max_steps
    )
    use_device(gpu_id, config["training"]["gpu_allocator"])
    nlp = init_nlp(config)
    not_on_gpu = off_gpu(nlp) if gpu_id >= 0 else []
    fix_random_seed(seed)
    examples = list(Corpus(folder / "train.spacy", gold_preproc=True)(nlp))
    # fixed batches of about batch_words words, cycled: every config sees the same data
    batches = word_batches(examples, batch_words, keep_rest=False)
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


def infer_child(model: str, corpus: str, batch_size: int, repeats: int, gpu_id: int = -1) -> Dict[str, Any]:
    """``nlp.pipe`` over the test split's texts, ``batch_size`` docs a
    batch: the fastest of ``repeats`` passes."""
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


CHILDREN: Dict[str, Callable[..., Dict[str, Any]]] = {"train": train_child, "infer": infer_child}


def run_child(phase: str, params: Dict[str, Any]) -> Dict[str, Any]:
    """One phase measured in a fresh process; its measurement."""
    command = [sys.executable, "-m", "spacy_imbalance.benchmark.speed", phase, json.dumps(params)]
    result = subprocess.run(command, capture_output=True, text=True)
    if result.returncode != 0:
        raise MeasurementFailed(f"the {phase} process failed:\n{(result.stdout + result.stderr)[-3000:]}")
    return json.loads(result.stdout.strip().splitlines()[-1])


def measure(
    layout: Layout, corpus: str, configs: List[str], settings: Settings, overrides: Dict[str, Any], name: str,
    rounds: int = 1, profile: bool = False, say: Say = say_now,
) -> List[str]:
    """Every config measured ``rounds`` times, the configs in turn (rotated
    each round so that none is always first), the results written to
    metrics/<corpus>/<name>.json and .md after every measurement (a run cut
    short keeps what it measured); the table's lines. A config that fails is
    said to have failed; the others are still measured."""
    folder = layout.corpora / corpus
    out_dir = layout.metrics / corpus
    out_dir.mkdir(parents=True, exist_ok=True)
    measured: Dict[str, List[Dict[str, Any]]] = {config: [] for config in configs}
    lines: List[str] = []
    with tempfile.TemporaryDirectory() as tmp:
        for round_ in range(rounds):
            for config in configs[round_ % len(configs):] + configs[:round_ % len(configs)]:
                model = Path(tmp) / config.replace("/", "_")
                # the profile of the first round only: profiling slows the run it watches
                profile_out = str(out_dir / f"speed_profile_{config.replace('/', '_')}.txt") if profile and round_ == 0 else ""
                say(f"{config}: training {settings.steps} steps" + (f" (round {round_ + 1} of {rounds})" if rounds > 1 else "") + " ...")
                try:
                    train, infer = _measure_one(layout.config(config), folder, model, settings, overrides, profile_out, say, config)
                except MeasurementFailed as error:
                    say(f"{config}: failed: {error}")
                    continue
                measured[config].append({**train, **infer})
                results = combine_rounds(measured, configs[0]) if rounds > 1 else {c: m[0] for c, m in measured.items() if m}
                lines = write_results(results, configs, corpus, settings, overrides, out_dir, name)
                off = train.get("train_off_gpu", []) + infer.get("infer_off_gpu", [])
                say(f"{config}: train {train['train_wps']:.0f} words/s, inference {infer['infer_wps']:.0f} words/s, "
                    f"peak RSS {train['train_peak_rss_mib']:.0f} / {infer['infer_peak_rss_mib']:.0f} MiB"
                    + (f", peak GPU {train['train_peak_gpu_mib']:.0f} / {infer['infer_peak_gpu_mib']:.0f} MiB" if settings.gpu_id >= 0 else "")
                    + (f", NOT ON THE GPU: {off}" if off else ""))
    return lines


def _measure_one(
    config: Path, folder: Path, model: Path, settings: Settings, overrides: Dict[str, Any], profile_out: str,
    say: Say, name: str,
) -> Tuple[Dict[str, Any], Dict[str, Any]]:
    train = run_child("train", {
        "config_path": str(config), "corpus": str(folder), "model_out": str(model), "steps": settings.steps,
        "warmup": settings.warmup, "batch_words": settings.batch_words, "seed": settings.seed, "profile_out": profile_out,
        "gpu_id": settings.gpu_id, "overrides": overrides})
    say(f"{name}: inference ...")
    infer = run_child("infer", {
        "model": str(model), "corpus": str(folder), "batch_size": settings.batch_size, "repeats": settings.repeats,
        "gpu_id": settings.gpu_id})
    return train, infer


if __name__ == "__main__":
    # a measuring process: PHASE and its parameters as JSON; its measurement on the last line
    print(json.dumps(CHILDREN[sys.argv[1]](**json.loads(sys.argv[2]))))
