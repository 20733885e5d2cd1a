"""Configs as they were: the text of configs/<config>.cfg at a git revision."""
import subprocess
from pathlib import Path


def config_at_revision(root: Path, revision: str, config: str) -> str:
    """configs/<config>.cfg as committed at ``revision`` in the project at ``root``."""
    return subprocess.run(
        ["git", "show", f"{revision}:configs/{config}.cfg"], cwd=root, check=True, capture_output=True, text=True
    ).stdout
