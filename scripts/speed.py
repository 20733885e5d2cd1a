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
import json
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any, Dict, List, Tuple

import typer

from bench.options import only_names
from bench.speed import combine_rounds, infer_child, train_child, write_results

ROOT = Path(__file__).resolve().parent.parent


def run_child(args: List[str]) -> Dict[str, Any]:
    result = subprocess.run([sys.executable, __file__, *args], capture_output=True, text=True, cwd=ROOT)
    if result.returncode != 0:
        sys.stderr.write(result.stdout + result.stderr)
        raise SystemExit(f"speed.py child failed: {' '.join(args)}")
    return json.loads(result.stdout.strip().splitlines()[-1])


def main(
    corpus: str = typer.Option("wnut17", "--corpus", help="corpus/<name> with train/dev/test.spacy"),
    configs: List[str] = typer.Option([], "--config", help="configs/<name>.cfg; the first is the baseline of the ratios"),
    steps: int = typer.Option(100, "--steps", help="Timed training updates"),
    warmup: int = typer.Option(5, "--warmup", help="Untimed updates first"),
    batch_words: int = typer.Option(1000, "--batch-words", help="Words per training batch"),
    batch_size: int = typer.Option(128, "--batch-size", help="Docs per nlp.pipe batch"),
    repeats: int = typer.Option(3, "--repeats", help="Inference passes; the fastest counts"),
    rounds: int = typer.Option(1, "--rounds", help="Measure every config this many times, the configs in turn (rotated each round so none is always first); ratios are the median over rounds of each round's ratio, with their range"),
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
    names = only_names(only)
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

    if rounds < 1:
        raise typer.BadParameter(f"must be at least 1, got {rounds}", param_hint="--rounds")
    lines: List[str] = []
    measured: Dict[str, List[Dict[str, Any]]] = {config: [] for config in configs}
    with tempfile.TemporaryDirectory() as tmp:
        for round_ in range(rounds):
            for config in configs[round_ % len(configs):] + configs[:round_ % len(configs)]:
                model = Path(tmp) / config.replace("/", "_")
                # the profile of the first round only: profiling slows the run it watches
                profile_out = str(out_dir / f"speed_profile_{config.replace('/', '_')}.txt") if profile and round_ == 0 else ""
                typer.echo(f"{config}: training {steps} steps" + (f" (round {round_ + 1} of {rounds})" if rounds > 1 else "") + " ...")
                try:
                    train, infer = measure(config, model, profile_out)
                except SystemExit as error:  # a config that fails is reported; the others are still measured
                    typer.echo(f"{config}: failed: {error}", err=True)
                    continue
                measured[config].append({**train, **infer})
                results = combine_rounds(measured, configs[0]) if rounds > 1 else {c: m[0] for c, m in measured.items() if m}
                # written after every measurement: a run cut short keeps what it measured
                lines = write_results(results, configs, corpus, steps, warmup, batch_words, batch_size, repeats, seed, gpu_id, overrides, out_dir, name)
                off = train.get("train_off_gpu", []) + infer.get("infer_off_gpu", [])
                typer.echo(f"{config}: train {train['train_wps']:.0f} words/s, inference {infer['infer_wps']:.0f} words/s, "
                           f"peak RSS {train['train_peak_rss_mib']:.0f} / {infer['infer_peak_rss_mib']:.0f} MiB"
                           + (f", peak GPU {train['train_peak_gpu_mib']:.0f} / {infer['infer_peak_gpu_mib']:.0f} MiB" if gpu_id >= 0 else "")
                           + (f", NOT ON THE GPU: {off}" if off else ""))
    typer.echo("\n".join(lines))

if __name__ == "__main__":
    typer.run(main)
