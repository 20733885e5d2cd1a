"""``spacy-imbalance advise``: the corpus statistics that decide which
imbalance method fits, the candidate methods trained briefly on the user's
corpus, ranked by dev macro-F1 with paired intervals against spaCy's better
built-in component, and a recommended config."""
from .candidates import BUILTINS, Candidate, select_candidates
from .ranking import Advice, Ranked, rank
from .report import write_advice
from .run import AdviseSettings, plan_trials, read_miss_rate, run_candidates, write_corpora

__all__ = [
    "Advice",
    "AdviseSettings",
    "BUILTINS",
    "Candidate",
    "Ranked",
    "plan_trials",
    "rank",
    "read_miss_rate",
    "run_candidates",
    "select_candidates",
    "write_advice",
    "write_corpora",
]
