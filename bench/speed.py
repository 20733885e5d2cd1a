"""Training and inference speed and peak memory of a config, each phase in a
process of its own (scripts/speed.py runs them), and the table of results."""
import cProfile
import io
import json
import pstats
import resource
import time
from pathlib import Path
from typing import Any, Dict, List

from .batches import word_batches
from .records import device_words
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


RATIO_KEYS = ("train_wps", "infer_wps", "train_peak_rss_mib", "infer_peak_rss_mib")


def combine_rounds(rounds: Dict[str, List[Dict[str, Any]]], baseline: str) -> Dict[str, Dict[str, Any]]:
    """Each config's measurements over interleaved rounds, as one result: the
    median of every number, and each ratio as the median of the per-round
    ratios against the baseline's measurement of the same round (a machine that
    slows down for a while slows both sides of a round), with their range.
    Rounds the baseline lacks (it failed, or the run stopped) give no ratio."""
    import statistics

    combined: Dict[str, Dict[str, Any]] = {}
    base_rounds = rounds.get(baseline, [])
    for config, measured in rounds.items():
        if not measured:
            continue
        numeric = [key for key, value in measured[0].items() if isinstance(value, (int, float)) and not isinstance(value, bool)]
        result: Dict[str, Any] = {key: statistics.median(m[key] for m in measured) for key in numeric}
        result.update({key: value for key, value in measured[0].items() if key not in numeric})
        pairs = list(zip(measured, base_rounds))
        if pairs:
            per_round = {key: [m[key] / b[key] for m, b in pairs] for key in RATIO_KEYS}
            result["ratios"] = {key: statistics.median(values) for key, values in per_round.items()}
            result["ratio_ranges"] = {key: [min(values), max(values)] for key, values in per_round.items()}
        result["rounds"] = measured
        combined[config] = result
    return combined


def write_results(results: Dict[str, Dict[str, Any]], configs: List[str], corpus: str, steps: int, warmup: int, batch_words: int, batch_size: int,
          repeats: int, seed: int, gpu_id: int, overrides: Dict[str, Any], out_dir: Path, name: str) -> List[str]:
    configs = [config for config in configs if config in results]
    # with rounds, a config the baseline has no round beside has no ratio yet
    configs = configs[:1] + [config for config in configs[1:] if "ratios" in results[config] or "rounds" not in results[config]]
    base = results[configs[0]]
    n_rounds = max(len(results[config].get("rounds", [None])) for config in configs)
    device = f"GPU {gpu_id}" if gpu_id >= 0 else "CPU"
    lines = [
        f"Speed and memory on corpus/{corpus}, {device} ({steps} training steps of ~{batch_words} words after {warmup} warm-up; "
        f"inference over test, batch {batch_size}, best of {repeats}); ratios against {configs[0]}"
        + (f", each the median of {n_rounds} interleaved rounds (range in brackets)." if n_rounds > 1 else "."),
        "",
        "| config | train words/s | ratio | inference words/s | ratio | peak RSS train (MiB) | ratio | peak RSS inference (MiB) | ratio |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    if gpu_id >= 0:
        lines[2] = lines[2][:-1] + " peak GPU train (MiB) | peak GPU inference (MiB) |"
        lines[3] += "---|---|"
    for config in configs:
        r = results[config]
        if "rounds" not in r:  # one measurement: the ratio is its own
            r["ratios"] = {key: r[key] / base[key] for key in RATIO_KEYS}
        q, spans = r["ratios"], r.get("ratio_ranges", {})

        def ratio(key: str) -> str:
            low_high = spans.get(key)
            return f"{q[key]:.2f}" + (f" [{low_high[0]:.2f}, {low_high[1]:.2f}]" if low_high and len(r["rounds"]) > 1 else "")

        line = (f"| {config} | {r['train_wps']:.0f} | {ratio('train_wps')} | {r['infer_wps']:.0f} | {ratio('infer_wps')} | "
                f"{r['train_peak_rss_mib']:.0f} | {ratio('train_peak_rss_mib')} | {r['infer_peak_rss_mib']:.0f} | {ratio('infer_peak_rss_mib')} |")
        if gpu_id >= 0:
            line += f" {r['train_peak_gpu_mib']:.0f} | {r['infer_peak_gpu_mib']:.0f} |"
        lines.append(line)
    settings = {"steps": steps, "warmup": warmup, "batch_words": batch_words, "batch_size": batch_size, "repeats": repeats, "seed": seed,
                "device": device, "overrides": overrides, "rounds": n_rounds}
    from spacy_imbalance.sweeps import run_provenance

    # where it ran: a GPU's name, driver, CUDA and CuPy, and the CPU cores the process had
    provenance = run_provenance(gpu_id, overrides=overrides)
    lines[0] += f" Ran on {device_words(provenance)}."
    (out_dir / f"{name}.json").write_text(json.dumps({"corpus": corpus, "baseline": configs[0], "settings": settings, "provenance": provenance, "results": results}, indent=2))
    (out_dir / f"{name}.md").write_text("\n".join(lines) + "\n")
    return lines
