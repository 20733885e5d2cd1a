"""``advise``: train each candidate method on the user's corpus for a share
of a time budget, on >= 2 seeds, evaluate on dev, rank, and recommend.

Everything goes under one output folder: the corpora as trained (a copy,
never the input), a config per candidate, the trials (resumable: a finished
trial with the same config, seed and budget is not trained again), and the
advice (advice.md, advice.json, advice.png, recommended.cfg).
"""
import dataclasses
import hashlib
import math
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

from spacy.tokens import Doc

from ..audit.run import listed, read_audit_file
from ..corpus.docs_io import copy_ents_to_spans, write_docbin
from ..corpus.stats import CorpusStats
from ..init_config import build_config, config_fingerprint, render
from ..init_config.options import ENCODERS
from ..sweeps import Trial, run_pending
from ..training.checks import check_number
from .candidates import Candidate

# what a trial costs besides its training budget: starting, initialising, evaluating (CNN, 2 cores)
TRIAL_OVERHEAD_SECONDS = 45.0
# the shortest training worth ranking
MIN_TRIAL_MINUTES = 0.5
SPANS_KEY = "sc"
# the ranges of the numeric settings (the CLI's options), checked before
# anything is written. Upper ends: 30 days of trials, 100 seeds, 1,024
# workers and 10 million steps are far beyond any use of a short comparison;
# larger values are typing slips (or inf, which spaCy's config cannot hold)
BUDGET_MINUTES_MAX = 30 * 24 * 60
SEEDS_RANGE = (2, 100)
WORKERS_RANGE = (1, 1024)
MAX_STEPS_RANGE = (1, 10_000_000)
GPU_ID_RANGE = (-1, 1023)


@dataclass(frozen=True)
class AdviseSettings:
    """budget_minutes: the wall-clock time of all trials; seeds: training
    seeds per candidate (>= 2, for paired intervals over seeds); encoder: of
    every candidate; vectors: paths.vectors of the vectors encoder; workers:
    trials at once (on Ray when > 1); address: a Ray cluster; max_steps: the
    most steps of a trial (the budget ends it first)."""

    budget_minutes: float = 20.0
    seeds: int = 2
    encoder: str = "cnn"
    vectors: Optional[str] = None
    lang: str = "en"
    workers: int = 1
    address: Optional[str] = None
    gpu_id: int = -1
    max_steps: int = 20000

    def check(self) -> None:
        """A ValueError naming the option of the first setting out of its
        range (see the *_RANGE constants), or of a language spaCy lacks."""
        check_number("--budget", self.budget_minutes, low=0, high=BUDGET_MINUTES_MAX, low_open=True, unit="minutes")
        if not _whole_in(self.seeds, SEEDS_RANGE):
            raise ValueError(
                f"--seeds must be a whole number in [{SEEDS_RANGE[0]}, {SEEDS_RANGE[1]}]: the paired intervals "
                f"average over seeds; got {self.seeds!r}"
            )
        if not _whole_in(self.workers, WORKERS_RANGE):
            raise ValueError(f"--workers must be a whole number in [{WORKERS_RANGE[0]}, {WORKERS_RANGE[1]}], got {self.workers!r}")
        if not _whole_in(self.gpu_id, GPU_ID_RANGE):
            raise ValueError(f"--gpu-id must be a whole number in [{GPU_ID_RANGE[0]}, {GPU_ID_RANGE[1]}] (-1: the CPU), got {self.gpu_id!r}")
        if self.encoder not in ENCODERS:
            raise ValueError(f"--encoder {self.encoder!r} is not one of {', '.join(ENCODERS)}")
        if self.vectors is not None and self.encoder != "vectors":
            raise ValueError(f"--vectors is for --encoder vectors, not {self.encoder}")
        if not _whole_in(self.max_steps, MAX_STEPS_RANGE):
            # spaCy reads max_steps = 0 as no limit: the budget would then be the only stop
            raise ValueError(f"--max-steps must be a whole number in [{MAX_STEPS_RANGE[0]}, {MAX_STEPS_RANGE[1]}], got {self.max_steps!r}")
        check_lang(self.lang)

    def planned_minutes(self, n_trials: int) -> float:
        """The wall-clock minutes the trials take: more than the budget when
        each trial's share is below MIN_TRIAL_MINUTES."""
        rounds = math.ceil(n_trials / self.workers)
        return rounds * (self.trial_minutes(n_trials) + TRIAL_OVERHEAD_SECONDS / 60)

    def trial_minutes(self, n_trials: int) -> float:
        """Each trial's training time: the budget over the rounds of trials
        the workers run, less each trial's overhead."""
        rounds = math.ceil(n_trials / self.workers)
        return max(MIN_TRIAL_MINUTES, (60 * self.budget_minutes / rounds - TRIAL_OVERHEAD_SECONDS) / 60)


