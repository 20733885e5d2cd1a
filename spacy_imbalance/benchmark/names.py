"""The names of runs in metrics/ and training/: <config>[-<tag>]-s<seed>
(``layout.Layout`` says where those folders are)."""
from pathlib import Path
from typing import Optional


def run_name(config: str, tag: Optional[str]) -> str:
    """<config>-<tag>, or <config> untagged (``tag`` None or empty: e.g. the
    headline runs a study uses as its p = 0 column)."""
    return f"{config}-{tag}" if tag else config


def seed_of(path: Path) -> int:
    """The seed of a run's metrics file, <name>-s<seed>.json."""
    return int(path.stem.rsplit("-s", 1)[1])
