"""The summary over seeds (audit/validation/summary.py)."""
import math

import pytest
import srsly

from spacy_imbalance.audit.validation.setting import setting_name
from spacy_imbalance.audit.validation.summary import (
    aggregate, encoder_of, summary_markdown, write_review_summary, write_summary,
)


def report(p, seed, audit_p, covered, share):
    return {
        "p": p,
        "seed": seed,
        "settings": {"folds": 5, "steps": 2000, "threshold": 0.5},
        "masking": {"removed": 100 + seed},
        "audit": {"selected": {"n": 7 + seed, "exact": {"p": audit_p, "r": 0.4}}, "at_k": {"exact": {"p": 0.3}, "overlap": {"p": 0.5}}},
        "cleanlab": {"selected": {"exact": {"p": 0.1, "r": 0.2}}, "at_k": {"exact": {"p": 0.1}, "overlap": {"p": 0.2}}},
        "estimate": {"total": {"true": p, "estimate": p + 0.02, "low": p - 0.05, "high": p + 0.05, "error": 0.02, "covered": covered, "held_out": p - 0.01 if seed == 0 else None,
                               "recall": {"dev": 0.6, "held_out": 0.7 + 0.1 * seed, "removed": 0.65}}},
        "restoring": {"macro_f": {"full": 0.4, "masked": 0.3, "restored": 0.35}, "recovered_share": share},
    }


def test_audit_validation_aggregate_and_markdown():
    reports = [report(0.3, 0, 0.5, True, 0.5), report(0.3, 1, 0.7, False, None), report(0.1, 0, 0.6, True, 0.25)]
    groups = aggregate(reports)
    assert list(groups) == ["0.1", "0.3"]
    m, sd, n = groups["0.3"]["audit P"]
    assert (m, n) == (pytest.approx(0.6), 2) and sd == pytest.approx(math.sqrt(0.02))
    held, _, n_held = groups["0.3"]["interval holds it"]
    assert (held, n_held) == (0.5, 2)
    assert groups["0.3"]["recovered share"] == (0.5, 0.0, 1)  # the seed without a share is left out
    assert groups["0.1"]["removed"][0] == 100 and groups["0.3"]["removed"][0] == 100.5
    text = summary_markdown("wnut16", groups, reports[0]["settings"])
    lines = text.splitlines()
    rows = [line for line in lines if line.startswith("| 0.3 |")]
    assert len(rows) == 3 and rows[0].startswith("| 0.3 | 2 | 100.5 | 7.5 | 60.0 ± 14.1 | 40.0 ± 0.0 |")
    # recovered share has one seed (the other has none): its value stands alone, with no spread
    assert "| 1/2 |" in rows[1] and rows[1].endswith("| 50.0 |")
    # the held-out estimate of the one seed that has it (the other's audit predates it)
    assert "| 1/2 | 29.0 |" in rows[1]
    # the recall table: dev's, the held-out annotations' and the removed entities', over both seeds
    assert rows[2] == f"| 0.3 | 60.0 ± 0.0 | 75.0 ± {100 * math.sqrt(0.005):.1f} | 65.0 ± 0.0 |"
    assert text.index("| 0.1 |") < text.index("| 0.3 |")
    # records from before the restored config was recorded: the vectors' sampled_spancat_uniform
    assert "test macro-F1 of vectors/sampled_spancat_uniform trained on" in text
    assert "No validation run yet (metrics/c/audit/ is empty)" in summary_markdown("wnut16", {}, {}, records="metrics/c/audit")


def test_a_check_without_the_extras_leaves_their_columns_out():
    plain = {k: v for k, v in report(0.3, 0, 0.5, True, 0.5).items() if k not in ("cleanlab", "restoring")}
    text = summary_markdown("mine", aggregate([plain]), plain["settings"], encoder="default")
    assert text.startswith("# Audit validation on mine, default encoder\n")
    assert "cleanlab" not in text and "F1" not in text and "restor" not in text
    assert "| p | seeds | removed | suspects | audit P | audit R | audit P@k | audit P@k overlap |" in text
    assert "| p | true rate | estimated rate | error | interval holds it | estimated, held-out recall |" in text
    assert "looked for by the audit (5 folds, 2000 steps, suspects at calibrated probability >= 0.5)." in text


