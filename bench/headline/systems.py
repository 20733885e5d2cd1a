"""The systems of the headline table and the claims it re-tests.

MoM's λ is each corpus's own, chosen on its dev set by the MoM sweep
(metrics/<corpus>/mom_sweep-dev-choice.json): its runs are tagged l<100 λ>
(``mom_tag``), and ``systems(tag)`` names the table's rows for that tag."""
from typing import Dict, List, Tuple

BUILTINS = [
    ("ner", "spaCy ner"),
    ("spancat_singlelabel", "spaCy spancat_singlelabel"),
    ("spancat", "spaCy spancat"),
]
METHODS = [
    ("sampled_spancat_uniform", "sampled_spancat, uniform negatives"),
    ("sampled_spancat_weighted_v2", "sampled_spancat, weighted negatives (v2)"),
    ("sampled_spancat_top_v2", "sampled_spancat, Top-Neg (v2)"),
    ("sampled_spancat_all", "sampled_spancat, all negatives"),
    ("token_ner", "token_ner, cross entropy"),
    ("token_ner_wce2", "token_ner, WCE-2"),
    ("token_ner_mom_v2-l50", "token_ner, MoM (v2, λ 0.5) over CE"),
    ("two_task_auc_type_head-fitted", "two_task_ner, AUC-2T (fitted thresholds)"),
    ("two_task_bce-fitted", "two_task_ner, CE-2T (fitted thresholds)"),
    ("ner_sCRD", "ner on sCRD-resampled data"),
]
# each system's name in the tables, built-ins first
LABELS = dict(BUILTINS + METHODS)
# each method's claim in its paper, in its direction: (method, reference)
CLAIMS = [
    ("token_ner_mom_v2-l50", "token_ner", "MoM over its base loss"),
    ("token_ner_wce2", "token_ner", "WCE-2 over cross entropy"),
    ("two_task_auc_type_head-fitted", "two_task_bce-fitted", "AUC-2T over CE-2T"),
    ("sampled_spancat_weighted_v2", "sampled_spancat_uniform", "weighted over uniform negatives"),
    ("sampled_spancat_top_v2", "sampled_spancat_uniform", "Top-Neg over uniform negatives"),
    ("sampled_spancat_top_v2", "sampled_spancat_all", "Top-Neg over all negatives"),
    ("sampled_spancat_uniform", "sampled_spancat_all", "uniform over all negatives"),
    ("ner_sCRD", "ner", "sCRD over no resampling"),
]


# the MoM row of the lists above, whose tag each corpus chooses
MOM = "token_ner_mom_v2"
DEFAULT_MOM_TAG = "l50"


def mom_tag(value: float) -> str:
    """The run tag of MoM at λ = ``value`` (0.9 -> l90)."""
    if not 0.0 < value < 1.0:
        raise ValueError(f"MoM's lambda is in (0, 1), got {value!r}")
    return f"l{round(100 * value)}"


def systems(tag: str = DEFAULT_MOM_TAG) -> Tuple[Dict[str, str], List[Tuple[str, str, str]]]:
    """The table's rows (system -> name in the table, built-ins first) and
    claims with MoM's runs tagged ``tag``."""
    mom = f"{MOM}-{tag}"
    lam = int(tag[1:]) / 100

    def swap(system: str) -> str:
        return mom if system == f"{MOM}-{DEFAULT_MOM_TAG}" else system

    labels = {swap(system): (f"token_ner, MoM (v2, λ {lam:g}) over CE" if swap(system) == mom else label) for system, label in BUILTINS + METHODS}
    claims = [(swap(method), swap(base), claim) for method, base, claim in CLAIMS]
    return labels, claims
