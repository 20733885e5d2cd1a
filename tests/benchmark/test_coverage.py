"""The provenance of the records behind published tables (spacy_imbalance/benchmark/coverage.py):
which records each table reads, which of them lack provenance, and the
generated line under a table that names those rows."""
import json
from pathlib import Path

import pytest

from spacy_imbalance.benchmark.coverage import Coverage, note, study_tables, summary
from scripts import write_docs  # scripts/: a folder of the project root, which pytest puts on sys.path
from spacy_imbalance.sweeps import run_provenance

from ..conftest import ROOT

# a study as project.yml runs it: its runs, then its table
PROJECT = """title: t
commands:
  - name: s
    script:
      - "python -m spacy_imbalance benchmark run --corpus c --config ner --config ours --max-steps 10 --set a=1 --set k=0.5 --tag m50"
      - "python -m spacy_imbalance benchmark table masking --corpus c --config ner --config ours --setting =0 --setting m50=0.5 --reference base"
"""


def _write(root: Path, path: str, data) -> Path:
    file = root / path
    file.parent.mkdir(parents=True, exist_ok=True)
    file.write_text(data if isinstance(data, str) else json.dumps(data), encoding="utf8")
    return file


def _run(provenance=None):
    return {"macro": {"f": 0.5}, **({"provenance": provenance} if provenance is not None else {})}


def _rows(records):
    return [(record.row, record.seed, record.state) for record in records]


def test_a_study_tables_records_are_its_configs_at_each_setting_and_its_references(tmp_path):
    full = run_provenance(-1, ROOT)
    _write(tmp_path, "project.yml", PROJECT)
    for name, seed, provenance in [("ner", 0, None), ("ner-m50", 0, full), ("ours", 0, full), ("ours-m50", 0, full),
                                   ("ours-m50", 1, {"device": "cpu", "cpu": "x", "cpu_cores": 2}), ("base", 0, full)]:
        _write(tmp_path, f"metrics/c/{name}-s{seed}.json", _run(provenance))
    _write(tmp_path, "metrics/c/other-s0.json", _run())  # read by no table
    records = Coverage(tmp_path).records("metrics/c/masking.md")
    assert _rows(records) == [("ner", 0, "none"), ("ner-m50", 0, "full"), ("ours", 0, "full"), ("ours-m50", 0, "full"),
                              ("ours-m50", 1, "partial"), ("base", 0, "full")]
    assert records[0].path == "metrics/c/ner-s0.json"
    lines = note(records)
    assert lines[0] == "Rows without recorded provenance (trained before records carried it): `ner` (seed 0)."
    assert lines[1] == ("Rows whose recorded provenance lacks command, cpu_count, git_commit, git_dirty, libraries, package_version, "
                        "platform, python, time_utc (recorded before records held them): `ours-m50` (seed 1).")


def test_a_study_system_with_a_variant_is_found_by_its_own_tag(tmp_path):
    project = "commands:\n  - name: s\n    script:\n      - \"spacy-imbalance benchmark table nw --corpus c --config ner --config ours@v2 --setting nw=0 --setting nw_m50=0.5\"\n"
    _write(tmp_path, "project.yml", project)
    for name in ("ner-nw", "ner-nw_m50", "ours-nw_v2", "ours-nw_m50_v2", "ours-nw", "ours-nw_m50"):
        _write(tmp_path, f"metrics/c/{name}-s0.json", _run())
    # the variant's runs, not the config's runs without the override
    assert [record.row for record in Coverage(tmp_path).records("metrics/c/nw.md")] == ["ner-nw", "ner-nw_m50", "ours-nw_v2", "ours-nw_m50_v2"]


def test_tables_written_from_a_json_find_their_records_from_it(tmp_path):
    full = run_provenance(-1, ROOT)
    coverage = Coverage(tmp_path, write_docs.FOLDERS)
    # a headline table: its JSON names corpus, encoder, seeds and systems
    headline = {"corpus": "c", "encoder": "vectors", "seeds": [0, 1], "systems": {"ner": {}}, "missing": []}
    _write(tmp_path, "metrics/c/headline.json", headline)
    _write(tmp_path, "metrics/c/vectors/ner-s0.json", _run(full))
    _write(tmp_path, "metrics/c/vectors/ner-s1.json", _run())
    assert _rows(coverage.records("metrics/c/headline.md")) == [("ner", 0, "full"), ("ner", 1, "none")]
    # a benchmark summary: run name -> {runs, ...}; the runs' files beside it (a run name may hold a folder)
    _write(tmp_path, "metrics/c/summary.json", {"ner": {"runs": 1}, "vectors/ner": {"runs": 2}})
    _write(tmp_path, "metrics/c/ner-s2.json", _run(full))
    assert _rows(coverage.records("metrics/c/summary.md")) == [("ner", 2, "full"), ("vectors/ner", 0, "full"), ("vectors/ner", 1, "none")]
    # runs collected from a GPU machine: each in the JSON itself
    _write(tmp_path, "metrics/c/gpu/check.json", {"archive": "a.tgz", "runs": {"ner-s0": {"provenance": full}, "ner-s1": {}}, "failed": {}})
    assert _rows(coverage.records("metrics/c/gpu/check.md")) == [("ner", 0, "full"), ("ner", 1, "none")]
    # results keyed by the runs they were computed from
    _write(tmp_path, "metrics/c/variants.json", {"ner-s2": {"argmax": 0.1}, "vectors/ner-s1": {"argmax": 0.2}})
    assert _rows(coverage.records("metrics/c/variants.md")) == [("ner", 2, "full"), ("vectors/ner", 1, "none")]
    # a measurement: the table's own JSON is its record
    _write(tmp_path, "metrics/c/speed.json", {"results": {}, "provenance": full})
    assert _rows(coverage.records("metrics/c/speed.md")) == [("speed", None, "full")]
    # a table over a folder of records
    _write(tmp_path, "metrics/c/audit/p30-s0.json", {"p": 0.3})
    assert _rows(coverage.records("metrics/c/audit_validation.md")) == [("audit/p30", 0, "none")]
    # nothing to find it from: unknown, not empty
    assert coverage.records("metrics/c/prose.md") is None


