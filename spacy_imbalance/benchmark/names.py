"""The names of runs in metrics/ and training/: <config>[-<tag>]-s<seed>
(``layout.Layout`` says where those folders are)."""
from pathlib import Path
from typing import Optional, Tuple


def run_name(config: str, tag: Optional[str]) -> str:
    """<config>-<tag>, or <config> untagged (``tag`` None or empty: e.g. the
    headline runs a study uses as its p = 0 column)."""
    return f"{config}-{tag}" if tag else config


def system_run(system: str, tag: str) -> Tuple[str, Optional[str]]:
    """The (config, tag) of a study's system in the setting with ``tag``. A
    system is a config, or CONFIG@VARIANT for runs of that config trained with
    an override and tagged <tag>_<VARIANT> (<VARIANT> in the untagged setting):
    e.g. features/sampled_spancat_uniform@v2 in the setting nw is
    features/sampled_spancat_uniform-nw_v2."""
    config, _, variant = system.partition("@")
    if variant:
        tag = f"{tag}_{variant}" if tag else variant
    return config, tag or None


def seed_of(path: Path) -> int:
    """The seed of a run's metrics file, <name>-s<seed>.json."""
    return int(path.stem.rsplit("-s", 1)[1])
