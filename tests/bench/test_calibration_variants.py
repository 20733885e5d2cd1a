"""The threshold search chosen on dev (bench/calibration_variants.py):
cross-fitted dev scores on a scripted pipeline whose every probability is
known, and the choice from them alone."""
import pytest

from bench.calibration_variants import VARIANTS, chosen_on_dev, cross_fitted, variants_table
from spacy_imbalance.evaluation.thresholds.spans import dev_matcher

from ..spans.scripted import NAME, gold_doc, scripted_nlp

# (O, PER, RARE): RARE loses to O on every gold RARE span (p 0.35); the decoy at 0.3 is no entity
RARE, DECOY, PER = (0.6, 0.05, 0.35), (0.65, 0.05, 0.3), (0.1, 0.85, 0.05)
TABLE = {
    "Kate saw Zork": {(0, 1): PER, (2, 3): RARE},
    "Bob saw Xan": {(0, 1): PER, (2, 3): RARE},
    "Ann met Qux": {(0, 1): PER, (2, 3): DECOY},
    "Tom met Yip": {(0, 1): PER, (2, 3): RARE},
}
GOLD = {
    "Kate saw Zork": [(0, 1, "PER"), (2, 3, "RARE")],
    "Bob saw Xan": [(0, 1, "PER"), (2, 3, "RARE")],
    "Ann met Qux": [(0, 1, "PER")],
    "Tom met Yip": [(0, 1, "PER"), (2, 3, "RARE")],
}


def test_cross_fitted_scores_each_half_with_the_other_halfs_thresholds():
    """Even docs (Kate, Ann): a RARE threshold at 0.35 (0.3 adds the decoy);
    odd docs (Bob, Tom): every RARE span at 0.35, no decoy, the first grid
    value that keeps them, 0.05, wins (per-label, any gain). Bob and Tom at
    0.35: both RARE found, F 1. Kate and Ann at 0.05: Kate's RARE found and
    Ann's decoy predicted: RARE P 1/2, R 1, F 2/3; macro (1 + 2/3) / 2."""
    nlp = scripted_nlp(TABLE, ("PER", "RARE"))
    docs = [gold_doc(nlp, text, ents) for text, ents in GOLD.items()]
    grid = [0.05, 0.35, 0.5]
    halves = (dev_matcher(nlp, NAME, docs[0::2], floor=0.05), dev_matcher(nlp, NAME, docs[1::2], floor=0.05))
    per_label = VARIANTS["per-label"]
    assert cross_fitted(halves, per_label, grid) == pytest.approx((1.0 + (1 + 2 / 3) / 2) / 2)
    # argmax: RARE never predicted; each half PER F 1, RARE F 0 (present in gold)
    assert cross_fitted(halves, None, grid) == pytest.approx(0.5)


def test_the_choice_reads_the_cross_fitted_dev_scores_only():
    def scores(dev_cross, test):
        return {variant: {"dev": 0.9, "test": test.get(variant, 0.1), "dev_cross": dev_cross.get(variant, 0.2)} for variant in VARIANTS}

    results = {
        "a-s0": scores({"shared": 0.5, "per-label": 0.4}, {"per-label": 0.9}),
        "a-s1": scores({"shared": 0.4, "per-label": 0.45}, {"per-label": 0.9}),
    }
    assert chosen_on_dev(results, ["a-s0", "a-s1"]) == "shared"
    table = "\n".join(variants_table(results, ["a"], [0, 1]))
    assert "Chosen on dev (the highest mean cross-fitted dev macro-F1 over the 2 runs): **shared**; the test would have picked per-label." in table
    # equal scores: the first in VARIANTS' order, argmax before any search
    assert chosen_on_dev({"a-s0": scores({}, {})}, ["a-s0"]) == "argmax"
    del results["a-s1"]["per-label"]["dev_cross"]
    with pytest.raises(ValueError, match="no cross-fitted dev scores for a-s1"):
        chosen_on_dev(results, ["a-s0", "a-s1"])
    assert "no choice on dev" in "\n".join(variants_table(results, ["a"], [0, 1]))
