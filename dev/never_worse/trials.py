"""One "never worse" trial: a config with its settings trained on WNUT-2017
train (complete, or with each entity removed with p = 0.5), seed 0, model-best
chosen and scored on WNUT-2017 dev. For a ``sampled_spancat`` the best
checkpoint is scored again at every share of the prior correction
(``CORRECTIONS``), with its calibration (ECE); a span system
(``spancat_singlelabel``) is also scored on the entities a greedy
non-overlapping decoding of its spans gives, the target ours is scored on.
The test set plays no part."""
import json
from pathlib import Path
from typing import Any, Dict, List, Optional

import srsly

# what prediction undoes of the sampling's odds inflation (uniform_negatives.v2's `correction`)
CORRECTIONS = (0.0, 0.25, 0.5, 0.75, 1.0)
# each entity of train removed with p = 0.5 (seeded), dev complete
MASKED = {"corpora.train.@readers": "spacy-imbalance.MaskedCorpus.v1", "corpora.train.p": 0.5, "corpora.train.seed": 0}
# the budgets of the headlines: frozen features as headline-features, fine-tuned as the recipe
BUDGETS = {
    "features": {"max_steps": 4000, "set": {"training.patience": 1000}},
    "transformer": {"max_steps": 1000, "set": {"training.eval_frequency": 100, "training.patience": 0}},
    # configs/*.cfg, the CNN: the masking studies' budget (project.yml vars.max_steps)
    "cnn": {"max_steps": 2000, "set": {}},
}


def budget_of(spec: Dict[str, Any]) -> Dict[str, Any]:
    """The budget of a trial's encoder: the folder of its config (a config of
    configs/ itself is the CNN's)."""
    folder, _, _ = spec["config"].rpartition("/")
    if (folder or "cnn") not in BUDGETS:
        raise ValueError(f"config {spec['config']}: no trial budget for the folder {folder!r}; one of {', '.join(BUDGETS)}")
    return BUDGETS[folder or "cnn"]


def trial_overrides(spec: Dict[str, Any]) -> Dict[str, Any]:
    overrides = {**budget_of(spec)["set"], **(spec.get("set") or {})}
    if spec.get("masked"):
        overrides.update(MASKED)
    return overrides


def run(root: Path, name: str, spec: Dict[str, Any], corpus: Path, folder: Path) -> Optional[Dict[str, Any]]:
    from spacy_imbalance.init_config import config_fingerprint
    from spacy_imbalance.sweeps import Trial, run_trial
    from spacy_imbalance.sweeps.provenance import command_record

    config = root / "configs" / f"{spec['config']}.cfg"
    sha = config_fingerprint(config.read_text(encoding="utf8"))
    overrides = trial_overrides(spec)
    max_steps = int(budget_of(spec)["max_steps"])
    metrics = folder / f"{name}.json"
    output = root / "training" / "never_worse" / name
    if metrics.exists():
        done = srsly.read_json(metrics)
        if done.get("config_sha256") == sha and done.get("overrides") == overrides:
            if "decoded" in done:
                print(f"{name}: done before, skipped ({metrics})", flush=True)
                return done
            if (output / "model-best").is_dir():
                # trained and scored, stopped while rescoring (minutes fine-tuned on a CPU): rescore only
                print(f"{name}: trained before, scoring its model-best at every share", flush=True)
                done["decoded"] = rescore(output / "model-best", corpus / "dev.spacy")
                srsly.write_json(metrics, done, indent=0)
                return done
    trial = Trial(
        name=f"never-worse trial {name}", config=str(config), output=str(output), metrics=str(metrics),
        train=str(corpus / "train.spacy"), dev=str(corpus / "dev.spacy"), test=str(corpus / "dev.spacy"),
        # spacy train reads each value as JSON: true, null, 0.5 (a bare string stays a string)
        seed=0, max_steps=max_steps, overrides={k: v if isinstance(v, str) else json.dumps(v) for k, v in overrides.items()},
    )
    print(f"{name}: training {spec['config']} ({'p = 0.5' if spec.get('masked') else 'complete'}) ...", flush=True)
    report = run_trial(trial)
    report.update({"trial": name, "config": spec["config"], "config_sha256": sha, "overrides": overrides,
                   "masked": bool(spec.get("masked")), "seed": 0, "scored_on": "dev",
                   "provenance": {**report.get("provenance", {}), "command": command_record(trial.overrides)}})
    # the trained trial kept before its rescoring, so a stop there costs the rescoring only
    srsly.write_json(metrics, report, indent=0)
    report["decoded"] = rescore(output / "model-best", corpus / "dev.spacy")
    srsly.write_json(metrics, report, indent=0)
    print(f"{name}: dev macro-F1 {100 * report['macro']['f']:.1f} ({report['train_seconds'] / 60:.0f} min)", flush=True)
    return report


