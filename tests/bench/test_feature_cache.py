"""The feature-cache measurement's pieces (bench/feature_cache.py)."""
from types import SimpleNamespace

from bench.feature_cache import batches_of


def test_batches_of_about_so_many_words_keep_the_rest():
    examples = [SimpleNamespace(predicted=[0] * n) for n in (3, 4, 2, 5, 1)]
    batches = batches_of(examples, 6)
    # 3 + 4 >= 6, then 2 + 5 >= 6, then the last one alone
    assert [[len(eg.predicted) for eg in batch] for batch in batches] == [[3, 4], [2, 5], [1]]
    assert batches_of([], 6) == []
