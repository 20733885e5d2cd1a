"""How the threshold search of `spacy-imbalance calibrate` was chosen: each
finished sampled_spancat run's dev and test macro-F1 under the argmax rule
and four searches (per-label alone, one shared threshold, shared then
per-label with a 0.5-point margin (the default), per-label with the margin).
Test scores of the variants were looked at to choose the default, so this is
a record of that choice, not a test of it.

    python scripts/calibration_variants.py --corpus wnut17 --config vectors/sampled_spancat_uniform --seed 0,1,2

Each run's result is kept in metrics/<corpus>/<name>.json and not computed
again; --only RUN,... (the project's selection) leaves out the other configs.
"""
import sys
from pathlib import Path
from statistics import mean, stdev
from typing import Dict, List

import spacy
import srsly
import typer

sys.path.insert(0, str(Path(__file__).parent))
from benchmark import parse_seeds  # noqa: E402  (scripts/ is not a package)

from spacy_imbalance.calibration.thresholds import dev_matcher, score_thresholds, search_thresholds  # noqa: E402
from spacy_imbalance.corpus.docs_io import load_docs  # noqa: E402
from spacy_imbalance.pipeline.tagging.thresholds import default_grid  # noqa: E402

# name -> search settings (None: the argmax rule, no search)
VARIANTS = {
    "argmax": None,
    "per-label": {"shared": False, "min_gain": 0.0},
    "shared": {"shared": True, "min_gain": 0.999},
    "shared, then per-label +0.5 (default)": {"shared": True, "min_gain": 0.005},
    "per-label +0.5": {"shared": False, "min_gain": 0.005},
}


def run_variants(model: Path, dev, test, component: str) -> Dict[str, Dict[str, float]]:
    nlp = spacy.load(model)
    grid = default_grid(0.05)
    on_dev = dev_matcher(nlp, component, dev, floor=min(grid))
    on_test = dev_matcher(nlp, component, test, floor=min(grid))
    scores = {}
    for name, settings in VARIANTS.items():
        thresholds = {} if settings is None else search_thresholds(on_dev, {}, grid, **settings).best
        scores[name] = {"dev": score_thresholds(on_dev, thresholds)[0], "test": score_thresholds(on_test, thresholds)[0]}
    return scores


def main(
    corpus: str = typer.Option(..., "--corpus"),
    configs: List[str] = typer.Option(..., "--config"),
    seed_values: List[str] = typer.Option(["0,1,2"], "--seed"),
    component: str = typer.Option("sampled_spancat", "--component"),
    name: str = typer.Option("calibration_variants", "--name"),
    root: Path = typer.Option(Path("."), "--root"),
    only: str = typer.Option("", "--only", help="Comma-separated configs to do (as in metrics/<corpus>/); empty: all"),
) -> None:
    seeds = parse_seeds(seed_values)
    names = {n.strip() for n in only.split(",") if n.strip()}
    configs = [config for config in configs if not names or config in names]
    data = root / "corpus" / corpus
    dev, test = load_docs(data / "dev.spacy"), load_docs(data / "test.spacy")
    out = root / "metrics" / corpus / f"{name}.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    results = srsly.read_json(out) if out.exists() else {}
    for config in configs:
        for seed in seeds:
            run = f"{config}-s{seed}"
            if run not in results:
                model = root / "training" / corpus / run / "model-best"
                if not model.is_dir():
                    raise SystemExit(f"No model at {model}: train {config} seed {seed} first (the headline workflow)")
                results[run] = run_variants(model, dev, test, component)
                srsly.write_json(out, results)
            print(run, {k: round(100 * v["test"], 1) for k, v in results[run].items()}, flush=True)
    lines = [
        f"Test macro-F1 (dev in brackets), mean over seeds {', '.join(map(str, seeds))}, and the mean test change against argmax:",
        "",
        "| system | " + " | ".join(VARIANTS) + " |",
        "| --- | " + " | ".join("--:" for _ in VARIANTS) + " |",
    ]
    for config in configs:
        runs = [results[f"{config}-s{seed}"] for seed in seeds]
        cells = []
        for variant in VARIANTS:
            test_f = [100 * r[variant]["test"] for r in runs]
            dev_f = [100 * r[variant]["dev"] for r in runs]
            delta = [t - 100 * r["argmax"]["test"] for t, r in zip(test_f, runs)]
            spread = f" ± {stdev(test_f):.1f}" if len(test_f) > 1 else ""
            change = "" if variant == "argmax" else f", {mean(delta):+.1f}"
            cells.append(f"{mean(test_f):.1f}{spread} ({mean(dev_f):.1f}){change}")
        lines.append(f"| {config} | " + " | ".join(cells) + " |")
    if not configs:
        lines = [f"No run selected (--only {only})."]
    (root / "metrics" / corpus / f"{name}.md").write_text("\n".join(lines) + "\n", encoding="utf8")
    print("\n".join(lines))


if __name__ == "__main__":
    typer.run(main)
