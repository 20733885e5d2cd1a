"""Command-line values the benchmark's commands and the project's scripts
share: seeds, comma-separated lists, --set overrides and the runs --only
selects. A bad value is a ``typer.BadParameter`` naming its option."""
from typing import Any, Callable, Dict, List, Optional, Set, TypeVar

import srsly
import typer

from .names import run_name

T = TypeVar("T")


def parse_seeds(values: List[str]) -> List[int]:
    """--seed values: each one seed or a comma-separated list ("0,1,2")."""
    try:
        seeds = [int(part) for value in values for part in str(value).split(",") if part.strip()]
    except ValueError:
        raise typer.BadParameter(f"expected whole numbers, e.g. --seed 0,1,2; got {values}", param_hint="--seed") from None
    if not seeds:
        raise typer.BadParameter(f"expected at least one seed, e.g. --seed 0,1,2; got {values}", param_hint="--seed")
    return seeds


def parse_list(value: str, kind: Callable[[str], T], option: str) -> List[T]:
    """A comma-separated option (--p 0.1,0.3), each part read by ``kind``."""
    try:
        return [kind(part) for part in value.split(",") if part.strip()]
    except ValueError:
        raise typer.BadParameter(f"expected a comma-separated list, got {value!r}", param_hint=option) from None


def only_names(only: str) -> Set[str]:
    """The names --only gives, comma-separated; none: everything is selected."""
    return {name.strip() for name in only.split(",") if name.strip()}


def selected(configs: List[str], tag: Optional[str], only: str) -> List[str]:
    """The configs whose runs --only names (<config>, or <config>-<tag> for
    tagged runs, as in the metrics file names); all when it is empty."""
    names = only_names(only)
    if not names:
        return list(configs)
    return [config for config in configs if run_name(config, tag) in names]


def split_sets(sets: List[str]) -> Dict[str, str]:
    """--set KEY=VALUE options as {KEY: VALUE}, the values still strings:
    {seed} is filled in per run (``with_seed``), ``overrides_for_load``
    reads them."""
    overrides: Dict[str, str] = {}
    for item in sets:
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            raise typer.BadParameter(f"expected KEY=VALUE, got {item!r}", param_hint="--set")
        if key.strip() in overrides:
            raise typer.BadParameter(f"{key.strip()} is set twice; set it once", param_hint="--set")
        overrides[key.strip()] = value.strip()
    return overrides


def setting_value(value: str) -> Any:
    """A --set value as spaCy's CLI overrides read it: JSON where it parses
    (numbers, booleans, null, lists), else the string."""
    try:
        return srsly.json_loads(value)
    except ValueError:
        return value


def with_seed(overrides: Dict[str, str], seed: int) -> Dict[str, str]:
    """The overrides of the run with ``seed``: {seed} in a value is its seed."""
    return {key: value.replace("{seed}", str(seed)) for key, value in overrides.items()}


def overrides_for_load(overrides: Dict[str, str]) -> Dict[str, Any]:
    """--set values as load_config wants them, read as spaCy's CLI does."""
    return {key: setting_value(value) for key, value in overrides.items()}