def from_run(root: Path, name: str, spec: Dict[str, Any], record_path: Path, corpus: Path, folder: Path) -> Dict[str, Any]:
    """The trial ``name`` from a run that trained exactly its config (the
    never-worse grid's seed 0: the same config, seed, budget, masking and
    settings; an hour a fine-tuned run on a CPU): its model-best scored on
    dev as ``run`` scores a trial's, the run's own training record kept.
    A run that differs from the trial in any of these is refused, naming it."""
    from spacy.util import load_config

    from spacy_imbalance.evaluation.evaluate import evaluate_model
    from spacy_imbalance.init_config import config_fingerprint

    run_record = srsly.read_json(record_path)
    model = Path(run_record["model"])
    if not (model / "config.cfg").is_file():
        raise ValueError(f"{record_path}: its model {model} is no trained pipeline here (a relative path is read from the current folder)")
    budget = budget_of(spec)
    trained = load_config(model / "config.cfg")
    # the settings the trial sets, as the trained pipeline resolved them (a sampler default the run left unset included)
    differing = [
        f"{key} = {trained_value!r} (the trial: {value!r})" for key, value in (spec.get("set") or {}).items()
        if (trained_value := _dotted(trained, key)) != value
    ]
    masked = _dotted(trained, "corpora.train.@readers") == MASKED["corpora.train.@readers"]
    if run_record["config"] != spec["config"]:
        differing.append(f"config {run_record['config']} (the trial: {spec['config']})")
    if run_record["seed"] != 0 or run_record["max_steps"] != budget["max_steps"] or masked != bool(spec.get("masked")):
        differing.append(f"seed {run_record['seed']}, {run_record['max_steps']} steps, masked {masked}")
    if masked:
        # the masking as the trained pipeline resolved it: which entities were removed is
        # the masking seed's, not the training seed's (a run's "{seed}" is its own)
        differing += [
            f"{key} = {trained_value!r} (the trial: {value!r})" for key, value in MASKED.items()
            if (trained_value := _dotted(trained, key)) != value
        ]
    if differing:
        raise ValueError(f"{record_path} did not train trial {name}: {'; '.join(differing)}")
    config = root / "configs" / f"{spec['config']}.cfg"
    report = evaluate_model(str(model), corpus / "dev.spacy", name=f"never-worse trial {name}")
    report.update({
        "trial": name, "config": spec["config"], "config_sha256": config_fingerprint(config.read_text(encoding="utf8")),
        "overrides": trial_overrides(spec), "masked": bool(spec.get("masked")), "seed": 0, "scored_on": "dev",
        "train_seconds": run_record["train_seconds"], "dev_curve": run_record.get("dev_curve"),
        "provenance": run_record.get("provenance"), "trained_by": {"record": record_path.name, "overrides": run_record.get("overrides")},
    })
    report["decoded"] = rescore(model, corpus / "dev.spacy")
    srsly.write_json(folder / f"{name}.json", report, indent=0)
    print(f"{name}: dev macro-F1 {100 * report['macro']['f']:.1f} (from {record_path.name})", flush=True)
    return report


def _dotted(config: Any, key: str) -> Any:
    """A value of a config by its dotted key (as --set names it)."""
    for part in key.split("."):
        config = config[part]
    return config


