"""The choice tables of issue 42's trials: the share with the highest mean
dev macro-F1 is the one marked best, over a pair of train sets and over
every trial."""
import srsly

from dev.never_worse.table import overall, pairs, table


def _record(folder, name, scores):
    rows = [{"correction": share, "macro_f": f, "micro_f": f, "macro_p": f, "macro_r": f, "predicted": 10, "tp": 5, "fp": 5, "ece": 0.1}
            for share, f in scores.items()]
    srsly.write_json(folder / f"{name}.json", {"macro": {"p": 0.3, "r": 0.3, "f": 0.3}, "micro": {"p": 0.5, "r": 0.5, "f": 0.5},
                                                "train_seconds": 60, "dev_curve": [[0, 0.1], [200, 0.3]], "decoded": rows})


def test_the_best_share_has_the_highest_mean(tmp_path):
    trials = {"a-c": {"config": "features/x"}, "a-m50": {"config": "features/x", "masked": True}, "b-c": {"config": "transformer/x"}}
    # complete prefers 0.5, masked 0; the pair's mean: 0 -> 0.35, 0.5 -> 0.36
    _record(tmp_path, "a-c", {0.0: 0.30, 0.5: 0.42})
    _record(tmp_path, "a-m50", {0.0: 0.40, 0.5: 0.30})
    assert "| a | 0.5 (best) | 42.0 | 30.0 | 36.0 |" in pairs(trials, tmp_path)
    assert "| a | 0 | 30.0 | 40.0 | 35.0 |" in pairs(trials, tmp_path)
    # over every trial, a third one that prefers 0 turns it: 0 -> 0.3667, 0.5 -> 0.3067
    _record(tmp_path, "b-c", {0.0: 0.40, 0.5: 0.20})
    every = overall(trials, tmp_path)
    assert "| 0 (best) | 36.7 |" in every and "| 0.5 | 30.7 |" in every and "3 trials" in every
    # a trial not run yet is listed as such
    assert "| not run yet |" in table({**trials, "c-c": {"config": "features/y"}}, tmp_path)
