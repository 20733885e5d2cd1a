"""Write every shipped config with `spacy-imbalance init-config`, from the
recipes of configs/recipes.yml.

- configs/<name>.cfg for each recipe under `configs`;
- configs/vectors/, configs/features/ and configs/transformer/<name>.cfg for
  each of them on the CNN encoder: the same pipeline with static vectors,
  frozen all-MiniLM-L6-v2 features, or all-MiniLM-L6-v2 fine-tuned
  (spacy_imbalance/init_config/encoders.py says what each changes);
- the files under `package` (the audit's default models).

    python scripts/write_configs.py           # (re)write them
    python scripts/write_configs.py --check   # exit 1 if any is missing or out of date
"""
from pathlib import Path
from typing import Any, Dict, List

import srsly
import typer

from spacy_imbalance.init_config import ConfigChoice, build_config, render
from spacy_imbalance.init_config.options import ENCODERS

ROOT = Path(__file__).resolve().parent.parent
RECIPES = Path("configs") / "recipes.yml"
# the *_v1 encoders write only the configs whose recipes name them
VARIANTS = [encoder for encoder in ENCODERS if encoder != "cnn" and not encoder.endswith("_v1")]
KEYS = {"component", "sampler", "loss", "resample", "head", "encoder", "scoped", "set", "notes"}


def choice_of(name: str, recipe: Dict[str, Any], encoder: str = "") -> ConfigChoice:
    unknown = set(recipe) - KEYS
    if unknown:
        raise ValueError(f"{RECIPES}, recipe {name}: unknown keys {', '.join(sorted(unknown))} (use {', '.join(sorted(KEYS))})")
    return ConfigChoice(
        recipe["component"], sampler=recipe.get("sampler"), loss=recipe.get("loss"), resample=recipe.get("resample"),
        head=recipe.get("head"), encoder=encoder or recipe.get("encoder", "cnn"), overrides=dict(recipe.get("set") or {}),
        # scoped: {path: [labels]}, init-config's --scoped PATH=LABEL,LABEL
        scoped=tuple((path, tuple(labels)) for path, labels in (recipe.get("scoped") or {}).items()),
    )


def text_of(name: str, choice: ConfigChoice, notes: Dict[str, str]) -> str:
    header = [
        f"Written by `spacy-imbalance init-config {choice.command()}`",
        f"from the recipe {name} of {RECIPES} (python scripts/write_configs.py): edit it, not this file.",
    ]
    try:
        return render(build_config(choice), header=header, notes=notes)
    except ValueError as err:
        raise ValueError(f"{RECIPES}, recipe {name}: {err}") from err


def expected_files(root: Path = ROOT) -> Dict[Path, str]:
    """Every generated config's path and text."""
    recipes = srsly.read_yaml(root / RECIPES)
    out: Dict[Path, str] = {}
    for name, recipe in recipes["configs"].items():
        choice = choice_of(name, recipe)
        notes = recipe.get("notes") or {}
        out[root / "configs" / f"{name}.cfg"] = text_of(name, choice, notes)
        if choice.encoder != "cnn":
            continue
        for encoder in VARIANTS:
            variant = choice_of(name, recipe, encoder)
            out[root / "configs" / encoder / f"{name}.cfg"] = text_of(name, variant, notes)
    for path, recipe in recipes["package"].items():
        out[root / path] = text_of(path, choice_of(path, recipe), recipe.get("notes") or {})
    return out


def stale_files(expected: Dict[Path, str], root: Path = ROOT) -> List[Path]:
    """Generated files that differ from their recipe, and configs with no recipe."""
    stale = [path for path, text in expected.items() if not path.is_file() or path.read_text(encoding="utf8") != text]
    for folder in ["", *VARIANTS]:
        stale.extend(path for path in sorted((root / "configs" / folder).glob("*.cfg")) if path not in expected)
    return stale


def main(check: bool = typer.Option(False, "--check", help="Exit 1 if a config is missing, out of date or has no recipe")) -> None:
    expected = expected_files()
    stale = stale_files(expected)
    if check:
        if stale:
            names = ", ".join(str(path.relative_to(ROOT)) for path in stale)
            typer.echo(f"Out of date or without a recipe (run python scripts/write_configs.py): {names}", err=True)
            raise typer.Exit(1)
        typer.echo(f"{len(expected)} configs checked")
        return
    orphans = [path for path in stale if path not in expected]
    if orphans:
        # never deleted here: it may be someone's own config
        names = ", ".join(str(path.relative_to(ROOT)) for path in orphans)
        typer.echo(f"No recipe in {RECIPES} for {names}: add one, or move or delete the file", err=True)
        raise typer.Exit(1)
    for path in stale:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(expected[path], encoding="utf8")
    typer.echo(f"{len(expected)} configs written ({len(stale)} changed)")


if __name__ == "__main__":
    typer.run(main)