def rescore(model: Path, dev: Path) -> List[Dict[str, Any]]:
    """model-best on dev again: a sampled_spancat at every correction share,
    a span system on its spans decoded to non-overlapping entities."""
    import spacy
    from spacy.tokens import DocBin

    from spacy_imbalance.calibration.reliability import expected_calibration_error, span_reliability
    from spacy_imbalance.pipeline.sampled_spancat import SampledSpanCategorizer
    from spacy_imbalance.scorers.counts import ents_counts
    from spacy_imbalance.scorers.evaluation import predict_examples, score_report

    nlp = spacy.load(model)
    docs = list(DocBin().from_disk(dev).get_docs(nlp.vocab))
    ours = [name for name, pipe in nlp.pipeline if isinstance(pipe, SampledSpanCategorizer)]
    rows = []
    if ours:
        pipe = nlp.get_pipe(ours[0])
        for share in CORRECTIONS:
            pipe.negatives.correction = share
            examples, _ = predict_examples(nlp, docs)
            label = span_reliability(nlp, ours[0], docs)["label"]
            rows.append({"correction": share, **_summary(score_report(ents_counts(examples), n_resamples=10)),
                         "ece": expected_calibration_error(label.confidence, label.correct)})
        return rows
    if not _spans_key(nlp):
        return rows
    examples = _decode_spans(nlp, docs)
    rows.append({"decoding": "greedy non-overlapping entities", **_summary(score_report(ents_counts(examples), n_resamples=10))})
    return rows


def _spans_key(nlp: Any) -> Optional[str]:
    """The spans key a span system (spancat, spancat_singlelabel) writes to; None for others."""
    return next((pipe.cfg.get("spans_key") for _, pipe in nlp.pipeline if getattr(pipe, "cfg", {}).get("spans_key")), None)


def _decode_spans(nlp: Any, docs: List[Any]) -> List[Any]:
    """A span system's predictions on ``docs``, its spans decoded to the
    entities a greedy non-overlapping decoding keeps (ours' decoding)."""
    import numpy

    from spacy_imbalance.scorers.evaluation import predict_examples
    from spacy_imbalance.spans.decoding import greedy_non_overlapping

    spans_key = _spans_key(nlp)
    examples, _ = predict_examples(nlp, docs)
    for eg in examples:
        group = eg.predicted.spans.get(spans_key, [])
        scores = group.attrs.get("scores") if len(group) else None
        if scores is None:
            eg.predicted.ents = []
            continue
        starts = numpy.asarray([s.start for s in group]); ends = numpy.asarray([s.end for s in group])
        kept = greedy_non_overlapping(starts, ends, numpy.asarray(scores, dtype="float32").reshape(len(group), -1).max(axis=1))
        eg.predicted.ents = [group[i] for i in kept]
    return examples


def decoded_examples(model: Path, dev: Path) -> List[Any]:
    """``model`` on ``dev`` at the decoding its trial is scored on first:
    a sampled_spancat without correction, a span system's spans decoded to
    non-overlapping entities, any other pipeline's entities."""
    import spacy
    from spacy.tokens import DocBin

    from spacy_imbalance.pipeline.sampled_spancat import SampledSpanCategorizer
    from spacy_imbalance.scorers.evaluation import predict_examples

    nlp = spacy.load(model)
    docs = list(DocBin().from_disk(dev).get_docs(nlp.vocab))
    for _, pipe in nlp.pipeline:
        if isinstance(pipe, SampledSpanCategorizer):
            pipe.negatives.correction = 0.0
    if _spans_key(nlp):
        return _decode_spans(nlp, docs)
    return predict_examples(nlp, docs)[0]


def _summary(report: Dict[str, Any]) -> Dict[str, Any]:
    tp = sum(t["tp"] for t in report["per_type"].values())
    fp = sum(t["fp"] for t in report["per_type"].values())
    return {"macro_f": report["macro"]["f"], "micro_f": report["micro"]["f"], "macro_p": report["macro"]["p"],
            "macro_r": report["macro"]["r"], "predicted": tp + fp, "tp": tp, "fp": fp}
