"""Does `spacy-imbalance advise` pick what the full benchmark finds best?

For each corpus and masking probability p: the training set masked with p
(seed 0; p = 0 leaves it whole), `advise` on it and the complete dev set
within --budget minutes, then its recommendation set against the full
benchmark of the same setting (the masking study's runs, <method>-m<NN>-s<seed>
in metrics/<corpus>/, test macro-F1 over the seeds): the recommendation passes
when it is the benchmark's best method or the paired bootstrap interval of
their difference on test includes 0.

Writes metrics/<corpus>/advise_m<NN>.json per setting and
metrics/advise_validation.md over all settings. Resumable: a finished advise
run is read back (advise itself resumes its trials).

    python scripts/advise_validation.py --corpus wnut16 --p 0,0.5 --budget 20 --workers 2
"""
from pathlib import Path
from typing import List, Optional

import srsly
import typer

from bench.advise import tag, validate, write_summary
from spacy_imbalance.benchmark.options import only_names, parse_list

ROOT = Path(__file__).resolve().parent.parent


def main(
    corpora: List[str] = typer.Option(["wnut16", "wnut17"], "--corpus"),
    p_values: str = typer.Option("0,0.5", "--p", help="Masking probabilities, comma-separated"),
    budget: float = typer.Option(20.0, "--budget", help="advise's budget in minutes"),
    workers: int = typer.Option(2, "--workers", help="advise's workers (Ray)"),
    seed_values: str = typer.Option("0,1,2", "--seed", help="The full benchmark's seeds"),
    max_steps: Optional[int] = typer.Option(None, "--max-steps", help="advise's step limit per trial (smoke runs)"),
    work_dir: Path = typer.Option(Path("training/advise_validation"), "--work-dir"),
    only: str = typer.Option("", "--only", help="Comma-separated settings to run (advise/wnut16-m50, as the work folders); empty: all"),
    summary: bool = typer.Option(False, "--summary", help="Only rewrite metrics/advise_validation.md"),
) -> None:
    names = only_names(only)
    if not summary:
        seeds = parse_list(seed_values, int, "--seed")
        for corpus in corpora:
            for p in parse_list(p_values, float, "--p"):
                if names and f"advise/{corpus}-{tag(p)}" not in names:
                    continue
                print(f"{corpus}, p = {p:g}", flush=True)
                result = validate(ROOT, corpus, p, budget, workers, seeds, max_steps, ROOT / work_dir)
                out = ROOT / "metrics" / corpus / f"advise_{tag(p)}.json"
                srsly.write_json(out, result, indent=2)
                print(f"  advise: {result['recommended']}; best: {result['best']}; within the interval: {result['within_interval']}", flush=True)
    print(write_summary(ROOT))


if __name__ == "__main__":
    typer.run(main)