def _whole_in(value: Any, bounds: Tuple[int, int]) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and bounds[0] <= value <= bounds[1]


def check_lang(lang: str) -> None:
    """A ValueError naming --lang when spaCy has no such language or cannot
    make its tokenizer (e.g. ja without sudachipy): the trials would each
    fail at their start, after the corpora and configs were written."""
    import spacy

    try:
        spacy.blank(lang)
    except (ImportError, ValueError) as err:
        raise ValueError(f"--lang {lang!r} is not a language spaCy can make a pipeline for: {err}") from None


def check_labels(train: Sequence[Doc], dev: Sequence[Doc], train_source: str, dev_source: str) -> List[str]:
    """The entity types of TRAIN and DEV before anything trains: a
    ValueError naming both files and their types when they share none (every
    method would score 0 on DEV, and a ranking of zeros recommends noise),
    else a warning for each side's types the other lacks."""
    train_labels = {ent.label_ for doc in train for ent in doc.ents}
    dev_labels = {ent.label_ for doc in dev for ent in doc.ents}
    if not train_labels & dev_labels:
        raise ValueError(
            f"DEV {dev_source} shares no entity type with TRAIN {train_source}: TRAIN annotates {listed(sorted(train_labels))}; "
            f"DEV annotates {listed(sorted(dev_labels))}. Every method would score 0 on DEV and the ranking would be noise: "
            "give a dev set of TRAIN's types"
        )
    warnings = []
    if dev_labels - train_labels:
        warnings.append(
            f"DEV {dev_source} has types TRAIN {train_source} never annotates: {listed(sorted(dev_labels - train_labels))}. "
            "No method can learn them: every method misses their dev entities, and they lower every dev macro-F1"
        )
    if train_labels - dev_labels:
        warnings.append(
            f"TRAIN {train_source} has types DEV {dev_source} never annotates: {listed(sorted(train_labels - dev_labels))}. "
            "The methods are ranked without them"
        )
    return warnings


def plan_text(settings: AdviseSettings, n_methods: int, minutes: float, on_ray: bool) -> Tuple[str, Optional[str]]:
    """What the trials will take, from the settings that bound them: each
    trains until its minutes or --max-steps, whichever comes first (how
    fast it steps is not known before it trains), so the wall-clock time is
    an upper bound. The line that introduces the methods, and a warning
    when that bound is above --budget (None otherwise)."""
    n_trials = n_methods * settings.seeds
    how = f"{settings.workers} at a time on Ray" if on_ray else "one after another"
    info = (
        f"{n_methods} methods x {settings.seeds} seeds, each trained for {minutes:.1f} minutes or "
        f"{settings.max_steps:,} steps (--max-steps), whichever ends first ({how}):"
    )
    planned = settings.planned_minutes(n_trials)
    if planned <= settings.budget_minutes * 1.05:
        return info, None
    warning = (
        f"--budget {settings.budget_minutes:g} is too short for {n_trials} trials: each trains for {minutes:.1f} minutes "
        f"(the shortest worth ranking) unless --max-steps {settings.max_steps:,} ends it first, and takes about "
        f"{TRIAL_OVERHEAD_SECONDS / 60:.1f} minutes more to start and be evaluated, so the trials may take up to about "
        f"{planned:.0f} minutes, less where --max-steps ends them first"
    )
    return info, warning


def write_corpora(
    train: Sequence[Doc], dev: Sequence[Doc], out: Path, sources: Tuple[str, str] = ("train", "dev")
) -> Tuple[Path, Path]:
    """The corpora as the candidates train on them, in OUT/corpus: the gold
    entities also in doc.spans["sc"] for the span categorizers. A ValueError
    naming the corpus (``sources``) and document when a doc's "sc" group is
    not its entities: the span candidates would learn and be ranked on other
    gold than ner."""
    paths = []
    for name, source, docs in (("train", sources[0], train), ("dev", sources[1], dev)):
        docs = list(docs)
        for i, doc in enumerate(docs):
            if SPANS_KEY in doc.spans and _spans(doc.spans[SPANS_KEY]) != _spans(doc.ents):
                raise ValueError(
                    f"{source}: document {i} has spans in doc.spans[{SPANS_KEY!r}] that are not its entities "
                    f"(doc.ents); advise compares NER methods on doc.ents: remove that span group or make it the entities"
                )
        copy_ents_to_spans([doc for doc in docs if SPANS_KEY not in doc.spans], SPANS_KEY)
        path = out / "corpus" / f"{name}.spacy"
        path.parent.mkdir(parents=True, exist_ok=True)
        write_docbin(docs, path)
        paths.append(path)
    return paths[0], paths[1]


