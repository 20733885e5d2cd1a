"""Named facts for the docs: numbers derived from metrics/ (a difference, a
range across files, a ratio) that no single metrics file holds.

Each fact is a small function over the files it names; metrics/facts.json
keeps its value, the files it came from and how it is computed, and the docs
read it as ``{{ facts : NAME | FORMAT }}`` (scripts/write_docs.py, which also
rewrites metrics/facts.json). Values keep the units of their files (scores
as fractions unless the file stores points); formatting is the docs' job.

    python scripts/facts.py    # write metrics/facts.json alone
"""
import json
from pathlib import Path
from statistics import mean
from typing import Any, Callable, Dict, List, Tuple

ROOT = Path(__file__).resolve().parent.parent
FACTS: List[Tuple[str, Tuple[str, ...], Callable[..., Any]]] = []


def fact(name: str, *paths: str):
    """Register fn(*loaded files) as the fact NAME, computed from PATHS."""

    def register(fn: Callable[..., Any]) -> Callable[..., Any]:
        FACTS.append((name, paths, fn))
        return fn

    return register


def _round(value: Any) -> Any:
    if isinstance(value, float):
        return round(value, 6)
    if isinstance(value, dict):
        return {k: _round(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_round(v) for v in value]
    return value


def compute(root: Path = ROOT) -> Dict[str, Dict[str, Any]]:
    out: Dict[str, Dict[str, Any]] = {}
    for name, paths, fn in FACTS:
        loaded = []
        for path in paths:
            file = root / path
            if not file.is_file():
                raise FileNotFoundError(f"fact {name!r} reads {path}, which does not exist")
            loaded.append(json.loads(file.read_text(encoding="utf8")))
        how = " ".join((fn.__doc__ or "").split())
        out[name] = {"value": _round(fn(*loaded)), "from": list(paths), "how": how}
    return out


# --- facts ----------------------------------------------------------------


if __name__ == "__main__":
    (ROOT / "metrics" / "facts.json").write_text(json.dumps(compute(), indent=1, ensure_ascii=False) + "\n", encoding="utf8")
