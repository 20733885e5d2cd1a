"""Named facts for the docs: numbers derived from metrics/ (a difference, a
range across files, a ratio) that no single metrics file holds.

Each fact is a small function over the files it names; metrics/facts.json
keeps its value, the files it came from and how it is computed, and the docs
read it as ``{{ facts : NAME | FORMAT }}`` (scripts/write_docs.py, which also
rewrites metrics/facts.json). Values keep the units of their files (scores
as fractions unless the file stores points) and their full precision:
rounding is the docs' job, done once where a value is printed.

    python -m bench.facts    # write metrics/facts.json alone (from the project root)
"""
import json
from pathlib import Path
from statistics import mean, median
from typing import Any, Callable, Dict, List, Tuple

FACTS: List[Tuple[str, Tuple[str, ...], Callable[..., Any]]] = []


def fact(name: str, *paths: str):
    """Register fn(*loaded files) as the fact NAME, computed from PATHS."""

    def register(fn: Callable[..., Any]) -> Callable[..., Any]:
        FACTS.append((name, paths, fn))
        return fn

    return register


def compute(root: Path, allow_missing: bool = False) -> Dict[str, Dict[str, Any]]:
    """Every fact from root's metrics/. With ``allow_missing``, a fact whose
    files are missing or lack what it reads is left out instead of failing
    (a workflow run on a subset of its studies)."""
    out: Dict[str, Dict[str, Any]] = {}
    for name, paths, fn in FACTS:
        missing = [path for path in paths if not (root / path).is_file()]
        if missing:
            if allow_missing:
                continue
            raise FileNotFoundError(f"fact {name!r} reads {missing[0]}, which does not exist")
        loaded = [json.loads((root / path).read_text(encoding="utf8")) for path in paths]
        try:
            value = fn(*loaded)
        except (KeyError, ValueError, TypeError, ZeroDivisionError):
            if allow_missing:
                continue
            raise
        how = " ".join((fn.__doc__ or "").split())
        # stored at full precision: a value is rounded once, where the docs print it
        out[name] = {"value": value, "from": list(paths), "how": how}
    return out



# --- helpers ----------------------------------------------------------------


def flip(ci: Dict[str, float]) -> Dict[str, float]:
    """A paired difference read the other way round (B over A from A over B)."""
    return {"delta": -ci["delta"], "low": -ci["high"], "high": -ci["low"]}


def span(values: Dict[str, float]) -> Dict[str, Any]:
    """The smallest and largest of named values, with their names."""
    low, high = min(values, key=values.get), max(values, key=values.get)
    return {"min": values[low], "max": values[high], "min_of": low, "max_of": high}


def seeds(pattern: str, n: int = 3) -> Tuple[str, ...]:
    return tuple(pattern.format(seed=seed) for seed in range(n))


# --- pretrained encoders, WNUT-2017 (docs/benchmarks/pretrained.md) --------

HV17, HF17 = "metrics/wnut17/headline_vectors.json", "metrics/wnut17/headline_features.json"


@fact("features_gain", HV17, HF17)
def features_gain(vectors, features):
    """Macro-F1 of each system with frozen features minus with vectors (means over seeds, fractions): the smallest and largest gain."""
    gains = {name: mean(run["macro_f"]) - mean(vectors["systems"][name]["macro_f"]) for name, run in features["systems"].items() if name in vectors["systems"]}
    return span(gains)


@fact("features_time_ratio", HV17, HF17)
def features_time_ratio(vectors, features):
    """Training time of the whole frozen-features headline over the vectors headline (sum over systems of the mean seconds per run)."""
    total = lambda run: sum(mean(system["train_seconds"]) for system in run["systems"].values())  # noqa: E731
    return total(features) / total(vectors)



HV16, MV16, MVP16 = "metrics/wnut16/headline_vectors.json", "metrics/wnut16/masking_vectors_m50.json", "metrics/wnut16/masking_vectors-paired.json"
BUILT_IN = ("ner", "spancat", "spancat_singlelabel")
VECTOR_SAMPLERS = ("sampled_spancat_uniform", "sampled_spancat_weighted_v2", "sampled_spancat_top_v2", "sampled_spancat_all")


@fact("pretrained", HV17, HV16, MV16, MVP16, *(f"metrics/wnut16/vectors/{s}-m50-s{seed}.json" for s in VECTOR_SAMPLERS for seed in range(3)))
def pretrained(hv17, hv16, mv16, mvp16, *runs):
    """The pretrained-encoder headline with vectors: uniform sampling's lead over ner in mean macro-F1 on WNUT-2017 (fractions); the range of the mean step of the best checkpoint over every WNUT-2017 system and over our WNUT-2016 systems (not spaCy's); on WNUT-2016 with half the entities removed, the range of the samplers' Δ macro-F1 over ner, each system's cost of masking (p = 0 mean minus p = 0.5 mean, points), and the samplers' missampling rates (mean over seeds) with Top-Neg's over uniform's."""
    best_step = lambda system: mean(steps[0] for steps in system["steps"])  # noqa: E731
    cost = {name: 100 * mean(hv16["systems"][name]["macro_f"]) - mv16[f"vectors/{name}-m50"]["macro_f"]["mean"] for name in ("ner", "spancat_singlelabel") + VECTOR_SAMPLERS}
    rates = {s: mean(run["missampling_rate"] for run in runs[3 * i : 3 * i + 3]) for i, s in enumerate(VECTOR_SAMPLERS)}
    return {
        "uniform_minus_ner_wnut17": mean(hv17["systems"]["sampled_spancat_uniform"]["macro_f"]) - mean(hv17["systems"]["ner"]["macro_f"]),
        "best_step_wnut17": span({name: best_step(system) for name, system in hv17["systems"].items()}),
        "best_step_wnut16_ours": span({name: best_step(system) for name, system in hv16["systems"].items() if name not in BUILT_IN}),
        "masked_samplers_over_ner": span({s: mvp16["vectors/ner"][f"vectors/{s}-m50"]["macro_f"]["delta"] for s in VECTOR_SAMPLERS}),
        "masking_cost": cost,
        "missampling": rates,
        "top_over_uniform_missampling": rates["sampled_spancat_top_v2"] / rates["sampled_spancat_uniform"],
    }


@fact("feature_cache", "metrics/wnut17/feature_cache.json", "metrics/wnut17/feature_cache_1thread.json")
def feature_cache(two, one):
    """The frozen-features cache on WNUT-2017, with 2 torch threads and with 1: the transformer's share of the first epoch (its seconds minus the mean of the later epochs), the later epochs' mean seconds, their speed-up, and a fine-tuning epoch over a cached one."""
    out = {}
    for name, run in (("two", two), ("one", one)):
        later = mean(run["epoch_seconds"][1:])
        out[name] = {"transformer_seconds": run["epoch_seconds"][0] - later, "later_epoch_seconds": later, "speedup": run["speedup_after_epoch_1"], "finetune_over_cached": run["finetune_over_cached_epoch"]}
    return out



