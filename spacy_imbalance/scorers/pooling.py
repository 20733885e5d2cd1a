"""Which metrics files `summarize` may pool as the seeds of one system.

A mean over "seeds" is only a mean over seeds when each file is another run
of the same experiment: the same run given twice (a copy, an older-format
copy of it) would count twice and shrink the spread; runs scored on other
data, another target, another config, or on other labels would mix two
experiments. ``pooling_problem`` says which, naming the files.
"""
import copy
import hashlib
from pathlib import Path
from typing import Any, Dict, List, Optional, Sequence, Set, Tuple

from .counts import MatchCounts

Run = Tuple[Path, Dict[str, Any]]

# What a run was scored on and trained with: runs of one name are pooled (as
# seeds) only when these agree. ``data_sha256`` (the contents of the data) is
# compared where both runs have it, else the ``data`` path as it was given;
# ``config_sha256`` where both have it (benchmark runs record it).
SCORED_ON = (("target", "what was scored (ents or spans:KEY)"), ("config_sha256", "config (SHA-256)"))

# The fields that define a benchmark run (``benchmark.runs``: ``complete_record``),
# with the words a message names them by. Older records lack some: their
# defaults below are the ones the benchmark's resume check reads them with.
RUN_FIELDS = (
    ("corpus", "corpus"), ("config", "config"), ("config_sha256", "config SHA-256"), ("seed", "seed"),
    ("steps", "steps"), ("budget", "budget"), ("overrides", "overrides"), ("data_sha256", "data SHA-256"),
    ("target", "target"), ("thresholds", "thresholds"), ("tuned_from", "tuned from"),
)
# what a benchmark record without these fields meant (it was written before
# they existed): a step budget, no overrides. The benchmark's resume check
# (``benchmark.runs.is_done``) reads records with them too.
RUN_DEFAULTS: Dict[str, Any] = {"budget": "steps", "overrides": {}}
# An evaluation of a pipeline (`evaluate --output`, no seed): the pipeline,
# the data, the bootstrap's settings (one pipeline evaluated again with
# another --seed is another evaluation, which tests of pooling use), and what
# the pipeline predicted, sentence by sentence
EVALUATION_FIELDS = (
    ("model", "model"), ("data_sha256", "data SHA-256"), ("data", "data"), ("target", "target"), ("bootstrap", "bootstrap"),
    ("counts", "match counts"),
)


def pooling_problem(runs: Sequence[Run]) -> Optional[str]:
    """Why the runs (each its file and report) cannot be summarized, or None:
    a run given twice (the same file, a copy, or another file of the same
    run), or two runs of one name scored on other data, another target, from
    another config, or on other labels, which a mean over "seeds" would hide."""
    return _same_file(runs) or _same_run(runs) or _mixed_experiments(runs)


def _same_file(runs: Sequence[Run]) -> Optional[str]:
    # the same contents: the same file given twice (under any spelling or
    # link) or a byte-for-byte copy of it
    digests: Dict[str, Path] = {}
    for path, _ in runs:
        digest = hashlib.sha256(Path(path).read_bytes()).hexdigest()
        if digest in digests:
            return f"{digests[digest]} and {path} are the same run (the same file, or a copy of it): give each run once"
        digests[digest] = Path(path)
    return None


def _same_run(runs: Sequence[Run]) -> Optional[str]:
    """Two files of one name that hold the same run, told by what defines it
    rather than by their bytes: a record rewritten in a later format (compact
    counts, a field added) is the same run as the file it came from."""
    identities = [(path, report, run_identity(report)) for path, report in runs]
    for n, (path, report, identity) in enumerate(identities):
        for other_path, other, other_identity in identities[:n]:
            if other["name"] != report["name"] or not _same_identity(other_identity, identity):
                continue
            fields = RUN_FIELDS if "seed" in identity else EVALUATION_FIELDS
            shared = ", ".join(
                f"{words} {_shown(identity[key])}" for key, words in fields
                if key in identity and key in other_identity and key != "counts"
            )
            counts = " and the same match counts" if "counts" in identity and "counts" in other_identity else ""
            return (
                f"{other_path} and {path} hold the same run of {report['name']!r} ({shared}{counts}), "
                "perhaps one in an older format: a mean would count it twice. Give each run once"
            )
    return None


def run_identity(report: Dict[str, Any]) -> Dict[str, Any]:
    """What defines the run of a metrics file, in one form for every record
    format: a benchmark run by its seed, config, corpus, data and steps; an
    evaluation without a seed by its pipeline, data and match counts. Only
    the fields the record holds (or that older formats imply) are there."""
    if report.get("seed") is not None:
        identity = {key: report[key] for key, _ in RUN_FIELDS if report.get(key) is not None}
        # older records: no train_steps (they trained max_steps), no budget
        # and no overrides (RUN_DEFAULTS)
        steps = report.get("train_steps", report.get("max_steps"))
        if steps is not None:
            identity["steps"] = steps
        if "max_steps" in report:
            for key, value in RUN_DEFAULTS.items():
                identity.setdefault(key, copy.deepcopy(value))
        return identity
    identity = {key: report[key] for key, _ in EVALUATION_FIELDS if report.get(key) is not None and key != "counts"}
    counts = _canonical_counts(report.get("counts"))
    if counts is not None:
        identity["counts"] = counts
    return identity


