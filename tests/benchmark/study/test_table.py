"""A study's tables (spacy_imbalance/benchmark/study/table.py)."""
import numpy
import pytest
import srsly

from spacy_imbalance.benchmark.study.table import Study, write_study
from spacy_imbalance.scorers.counts import MatchCounts


def record(found):
    """A run's record over len(found) test sentences of one label, each with
    one entity, found where ``found`` is 1 (no false positives)."""
    table = numpy.array([[[1, 0, 0]] if hit else [[0, 0, 1]] for hit in found], dtype="int64")
    f = 2 * sum(found) / (sum(found) + len(found))
    return {"counts": MatchCounts(["X"], table).to_sparse(), "macro": {"f": f, "p": 1.0, "r": sum(found) / len(found)}, "micro": {"f": f}}


def test_a_variant_is_paired_with_the_baselines_run_of_the_same_setting(tmp_path):
    folder = tmp_path / "metrics" / "c"
    (folder / "enc").mkdir(parents=True)
    # the built-in finds 2 of 4 entities in both settings; ours (config x
    # trained with an override, tagged <setting>_v2) finds 4 when complete
    # and 3 when masked; x's own untagged-variant runs must not be read
    for seed in (0, 1):
        for tag in ("nw", "m50"):
            srsly.write_json(folder / "enc" / f"builtin-{tag}-s{seed}.json", record([1, 1, 0, 0]))
            srsly.write_json(folder / "enc" / f"x-{tag}-s{seed}.json", record([0, 0, 0, 0]))
        srsly.write_json(folder / "enc" / f"x-nw_v2-s{seed}.json", record([1, 1, 1, 1]))
        srsly.write_json(folder / "enc" / f"x-m50_v2-s{seed}.json", record([1, 1, 1, 0]))
    study = Study("nw", ["enc/builtin", "enc/x@v2"], [("nw", "complete"), ("m50", "0.5")], baselines=["enc/builtin"])
    text = write_study(study, folder, "c", plots=False, warn=pytest.fail)
    assert "| enc/x@v2 | 100.0 ± 0.0 | 85.7 ± 0.0 |" in text
    paired = srsly.read_json(folder / "nw-paired.json")["enc/builtin"]
    # F1 2/3 -> 1 complete, 2/3 -> 6/7 masked, on both seeds; keyed by the run's own name
    assert set(paired) == {"enc/x-nw_v2", "enc/x-m50_v2"}
    assert paired["enc/x-nw_v2"]["macro_f"]["delta"] == pytest.approx(1 / 3)
    assert paired["enc/x-m50_v2"]["macro_f"]["delta"] == pytest.approx(6 / 7 - 2 / 3)
    assert paired["enc/x-nw_v2"]["seeds"] == [0, 1]
