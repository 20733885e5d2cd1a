"""Fixed batches of about so many words (spacy_imbalance/benchmark/batches.py)."""
from types import SimpleNamespace

from spacy_imbalance.benchmark.batches import word_batches


def test_batches_of_about_so_many_words_keep_the_rest():
    examples = [SimpleNamespace(predicted=[0] * n) for n in (3, 4, 2, 5, 1)]
    batches = word_batches(examples, 6)
    # 3 + 4 >= 6, then 2 + 5 >= 6, then the last one alone
    assert [[len(eg.predicted) for eg in batch] for batch in batches] == [[3, 4], [2, 5], [1]]
    assert word_batches([], 6) == []
    # the speed benchmark cycles batches of one size: the rest is left out
    assert [[len(eg.predicted) for eg in batch] for batch in word_batches(examples, 6, keep_rest=False)] == [[3, 4], [2, 5]]
