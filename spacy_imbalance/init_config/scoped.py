"""``init-config --scoped PATH=LABEL,LABEL``: a train corpus of several
corpora that each annotate only some entity types (their label scope,
``spacy_imbalance.corpus.scopes``), read as one ``CombinedCorpus.v1`` of a
``ScopedCorpus.v1`` per path. The component's labels are the union of the
scopes, given to its initialize, so that a type no corpus has an entity of
still gets its output columns."""
import re
from pathlib import Path
from typing import Any, Dict, List, Optional, Sequence, Tuple

from ..corpus.scopes import check_scope_labels
from ..corpus.scopes.reader import COMBINED, SCOPED
from .options import SCOPED_COMPONENTS, SCOPED_LOSS_NAMES

__all__ = ["SCOPED_O_WEIGHT", "ScopedPath", "check_scoped", "scoped_option", "scoped_train_corpus", "scoped_labels"]

# a path and the labels annotated in it
ScopedPath = Tuple[str, Tuple[str, ...]]

# scope_o_weight of the sampled_spancat configs --scoped writes: the weight of the highest WNUT-2017 dev macro-F1
# averaged over the CNN and frozen MiniLM features (0, 0.1, 0.3 tried; dev/scope_trials.py, docs/label_scopes.md).
# The component's own default stays 0 (the marginal likelihood alone); token_ner was not tried, so its configs keep 0
SCOPED_O_WEIGHT = {"sampled_spancat": 0.1}

# the settings of the template's spacy.Corpus.v1 that ScopedCorpus.v1 takes too
_READER_SETTINGS = ("gold_preproc", "max_length", "limit", "augmenter")


def check_scoped(scoped: Sequence[ScopedPath], *, component: str, loss: Optional[str], resample: Optional[str]) -> None:
    """A ValueError naming --scoped (and the other option) when the scoped
    corpora cannot be trained as chosen."""
    if not scoped:
        return
    if component not in SCOPED_COMPONENTS:
        raise ValueError(
            f"--scoped trains on corpora that annotate only some entity types, which --component {component} cannot "
            f"learn from without taking a missing type for 'no entity': use --component {' or '.join(SCOPED_COMPONENTS)}"
        )
    if (loss or "ce") not in SCOPED_LOSS_NAMES:
        raise ValueError(
            f"--scoped with --loss {loss}: the loss has no partial-label form (a ratio over the batch or a per-sentence "
            f"loss cannot sum the probability of 'no entity or a type outside the scope'); use --loss {', '.join(SCOPED_LOSS_NAMES)}"
        )
    if resample is not None:
        raise ValueError(
            f"--scoped with --resample {resample}: a rebalanced reader over several scoped corpora is not written by "
            "init-config; leave out --resample (or set a reader inside each [corpora.train.corpora.*] block by hand)"
        )
    seen = set()
    for path, labels in scoped:
        if not path:
            raise ValueError(f"--scoped ={','.join(labels)}: give the corpus path before '='")
        if path in seen:
            raise ValueError(f"--scoped {path} is given twice: give each corpus once, with all its labels")
        seen.add(path)
        try:
            check_scope_labels(labels)
        except ValueError as err:
            raise ValueError(f"--scoped {path}: {err}") from None


def scoped_option(path: str, labels: Sequence[str]) -> str:
    """The --scoped value of ``path`` and ``labels``, as the command line takes it."""
    return f"{path}={','.join(labels)}"


def scoped_labels(scoped: Sequence[ScopedPath]) -> List[str]:
    """The component's labels: every label of every scope, sorted."""
    return sorted({label for _, labels in scoped for label in labels})


def scoped_train_corpus(train: Dict[str, Any], scoped: Sequence[ScopedPath], spans_key: Optional[str]) -> Dict[str, Any]:
    """[corpora.train] reading each scoped path with the settings of the
    template's ``train`` reader; ``spans_key`` is checked against each scope
    besides doc.ents (a span component's gold group)."""
    settings = {key: train[key] for key in _READER_SETTINGS if key in train}
    corpora: Dict[str, Any] = {}
    for path, labels in scoped:
        corpora[_name(path, corpora)] = {
            "@readers": SCOPED, "path": path, "labels": sorted(labels), "spans_key": spans_key, "corpus": None, **settings,
        }
    return {"@readers": COMBINED, "corpora": corpora}


def _name(path: str, taken: Dict[str, Any]) -> str:
    """A config section name for the corpus at ``path``: its file name
    without suffix, in letters, digits, _ and -, numbered when taken."""
    stem = re.sub(r"[^A-Za-z0-9_-]+", "_", Path(path).stem).strip("_") or "corpus"
    name, n = stem, 2
    while name in taken:
        name, n = f"{stem}_{n}", n + 1
    return name

