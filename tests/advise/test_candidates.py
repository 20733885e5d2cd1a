"""The candidates follow the corpus statistics the benchmarks say matter."""
from spacy_imbalance.advise import select_candidates
from spacy_imbalance.corpus.stats import CorpusStats


def stats(sentences=2000, entity_token_pct=8.0):
    return CorpusStats(tokens=30 * sentences, sentences=sentences, entity_types=3, entity_token_pct=entity_token_pct,
                       least_frequent_type="b", least_frequent_type_pct=0.5, most_frequent_type="a",
                       most_frequent_type_pct=5.0, sentences_with_entity_pct=40.0)


def names(candidates):
    return [c.name for c in candidates]


def test_a_large_cnn_corpus_tries_the_builtins_and_our_default_only():
    tried, left_out = select_candidates(stats(), "cnn")
    assert names(tried) == ["ner", "spancat_singlelabel", "sampled_spancat"]
    # the default: init-config's own sampler and head, nothing chosen over them
    ours = tried[2].choice("cnn", "en")
    assert (ours.component, ours.sampler, ours.head) == ("sampled_spancat", None, None)
    reasons = dict(left_out)
    assert "2,000" in reasons["token_ner_wce2"] and "8.0 %" in reasons["two_task_auc"]


def test_small_corpora_rare_entities_and_pretrained_encoders_add_their_methods():
    tried, _ = select_candidates(stats(sentences=800, entity_token_pct=1.5), "vectors", miss_rate=0.3)
    assert names(tried) == ["ner", "spancat_singlelabel", "sampled_spancat", "sampled_spancat_weighted",
                            "token_ner_wce2", "two_task_auc"]
    by_name = {c.name: c for c in tried}
    assert "30 %" in by_name["sampled_spancat"].reason
    assert (by_name["two_task_auc"].component, by_name["two_task_auc"].loss) == ("two_task_ner", "auc")
    weighted = by_name["sampled_spancat_weighted"].choice("vectors", "en")
    # as measured: weighted v2 with the first release's head
    assert (weighted.sampler, weighted.head) == ("weighted_v2", "v1")
