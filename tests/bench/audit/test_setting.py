"""A validation's names and folders (bench/audit/setting.py)."""
from bench.audit.setting import Setting, metrics_folder, run_name, setting_name, summary_path, token_config

from ...conftest import ROOT


def test_audit_validation_names():
    assert setting_name(0.3, 0) == "p30-s0" and setting_name(0.05, 2) == "p05-s2"
    assert run_name(0.1) == "audit/p10" and run_name(0.3, "features") == "audit-features/p30"
    # each encoder has its own work folder, metrics and models; the vectors names are the first release's
    common = dict(corpus="wnut16", p=0.3, seed=1, folds=5, steps=2000, threshold=0.5, vectors="v", restore_steps=4000,
                  restore_patience=1000, eval_frequency=None, limit=None, resamples=500, gpu_id=-1, work=ROOT / "w")
    vectors, features = Setting(**common), Setting(**common, encoder="features")
    assert vectors.folder.name == "wnut16-p30-s1" and features.folder.name == "wnut16-features-p30-s1"
    assert (vectors.config, features.config) == ("vectors/sampled_spancat_uniform", "features/sampled_spancat_uniform")
    assert vectors.vector_overrides() == {"paths.vectors": "v"} and features.vector_overrides() == {}
    assert "encoder" not in vectors.shaping() and features.shaping()["encoder"] == "features"
    # relative to the project root, as the validation runs from there
    assert (ROOT / token_config("features")).exists() and (ROOT / token_config("vectors")).exists()
    assert metrics_folder(ROOT, "wnut16", "features").name == "audit-features"
    assert summary_path(ROOT, "wnut16", "features").name == "audit_validation_features.md"


def test_only_selects_a_setting_for_every_seed_or_for_one():
    from bench.audit.setting import selected_runs

    assert selected_runs([0.1, 0.3], [3, 4], set()) == [(0.1, 3), (0.1, 4), (0.3, 3), (0.3, 4)]
    assert selected_runs([0.1, 0.3], [3, 4], {"audit/p30"}) == [(0.3, 3), (0.3, 4)]
    assert selected_runs([0.1, 0.3], [0, 3, 4], {"audit/p30-s0", "audit/p10-s4"}) == [(0.1, 4), (0.3, 0)]
    assert selected_runs([0.3], [3], {"audit/p30-s0"}) == []
    assert selected_runs([0.3], [0], {"audit-features/p30"}, encoder="features") == [(0.3, 0)]