@fact("equal_epochs_vectors", *(f"metrics/wnut16/vectors/{run}-s{seed}.json" for run in ("ner_sCRD-epochs", "ner") for seed in range(3)))
def equal_epochs_vectors(*runs):
    """ner on sCRD-resampled WNUT-2016 with vectors at equal epochs: the steps trained, the mean minutes per run against the headline ner's, and their ratio."""
    resampled, plain = runs[:3], runs[3:]
    minutes, ner_minutes = mean(r["train_seconds"] for r in resampled) / 60, mean(r["train_seconds"] for r in plain) / 60
    return {"train_steps": resampled[0]["train_steps"], "minutes": minutes, "ner_minutes": ner_minutes, "time_ratio": minutes / ner_minutes}



@fact(
    "existing_pipelines", "metrics/wnut17/existing_pipelines-paired.json",
    *seeds("metrics/wnut17/base/sampled_spancat_listen-s{seed}.json"), *seeds("metrics/wnut17/base/sampled_spancat_vectors-s{seed}.json"),
)
def existing_pipelines(paired, *runs):
    """sampled_spancat added to en_core_web_md on WNUT-2017, listening to its frozen tok2vec (listen) or with a CNN of its own on the base's vectors (vectors): the own encoder over listening, Δ macro-F1 (paired, seeds 0-2); per way, the minutes of training per run, the step where patience stopped it, and the minutes per 1,000 steps (each a list over seeds 0, 1, 2)."""
    ways = {"listen": runs[:3], "vectors": runs[3:]}
    per_way = {
        way: {
            "minutes": [r["train_seconds"] / 60 for r in rs],
            "stopped": [r["dev_curve"][-1][0] for r in rs],
            "minutes_per_1000_steps": [1000 * r["train_seconds"] / 60 / r["dev_curve"][-1][0] for r in rs],
        }
        for way, rs in ways.items()
    }
    # the file pairs listening against the own encoder
    return {"own_over_listen": flip(paired["systems"]["base/sampled_spancat_listen"]["macro_f"]), **per_way}


# the fine-tuned headline's systems with a seed-0 run on the CPU at the full recipe (issue 30)
FINE_TUNED = ("ner", "spancat_singlelabel", "sampled_spancat_uniform", "sampled_spancat_weighted_v2", "token_ner_wce2")


@fact(
    "finetuned_vs_features",
    *(f"metrics/wnut17/{encoder}/{system}-s{seed}.json" for system in FINE_TUNED for encoder in ("features", "transformer") for seed in range(3)),
)
def finetuned_vs_features(*runs):
    """WNUT-2017, seeds 0-2: all-MiniLM-L6-v2 fine-tuned with the full 1,000-step recipe against the frozen-features run of the same system, model and seed (headline-features): per system, fine-tuned over features, Δ macro-F1 and Δ micro-F1 (paired bootstrap over the seeds, fractions), the features' mean training minutes (CPU, one thread) and the fine-tuned runs' by device ("cpu", "gpu": seed 0 trained on the CPU, seeds 1-2 on a GPU)."""
    from spacy_imbalance.benchmark.paired import paired_runs

    out = {}
    for i, system in enumerate(FINE_TUNED):
        features, tuned = runs[6 * i : 6 * i + 3], runs[6 * i + 3 : 6 * i + 6]
        diff = paired_runs(list(features), list(tuned))
        by_device: Dict[str, List[float]] = {}
        for run in tuned:
            by_device.setdefault(run["provenance"]["device"], []).append(run["train_seconds"] / 60)
        out[system] = {
            "macro_f": diff["macro_f"], "micro_f": diff["micro_f"],
            "minutes_features": mean(run["train_seconds"] for run in features) / 60,
            "minutes_fine_tuned": {device: mean(minutes) for device, minutes in by_device.items()},
        }
    return out


# the systems of every pretrained headline, in the order of their tables
HEADLINE_SYSTEMS = (
    "ner", "spancat_singlelabel", "spancat", "sampled_spancat_uniform", "sampled_spancat_weighted_v2", "sampled_spancat_top_v2",
    "sampled_spancat_all", "token_ner", "token_ner_wce2", "token_ner_mom_v2-l50", "two_task_auc_type_head-fitted", "two_task_bce-fitted", "ner_sCRD",
)
# MoM at the λ each corpus's dev chose (project.yml's headline-vectors, checked by tests/test_project.py)
HEADLINE_MOM = {"wnut17": "token_ner_mom_v2-l50", "wnut16": "token_ner_mom_v2-l90"}
HEADLINE_RUNS = {
    f"{corpus}-{encoder}": tuple(
        f"metrics/{corpus}/{encoder}/{HEADLINE_MOM[corpus] if system == 'token_ner_mom_v2-l50' else system}-s{seed}.json"
        for system in HEADLINE_SYSTEMS for seed in range(3)
    )
    for corpus, encoder in (("wnut17", "vectors"), ("wnut17", "features"), ("wnut16", "vectors"))
}


