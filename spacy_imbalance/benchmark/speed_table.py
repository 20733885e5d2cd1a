"""The speed benchmark's results: each config's measurements over rounds
combined, and the table of words per second and peak memory against the
first config."""
import json
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, Dict, List, Tuple

from .records import device_words


@dataclass(frozen=True)
class Settings:
    """How configs are measured: ``steps`` timed updates of about
    ``batch_words`` words after ``warmup`` untimed ones; inference
    ``batch_size`` docs a batch, the best of ``repeats`` passes."""

    steps: int = 100
    warmup: int = 5
    batch_words: int = 1000
    batch_size: int = 128
    repeats: int = 3
    seed: int = 0
    gpu_id: int = -1


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


def table_lines(results: Dict[str, Dict[str, Any]], configs: List[str], corpus: str, settings: Settings) -> Tuple[List[str], int, str]:
    """The table's lines (a caption, then the table; ratios against the first of ``configs``, each in ``results``),
    the most rounds any config ran and the device in words."""
    steps, warmup, batch_words, batch_size, gpu_id = settings.steps, settings.warmup, settings.batch_words, settings.batch_size, settings.gpu_id
    # with rounds, a config the baseline has no round beside has no ratio yet
    configs = configs[:1] + [config for config in configs[1:] if "ratios" in results[config] or "rounds" not in results[config]]
    base = results[configs[0]]
    n_rounds = max(len(results[config].get("rounds", [None])) for config in configs)
    device = f"GPU {gpu_id}" if gpu_id >= 0 else "CPU"
    lines = [
        f"Speed and memory on corpus/{corpus}, {device} ({steps} training steps of ~{batch_words} words after {warmup} warm-up; "
        f"inference over test, batch {batch_size}, best of {settings.repeats}); ratios against {configs[0]}"
        + (f", each the median of {n_rounds} interleaved rounds (range in brackets)." if n_rounds > 1 else "."),
        "",
        "| config | train words/s | ratio | inference words/s | ratio | peak RSS train (MiB) | ratio | peak RSS inference (MiB) | ratio |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    if gpu_id >= 0:
        lines[2] += " peak GPU train (MiB) | peak GPU inference (MiB) |"
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
    return lines, n_rounds, device


def write_results(
    results: Dict[str, Dict[str, Any]], configs: List[str], corpus: str, settings: Settings, overrides: Dict[str, Any],
    out_dir: Path, name: str,
) -> List[str]:
    """The table of ``results`` (ratios against the first config measured)
    in <out_dir>/<name>.md, and everything in <name>.json with the settings
    and where it ran; the table's lines."""
    configs = [config for config in configs if config in results]
    lines, n_rounds, device = table_lines(results, configs, corpus, settings)
    gpu_id = settings.gpu_id
    recorded = {**asdict(settings), "device": device, "overrides": overrides, "rounds": n_rounds}
    del recorded["gpu_id"]  # the device says it
    from spacy_imbalance.sweeps import run_provenance

    # where it ran: a GPU's name, driver, CUDA and CuPy, and the CPU cores the process had
    provenance = run_provenance(gpu_id, overrides=overrides)
    lines[0] += f" Ran on {device_words(provenance)}."
    (out_dir / f"{name}.json").write_text(json.dumps({"corpus": corpus, "baseline": configs[0], "settings": recorded, "provenance": provenance, "results": results}, indent=2))
    (out_dir / f"{name}.md").write_text("\n".join(lines) + "\n")
    return lines
