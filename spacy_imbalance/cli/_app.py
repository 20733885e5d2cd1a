from typing import Dict, NoReturn

import typer
from wasabi import msg

app = typer.Typer(
    name="spacy-imbalance",
    help="Corpus conversion, imbalance statistics and macro-F1 evaluation for spaCy NER.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)


def fail(message: str) -> NoReturn:
    """Print a clear message and exit with code 1, instead of a traceback."""
    msg.fail(message)
    raise typer.Exit(1)


def parse_split(value: str) -> Dict[str, float]:
    """'train=0.7,dev=0.15,test=0.15' -> {'train': 0.7, 'dev': 0.15, 'test': 0.15}."""
    parts: Dict[str, float] = {}
    for item in value.split(","):
        name, _, fraction = (x.strip() for x in item.partition("="))
        if name in parts:
            raise typer.BadParameter(f"the part {name!r} is named twice in {value!r}")
        try:
            parts[name] = float(fraction)
        except ValueError:
            name = ""
        if not name:
            raise typer.BadParameter(f"expected name=fraction pairs like train=0.7,dev=0.15,test=0.15, got {item!r}")
    return parts