def _canonical_counts(counts: Any) -> Optional[Dict[str, Any]]:
    """The match counts in the compact form, whichever form they were stored
    in (the list of rows of older files); None when there are none or they
    cannot be read (summarize does not need them for its scores)."""
    if not isinstance(counts, dict):
        return None
    try:
        return MatchCounts.from_sparse(counts).to_sparse()
    except Exception:  # damaged counts: zlib, base64, a wrong shape, a missing key
        return None


def _same_identity(a: Dict[str, Any], b: Dict[str, Any]) -> bool:
    """Whether two identities are one run: both benchmark runs (a seed) or
    both evaluations of a pipeline (a model), and equal in every field both
    have; a field one of them lacks cannot tell them apart."""
    anchor = "seed" if "seed" in a else "model"
    if anchor not in a or anchor not in b:
        return False
    if "data_sha256" in a and "data_sha256" in b:
        # the same contents under another path (an absolute one in newer records) is the same data
        a, b = {k: v for k, v in a.items() if k != "data"}, {k: v for k, v in b.items() if k != "data"}
    return all(a[key] == b[key] for key in a.keys() & b.keys())


def _shown(value: Any) -> str:
    # a SHA-256 by its first 12 digits, as git shortens commits; the rest as it is
    if isinstance(value, str) and len(value) == 64 and all(c in "0123456789abcdef" for c in value):
        return repr(value[:12] + "...")
    return repr(value)


def _mixed_experiments(runs: Sequence[Run]) -> Optional[str]:
    first: Dict[str, Run] = {}
    for path, report in runs:
        name = report["name"]
        if name not in first:
            first[name] = (path, report)
            continue
        other_path, other = first[name]
        difference = _scored_difference(other, report)
        if difference is not None:
            return (
                f"the runs {other_path} and {path} are both named {name!r} but differ in {difference}: "
                "a mean over them would mix two experiments. Name them apart (evaluate --name) or summarize them separately"
            )
        labels_problem = _labels_difference((other_path, other), (path, report))
        if labels_problem is not None:
            return labels_problem
    return None


def _scored_difference(a: Dict[str, Any], b: Dict[str, Any]) -> Optional[str]:
    """What two reports of one name were scored on differently, or None."""
    def both(key: str) -> bool:
        return a.get(key) is not None and b.get(key) is not None

    if both("data_sha256"):
        if a["data_sha256"] != b["data_sha256"]:
            return f"data: {a.get('data')!r} and {b.get('data')!r} have other contents"
    elif both("data") and a["data"] != b["data"]:
        return f"data: {a['data']!r} and {b['data']!r}"
    for key, what in SCORED_ON:
        if both(key) and a[key] != b[key]:
            return f"{what}: {a[key]!r} and {b[key]!r}"
    return None


def gold_labels(report: Dict[str, Any]) -> Set[str]:
    """The labels a run was scored on: those of ``per_type`` with gold
    entities (``support`` > 0). A label only predicted, never gold, scores
    F = 0 in a run that predicted it and is absent from one that did not, so
    it tells no runs apart. A record without supports: all its labels."""
    per_type = report["per_type"]
    if all(isinstance(scores, dict) and "support" in scores for scores in per_type.values()):
        return {label for label, scores in per_type.items() if scores["support"]}
    return set(per_type)


def _labels_difference(a: Run, b: Run) -> Optional[str]:
    """Two runs of one name scored on other labels: the mean of a label one
    of them lacks would count it as F = 0 there (halving it), so they are
    refused, naming the labels each lacks."""
    (a_path, a_report), (b_path, b_report) = a, b
    a_labels, b_labels = gold_labels(a_report), gold_labels(b_report)
    if a_labels == b_labels:
        return None
    lacks: List[str] = []
    for path, labels, other in ((b_path, b_labels, a_labels), (a_path, a_labels, b_labels)):
        missing = sorted(other - labels)
        if missing:
            lacks.append(f"{path} lacks {', '.join(map(repr, missing))}")
    return (
        f"the runs {a_path} and {b_path} are both named {a_report['name']!r} but were scored on other labels: "
        f"{'; '.join(lacks)} (in 'per_type', labels with gold entities). A mean over them would count a missing "
        "label as F = 0: was a file edited or cut short? Summarize runs scored on the same labels"
    )
