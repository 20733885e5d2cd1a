"""A summary of runs (benchmark/summary.py): mean ± std per system, the
size factor and the step-cap mark when the records say so, the chart."""
import pytest

from spacy_imbalance.benchmark.summary import markdown_table, plot_per_type, summarize_reports


def test_summarize_shows_the_size_factor_when_recorded():
    def run(f, size=None):
        report = {"name": "sCR", "macro": {"p": f, "r": f, "f": f}, "micro": {"p": f, "r": f, "f": f}, "per_type": {}}
        if size is not None:
            report["size_factor"] = size
        return report

    summary = summarize_reports([run(0.2, 2.0), run(0.4, 3.0)])
    assert summary["sCR"]["size_factor"] == pytest.approx(2.5)
    table = markdown_table(summary)
    assert "| size factor |" in table and "| sCR | 2 | 30.0 ± 14.1 | 30.0 ± 14.1 | 30.0 ± 14.1 | 30.0 ± 14.1 | 2.50 |" in table
    # one run without it: no column rather than a misleading mean
    assert "size factor" not in markdown_table(summarize_reports([run(0.2, 2.0), run(0.4)]))
    # every training set the size of its corpus (a loss comparison): no column
    assert "size factor" not in markdown_table(summarize_reports([run(0.2, 1.0), run(0.4, 1.0)]))


def test_summarize_flags_systems_with_runs_cut_by_the_step_cap():
    def run(name, f, cut=None):
        report = {"name": name, "macro": {"p": f, "r": f, "f": f}, "micro": {"p": f, "r": f, "f": f}, "per_type": {}}
        if cut is not None:
            report["cut_by_step_cap"] = cut
        return report

    table = markdown_table(summarize_reports([run("ner", 0.2, False), run("ner", 0.4, True), run("sc", 0.3, False), run("old", 0.3)]))
    assert "| ner† | 2 |" in table and "| sc | 1 |" in table and "| old | 1 |" in table
    assert "a longer budget might score higher: ner (1 of 2)." in table
    # no run cut: no mark and no note
    assert "†" not in markdown_table(summarize_reports([run("sc", 0.3, False), run("old", 0.3)]))


def test_summary_per_type_f1_is_the_mean_with_a_missing_type_at_zero_and_the_chart_is_drawn(tmp_path):
    pytest.importorskip("matplotlib")

    def run(name, f, per_type):
        return {"name": name, "macro": {"p": f, "r": f, "f": f}, "micro": {"p": f, "r": f, "f": f},
                "per_type": {label: {"f": value} for label, value in per_type.items()}}

    # a type a run never predicted nor had (only another run of its name): F = 0 there
    summary = summarize_reports([run("a", 0.5, {"PER": 0.6, "LOC": 0.2}), run("a", 0.7, {"PER": 0.8})])
    assert summary["a"]["per_type_f"] == pytest.approx({"LOC": 10.0, "PER": 70.0})
    assert summary["a"]["macro_f"] == pytest.approx({"mean": 60.0, "std": 100 * 0.2 / 2**0.5})
    assert "| a | 10.0 | 70.0 |" in markdown_table(summary)
    chart = tmp_path / "charts" / "per_type.png"
    plot_per_type(summary, chart, "Per-type F1")
    assert chart.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
