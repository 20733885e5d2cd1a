"""config_fingerprint, which benchmarks resume on, ignores [training.logger]:
the shipped configs moved to spacy-imbalance.ConsoleLogger.v1 (issue 44)
and keep the fingerprint their records in metrics/ were written with, while
every setting that trains stays in it."""
import copy
import hashlib
import json
from pathlib import Path
from typing import Any, Iterator, List, Tuple

import pytest
import srsly
from thinc.api import Config

from spacy_imbalance.init_config import config_fingerprint
from spacy_imbalance.init_config.build import ADDED_AS_BEFORE

from ..conftest import ROOT

SHIPPED = sorted([*(ROOT / "configs").rglob("*.cfg"), *(ROOT / "spacy_imbalance" / "audit").glob("*.cfg")])
# the block every config had when its records were written, and the one it has now
OLD_LOGGER = '[training.logger]\n@loggers = "spacy.ConsoleLogger.v1"\nprogress_bar = false\n'
NEW_LOGGER = '[training.logger]\n@loggers = "spacy-imbalance.ConsoleLogger.v1"\nprogress_every = 50\nprogress_bar = false\n'


def fingerprint_before(text: str) -> str:
    """config_fingerprint as it was before it ignored the logger (the
    function that wrote the records' config_sha256)."""
    config = Config().from_str(text, interpolate=False)
    return hashlib.sha256(json.dumps(config, sort_keys=True).encode("utf8")).hexdigest()


def text_before(text: str) -> str:
    """A config's text with the logger block it had before issue 44, and
    without the settings added since at the value that trains as before
    (ADDED_AS_BEFORE: scope_o_weight = 0.0, issue 47)."""
    added = {f"{key} = {json.dumps(value)}" for key, value in ADDED_AS_BEFORE.items()}
    lines = [line for line in text.replace(NEW_LOGGER, OLD_LOGGER).split("\n") if line not in added]
    return "\n".join(lines)


@pytest.mark.parametrize("path", SHIPPED, ids=lambda path: path.relative_to(ROOT).as_posix())
def test_a_shipped_config_keeps_the_fingerprint_it_had_with_spacy_s_logger(path):
    text = path.read_text(encoding="utf8")
    assert text.count("[training.logger]") == 1
    assert config_fingerprint(text) == fingerprint_before(text_before(text))


def test_the_configs_users_get_print_progress():
    """Not vacuous: the configs of configs/ did change their logger."""
    for path in (ROOT / "configs").rglob("*.cfg"):
        assert NEW_LOGGER in path.read_text(encoding="utf8"), path


def test_every_record_current_before_is_current_now():
    """The records of metrics/ that matched their config before the logger
    changed match it now: none looks stale and none is retrained."""
    texts = {path.relative_to(ROOT / "configs").with_suffix("").as_posix(): path.read_text(encoding="utf8")
             for path in (ROOT / "configs").rglob("*.cfg")}
    before = {name: fingerprint_before(text_before(text)) for name, text in texts.items()}
    now = {name: config_fingerprint(text) for name, text in texts.items()}
    current_before, current_now = [], []
    for path in sorted((ROOT / "metrics").rglob("*.json")):
        record = srsly.read_json(path)
        if not isinstance(record, dict) or record.get("config") not in texts or "config_sha256" not in record:
            continue
        current_before.append(record["config_sha256"] == before[record["config"]])
        current_now.append(record["config_sha256"] == now[record["config"]])
    assert sum(current_before) > 100  # the benchmarks' records are there
    assert current_now == current_before


@pytest.mark.parametrize("logger", [
    {"@loggers": "spacy-imbalance.ConsoleLogger.v1", "progress_every": 5, "progress_bar": True},
    {"@loggers": "spacy.ConsoleLogger.v3", "progress_bar": "train", "console_output": False, "output_file": "log.jsonl"},
    {"@loggers": "spacy.ConsoleLogger.v1"},
])
def test_any_logger_hashes_as_spacy_s_console_logger(logger):
    text = (ROOT / "configs" / "sampled_spancat_uniform.cfg").read_text(encoding="utf8")
    config = Config().from_str(text, interpolate=False)
    config["training"]["logger"] = logger
    assert config_fingerprint(config.to_str()) == config_fingerprint(text) == fingerprint_before(text_before(text))


def test_a_config_without_a_logger_hashes_as_before():
    text = "[training]\nmax_steps = 10\n"
    assert config_fingerprint(text) == fingerprint_before(text)


def leaves(node: Any, path: Tuple[str, ...] = ()) -> Iterator[Tuple[str, ...]]:
    for key, value in node.items():
        if isinstance(value, dict) and value:
            yield from leaves(value, (*path, key))
        else:
            yield (*path, key)


def changed(value: Any) -> Any:
    if isinstance(value, bool):
        return not value
    if isinstance(value, (int, float)):
        return value + 1
    if isinstance(value, str):
        return value + "x"
    if isinstance(value, list):
        return [*value, 1]
    if isinstance(value, dict):  # an empty section
        return {"added": 1}
    return 1  # None


@pytest.mark.parametrize("name", ["sampled_spancat_uniform", "transformer/token_ner", "ner_sCRD"])
def test_a_change_to_any_other_setting_changes_the_fingerprint(name):
    text = (ROOT / "configs" / f"{name}.cfg").read_text(encoding="utf8")
    base = Config().from_str(text, interpolate=False)
    unchanged: List[str] = []
    settings = [path for path in leaves(base) if path[:2] != ("training", "logger")]
    assert len(settings) > 80
    for path in settings:
        config = copy.deepcopy(base)
        *parents, key = path
        node = config
        for part in parents:
            node = node[part]
        node[key] = changed(node[key])
        if config_fingerprint(config.to_str()) == config_fingerprint(text):
            unchanged.append(".".join(path))
    assert unchanged == []
