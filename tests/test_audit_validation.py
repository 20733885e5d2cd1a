"""The pure parts of scripts/audit_validation.py: span matching, P/R and
P@k, cleanlab's flagged tokens as spans, the realised miss rate, restoring,
the recovered share and the summary over seeds (hand-computed values)."""
import importlib.util
import math

import numpy
import pytest
import spacy
import srsly
from spacy.tokens import Doc, Span

from .conftest import ROOT


def load(name):
    spec = importlib.util.spec_from_file_location(name, ROOT / "scripts" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


av = load("audit_validation")

TRUTH = [(0, 1, 3, "PER"), (0, 5, 6, "LOC"), (1, 0, 2, "ORG")]
PREDICTED = [(0, 1, 3, "PER"), (0, 5, 6, "ORG"), (0, 7, 9, "LOC"), (1, 1, 2, "ORG")]


def test_audit_validation_names():
    assert av.setting_name(0.3, 0) == "p30-s0" and av.setting_name(0.05, 2) == "p05-s2"
    assert av.run_name(0.1) == "audit/p10" and av.run_name(0.3, "features") == "audit-features/p30"
    # each encoder has its own work folder, metrics and models; the vectors names are the first release's
    common = dict(corpus="wnut16", p=0.3, seed=1, folds=5, steps=2000, threshold=0.5, vectors="v", restore_steps=4000,
                  restore_patience=1000, eval_frequency=None, limit=None, resamples=500, gpu_id=-1, work=ROOT / "w")
    vectors, features = av.Setting(**common), av.Setting(**common, encoder="features")
    assert vectors.folder.name == "wnut16-p30-s1" and features.folder.name == "wnut16-features-p30-s1"
    assert (vectors.config, features.config) == ("vectors/sampled_spancat_uniform", "features/sampled_spancat_uniform")
    assert vectors.vector_overrides() == {"paths.vectors": "v"} and features.vector_overrides() == {}
    assert "encoder" not in vectors.shaping() and features.shaping()["encoder"] == "features"
    assert av.token_config("features").exists() and av.token_config("vectors").exists()
    assert av.metrics_folder(ROOT, "wnut16", "features").name == "audit-features"
    assert av.summary_path(ROOT, "wnut16", "features").name == "audit_validation_features.md"
    assert av.parse_list("0.1, 0.3,", float, "--p") == [0.1, 0.3]


@pytest.mark.parametrize(
    "mode,expected",
    [
        # (0,1,3) and (0,5,6) have the true boundaries; (0,5,6) has the wrong label
        ("exact", (2, 2)),
        ("exact_label", (1, 1)),
        # (1,1,2) shares a token with (1,0,2): all three true spans are touched
        ("overlap", (3, 3)),
    ],
)
def test_audit_validation_match_counts(mode, expected):
    assert av.match_counts(PREDICTED, TRUTH, mode) == expected


def test_audit_validation_selection_scores():
    scores = av.selection_scores(PREDICTED, TRUTH)
    assert scores["n"] == 4
    assert scores["exact"] == {"p": 2 / 4, "r": 2 / 3}
    assert scores["exact_label"] == {"p": 1 / 4, "r": 1 / 3}
    assert scores["overlap"] == {"p": 3 / 4, "r": 3 / 3}
    empty = av.selection_scores([], TRUTH)
    assert empty["exact"] == {"p": None, "r": 0.0}


def test_audit_validation_precision_at_k():
    ranked = [(0, 7, 9, "LOC"), (0, 1, 3, "PER"), (1, 1, 2, "ORG"), (0, 5, 6, "LOC")]
    scores = av.ranking_scores(ranked, TRUTH, 3)
    # top 3: one exact hit; P@k = R@k when k is the number of true spans
    assert scores["k"] == 3 and scores["exact"] == {"p": 1 / 3, "r": 1 / 3}
    assert scores["overlap"] == {"p": 2 / 3, "r": 2 / 3}
    # a ranking shorter than k: the missing places are misses
    short = av.ranking_scores([(0, 1, 3, "PER")], TRUTH, 3)
    assert short["exact"] == {"p": 1 / 3, "r": 1 / 3}
    assert av.ranking_scores(ranked, [], 0)["exact"] == {"p": None, "r": None}


def test_audit_validation_recall_by_label():
    found = [(0, 1, 3, "LOC"), (1, 0, 2, "ORG")]  # boundaries count, not the label
    assert av.recall_by_label(found, TRUTH + [(2, 0, 1, "PER")]) == {"LOC": 0.0, "ORG": 1.0, "PER": 0.5}


def test_audit_validation_group_flagged():
    issues = [(0, 1), (0, 2), (0, 3), (0, 4), (1, 0), (1, 2)]
    given = [[0, 0, 0, 1, 0], [0, 0, 0]]  # token 3 of doc 0 is a B- tag: not a missed entity
    scores = [[0.9, 0.2, 0.4, 0.1, 0.3], [0.05, 0.9, 0.3]]
    spans = av.group_flagged(issues, given, scores)
    # runs of flagged O tokens, scored by their lowest token, lowest first; ties by position
    assert spans == [(1, 0, 1, 0.05), (0, 1, 3, 0.2), (0, 4, 5, 0.3), (1, 2, 3, 0.3)]
    assert av.group_flagged([], given, scores) == []


def test_audit_validation_span_label_and_tag_columns():
    tags = ["O", "B-LOC", "I-LOC", "B-PER", "I-PER"]
    probs = numpy.array([[0.5, 0.3, 0.0, 0.2, 0.0], [0.2, 0.0, 0.3, 0.0, 0.5], [0.0, 1.0, 0.0, 0.0, 0.0]])
    # LOC 0.3 + 0.3 = 0.6 < PER 0.2 + 0.5 = 0.7 over tokens 0-1
    assert av.span_label(probs, 0, 2, tags) == "PER"
    assert av.span_label(probs, 2, 3, tags) == "LOC"
    # a BILUO fold model with one of the two labels, mapped into the corpus's BIO tags
    assert av.tag_columns(["O", "B-PER", "I-PER", "L-PER", "U-PER"], tags) == [0, 3, 4, 4, 3]


def test_audit_validation_cleanlab_spans():
    pytest.importorskip("cleanlab")
    tags = ["O", "B-X", "I-X"]
    confident = {0: [0.9, 0.05, 0.05], 1: [0.05, 0.9, 0.05], 2: [0.05, 0.05, 0.9]}
    given = [[0, 1, 2, 0] if i % 2 else [0, 0, 0, 0] for i in range(30)] + [[]]
    probs = [numpy.array([confident[t] for t in g]) for g in given[:-1]] + [numpy.zeros((0, 3))]
    # document 4: tokens 1-2 tagged O, which the model confidently reads as an X entity
    probs[4] = numpy.array([confident[0], [0.02, 0.96, 0.02], [0.02, 0.02, 0.96], confident[0]])
    spans, n_tokens = av.cleanlab_spans(given, probs, tags)
    assert n_tokens == 2
    assert [span for span, _ in spans] == [(4, 1, 3, "X")]
    assert spans[0][1] == pytest.approx(0.02)  # self-confidence of the given O


def test_audit_validation_rates_and_estimate():
    rates = av.realised_rates({"PER": 3, "LOC": 1}, {"PER": 7, "ORG": 2})
    assert rates == {"LOC": 1.0, "ORG": 0.0, "PER": 0.3, "total": 4 / 13}
    rows = [
        {"label": "PER", "rate": 0.25, "rate_low": 0.2, "rate_high": 0.35},
        {"label": "MISC", "rate": 0.1, "rate_low": 0.0, "rate_high": 0.2},  # no such entity: left out
        {"label": "total", "rate": 0.4, "rate_low": 0.35, "rate_high": 0.45},
    ]
    errors = av.estimate_errors(rows, rates)
    assert set(errors) == {"PER", "total"}
    assert errors["PER"]["error"] == pytest.approx(-0.05) and errors["PER"]["covered"] is True
    assert errors["total"]["error"] == pytest.approx(0.4 - 4 / 13) and errors["total"]["covered"] is False


def test_audit_validation_recovered_share():
    assert av.recovered_share(full=0.40, masked=0.30, restored=0.35) == pytest.approx(0.5)
    assert av.recovered_share(full=0.40, masked=0.30, restored=0.28) == pytest.approx(-0.2)
    assert av.recovered_share(full=0.30, masked=0.30, restored=0.35) is None  # masking lost nothing


def test_audit_validation_restore_never_overlaps():
    nlp = spacy.blank("en")
    doc = Doc(nlp.vocab, words=["Ann", "met", "Bob", "in", "New", "York", "today"])
    doc.ents = [Span(doc, 0, 1, label="PER")]
    suspects = [
        ((0, 0, 2, "ORG"), 0.9),  # overlaps the kept Ann: skipped
        ((0, 4, 6, "LOC"), 0.8),
        ((0, 5, 7, "LOC"), 0.7),  # overlaps the more probable New York: skipped
        ((0, 2, 3, "PER"), 0.6),
    ]
    restored, n = av.restore([doc], suspects)
    assert n == 2
    assert [(e.start, e.end, e.label_) for e in restored[0].ents] == [(0, 1, "PER"), (2, 3, "PER"), (4, 6, "LOC")]
    assert [(e.start, e.end) for e in doc.ents] == [(0, 1)]  # the input is not changed


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
    groups = av.aggregate(reports)
    assert list(groups) == [0.1, 0.3]
    m, sd, n = groups[0.3]["audit P"]
    assert (m, n) == (pytest.approx(0.6), 2) and sd == pytest.approx(math.sqrt(0.02))
    held, _, n_held = groups[0.3]["interval holds it"]
    assert (held, n_held) == (0.5, 2)
    assert groups[0.3]["recovered share"] == (0.5, 0.0, 1)  # the seed without a share is left out
    assert groups[0.1]["removed"][0] == 100 and groups[0.3]["removed"][0] == 100.5
    text = av.summary_markdown("wnut16", groups, reports[0]["settings"])
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
    assert "No validation run yet" in av.summary_markdown("wnut16", {}, {})


def test_audit_validation_summary_files(tmp_path):
    folder = tmp_path / "wnut16" / "audit"
    folder.mkdir(parents=True)
    for r in (report(0.3, 0, 0.5, True, 0.5), report(0.3, 1, 0.7, False, None)):
        srsly.write_json(folder / f"{av.setting_name(r['p'], r['seed'])}.json", r)
    av.write_summary("wnut16", tmp_path)
    assert "| 0.3 | 2 |" in (tmp_path / "wnut16" / "audit_validation.md").read_text(encoding="utf8")
    pytest.importorskip("matplotlib")
    assert (tmp_path / "wnut16" / "audit_validation.png").stat().st_size > 0