@fact("step_cap", *(path for paths in HEADLINE_RUNS.values() for path in paths))
def step_cap(*runs):
    """Per pretrained headline (WNUT-2017 vectors and features, WNUT-2016 vectors; 13 systems, seeds 0-2): how many runs trained up to their step cap (the last dev evaluation at max_steps) instead of stopping early, out of how many, the cap, the systems with a capped run (in table order) and per system the number of its capped runs."""
    out = {}
    for i, headline in enumerate(HEADLINE_RUNS):
        group = runs[len(HEADLINE_SYSTEMS) * 3 * i : len(HEADLINE_SYSTEMS) * 3 * (i + 1)]
        capped = [HEADLINE_SYSTEMS[j // 3] for j, run in enumerate(group) if run["dev_curve"][-1][0] >= run["max_steps"]]
        per_system = {system: capped.count(system) for system in HEADLINE_SYSTEMS if system in capped}
        out[headline] = {"capped": len(capped), "runs": len(group), "max_steps": max(run["max_steps"] for run in group),
                         "systems": list(per_system), "per_system": per_system}
    return out


WCE2_VS_NER = {c: (*seeds(f"metrics/{c}/ner-s{{seed}}.json"), *seeds(f"metrics/{c}/token_ner_wce2-s{{seed}}.json")) for c in ("wnut16", "wnut17", "wnut17-200")}


@fact("wce2_over_ner", *(path for paths in WCE2_VS_NER.values() for path in paths))
def wce2_over_ner(*runs):
    """The losses study (CNN): token_ner with WCE-2 over spaCy's ner, Δ macro-F1 and Δ micro-F1 (paired bootstrap, seeds 0-2 paired, fractions), on WNUT-2016, WNUT-2017 and its 200-sentence subset."""
    from spacy_imbalance.benchmark.paired import paired_runs

    out = {}
    for i, corpus in enumerate(WCE2_VS_NER):
        ner, wce2 = runs[6 * i : 6 * i + 3], runs[6 * i + 3 : 6 * i + 6]
        diff = paired_runs(list(ner), list(wce2))
        out[corpus] = {"macro_f": diff["macro_f"], "micro_f": diff["micro_f"]}
    return out


@fact("long_uniform_over_ner", "metrics/wnut16/headline_vectors_long-paired.json")
def long_uniform_over_ner(paired):
    """WNUT-2016, vectors: sampled_spancat (uniform) over spaCy ner trained for up to 8,000 steps, Δ macro-F1 (the file pairs ner-long against uniform)."""
    return flip(paired["vectors/sampled_spancat_uniform"]["vectors/ner-long"]["macro_f"])


@fact("best_micro_features", HF17)
def best_micro_features(features):
    """The highest mean micro-F1 of the frozen-features headline and its system."""
    micro = {name: mean(run["micro_f"]) for name, run in features["systems"].items()}
    return span(micro)


# --- baselines, CNN (docs/benchmarks/baselines.md) ------------------------

BASELINES = ("ner", "spancat", "spancat_1-8", "spancat_singlelabel")
BASELINE_RUNS = {(c, b): seeds(f"metrics/{c}/{b}-s{{seed}}.json") for c in ("wnut16", "wnut17") for b in BASELINES}


@fact("baselines", *(path for paths in BASELINE_RUNS.values() for path in paths), "metrics/wnut16/summary.json", "metrics/wnut17/summary.json")
def baselines(*files):
    """spaCy's built-ins on the CNN, per corpus and system: mean training seconds per run, the seed-0 run's 95 % interval of test macro-F1 (fractions), and the largest std of macro-F1 over seeds (points, as summary.json stores it)."""
    runs, summaries = files[:-2], files[-2:]
    out: Dict[str, Any] = {c: {"train_seconds": {}, "seed0_macro_ci": {}} for c in ("wnut16", "wnut17")}
    for i, (corpus, system) in enumerate(BASELINE_RUNS):
        group = runs[3 * i : 3 * i + 3]
        out[corpus]["train_seconds"][system] = mean(run["train_seconds"] for run in group)
        out[corpus]["seed0_macro_ci"][system] = group[0]["ci"]["macro_f"]
    for corpus, summary in zip(("wnut16", "wnut17"), summaries):
        out[corpus]["max_macro_std"] = max(system["macro_f"]["std"] for system in summary.values())
    return out


# --- resampling (docs/benchmarks/resampling.md) ---------------------------


@fact("resampling_size", "metrics/wnut16/resampling.json", "metrics/wnut17/resampling.json")
def resampling_size(wnut16, wnut17):
    """Size factors (training examples out / sentences in) of the sentence-level resampling methods (sC, sCR, sCRD, nsCRD) and of undersampling, over both corpora: the ranges."""
    methods = ("ner_sC", "ner_sCR", "ner_sCRD", "ner_nsCRD")
    resampled = {f"{c}-{m}": d[m]["size_factor"] for c, d in (("wnut16", wnut16), ("wnut17", wnut17)) for m in methods}
    under = {c: d["ner_undersampling"]["size_factor"] for c, d in (("wnut16", wnut16), ("wnut17", wnut17))}
    return {"resampled": span(resampled), "undersampling": span(under)}


# --- losses on three training sets (docs/benchmarks/losses.md) -------------

LOSSES = ("metrics/wnut16/losses-paired.json", "metrics/wnut17/losses-paired.json", "metrics/wnut17-200/losses-paired.json")


LOSS_TABLES = ("metrics/wnut16/losses.json", "metrics/wnut17/losses.json", "metrics/wnut17-200/losses.json")
CORPORA3 = ("wnut16", "wnut17", "wnut17-200")


@fact("losses", *LOSSES, *LOSS_TABLES, *seeds("metrics/wnut16/token_ner-s{seed}.json"), *seeds("metrics/wnut17/token_ner-s{seed}.json"))
def losses(*files):
    """token_ner's losses: the range of focal's Δ macro-F1 over cross entropy (fractions) over the three training sets; MoM over focal, mean macro-F1 of token_ner_mom_focal minus token_ner_focal (points, as the tables store them), per set; token_ner's mean training seconds per run on the full corpora."""
    paired, tables, runs = files[:3], files[3:6], files[6:]
    return {
        "focal": span({c: p["systems"]["token_ner_focal"]["macro_f"]["delta"] for c, p in zip(CORPORA3, paired)}),
        "mom_over_focal": {c: t["token_ner_mom_focal"]["macro_f"]["mean"] - t["token_ner_focal"]["macro_f"]["mean"] for c, t in zip(CORPORA3, tables)},
        "train_seconds": {"wnut16": mean(r["train_seconds"] for r in runs[:3]), "wnut17": mean(r["train_seconds"] for r in runs[3:])},
    }


@fact("mom_v1_vs_ce", *LOSSES)
def mom_v1_vs_ce(*paired):
    """MoMLoss.v1 (λ = 0.2) over cross entropy in token_ner, Δ macro-F1 on WNUT-2016, WNUT-2017 and its 200-sentence subset: the range."""
    return span({name: p["systems"]["token_ner_mom"]["macro_f"]["delta"] for name, p in zip(("wnut16", "wnut17", "wnut17-200"), paired)})


# --- two_task_ner (docs/benchmarks/two_task.md) ----------------------------

TWO_TASK_TUNED = {(s, seed): f"metrics/wnut17/{s}-tuned-s{seed}.json" for s in ("two_task_bce", "two_task_auc", "two_task_auc_type_head") for seed in range(3)}


@fact("two_task_tuning", "metrics/wnut17/two_task_tuned.json", *TWO_TASK_TUNED.values())
def two_task_tuning(table, *runs):
    """Thresholds tuned on dev for the full-WNUT-2017 two-task runs: the range of CE-2T's and of AUC-2T's (both typings) entity thresholds, CE-2T's gain from tuning (mean macro-F1, points), and the runs' mean training seconds."""
    entity = {key: run["thresholds"]["en"] for key, run in zip(TWO_TASK_TUNED, runs)}
    return {
        "bce_entity": span({f"{s}-{seed}": v for (s, seed), v in entity.items() if s == "two_task_bce"}),
        "auc_entity": span({f"{s}-{seed}": v for (s, seed), v in entity.items() if s != "two_task_bce"}),
        "bce_gain": table["two_task_bce-tuned"]["macro_f"]["mean"] - table["two_task_bce"]["macro_f"]["mean"],
        "train_seconds": mean(run["train_seconds"] for run in runs),
    }


LOW16, LOW17, IMB17 = "metrics/wnut16/low_resource-paired.json", "metrics/wnut17/low_resource-paired.json", "metrics/wnut17/imbalance-paired.json"
AUC = ("two_task_auc", "two_task_comauc")


@fact("auc_over_ce", LOW16, LOW17, IMB17)
def auc_over_ce(low16, low17, imb17):
    """AUC-2T and COMAUC-2T over CE-2T, Δ macro-F1: the range over every low-resource and imbalanced subset of WNUT-2017 (and the lowest interval bound), and over the WNUT-2016 subsets of 50-200 sentences."""
    wnut17 = {k: v["macro_f"] for d in (low17, imb17) for k, v in d["two_task_bce"].items() if k.startswith(AUC)}
    wnut16 = {k: v["macro_f"]["delta"] for k, v in low16["two_task_bce"].items() if k.startswith(AUC) and k.endswith(("-n50", "-n100", "-n200"))}
    return {"wnut17": span({k: v["delta"] for k, v in wnut17.items()}), "wnut17_lowest_low": min(v["low"] for v in wnut17.values()), "wnut16_small": span(wnut16)}


@fact("auc_n1000_wnut16", LOW16)
def auc_n1000_wnut16(low16):
    """WNUT-2016, 1,000 sentences: AUC-2T and COMAUC-2T against CE-2T and against ner, Δ macro-F1 and Δ micro-F1: the ranges."""
    pairs = [(low16["two_task_bce"], a) for a in AUC] + [(low16["ner"], a) for a in AUC]
    return {m: span({f"{i}": base[f"{a}-n1000"][m]["delta"] for i, (base, a) in enumerate(pairs)}) for m in ("macro_f", "micro_f")}


# --- fidelity studies (docs/benchmarks/fidelity.md) ------------------------

M50_SAMPLERS = ("uniform", "weighted", "weighted_v2", "top", "top_v2", "li")
M50_RUNS = {(c, s): seeds(f"metrics/{c}/sampled_spancat_{s}-m50-s{{seed}}.json") for c in ("wnut16", "wnut17") for s in M50_SAMPLERS}


@fact("missampling_m50", *(path for paths in M50_RUNS.values() for path in paths))
def missampling_m50(*runs):
    """Missampling rate during training at p = 0.5 (mean over seeds), per corpus and sampler, first versions and v2 and Li et al.'s configuration."""
    out: Dict[str, Dict[str, float]] = {"wnut16": {}, "wnut17": {}}
    for i, (corpus, sampler) in enumerate(M50_RUNS):
        out[corpus][sampler] = mean(run["missampling_rate"] for run in runs[3 * i : 3 * i + 3])
    return out


@fact("equal_epochs", *seeds("metrics/wnut16/ner_sCRD-epochs-s{seed}.json"), *seeds("metrics/wnut16/ner-s{seed}.json"))
def equal_epochs(*runs):
    """ner on sCRD-resampled WNUT-2016 at equal epochs: the corpus' size factor (sentences), its training examples and sentences, the word factor the budget was scaled by, the steps trained, and the mean training seconds against the plain ner runs'."""
    resampled, plain = runs[:3], runs[3:]
    first = resampled[0]
    return {
        "size_factor": first["size_factor"],
        "train_examples": first["train_examples"],
        "train_sentences": first["train_sentences"],
        "word_factor": first["word_factor"],
        "train_steps": first["train_steps"],
        "seconds": mean(r["train_seconds"] for r in resampled),
        "ner_seconds": mean(r["train_seconds"] for r in plain),
    }


TWO_TASK_DEFAULTS = ("metrics/wnut16/two_task_fitted.json", "metrics/wnut16/two_task_bce_fitted_type_head.json", "metrics/wnut16/summary.json",
                     "metrics/wnut17/two_task_fitted.json", "metrics/wnut17/two_task_bce_fitted_type_head.json", "metrics/wnut17/summary.json",
                     "metrics/wnut16/two_task_fitted_tuned.json")


@fact("two_task_defaults", *TWO_TASK_DEFAULTS)
def two_task_defaults(f16, h16, s16, f17, h17, s17, tuned16):
    """two_task_ner with fitted thresholds: each variant's mean micro-F1 over spaCy ner's, per corpus; and on WNUT-2016 the range of the change in mean macro-F1 (points) when the fitted thresholds are tuned on dev afterwards."""
    ratios = {}
    for corpus, fitted, head, summary in (("wnut16", f16, h16, s16), ("wnut17", f17, h17, s17)):
        ner = summary["ner"]["micro_f"]["mean"]
        ratios[corpus] = {name: run["micro_f"]["mean"] / ner for name, run in {**fitted, **head}.items()}
    change = {name: run["macro_f"]["mean"] - tuned16[name[: -len("-tuned")]]["macro_f"]["mean"] for name, run in tuned16.items() if name.endswith("-tuned")}
    return {"micro_ratio": ratios, "tuning_change_wnut16": span(change)}


# --- masking study, CNN (docs/benchmarks/negative_sampling.md) -------------

MASKING16, MASKING17 = "metrics/wnut16/masking-paired.json", "metrics/wnut17/masking-paired.json"
RATES = (0, 30, 50, 70, 90)


@fact("weighted_v1_vs_uniform", MASKING16, MASKING17)
def weighted_v1_vs_uniform(wnut16, wnut17):
    """weighted_negatives.v1 over uniform negatives, Δ macro-F1 at each masking rate p: the range per corpus."""
    return {
        corpus: span({f"m{p}": paired["sampled_spancat_uniform"][f"sampled_spancat_weighted-m{p}"]["macro_f"]["delta"] for p in RATES})
        for corpus, paired in (("wnut16", wnut16), ("wnut17", wnut17))
    }


SAMPLERS = ("top", "uniform", "weighted")
MISSAMPLED = {(c, s, p): seeds(f"metrics/{c}/sampled_spancat_{s}-m{p}-s{{seed}}.json") for c in ("wnut16", "wnut17") for s in SAMPLERS for p in RATES[1:]}


@fact("topneg_missampling", *(path for paths in MISSAMPLED.values() for path in paths))
def topneg_missampling(*runs):
    """Missampling rate during training (the share of drawn negatives that are masked entities, mean over seeds) of Top-Neg (v1), uniform and weighted (v1) sampling at p = 0.3-0.9 on both corpora: each rate ("rates", by sampler and corpus-mP), Top-Neg's and uniform's ranges, and the range of Top-Neg's rate over uniform's."""
    rate = {key: mean(run["missampling_rate"] for run in runs[3 * i : 3 * i + 3]) for i, key in enumerate(MISSAMPLED)}
    rates = {s: {f"{c}-m{p}": r for (c, sampler, p), r in rate.items() if sampler == s} for s in SAMPLERS}
    top, uniform = rates["top"], rates["uniform"]
    return {"rates": rates, "top": span(top), "uniform": span(uniform), "ratio": span({k: top[k] / uniform[k] for k in top})}


MISSAMPLING_OFFLINE = ("metrics/wnut16/missampling.json", "metrics/wnut17/missampling.json")


@fact("missampling_offline", *MISSAMPLING_OFFLINE)
def missampling_offline(wnut16, wnut17):
    """spacy-imbalance missampling (10 masks per p): the highest mean rate at p = 0.9 of uniform sampling or all negatives on either corpus, and on WNUT-2016 at p = 0.5 the negatives uniform sampling draws over the 10 masks, all negatives' count and the share."""
    worst = max(row["mean"] for d in (wnut16, wnut17) for rows in d["results"].values() for row in rows if row["p"] == 0.9)
    at = lambda sampler: next(row for row in wnut16["results"][sampler] if row["p"] == 0.5)  # noqa: E731
    drawn, every = sum(at("uniform")["drawn"]), sum(at("all")["drawn"])
    return {"worst_at_p90": worst, "uniform_drawn": drawn, "all_drawn": every, "uniform_share": drawn / every, "candidates_per_mask": every / len(at("all")["drawn"])}


MASKING_TABLES = {(c, p): f"metrics/{c}/masking_m{p}.json" for c in ("wnut16", "wnut17") for p in RATES}


@fact("masking", MASKING16, MASKING17, *MASKING_TABLES.values())
def masking(wnut16, wnut17, *tables):
    """Masking study (CNN, 1,000 steps), per corpus: Δ macro-F1 of uniform sampling over all negatives and over ner at each p (lists over p = 0, 0.3, 0.5, 0.7[, 0.9], fractions), the range of uniform over all negatives at p = 0-0.7, of weighted (v1) over uniform at p = 0.3-0.9 and of Top-Neg over uniform at p = 0-0.7; per system the mean macro-F1 at p = 0-0.7 (points) and the share of its p = 0 score kept at p = 0.3, 0.5, 0.7."""
    out: Dict[str, Any] = {}
    for i, (corpus, paired) in enumerate((("wnut16", wnut16), ("wnut17", wnut17))):
        delta = lambda base, run, p: paired[base][f"{run}-m{p}"]["macro_f"]["delta"]  # noqa: E731
        by_p = {p: tables[i * len(RATES) + j] for j, p in enumerate(RATES)}
        scores = {
            system: [by_p[p][f"{system}-m{p}"]["macro_f"]["mean"] for p in RATES[:4]]
            for system in ("ner", "sampled_spancat_uniform", "sampled_spancat_all")
        }
        out[corpus] = {
            "uniform_over_all": [delta("sampled_spancat_all", "sampled_spancat_uniform", p) for p in RATES[:4]],
            "uniform_over_all_span": span({f"m{p}": delta("sampled_spancat_all", "sampled_spancat_uniform", p) for p in RATES[:4]}),
            "uniform_over_ner": [delta("ner", "sampled_spancat_uniform", p) for p in RATES],
            "weighted_over_uniform_masked": span({f"m{p}": delta("sampled_spancat_uniform", "sampled_spancat_weighted", p) for p in RATES[1:]}),
            "top_over_uniform": span({f"m{p}": delta("sampled_spancat_uniform", "sampled_spancat_top", p) for p in RATES[:4]}),
            "macro_f": scores,
            "kept": {system: [f / s[0] for f in s[1:]] for system, s in scores.items()},
        }
    return out



@fact("speed_vs_spancat", "metrics/wnut17/speed.json")
def speed_vs_spancat(speed):
    """sampled_spancat's samplers against spaCy's spancat (widths 1-8) on the CPU: the range of their inference words/s ratios, and uniform sampling's extra peak inference memory (MiB, and as a share)."""
    runs = speed["results"]
    base, uniform = runs[speed["baseline"]], runs["sampled_spancat_uniform"]
    return {
        "infer_ratio": span({name: run["ratios"]["infer_wps"] for name, run in runs.items() if name != speed["baseline"]}),
        "infer_rss_extra_mib": uniform["infer_peak_rss_mib"] - base["infer_peak_rss_mib"],
        "infer_rss_extra_share": uniform["infer_peak_rss_mib"] / base["infer_peak_rss_mib"] - 1,
    }


# --- two_task_ner out of the box (docs/benchmarks/fidelity.md) ------------

TWO_TASK = ("metrics/wnut16/two_task_fitted.json", "metrics/wnut16/summary.json", "metrics/wnut17/two_task_fitted.json", "metrics/wnut17/summary.json")


@fact("two_task_micro_vs_ner", *TWO_TASK)
def two_task_micro_vs_ner(fitted16, summary16, fitted17, summary17):
    """Mean micro-F1 of two_task_ner (AUC-2T, type head, fitted thresholds: the default) over spaCy ner's, per corpus: the range."""
    return span({c: f["two_task_auc_type_head-fitted"]["micro_f"]["mean"] / s["ner"]["micro_f"]["mean"] for c, f, s in (("wnut16", fitted16, summary16), ("wnut17", fitted17, summary17))})


# --- distant supervision (docs/benchmarks/fidelity.md) ---------------------


@fact("distant_uniform_over_ner", "metrics/wnut16/distant-paired.json")
def distant_uniform_over_ner(paired):
    """sampled_spancat (uniform) over spaCy ner on dictionary-matched labels, Δ macro-F1 (the file pairs ner against uniform)."""
    return flip(paired["sampled_spancat_uniform"]["ner-ds50"]["macro_f"])


# --- scoring: how wide one run's interval is (README, docs/cli.md) --------

SINGLE_RUNS = {c: tuple(f"metrics/{c}/{run}-s{seed}.json" for run in ("ner", "spancat", "sampled_spancat_uniform-m0") for seed in range(3)) for c in ("wnut16", "wnut17")}


@fact("single_run_macro_ci_width", *SINGLE_RUNS["wnut16"], *SINGLE_RUNS["wnut17"])
def single_run_macro_ci_width(*runs):
    """Width of one run's 95 % bootstrap interval of test macro-F1 (spaCy ner, spaCy spancat, sampled_spancat uniform; seeds 0-2), per corpus: the range."""
    n = len(SINGLE_RUNS["wnut16"])
    width = lambda run: run["ci"]["macro_f"][1] - run["ci"]["macro_f"][0]  # noqa: E731
    return {
        "wnut16": span({f"{i}": width(run) for i, run in enumerate(runs[:n])}),
        "wnut17": span({f"{i}": width(run) for i, run in enumerate(runs[n:])}),
    }


# --- advise (docs/benchmarks/advise.md) ------------------------------------

ADVISE = {f"{c}-m{p}": f"metrics/{c}/advise_m{p}.json" for c in ("wnut16", "wnut17") for p in (0, 50)}


@fact("advise_minutes", *ADVISE.values())
def advise_minutes(*runs):
    """Wall-clock minutes of each advise run (advise_seconds / 60)."""
    return {name: run["advise_seconds"] / 60 for name, run in zip(ADVISE, runs)}


# --- the demo (README) -------------------------------------------------------

DEMO = ("metrics/demo/wnut16/ner-m50-s0.json", "metrics/demo/wnut16/sampled_spancat_uniform-m50-s0.json")


@fact("demo", *DEMO)
def demo(ner, spancat):
    """The committed demo run: its two runs' wall-clock minutes (training and scoring, side by side on Ray) and the cores of the machine it ran on."""
    return {
        "minutes": max(run["wall_seconds"] for run in (ner, spancat)) / 60,
        "cores": ner["provenance"]["cpu_cores"],
    }


# --- GPU check (docs/benchmarks/gpu.md) ------------------------------------


@fact("gpu_check", "metrics/wnut17/gpu/gpu_check_cnn_200_steps.json")
def gpu_check(check):
    """How many CNN configs trained and evaluated with --gpu-id 0, and how many failed."""
    return {"runs": len(check["runs"]), "failed": len(check["failed"])}



GPU_SPEED = ("metrics/wnut17/gpu/speed_gpu_cnn.json", "metrics/wnut17/gpu/speed_cpu_cnn.json", "metrics/wnut17/gpu/speed_gpu_transformer.json", "metrics/wnut17/gpu/speed_cpu_transformer.json")


@fact("gpu_speedup", *GPU_SPEED)
def gpu_speedup(gpu_cnn, cpu_cnn, gpu_transformer, cpu_transformer):
    """Training and inference words/s on the H100 over 14 CPU cores of the same machine, per config."""
    out = {}
    for gpu, cpu in ((gpu_cnn, cpu_cnn), (gpu_transformer, cpu_transformer)):
        for config, run in gpu["results"].items():
            other = cpu["results"][config]
            out[config.replace("/", "_")] = {"train": run["train_wps"] / other["train_wps"], "infer": run["infer_wps"] / other["infer_wps"]}
    return out


@fact("gpu_memory_gb", *GPU_SPEED[::2])
def gpu_memory_gb(gpu_cnn, gpu_transformer):
    """Peak GPU memory (CuPy's pool and PyTorch's count) in GiB: the most of any CNN config, training or inference, and the fine-tuned MiniLM ner's training and inference."""
    cnn = max(max(run["train_peak_gpu_mib"], run["infer_peak_gpu_mib"]) for run in gpu_cnn["results"].values())
    transformer = gpu_transformer["results"]["transformer/ner"]
    return {"cnn": cnn / 1024, "transformer_train": transformer["train_peak_gpu_mib"] / 1024, "transformer_infer": transformer["infer_peak_gpu_mib"] / 1024}


@fact("gpu_400_steps", "metrics/wnut17/gpu/transformer_400_steps.json")
def gpu_400_steps(record):
    """The first fine-tuned GPU run: how many runs finished and how many failed (all out of GPU memory)."""
    return {"finished": len(record["runs"]), "failed": len(record["failed"]), "started": len(record["runs"]) + len(record["failed"])}


@fact("gpu_step_seconds", "metrics/wnut17/gpu/transformer_400_steps.json", GPU_SPEED[2])
def gpu_step_seconds(shared, alone):
    """Seconds per training step of the fine-tuned runs: with 24 runs sharing the H100 (mean over runs of train seconds / steps), and one run alone (the speed run's batch words / its training words per second)."""
    run = alone["results"]["transformer/ner"]
    return {
        "shared": mean(r["train_seconds"] / r["train_steps"] for r in shared["runs"].values()),
        "alone": alone["settings"]["batch_words"] / run["train_wps"],
    }


# --- calibrated thresholds (docs/calibration.md, docs/benchmarks/audit.md) -


@fact("calibration_per_label", "metrics/wnut17/calibration_variants.json")
def calibration_per_label(variants):
    """Per-label thresholds tuned freely against the argmax rule on the WNUT-2017 vectors runs: mean dev gain over all runs, mean test change over the uniform-sampling runs (fractions)."""
    dev = [run["per-label"]["dev"] - run["argmax"]["dev"] for run in variants.values()]
    uniform = [run["per-label"]["test"] - run["argmax"]["test"] for name, run in variants.items() if "uniform" in name]
    return {"dev_gain": mean(dev), "test_change_uniform": mean(uniform)}


# --- audit validation, WNUT-2016 (docs/benchmarks/audit.md) ---------------

AUDIT_FEATURES = {p: seeds(f"metrics/wnut16/audit-features/p{p}-s{{seed}}.json") for p in (10, 30, 50)}


@fact("audit_features", *(path for paths in AUDIT_FEATURES.values() for path in paths))
def audit_features(*runs):
    """Per masking rate p, each seed's value (a list over seeds 0-2) of: the audit's and cleanlab's precision at k (k = the number removed), the estimated and the realised miss rate, the share of lost macro-F1 recovered by restoring the suspects, the masking cost (mean full minus mean masked macro-F1), the folds' decoding recall on dev where recorded, the ranges over seeds of the entities removed, the suspects restored and their precision, and the share recovered as a ratio of the means; and the minutes one setting took (p = 0.3, seed 0)."""
    out = {}
    for i, p in enumerate(AUDIT_FEATURES):
        group = runs[3 * i : 3 * i + 3]
        out[f"p{p}"] = {
            "audit_p_at_k": [r["audit"]["at_k"]["exact"]["p"] for r in group],
            "cleanlab_p_at_k": [r["cleanlab"]["at_k"]["exact"]["p"] for r in group],
            "estimate": [r["estimate"]["total"]["estimate"] for r in group],
            "true": [r["estimate"]["total"]["true"] for r in group],
            "recovered_share": [r["restoring"]["recovered_share"] for r in group],
            "masking_cost": mean(r["restoring"]["macro_f"]["full"] for r in group) - mean(r["restoring"]["macro_f"]["masked"] for r in group),
            # the folds' decoding recall on dev (recorded from p = 0.1 and 0.5 on)
            "recall_dev": [r["estimate"]["total"]["recall"]["dev"] for r in group if "recall" in r["estimate"]["total"]],
            "removed": span({f"s{seed}": r["masking"]["removed"] for seed, r in enumerate(group)}),
            "restored_entities": span({f"s{seed}": r["restoring"]["restored_entities"] for seed, r in enumerate(group)}),
            "suspect_precision": span({f"s{seed}": r["audit"]["selected"]["exact"]["p"] for seed, r in enumerate(group)}),
            # the share recovered as a ratio of the means, (restored - masked) / (full - masked)
            "recovered_of_means": (mean(r["restoring"]["macro_f"]["restored"] for r in group) - mean(r["restoring"]["macro_f"]["masked"] for r in group))
            / (mean(r["restoring"]["macro_f"]["full"] for r in group) - mean(r["restoring"]["macro_f"]["masked"] for r in group)),
        }
    seconds = runs[3]["seconds"]  # p = 0.3, seed 0: one setting run from start to end
    out["cost_minutes"] = {
        "audit": seconds["audit"] / 60,
        "cleanlab": (seconds["token_folds"] + seconds["cleanlab"]) / 60,
        "restore": sum(v for k, v in seconds.items() if k.startswith("train_")) / 60,
        "total": sum(seconds.values()) / 60,
    }
    return out


AUDIT_VECTORS = tuple(f"metrics/{c}/audit/p{p}-s0.json" for c, p in (("wnut16", 10), ("wnut16", 30), ("wnut16", 50), ("wnut17", 30)))


@fact("audit_vectors", *AUDIT_VECTORS)
def audit_vectors(*runs):
    """The audit with static vectors, seed 0, per corpus and p: the macro-F1 masking cost (complete minus masked corpus, fractions)."""
    return {f"{run['corpus']}-p{round(100 * run['p'])}": run["restoring"]["macro_f"]["full"] - run["restoring"]["macro_f"]["masked"] for run in runs}


@fact("audit_vectors_minutes", "metrics/wnut16/audit/p30-s0.json")
def audit_vectors_minutes(run):
    """The minutes one setting of the vectors audit took from start to end (WNUT-2016, p = 0.3, seed 0): masking, the
    audit, cleanlab's folds and the three restore runs."""
    return sum(run["seconds"].values()) / 60


@fact("audit_workers", "metrics/wnut16/audit_workers.json")
def audit_workers(record):
    """The audit on Ray against one fold after another (spacy-imbalance audit-check workers): the wall-time ratio per
    k<folds>-<steps per fold>, whether every pair gave the same suspects and scored spans, and the longest folds' steps."""
    rows = record["rows"]
    return {"ratio": {f"k{r['folds']}-{r['steps']}": r["ratio"] for r in rows}, "all_same": all(r["same_outputs"] for r in rows),
            "steps": max(r["steps"] for r in rows)}


@fact("scale", "metrics/wnut16/scale.json")
def scale(record):
    """Cost against corpus size (scripts/scale.py): per measurement (train, audit), the seconds each further 1,000
    training sentences added between consecutive sizes (marginal cost: constant when growth is linear) as min and
    max over the intervals, the peak MB each further 1,000 sentences added (per interval, in order), and the peak MB at
    the smallest and the largest size."""
    rows = sorted(record["rows"], key=lambda r: r["sentences"])
    out = {}
    for key in ("train", "audit"):
        def marginal(field):
            return [1000 * (b[key][field] - a[key][field]) / (b["sentences"] - a["sentences"]) for a, b in zip(rows, rows[1:])]

        seconds, memory = marginal("seconds"), marginal("peak_mb")
        out[key] = {"marginal_min": min(seconds), "marginal_max": max(seconds), "mb_marginal": memory,
                    "peak_mb_first": rows[0][key]["peak_mb"], "peak_mb_last": rows[-1][key]["peak_mb"]}
    out["largest_sentences"] = rows[-1]["sentences"]
    out["largest_factor"] = rows[-1]["factor"]
    return out

# --- the draw rate (docs/benchmarks/never_worse.md) --------------------------

DRAW_RATE_CELLS = tuple(f"{encoder}-{train}" for encoder in ("t", "f", "c") for train in ("c", "m50"))


def draw_rate_files() -> Tuple[str, ...]:
    """The dev trials of the chosen setting at rate 1.0 (``*-r1-*``), then at rate 0.7, one per cell (fine-tuned,
    features, CNN; complete and p = 0.5), in DRAW_RATE_CELLS order."""
    trial = "metrics/wnut17/never_worse/{}-overlap-sslhead-meanmax{}-{}.json"
    return tuple(trial.format(encoder, rate, train) for rate in ("-r1", "") for encoder, train in (cell.split("-") for cell in DRAW_RATE_CELLS))


def draw_rate(*trials):
    """The dev macro-F1 (fractions, seed 0) of the chosen setting at rate 1.0 and at rate 0.7: each rate's mean over
    the six cells (the rule that chose the default), the difference of the means, and the cells where rate 1.0 is
    the higher."""
    r1, r07 = [t["macro"]["f"] for t in trials[:len(DRAW_RATE_CELLS)]], [t["macro"]["f"] for t in trials[len(DRAW_RATE_CELLS):]]
    return {"r1": mean(r1), "r07": mean(r07), "delta": mean(r1) - mean(r07),
            "r1_higher": sum(a > b for a, b in zip(r1, r07)), "cells": len(DRAW_RATE_CELLS)}


fact("draw_rate", *draw_rate_files())(draw_rate)


# --- the never-worse grid (docs/benchmarks/never_worse.md) -----------------

# spaCy's NER components: every comparison below is against the better of the two (the higher mean)
BUILT_INS = ("ner", "spancat_singlelabel")
# the grid's tags: the complete train set and each training entity removed with p = 0.5
NW_TAGS = {"complete": "nw", "missing": "nw_m50"}
NW_OURS = "sampled_spancat"
# issue 42's targets against the best built-in: on complete data the paired interval's lower bound above -1 point
# (and the mean at least level), with half the entities missing the mean at least 5 points above, interval above 0
NW_COMPLETE_FLOOR = -0.01
NW_MISSING_MARGIN = 0.05


def never_worse_files(encoder: str) -> Tuple[str, ...]:
    """An encoder's grid runs ("cnn", "features" or "transformer"): spaCy's ner and spancat_singlelabel and our
    default on the complete train set, then at p = 0.5, seeds 0-2 each, then the grid's paired comparisons."""
    folder = "" if encoder == "cnn" else f"{encoder}/"
    runs = [path for tag in NW_TAGS.values() for system in (*BUILT_INS, NW_OURS)
            for path in seeds(f"metrics/wnut17/{folder}{system}-{tag}-s{{seed}}.json")]
    return (*runs, f"metrics/wnut17/never_worse_{encoder}-paired.json")


def never_worse(*files):
    """Per setting (complete, missing: p = 0.5): each system's mean macro- and micro-F1 (fractions, seeds 0-2), the
    best built-in (the higher mean macro-F1), ours against it (paired macro- and micro-F1) and whether issue 42's
    target holds (complete: mean difference at least 0 and interval's lower bound above -1 point; missing: mean
    difference at least 5 points and lower bound above 0)."""
    runs, paired = files[:-1], files[-1]
    out: Dict[str, Any] = {}
    for setting, tag in NW_TAGS.items():
        cell = [run for run in runs if run["name"].endswith(f"-{tag}")]
        scores: Dict[str, Dict[str, List[float]]] = {}
        for run in cell:
            system = run["config"].split("/")[-1]
            scores.setdefault(system, {"macro": [], "micro": []})
            scores[system]["macro"].append(run["macro"]["f"])
            scores[system]["micro"].append(run["micro"]["f"])
        means = {system: {kind: mean(values) for kind, values in by.items()} for system, by in scores.items()}
        best = max(BUILT_INS, key=lambda system: means[system]["macro"])
        prefix = cell[0]["config"].rpartition("/")[0]
        prefix = f"{prefix}/" if prefix else ""
        vs = paired[prefix + best][f"{prefix}{NW_OURS}-{tag}"]
        delta, low = vs["macro_f"]["delta"], vs["macro_f"]["low"]
        meets = (delta >= 0 and low > NW_COMPLETE_FLOOR) if setting == "complete" else (delta >= NW_MISSING_MARGIN and low > 0)
        out[setting] = {"means": means, "best_built_in": best, "vs_best": vs["macro_f"], "vs_best_micro": vs["micro_f"],
                        "meets_target": meets, "target": "met" if meets else "not met"}
    return out


fact("never_worse_features", *never_worse_files("features"))(never_worse)
fact("never_worse_cnn", *never_worse_files("cnn"))(never_worse)
fact("never_worse_transformer", *never_worse_files("transformer"))(never_worse)


@fact(
    "never_worse_features_regression",
    *seeds("metrics/wnut17/features/sampled_spancat_weighted_v2-s{seed}.json"),
    *seeds("metrics/wnut17/features/sampled_spancat-nw-s{seed}.json"),
)
def never_worse_features_regression(*runs):
    """Issue 42's "no regression" target with frozen features on the complete train set: ours as the grid ran it
    against weighted v2 of headline-features, the setting of the issue's "+4.4 over the best built-in" (same budget,
    seeds 0-2 paired; Δ macro- and micro-F1, paired bootstrap, fractions)."""
    from spacy_imbalance.benchmark.paired import paired_runs

    diff = paired_runs(list(runs[:3]), list(runs[3:]))
    return {"macro_f": diff["macro_f"], "micro_f": diff["micro_f"]}


# --- label scopes (docs/benchmarks/label_scopes.md) --------------------------

SCOPE_SPLITS = ("even", "uneven")
NAIVE = (*BUILT_INS, "sampled_spancat_uniform")
SCOPED = "sampled_spancat_uniform_scoped"
# issue 47's target: the share of the best built-in's loss on the merge that ours with scopes recovers
SCOPES_TARGET = 0.7


def scope_files(encoder: str) -> Tuple[str, ...]:
    """An encoder's files of the label-scopes study ("cnn" or "features"), in the order scopes_recovery reads them:
    the runs on each split's naive merge (built-ins and ours) and with scopes (ours), the runs on the complete train
    set (the ceiling), seeds 0-2 each, then each split's paired comparisons (study-scopes' `benchmark table`)."""
    folder = "features/" if encoder == "features" else ""
    merge = [path for split in SCOPE_SPLITS for system in (*NAIVE, SCOPED)
             for path in seeds(f"metrics/wnut17-{split}/{folder}{system}-s{{seed}}.json")]
    ceiling = [path for system in NAIVE for path in seeds(f"metrics/wnut17/{folder}{system}-s{{seed}}.json")]
    paired = [f"metrics/wnut17-{split}/scopes_{encoder}-paired.json" for split in SCOPE_SPLITS]
    return (*merge, *ceiling, *paired)


def seed_scores(runs) -> Dict[Tuple[str, str], List[float]]:
    """Each (corpus, system)'s macro-F1 per seed (fractions) of the label-scopes study's runs."""
    scores: Dict[Tuple[str, str], List[float]] = {}
    for run in runs:
        scores.setdefault((run["corpus"], run["config"].split("/")[-1]), []).append(run["macro"]["f"])
    return scores


def scopes_recovery(*files):
    """Per split (even, uneven): each system's mean macro-F1 (fractions, seeds 0-2) on the naive merge and ours with
    scopes; the best built-in on the merge (the higher mean), what it loses there against its own ceiling (the complete
    train set), the share of that loss ours with scopes recovers ((scoped minus the best built-in on the merge) over
    the loss), and the paired comparisons of ours with scopes against that built-in and against ours on the merge;
    the runs' minutes (median, range) where their records keep them."""
    runs, paired = files[:-len(SCOPE_SPLITS)], files[-len(SCOPE_SPLITS):]
    means = {key: mean(values) for key, values in seed_scores(runs).items()}
    folder = runs[0]["config"].rpartition("/")[0]
    prefix = f"{folder}/" if folder else ""
    out: Dict[str, Any] = {"target": SCOPES_TARGET, "ceiling": {system: means[("wnut17", system)] for system in NAIVE}}
    # a run's minutes, training and scoring, from the records that keep them (the earliest do not)
    minutes = [run["wall_seconds"] / 60 for run in runs if run.get("wall_seconds")]
    if minutes:
        out["minutes"] = {"median": median(minutes), "min": min(minutes), "max": max(minutes), "runs": len(minutes)}
    for split, comparisons in zip(SCOPE_SPLITS, paired):
        corpus = f"wnut17-{split}"
        merge = {system: means[(corpus, system)] for system in NAIVE}
        best = max(BUILT_INS, key=lambda system: merge[system])
        scoped = means[(corpus, SCOPED)]
        lost = out["ceiling"][best] - merge[best]
        if lost <= 0:
            # nothing to recover: a share of it would divide by zero or flip its sign
            raise ValueError(f"{corpus}: {best} loses nothing on the merge against its ceiling ({lost:+.4f}); no recovered share")
        out[split] = {"merge": merge, "scoped": scoped, "best_built_in": best, "best_merge": merge[best],
                      "best_ceiling": out["ceiling"][best], "lost": lost,
                      "recovered": (scoped - merge[best]) / lost,
                      "vs_best": comparisons[prefix + best][prefix + SCOPED]["macro_f"],
                      "vs_naive": comparisons[prefix + "sampled_spancat_uniform"][prefix + SCOPED]["macro_f"]}
    return out


fact("scopes_recovery_cnn", *scope_files("cnn"))(scopes_recovery)
fact("scopes_recovery_features", *scope_files("features"))(scopes_recovery)


if __name__ == "__main__":
    # run from the project root: the metrics are found from there (bench never finds the project from its own file)
    (Path("metrics") / "facts.json").write_text(json.dumps(compute(Path(".")), indent=1, ensure_ascii=False) + "\n", encoding="utf8")