def test_audit_validation_summary_files(tmp_path):
    folder = tmp_path / "wnut16" / "audit"
    folder.mkdir(parents=True)
    for r in (report(0.3, 0, 0.5, True, 0.5), report(0.3, 1, 0.7, False, None)):
        srsly.write_json(folder / f"{setting_name(r['p'], r['seed'])}.json", {**r, "corpus": "wnut16"})
    out = tmp_path / "wnut16" / "audit_validation.md"
    write_summary(folder, out)
    text = out.read_text(encoding="utf8")
    assert text.startswith("# Audit validation on wnut16\n") and "| 0.3 | 2 |" in text
    pytest.importorskip("matplotlib")
    assert (tmp_path / "wnut16" / "audit_validation.png").stat().st_size > 0


def test_settings_run_after_the_freeze_are_rows_of_their_own():
    design = {**report(0.3, 0, 0.5, True, 0.5), "corpus": "wnut16"}
    fresh = [{**report(0.3, seed, 0.7, True, 0.5), "corpus": "wnut16"} for seed in (3, 4)]
    groups = aggregate([design, *fresh], {"p30-s3", "p30-s4"})
    assert list(groups) == ["0.3", "0.3 (re-validation)"]
    assert groups["0.3"]["seeds"][2] == 1 and groups["0.3 (re-validation)"]["audit P"] == (0.7, 0.0, 2)
    # named nowhere: one row
    assert list(aggregate([design, *fresh])) == ["0.3"]
    assert "played no part in their design" in summary_markdown("wnut16", groups, design["settings"])
    assert "played no part" not in summary_markdown("wnut16", aggregate([design]), design["settings"])


def test_a_folder_holds_the_records_of_one_encoder(tmp_path):
    # the first records, from before the encoder was recorded, were of static vectors
    assert encoder_of([report(0.3, 0, 0.5, True, 0.5)], tmp_path) == "vectors"
    features = {**report(0.3, 1, 0.5, True, 0.5), "settings": {"encoder": "features"}}
    assert encoder_of([features], tmp_path) == "features"
    with pytest.raises(ValueError, match="records of several encoders \\(features, vectors\\)"):
        encoder_of([report(0.3, 0, 0.5, True, 0.5), features], tmp_path)


def test_the_review_summary_pairs_accepts_with_rejections(tmp_path):
    folder = tmp_path / "wnut16" / "audit-features"
    folder.mkdir(parents=True)
    # the checks beside the reviews say their encoder (reviews recorded no settings before issue 46)
    srsly.write_json(folder / "p50-s0.json", {**report(0.5, 0, 0.5, True, 0.5), "settings": {"encoder": "features"}})
    for seed, (accepts, both) in enumerate([(0.30, 0.34), (0.32, 0.34)]):
        srsly.write_json(folder / f"review-p50-s{seed}.json", {
            "corpus": "wnut16", "p": 0.5, "seed": seed, "k": 500 + seed, "accepted": 300, "rejected": 200,
            "macro_f": {"full": 0.40, "masked": 0.28, "reviewed-accepts": accepts, "reviewed": both},
            "recovered_share": {"reviewed-accepts": (accepts - 0.28) / 0.12, "reviewed": (both - 0.28) / 0.12},
            "paired_rejections": {"delta": both - accepts},
        })
    out = tmp_path / "wnut16" / "audit_review_features.md"
    assert write_review_summary(folder, out)
    text = out.read_text(encoding="utf8")
    assert text.startswith("# The review loop on wnut16, features encoder\n")
    assert "Test macro-F1 (%) of features/sampled_spancat_uniform trained on" in text
    # k's mean count, then F1 full, masked, accepts (31.0 ± 1.4), both (34.0 ± 0.0), recovered 25.0 ± 11.8 and 50.0
    assert "| 0.5 | 2 | 500 | 300 | 200 | 40.0 ± 0.0 | 28.0 ± 0.0 | 31.0 ± 1.4 | 34.0 ± 0.0 | 25.0 ± 11.8 | 50.0 ± 0.0 | 3.0 ± 1.4 |" in text
    # no review yet: no file
    (tmp_path / "wnut17" / "audit-features").mkdir(parents=True)
    assert not write_review_summary(tmp_path / "wnut17" / "audit-features", tmp_path / "wnut17" / "audit_review_features.md")
    assert not (tmp_path / "wnut17" / "audit_review_features.md").exists()
