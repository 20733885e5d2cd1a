import typer

app = typer.Typer(
    name="spacy-imbalance",
    help="Corpus conversion, imbalance statistics and macro-F1 evaluation for spaCy NER.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)


def parse_split(value: str) -> dict:
    """'train=0.7,dev=0.15,test=0.15' -> {'train': 0.7, 'dev': 0.15, 'test': 0.15}."""
    parts = {}
    for item in value.split(","):
        name, sep, fraction = item.partition("=")
        try:
            parts[name.strip()] = float(fraction)
        except ValueError:
            sep = ""
        if not sep or not name.strip():
            raise typer.BadParameter(f"expected name=fraction pairs like train=0.7,dev=0.15,test=0.15, got {item!r}")
    return parts
