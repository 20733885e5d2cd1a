"""The threshold search of `spacy-imbalance calibrate`, chosen on dev: each
finished sampled_spancat run's macro-F1 under the argmax rule and four
searches (per-label alone, one shared threshold, shared then per-label with a
0.5-point margin (the default), per-label with the margin), cross-fitted on
the two halves of dev (bench/calibration_variants.py), and on test. The
search is chosen by the cross-fitted dev scores alone; the table says which
it is and which the test would have picked.

    python scripts/calibration_variants.py --corpus wnut17 --config vectors/sampled_spancat_uniform --seed 0,1,2

Each run's result is kept in metrics/<corpus>/<name>.json and not computed
again; --only RUN,... (the project's selection) leaves out the other configs.
"""
from pathlib import Path
from typing import List

import srsly
import typer

from bench.calibration_variants import run_variants, variants_table
from spacy_imbalance.benchmark.options import only_names, parse_seeds
from spacy_imbalance.corpus.docs_io import load_docs


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
    names = only_names(only)
    configs = [config for config in configs if not names or config in names]
    data = root / "corpus" / corpus
    dev, test = load_docs(data / "dev.spacy"), load_docs(data / "test.spacy")
    out = root / "metrics" / corpus / f"{name}.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    results = srsly.read_json(out) if out.exists() else {}
    for config in configs:
        for seed in seeds:
            run = f"{config}-s{seed}"
            # a run scored before the cross-fitted dev scores existed is scored again
            if run not in results or any("dev_cross" not in scores for scores in results[run].values()):
                model = root / "training" / corpus / run / "model-best"
                if not model.is_dir():
                    raise SystemExit(f"No model at {model}: train {config} seed {seed} first (the headline workflow)")
                results[run] = run_variants(model, dev, test, component)
                srsly.write_json(out, results)
            print(run, {k: round(100 * v["test"], 1) for k, v in results[run].items()}, flush=True)
    lines = variants_table(results, configs, seeds)
    if not configs:
        lines = [f"No run selected (--only {only})."]
    (root / "metrics" / corpus / f"{name}.md").write_text("\n".join(lines) + "\n", encoding="utf8")
    print("\n".join(lines))


if __name__ == "__main__":
    typer.run(main)
