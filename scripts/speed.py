"""Training and inference speed and peak memory of span configs, side by side.

Each config is measured in fresh processes (one trains, one runs inference
on the model the first saved), so that the peak resident set size (RSS) of
each phase is its own:

* training words/s: ``--steps`` updates on fixed batches of about
  ``--batch-words`` words from the train split (after ``--warmup`` updates
  that are not timed), dropout 0.1;
* inference words/s: ``nlp.pipe`` over the test split's texts, ``--batch-size``
  docs per batch, best of ``--repeats`` passes;
* peak RSS (MiB) of the training and of the inference process.

Ratios are against the first config. ``--profile`` also writes the cProfile
top functions of each training run next to the summary (profile before
optimising). Results go to metrics/<corpus>/speed.json and speed.md.
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
from typing import Any, Dict, List

import typer

ROOT = Path(__file__).resolve().parent.parent


def peak_rss_mib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # KiB on Linux


def train_child(config_path: Path, corpus: Path, model_out: Path, steps: int, warmup: int, batch_words: int, seed: int, profile_out: str) -> Dict[str, Any]:
    from spacy.training import Corpus
    from spacy.training.initialize import init_nlp
    from spacy.util import fix_random_seed, load_config

    corpus = Path(corpus)
    config = load_config(config_path, overrides={"paths.train": str(corpus / "train.spacy"), "paths.dev": str(corpus / "dev.spacy"), "system.seed": seed})
    nlp = init_nlp(config)
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
        nlp.update(batch, sgd=optimizer, drop=0.1, losses={})
        if step >= warmup:
            words += sum(len(eg.predicted) for eg in batch)
    elapsed = time.perf_counter() - start
    if profiler:
        profiler.disable()
        out = io.StringIO()
        pstats.Stats(profiler, stream=out).sort_stats("cumulative").print_stats(30)
        Path(profile_out).write_text(out.getvalue())
    nlp.to_disk(model_out)
    return {"train_words": words, "train_seconds": elapsed, "train_wps": words / elapsed, "train_peak_rss_mib": peak_rss_mib()}


def infer_child(model: Path, corpus: Path, batch_size: int, repeats: int) -> Dict[str, Any]:
    import spacy
    from spacy.tokens import DocBin

    nlp = spacy.load(model)
    docs = list(DocBin().from_disk(Path(corpus) / "test.spacy").get_docs(nlp.vocab))
    texts = [doc.text for doc in docs]
    words = sum(len(nlp.make_doc(text)) for text in texts)
    best = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        for _doc in nlp.pipe(texts, batch_size=batch_size):
            pass
        best = min(best, time.perf_counter() - start)
    return {"infer_words": words, "infer_seconds": best, "infer_wps": words / best, "infer_peak_rss_mib": peak_rss_mib()}


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
    seed: int = typer.Option(0, "--seed"),
    profile: bool = typer.Option(False, "--profile", help="Write cProfile top functions of each training run"),
    only: str = typer.Option("", "--only", help="Comma-separated configs to measure (a quick pass, as benchmark.py --only); empty: all"),
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
    corpus_dir = ROOT / "corpus" / corpus
    out_dir = ROOT / "metrics" / corpus
    out_dir.mkdir(parents=True, exist_ok=True)
    results: Dict[str, Dict[str, Any]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        for name in configs:
            model = Path(tmp) / name
            profile_out = str(out_dir / f"speed_profile_{name}.txt") if profile else ""
            typer.echo(f"{name}: training {steps} steps ...")
            train = run_child(["--child", "train", "--child-args", json.dumps({
                "config_path": str(ROOT / "configs" / f"{name}.cfg"), "corpus": str(corpus_dir), "model_out": str(model),
                "steps": steps, "warmup": warmup, "batch_words": batch_words, "seed": seed, "profile_out": profile_out})])
            typer.echo(f"{name}: inference ...")
            infer = run_child(["--child", "infer", "--child-args", json.dumps({
                "model": str(model), "corpus": str(corpus_dir), "batch_size": batch_size, "repeats": repeats})])
            results[name] = {**train, **infer}
            typer.echo(f"{name}: train {train['train_wps']:.0f} words/s, inference {infer['infer_wps']:.0f} words/s, "
                       f"peak RSS {train['train_peak_rss_mib']:.0f} / {infer['infer_peak_rss_mib']:.0f} MiB")
    base = results[configs[0]]
    lines = [
        f"Speed and memory on corpus/{corpus} ({steps} training steps of ~{batch_words} words after {warmup} warm-up; "
        f"inference over test, batch {batch_size}, best of {repeats}); ratios against {configs[0]}.",
        "",
        "| config | train words/s | ratio | inference words/s | ratio | peak RSS train (MiB) | ratio | peak RSS inference (MiB) | ratio |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for name, r in results.items():
        r["ratios"] = {key: r[key] / base[key] for key in ("train_wps", "infer_wps", "train_peak_rss_mib", "infer_peak_rss_mib")}
        q = r["ratios"]
        lines.append(f"| {name} | {r['train_wps']:.0f} | {q['train_wps']:.2f} | {r['infer_wps']:.0f} | {q['infer_wps']:.2f} | "
                     f"{r['train_peak_rss_mib']:.0f} | {q['train_peak_rss_mib']:.2f} | {r['infer_peak_rss_mib']:.0f} | {q['infer_peak_rss_mib']:.2f} |")
    settings = {"steps": steps, "warmup": warmup, "batch_words": batch_words, "batch_size": batch_size, "repeats": repeats, "seed": seed}
    (out_dir / "speed.json").write_text(json.dumps({"corpus": corpus, "baseline": configs[0], "settings": settings, "results": results}, indent=2))
    (out_dir / "speed.md").write_text("\n".join(lines) + "\n")
    typer.echo("\n".join(lines))


if __name__ == "__main__":
    typer.run(main)