def _spans(spans: Sequence[Any]) -> List[Tuple[int, int, str]]:
    return sorted((span.start, span.end, span.label_) for span in spans)


def candidate_config(candidate: Candidate, settings: AdviseSettings, minutes: Optional[float]) -> str:
    """The candidate's config text: ``init-config`` with the encoder, and the
    time budget of a trial (None: the recommended config, without it)."""
    choice = candidate.choice(settings.encoder, settings.lang)
    if settings.vectors is not None:
        choice = dataclasses.replace(choice, overrides={"paths.vectors": settings.vectors})
    config = build_config(choice)
    header = [f"spacy-imbalance advise: {candidate.name} ({candidate.reason})", f"init-config {choice.command()}"]
    if minutes is not None:
        config["training"]["before_update"] = {"@callbacks": "spacy-imbalance.time_budget.v1", "minutes": round(minutes, 2)}
        header.append(f"trained for {minutes:.2f} minutes per seed ([training.before_update])")
        # spaCy evaluates after the first update (step 0) and then every
        # eval_frequency steps: a trial with fewer steps than that would be
        # scored as its first-update model, so it evaluates at its last step
        frequency = config["training"].get("eval_frequency")
        if isinstance(frequency, int) and frequency > settings.max_steps:
            config["training"]["eval_frequency"] = settings.max_steps
    return render(config, header=header)


