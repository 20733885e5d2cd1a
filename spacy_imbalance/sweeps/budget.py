"""A time budget for ``spacy train``: training stops at the first update
after the budget runs out, keeping model-best (the best evaluation so far).

spaCy's training loop stops only at max_steps or on patience; a callback
before each update that raises is the one way to stop it from the config.
spaCy then saves model-last and exits with the exception, which
``run_trial`` reads as a finished trial.
"""
import re
import time
from typing import Any, Callable, Dict

from spacy.language import Language
from spacy.util import registry

from ..training.checks import check_number


class TimeBudgetReached(Exception):
    """Raised before an update once the training's time budget is spent."""


# how run_trial tells a budget stop from a failure in a training log, and the
# step: in the traceback's last line, or spaCy's warning (which wraps lines);
# the minutes are written with :g, an exponent included (1e-05)
STOPPED_BY_BUDGET = re.compile(r"TimeBudgetReached\W+the\s+time\s+budget\s+of\s+[\d.e+-]+\s+minutes\s+ran\s+out\s+before\s+step\s+(\d+)")


@registry.callbacks("spacy-imbalance.time_budget.v1")
def create_time_budget_v1(minutes: float) -> Callable[[Language, Dict[str, Any]], None]:
    """A ``[training.before_update]`` callback that stops training after
    ``minutes`` of updates and evaluations (the clock starts at the first
    update: loading and initialisation are not counted).

    minutes (float): the training time, > 0.
    """
    minutes = check_number(
        "spacy-imbalance.time_budget.v1 ([training.before_update]): minutes", minutes, low=0.0, low_open=True, unit="minutes"
    )
    started: Dict[str, float] = {}

    def before_update(nlp: Language, args: Dict[str, Any]) -> None:
        now = time.perf_counter()
        start = started.setdefault("start", now)
        if now - start > 60 * minutes:
            raise TimeBudgetReached(f"the time budget of {minutes:g} minutes ran out before step {args.get('step')}")

    return before_update
