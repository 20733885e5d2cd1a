"""The import paths docs/calibration.md gave before the threshold search
moved to evaluation/thresholds/ still work, and say where it went."""
import importlib
import sys

import pytest

from spacy_imbalance.evaluation.thresholds import grid, spans


@pytest.mark.parametrize(
    "old,new,names",
    [
        ("spacy_imbalance.spans.thresholds.tuning", spans, ["tune_span_thresholds", "set_span_thresholds", "search_thresholds", "dev_matcher"]),
        ("spacy_imbalance.spans.thresholds.grid", grid, ["default_grid", "check_grid"]),
    ],
)
def test_an_old_path_gives_the_moved_functions_with_a_warning(old, new, names, monkeypatch):
    monkeypatch.delitem(sys.modules, old, raising=False)
    with pytest.warns(DeprecationWarning, match=f"{old} moved to {new.__name__}"):
        module = importlib.import_module(old)
    assert all(getattr(module, name) is getattr(new, name) for name in names)
