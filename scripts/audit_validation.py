"""The audit validated where the truth is known (issue 15, item 4): entities
removed from a complete corpus at random, then found again.

For each corpus, masking probability p and seed:

1. `spacy-imbalance mask` drops each training entity with probability p
   (seed s) and keeps it in doc.spans["masked"], the truth;
2. `spacy-imbalance audit` runs on the masked corpus (k folds, dev set for the
   calibration; --encoder vectors: static vectors, features: frozen
   all-MiniLM-L6-v2 features, `audit --features`);
3. its suspects (calibrated probability >= --threshold) are scored against
   the removed entities: precision and recall with exact boundaries, exact
   boundaries and label, and token overlap; precision@k (= recall@k with exact
   boundaries) at k = the number removed, over the ranking of
   scored_spans.tsv; the miss-rate estimate against the realised rate
   removed / (removed + kept), and whether its interval holds it, in total and
   per label;
4. the peer baseline, cleanlab: out-of-fold token probabilities of a token_ner
   trained on the audit's own folds (OUT/folds/plan.json), cleanlab's
   find_label_issues on the masked BIO tags; flagged tokens tagged O, grouped
   into contiguous runs and ranked by their lowest label-quality score, scored
   the same way;
5. restoring: the suspects written into the masked corpus as entities;
   <encoder>/sampled_spancat_uniform trained on the masked and on the restored
   corpus (same seed and budget as the p = 0 run,
   metrics/<corpus>/<encoder>/sampled_spancat_uniform-s<seed>.json, which is
   trained in the work folder when it is missing) and the share of the lost
   test macro-F1 that restoring recovers, with a paired bootstrap restored
   against masked;
6. one small JSON per setting, metrics/<corpus>/audit/p30-s0.json (features:
   metrics/<corpus>/audit-features/, summarised in audit_validation_features.md).

Every model of a setting uses the same encoder: the audit's folds, the
token_ner of the cleanlab baseline and the restore runs.

Every expensive step is skipped when its output exists, so an interrupted
validation resumes. Each model carries the static vectors (about 50 MB): a
finished setting's model-last folders are deleted, its model-best kept
(about 0.6 GB per setting with 5 folds). `--summary` aggregates metrics/<corpus>/audit/*.json into
metrics/<corpus>/audit_validation.md (mean ± std over seeds per p) and
audit_validation.png.

    python scripts/audit_validation.py --corpus wnut16 --p 0.1,0.3,0.5 --seed 0,1,2 \\
        --vectors assets/en_core_web_md
    python scripts/audit_validation.py --corpus wnut16 --summary

--limit N trains on a seeded N-sentence sample of the training corpus (smoke
runs; the p = 0 run is then trained on the same sample). Run it from the
project root: the corpora, configs and vectors are found from there.
"""
import json
from pathlib import Path
from typing import Optional

import typer

from bench.audit.setting import ENCODERS, Setting, metrics_folder, selected_runs
from bench.audit.steps import prune
from bench.audit.summary import write_summary
from bench.audit.summary import write_review_summary
from bench.audit.validate import print_result, review, validate
from spacy_imbalance.benchmark.options import only_names, parse_list

# spaCy and the package are imported where they are used: --summary needs neither