def plan_trials(
    candidates: Sequence[Candidate], settings: AdviseSettings, out: Path, train: Path, dev: Path
) -> Tuple[List[Tuple[Candidate, int, Trial]], float]:
    """Every candidate x seed trial, and each one's training minutes."""
    minutes = settings.trial_minutes(len(candidates) * settings.seeds)
    # the cores shared by the trials that run at once
    threads = max(1, (os.cpu_count() or 1) // settings.workers)
    planned = []
    for candidate in candidates:
        config = out / "configs" / f"{candidate.name}.cfg"
        config.parent.mkdir(parents=True, exist_ok=True)
        config.write_text(candidate_config(candidate, settings, minutes), encoding="utf8")
        for seed in range(settings.seeds):
            trial = Trial(
                name=f"{candidate.name} seed {seed}", config=str(config),
                output=str(out / "trials" / f"{candidate.name}-s{seed}"),
                metrics=str(out / "trials" / f"{candidate.name}-s{seed}.json"),
                train=str(train), dev=str(dev), test=str(dev), seed=seed, max_steps=settings.max_steps,
                gpu_id=settings.gpu_id, threads=threads,
            )
            planned.append((candidate, seed, trial))
    return planned, minutes


def trial_key(trial: Trial) -> str:
    """What a finished trial must match to be reused: its corpora, its
    config's settings (the budget included), seed and step limit."""
    digest = hashlib.sha256()
    for path in (trial.train, trial.dev):
        digest.update(Path(path).read_bytes())
    config = config_fingerprint(Path(trial.config).read_text(encoding="utf8"))
    # a GPU trial differs from a CPU one (CuPy's random streams): not reused for the other
    device = f"-gpu{trial.gpu_id}" if trial.gpu_id >= 0 else ""
    return f"{digest.hexdigest()[:16]}-{config[:16]}-s{trial.seed}-{trial.max_steps}{device}"


def expected_record(trial: Trial) -> Dict[str, str]:
    """What the record of a finished trial must hold to be reused (and what
    advise adds to it): its key (``trial_key``)."""
    return {"advise_key": trial_key(trial)}


def run_candidates(
    planned: Sequence[Tuple[Candidate, int, Trial]], settings: AdviseSettings, out: Path,
    on_done: Optional[Callable[[Trial, Dict[str, Any], int, int], None]] = None,
) -> Dict[str, List[Dict[str, Any]]]:
    """Train what is not finished (a trial whose record has its key is
    reused; one that cannot be read is trained again); each candidate's
    reports, by seed."""
    records = run_pending(
        [trial for _, _, trial in planned], expected_record, workers=settings.workers, address=settings.address,
        gpus_per_trial=1.0 if settings.gpu_id >= 0 else 0.0, storage=out / "ray", name="advise", on_done=on_done,
    )
    reports: Dict[str, List[Dict[str, Any]]] = {}
    for (candidate, _, _), record in zip(planned, records):
        reports.setdefault(candidate.name, []).append(record)
    return reports


def read_miss_rate(audit: Path) -> Dict[str, Any]:
    """The overall miss rate that ``spacy-imbalance audit`` estimated, from
    its output folder: {"rate", "interval": [low, high]}."""
    path = audit / "summary.json"
    if not path.is_file():
        raise ValueError(f"--audit {audit}: no summary.json there; give the output folder of spacy-imbalance audit")
    summary = read_audit_file(path, f"--audit {audit}")
    problem = _audit_summary_problem(summary)
    if problem is not None:
        raise ValueError(f"--audit {audit}: {path} is not the summary of spacy-imbalance audit: {problem}")
    total = next((row for row in summary["labels"] if row.get("label") == "total"), None)
    if total is None or not all(key in total for key in ("rate", "rate_low", "rate_high")):
        raise ValueError(f"--audit {audit}: {path} has no overall (total) miss rate with its interval")
    for key in ("rate", "rate_low", "rate_high"):
        if not _is_fraction(total[key]):
            raise ValueError(f"--audit {audit}: {path}: the total row's {key!r} must be a rate in [0, 1], got {total[key]!r}")
    if total["rate_low"] > total["rate_high"]:
        raise ValueError(f"--audit {audit}: {path}: the total row's interval [{total['rate_low']}, {total['rate_high']}] is reversed")
    return {"rate": total["rate"], "interval": [total["rate_low"], total["rate_high"]], "n_docs": summary.get("n_docs")}


def _audit_summary_problem(summary: Any) -> Optional[str]:
    """What in an audit's summary.json has the wrong shape for advise
    (naming the field), or None: an object whose "labels" is a list of
    objects, and whose "n_docs", when set, is a count."""
    if not isinstance(summary, dict):
        return f"a JSON {type(summary).__name__}, not an object"
    labels = summary.get("labels")
    if not isinstance(labels, list):
        return f"'labels' must be a list of rows, got {labels!r:.60}"
    row = next((row for row in labels if not isinstance(row, dict)), None)
    if row is not None:
        return f"each row of 'labels' must be an object, got {row!r:.60}"
    n_docs = summary.get("n_docs")
    if n_docs is not None and (isinstance(n_docs, bool) or not isinstance(n_docs, int) or n_docs < 0):
        return f"'n_docs' must be a count of documents, got {n_docs!r:.60}"
    return None


def _is_fraction(value: Any) -> bool:
    # a JSON true is a Python bool, an int: no rate
    return isinstance(value, (int, float)) and not isinstance(value, bool) and 0.0 <= value <= 1.0


def stats_rows(stats: CorpusStats, miss_rate: Optional[Dict[str, Any]]) -> List[Tuple[str, str]]:
    """The corpus statistics that decide the candidates."""
    rows = [
        ("training sentences", f"{stats.sentences:,}"),
        ("tokens", f"{stats.tokens:,}"),
        ("entity types", str(stats.entity_types)),
        ("entity tokens", f"{stats.entity_token_pct:.2f} %"),
        ("sentences with an entity", f"{stats.sentences_with_entity_pct:.1f} %"),
    ]
    if stats.least_frequent_type is not None:
        if stats.most_frequent_type is None:
            # corpus.stats names both or neither (a corpus with entity types or without)
            raise ValueError(f"corpus statistics name a least frequent entity type ({stats.least_frequent_type}) but no most frequent one")
        rare = sorted(stats.per_type.items(), key=lambda item: item[1].mentions)[:3]
        rows.append(("rarest types (mentions)", ", ".join(f"{label} ({t.mentions})" for label, t in rare)))
        most = stats.per_type[stats.most_frequent_type]
        least = stats.per_type[stats.least_frequent_type]
        rows.append(("most / least frequent type", f"{most.mentions / max(least.mentions, 1):.0f}x the mentions"))
    if miss_rate is not None:
        low, high = miss_rate.get("interval", [None, None])
        span = f" [{100 * low:.0f}, {100 * high:.0f}]" if low is not None else ""
        rows.append(("entities missing (the audit's estimate)", f"{100 * miss_rate['rate']:.0f} %{span}"))
    return rows