def test_the_summary_counts_each_tables_records_and_each_record_once(tmp_path):
    full = run_provenance(-1, ROOT)
    _write(tmp_path, "metrics/c/a.json", {"ner": {"runs": 2}})
    _write(tmp_path, "metrics/c/b.json", {"ner": {"runs": 2}, "ours": {"runs": 1}})
    _write(tmp_path, "metrics/c/ner-s0.json", _run(full))
    _write(tmp_path, "metrics/c/ner-s1.json", _run())
    _write(tmp_path, "metrics/c/ours-s0.json", _run(full))
    result = summary(Coverage(tmp_path), ["metrics/c/a.md", "metrics/c/b.md", "metrics/c/a.md", "metrics/c/prose.md"])
    assert result["tables"] == {
        "metrics/c/a.md": {"records": 2, "full": 1, "partial": 0, "none": 1},
        "metrics/c/b.md": {"records": 3, "full": 2, "partial": 0, "none": 1},
    }
    assert result["total"] == {"records": 3, "full": 2, "partial": 0, "none": 1, "share_full": 0.6667, "target": 0.95, "meets_target": False}
    assert result["unmapped"] == ["metrics/c/prose.md"]


def test_a_note_says_every_row_when_no_record_of_a_table_has_provenance(tmp_path):
    _write(tmp_path, "metrics/c/s.json", {"ner": {"runs": 2}, "ours": {"runs": 1}})
    for name in ("ner-s0", "ner-s1", "ours-s0"):
        _write(tmp_path, f"metrics/c/{name}.json", _run())
    records = Coverage(tmp_path).records("metrics/c/s.md")
    assert note(records) == ["Rows without recorded provenance (trained before records carried it): every row (3 records)."]
    assert note([]) == []


def test_write_docs_notes_the_rows_without_provenance_under_their_table_only(tmp_path):
    full = run_provenance(-1, ROOT)
    _write(tmp_path, "docs/src/README.md", "# Top\n\n<!-- include: metrics/c/old.md -->\n\n<!-- include: metrics/c/new.md -->\n\nend\n")
    _write(tmp_path, "metrics/c/old.md", "| system |\n| --- |\n| ner |\n| ours |\n")
    _write(tmp_path, "metrics/c/old.json", {"ner": {"runs": 1}, "ours": {"runs": 1}})
    _write(tmp_path, "metrics/c/ner-s0.json", _run())  # trained before records carried provenance
    _write(tmp_path, "metrics/c/ours-s0.json", _run(full))
    _write(tmp_path, "metrics/c/new.md", "| system |\n| --- |\n| ours |\n")
    _write(tmp_path, "metrics/c/new.json", {"ours": {"runs": 1}})
    pages = write_docs.render_all(tmp_path, with_facts=False)
    assert pages[tmp_path / "README.md"].endswith(
        "# Top\n\n| system |\n| --- |\n| ner |\n| ours |\n\n"
        "Rows without recorded provenance (trained before records carried it): `ner` (seed 0).\n\n"
        "| system |\n| --- |\n| ours |\n\nend\n"
    )
    written = json.loads(pages[tmp_path / write_docs.PROVENANCE])
    assert written["tables"] == {"metrics/c/old.md": {"records": 2, "full": 1, "partial": 0, "none": 1},
                                 "metrics/c/new.md": {"records": 1, "full": 1, "partial": 0, "none": 0}}


def test_every_published_table_has_its_records_found():
    """A table no rule finds the records of would go without its note: each
    table the docs include is mapped (a new kind of table needs a rule)."""
    lines = [line.strip() for source in write_docs.sources(ROOT).values() for line in source.read_text(encoding="utf8").splitlines()]
    tables = [match.group(1) for match in map(write_docs.INCLUDE.match, lines) if match]
    result = summary(Coverage(ROOT, write_docs.FOLDERS), tables)
    assert result["unmapped"] == []
    assert len(result["tables"]) >= 50 and result["total"]["records"] >= 900


def test_a_record_that_is_not_json_is_named(tmp_path):
    _write(tmp_path, "metrics/c/s.json", {"ner": {"runs": 1}})
    _write(tmp_path, "metrics/c/ner-s0.json", "{not json")
    with pytest.raises(ValueError, match=r"metrics/c/ner-s0.json is not JSON \(Expecting property name"):
        Coverage(tmp_path).records("metrics/c/s.md")


def test_study_tables_are_read_from_the_commands_that_write_them(tmp_path):
    """The package's command, as an executable or a module, and the script it
    replaced; any other command line is no study table."""
    _write(tmp_path, "project.yml", """commands:
  - name: a
    script:
      - "spacy-imbalance benchmark table low --corpus c --corpus d --config ner --setting n50=50"
      - "python scripts/study_table.py old --corpus c --config x --setting =0 --reference base"
      - "python -m spacy_imbalance benchmark run --corpus c --config ner"
      - "python -m spacy_imbalance benchmark table"
""")
    assert study_tables(tmp_path) == {
        "metrics/c/low.md": (["ner"], ["n50"], []),
        "metrics/d/low.md": (["ner"], ["n50"], []),
        "metrics/c/old.md": (["x"], [""], ["base"]),
    }
    assert study_tables(tmp_path / "elsewhere") == {}
