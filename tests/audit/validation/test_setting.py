"""A check's names and folders (audit/validation/setting.py)."""
from pathlib import Path

from spacy_imbalance.audit.validation.setting import Restoring, Setting, run_name, selected_runs, setting_name


def test_audit_validation_names():
    assert setting_name(0.3, 0) == "p30-s0" and setting_name(0.05, 2) == "p05-s2"
    # --only's names are the records folder's: audit/p10 as in metrics/<corpus>/audit/
    assert run_name("audit", 0.1) == "audit/p10" and run_name("audit-features", 0.3) == "audit-features/p30"


def test_each_encoder_has_its_own_work_folder_and_the_vectors_ones_are_the_first_releases():
    common = dict(train=Path("c/train.spacy"), dev=Path("c/dev.spacy"), corpus="wnut16", p=0.3, seed=1, work=Path("w"))
    vectors, features, default = Setting(**common, vectors="v"), Setting(**common, features=True), Setting(**common)
    assert (vectors.encoder, features.encoder, default.encoder) == ("vectors", "features", "default")
    assert vectors.folder.name == "wnut16-p30-s1" and features.folder.name == "wnut16-features-p30-s1"
    assert default.folder.name == "wnut16-default-p30-s1"
    assert Setting(**common, vectors="v", limit=200).folder.name == "wnut16-n200-p30-s1"
    assert vectors.vector_overrides() == {"paths.vectors": "v"} and features.vector_overrides() == {} == default.vector_overrides()
    assert "encoder" not in vectors.shaping() and features.shaping()["encoder"] == "features"
    # the work folder depends on the corpus's files too
    assert vectors.shaping()["train"] == str(Path("c/train.spacy")) and vectors.shaping()["dev"] == str(Path("c/dev.spacy"))
    assert vectors.training_overrides() == {"training.max_steps": 2000, "system.seed": 1}
    assert Setting(**common, eval_frequency=50).training_overrides()["training.eval_frequency"] == 50


def test_a_record_keeps_the_settings_the_summary_reads():
    common = dict(train=Path("t.spacy"), dev=Path("d.spacy"), corpus="c", p=0.3, seed=0, work=Path("w"))
    plain = Setting(**common).recorded()
    assert (plain["folds"], plain["steps"], plain["threshold"], plain["encoder"]) == (5, 2000, 0.5, "default")
    assert plain["restore_config"] is None and plain["restore_steps"] is None and plain["cleanlab_config"] is None
    restoring = Restoring(Path("configs/x.cfg"), Path("test.spacy"), steps=10, patience=5, reference="m/x-s{seed}.json")
    full = Setting(**common, cleanlab=Path("configs/token_ner.cfg"), restoring=restoring).recorded()
    assert full["restore_config"] == str(Path("configs/x.cfg")) and (full["restore_steps"], full["restore_patience"]) == (10, 5)
    assert full["cleanlab_config"] == str(Path("configs/token_ner.cfg"))
    assert restoring.reference_record(2) == Path("m/x-s2.json")
    assert Restoring(Path("x.cfg"), Path("t.spacy")).reference_record(0) is None


def test_only_selects_a_setting_for_every_seed_or_for_one():
    assert selected_runs([0.1, 0.3], [3, 4], set(), "audit") == [(0.1, 3), (0.1, 4), (0.3, 3), (0.3, 4)]
    assert selected_runs([0.1, 0.3], [3, 4], {"audit/p30"}, "audit") == [(0.3, 3), (0.3, 4)]
    assert selected_runs([0.1, 0.3], [0, 3, 4], {"audit/p30-s0", "audit/p10-s4"}, "audit") == [(0.1, 4), (0.3, 0)]
    assert selected_runs([0.3], [3], {"audit/p30-s0"}, "audit") == []
    assert selected_runs([0.3], [0], {"audit-features/p30"}, "audit-features") == [(0.3, 0)]
    assert selected_runs([0.3], [0], {"audit-features/p30"}, "audit") == []
