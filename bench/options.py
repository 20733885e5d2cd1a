"""Command-line values the scripts share: seeds, comma-separated lists,
--set overrides and the runs --only selects."""
from typing import Any, Callable, Dict, List, Optional, Set, TypeVar

import typer

from .names import run_name

T = TypeVar("T")


def parse_seeds(values: List[str]) -> List[int]:
    """--seed values: each one seed or a comma-separated list ("0,1,2")."""
    try:
        return [int(part) for value in values for part in str(value).split(",") if part.strip()]
    except ValueError:
        raise typer.BadParameter(f"expected whole numbers, e.g. --seed 0,1,2; got {values}", param_hint="--seed")


def parse_list(value: str, kind: Callable[[str], T], option: str) -> List[T]:
    """A comma-separated option (--p 0.1,0.3), each part read by ``kind``."""
    try:
        return [kind(part) for part in value.split(",") if part.strip()]
    except ValueError:
        raise typer.BadParameter(f"expected a comma-separated list, got {value!r}", param_hint=option)


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


def parse_sets(sets: List[str]) -> Dict[str, str]:
    """--set KEY=VALUE overrides, the values still strings: {seed} is filled
    in per run (``with_seed``) and ``overrides_for_load`` reads them."""
    from spacy_imbalance.cli import split_sets

    return split_sets(sets)


def with_seed(overrides: Dict[str, str], seed: int) -> Dict[str, str]:
    return {key: value.replace("{seed}", str(seed)) for key, value in overrides.items()}


def overrides_for_load(overrides: Dict[str, str]) -> Dict[str, Any]:
    """--set values as load_config wants them, read as spaCy's CLI does."""
    from spacy_imbalance.cli import setting_value

    return {key: setting_value(value) for key, value in overrides.items()}