def main(
    corpus: str = typer.Option("wnut16", "--corpus", help="A corpus folder of corpus/ (train, dev and test .spacy)"),
    p_values: str = typer.Option("0.3", "--p", help="Masking probabilities, comma-separated (0.1,0.3,0.5)"),
    seed_values: str = typer.Option("0", "--seed", help="Seeds, comma-separated (0,1,2): of the masking, the folds and the training"),
    folds: int = typer.Option(5, "--folds", help="Cross-fitting folds of the audit (and of the cleanlab token model)"),
    steps: int = typer.Option(2000, "--steps", help="Training steps of each fold model"),
    threshold: float = typer.Option(0.5, "--threshold", help="Calibrated probability from which a span is a suspect (and restored)"),
    vectors: str = typer.Option("assets/en_core_web_md", "--vectors", help="Static vectors of every model (--encoder vectors)"),
    encoder: str = typer.Option("vectors", "--encoder", help="The encoder of every model: vectors (static vectors) or features (frozen all-MiniLM-L6-v2)"),
    restore_steps: int = typer.Option(4000, "--restore-steps", help="Most steps of the masked, restored and p = 0 runs (the headline budget)"),
    restore_patience: int = typer.Option(1000, "--restore-patience", help="Their early-stopping patience (the headline's)"),
    eval_frequency: Optional[int] = typer.Option(None, "--eval-frequency", help="Steps between evaluations of every training (default: the configs')"),
    limit: Optional[int] = typer.Option(None, "--limit", help="Train on a seeded sample of this many sentences (smoke runs)"),
    resamples: int = typer.Option(500, "--resamples", help="Bootstrap resamples of the audit's miss-rate interval"),
    only: str = typer.Option("", "--only", help="Comma-separated run names to do (audit/p30 for every seed, audit/p30-s0 for one, as in metrics/<corpus>/); empty: all"),
    gpu_id: int = typer.Option(-1, "--gpu-id"),
    work_dir: Path = typer.Option(Path("training/audit"), "--work-dir", help="Masked corpora, audits, fold models, runs"),
    metrics_dir: Path = typer.Option(Path("metrics"), "--metrics-dir", help="Writes <corpus>/audit/<p>-<seed>.json and the summary here"),
    summary: bool = typer.Option(False, "--summary", help="Only aggregate metrics/<corpus>/audit/*.json into audit_validation.md and .png"),
    simulate_review: bool = typer.Option(False, "--review", help="The review loop with a reviewer who knows the truth (k = the number removed): accepts only against accepts and rejections, written to <audit folder>/review-p<p>-s<seed>.json and audit_review.md"),
) -> None:
    if encoder not in ENCODERS:
        raise typer.BadParameter(f"one of {', '.join(ENCODERS)}, got {encoder!r}", param_hint="--encoder")
    if summary:
        write_summary(corpus, metrics_dir, encoder)
        write_review_summary(corpus, metrics_dir, encoder)
        return
    runs = selected_runs(parse_list(p_values, float, "--p"), parse_list(seed_values, int, "--seed"), only_names(only), encoder)
    ps = sorted({p for p, _ in runs}, key=[p for p, _ in runs].index)
    if not ps:
        print(f"--only {only}: no audit validation run is selected", flush=True)
        return
    for p in ps:
        if not 0.0 < p < 1.0:
            raise typer.BadParameter(f"a masking probability in (0, 1), got {p}", param_hint="--p")
    for p in ps:
        for seed in [seed for run_p, seed in runs if run_p == p]:
            setting = Setting(corpus, p, seed, folds, steps, threshold, vectors, restore_steps, restore_patience,
                              eval_frequency, limit, resamples, gpu_id, work_dir, encoder)
            print(f"{corpus} p = {p:g}, seed {seed} ({setting.folder})", flush=True)
            if simulate_review:
                report = review(setting)
                out = metrics_folder(metrics_dir, corpus, encoder) / f"review-{setting.name}.json"
                out.parent.mkdir(parents=True, exist_ok=True)
                out.write_text(json.dumps(report) + "\n", encoding="utf8")
                print(f"  reviewed: {report['macro_f']} -> {out}", flush=True)
                continue
            report = validate(setting)
            out = metrics_folder(metrics_dir, corpus, encoder) / f"{setting.name}.json"
            out.parent.mkdir(parents=True, exist_ok=True)
            out.write_text(json.dumps(report) + "\n", encoding="utf8")
            prune(setting.folder)
            print_result(report)
            print(f"  -> {out}", flush=True)


if __name__ == "__main__":
    typer.run(main)
