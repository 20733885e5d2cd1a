"""The gradient probe's table and configs (dev/transformer/probe.py)."""
from dev.transformer.probe import config_file, table

from ...conftest import ROOT


def test_probe_table_shows_configs_not_measured_yet():
    report = {"updates": 2, "sentences": 64, "corpus": "wnut17", "seed": 0, "configs": {"a": [0.0, 57.91], "b": None}}
    lines = table(report).splitlines()
    assert lines[2:] == ["| config | update 1 | update 2 |", "| --- | --: | --: |", "| a | 0 | 57.9 |", "| b | not measured yet |  |"]


def test_probe_config_file_is_the_shipped_one_or_a_revisions(tmp_path):
    assert config_file(ROOT, "transformer/ner", tmp_path) == ROOT / "configs" / "transformer" / "ner.cfg"
    copied = config_file(ROOT, "HEAD:ner", tmp_path)
    assert copied == tmp_path / "HEAD-ner.cfg" and "[components.ner]" in copied.read_text(encoding="utf8")
