"""Fixed training batches of about so many words, for the measurements that
time updates outside `spacy train` (speed, feature cache)."""
from typing import TYPE_CHECKING, List

if TYPE_CHECKING:
    from spacy.training import Example


def word_batches(examples: List["Example"], batch_words: int, *, keep_rest: bool = True) -> List[List["Example"]]:
    """Consecutive batches of at least ``batch_words`` words each; the last,
    shorter one kept or, with ``keep_rest`` False, left out (batches cycled
    over a fixed number of steps are then all of one size)."""
    batches: List[List["Example"]] = []
    batch: List["Example"] = []
    n = 0
    for eg in examples:
        batch.append(eg)
        n += len(eg.predicted)
        if n >= batch_words:
            batches.append(batch)
            batch, n = [], 0
    if batch and keep_rest:
        batches.append(batch)
    return batches
