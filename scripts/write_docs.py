"""Write README.md, docs/*.md and docs/benchmarks/*.md from their sources and metrics/.

Sources and the pages written from them:

    docs/src/README.md          -> README.md
    docs/src/<guide>.md         -> docs/<guide>.md
    docs/benchmarks/src/<s>.md  -> docs/benchmarks/<s>.md
    bench/facts.py              -> metrics/facts.json (numbers derived from metrics/)
    benchmark.coverage          -> metrics/provenance.json (the published tables' records
                                   with and without recorded provenance)

A source is prose; every result number in it comes from metrics/ through one of
three markers (a marker stays on one line):

    <!-- include: metrics/wnut17/masking.md -->       a line: replaced by that file
    {{ metrics/wnut17/headline_vectors.json : systems.ner.vs_reference | ci1 }}
                                                     a value: PATH : KEY | FORMAT
    {{ anchor: bert_base_wnut17_macro }}             a published figure, quoted
                                                     with its source in docs/src/anchors.md

Under an included table whose records (spacy_imbalance.benchmark.coverage finds them) carry
no provenance or only part of it, a line names those rows: generated, never typed.

KEY is dotted (list indexes as numbers; a key holding dots is matched whole).
PATH may be a Markdown table a study wrote: KEY is then TABLE.ROW.COLUMN, the
table by position from 0, the row by its first cell, the column by its header
(``{{ metrics/wnut17/calibration_vectors.md : 2.vectors/sampled_spancat_all.95 % CI }}``).
A source may name a file once, ``<!-- alias: hv = metrics/wnut17/headline_vectors.json -->``
(the line is dropped), then write ``{{ hv : ... }}``; ``facts`` names
metrics/facts.json, whose entries give their ``value``. FORMAT is one of
FORMATS below or a Python format spec (``.1f``, ``,.0f``, ``+.1f``); negative
numbers get a typographic minus (−). A number the prose needs but no file
holds (a difference, a range across files, a ratio) is a named fact in
bench/facts.py, never arithmetic in a source. A missing file or key is an
error naming the source file and line. A marker inside an inline code span
(backticks) is left as written, unless it names a value that exists (an error: a slip).

A comparison is written by the generator, never by hand: a paired difference
{delta|estimate, low, high} read with FORMAT ``verdict`` prints "ahead" (its
95 % interval's lower bound above 0), "behind" (upper bound below 0) or
"level"; ``vs`` prints "ahead of", "behind" or "level with", for "X is
{{ ... | vs }} Y". Several rows: a KEY part may be a pattern (``*``, ``?``,
``[...]`` or ``{a,b}``) matching keys of its level, e.g.
``ner.sampled_spancat_uniform-m*.macro_f``; ``verdict_all`` then prints
"ahead at every setting" only when every row is ahead, else the count of
each ("ahead at 3 of 5 settings and level at 2"); ``verdict`` and ``vs``
refuse several rows, and any other FORMAT is applied to each row (a pattern
part holds no dot). Verdicts read the stored bounds at full precision: a
value is rounded once, where it is printed.

    python scripts/write_docs.py           # write the pages (and metrics/facts.json)
    python scripts/write_docs.py --check   # exit 1 if any is out of date
"""
import json
import re
from fnmatch import fnmatchcase
from pathlib import Path
from statistics import mean, stdev
from typing import Any, Callable, Dict, List, Tuple

import typer

from bench import facts
from spacy_imbalance.benchmark.cells import signed
from spacy_imbalance.benchmark.coverage import Coverage, note, summary

ROOT = Path(__file__).resolve().parent.parent

INCLUDE = re.compile(r"^<!-- include: (\S+) -->$")
ALIAS = re.compile(r"^<!-- alias: (\w+) = (\S+) -->$")
MARKER = re.compile(r"\{\{(.*?)\}\}")
CODE_SPAN = re.compile(r"(`[^`]*`)")
VALUE = re.compile(r"^\s*(\S+)\s*:\s*(.+?)\s*(?:\|\s*(\S+)\s*)?$")
ANCHOR = re.compile(r"^\s*anchor:\s*(\w+)\s*$")
ANCHOR_ROW = re.compile(r"^\|\s*`(\w+)`\s*\|\s*([^|]+?)\s*\|")
NUMERIC = re.compile(r"^[-+±\[\]\d\s.,%x]+$")
# a KEY part that names several keys of its level
PATTERN = re.compile(r"[*?\[{]")
BRACES = re.compile(r"\{([^{}]*)\}")
ANCHORS = "docs/src/anchors.md"
# what --allow-missing writes for a value that no file gives
MISSING = "–"
FACTS = "metrics/facts.json"
PROVENANCE = "metrics/provenance.json"
# the published tables that read every record of a folder: table name -> glob (relative to the table's folder)
FOLDERS = {
    "audit_validation.md": "audit/p*-s*.json",
    "audit_validation_features.md": "audit-features/p*-s*.json",
    "audit_review_features.md": "audit-features/review-p*-s*.json",
    "advise_validation.md": "*/advise_m*.json",
    "never_worse_trials.md": "never_worse/*.json",
    "never_worse_choice.md": "never_worse/*.json",
    # counted from the trials' models: their records are the trials'
    "never_worse_errors.md": "never_worse/*.json",
    "transformer_trials.md": "transformer_trials/*.json",
    "scope_trials.md": "scope_trials/*.json",
    "scope_trials_features_4000.md": "scope_trials_features_4000/*.json",
}
HEADER = "<!-- Generated by scripts/write_docs.py from {source} and metrics/: edit those, not this file. -->\n"


class SourceError(ValueError):
    """A marker that does not resolve, named by source file and line."""


def _minus(text: str) -> str:
    return text.replace("-", "−")


def _signed(x: float, digits: int) -> str:
    return _minus(f"{x:+.{digits}f}")


def _triple(node: Dict[str, float]) -> Tuple[float, float, float]:
    centre = node["delta"] if "delta" in node else node["estimate"]
    return centre, node["low"], node["high"]


def _spread(node: Any) -> Tuple[float, float]:
    """Mean and sample std of a list of seeds' values, or of a {mean, std} entry."""
    if isinstance(node, dict):
        return node["mean"], node["std"]
    return mean(node), (stdev(node) if len(node) > 1 else 0.0)


def _fraction(x: Any) -> float:
    """A fraction for the percent formats: a count (an int) scaled by 100 printed 262 false
    positives as 26200.0, so an int is refused."""
    if isinstance(x, int) and not isinstance(x, bool):
        raise ValueError(f"a percent format scales a fraction by 100; {x!r} is a count: print it without a format")
    return x


# FORMAT name -> (digits -> formatter); the digits end the name: pct1, ci1, x2
FORMATS: Dict[str, Callable[[int], Callable[[Any], str]]] = {
    # 100·x, e.g. 0.3061 -> 30.6
    "pct": lambda d: lambda x: _minus(f"{100 * _fraction(x):.{d}f}"),
    # 100·x with its sign, e.g. -0.0254 -> −2.5
    "+pct": lambda d: lambda x: _signed(100 * _fraction(x), d),
    # x with its sign, e.g. 6.5 -> +6.5
    "signed": lambda d: lambda x: _signed(x, d),
    # {delta|estimate, low, high} in fractions -> +2.4 [+0.8, +3.9] in points (a bound near 0: [−0.04, +3.3])
    # (cells.signed gives a bound that would round to a signed zero one digit more)
    "ci": lambda d: lambda n: "{} [{}, {}]".format(*(_minus(signed(v, d)) for v in _triple(n))),
    # the same, unsigned (rates): {estimate, low, high} -> 27.9 [22.3, 34.3]
    "pct_ci": lambda d: lambda n: "{} [{}, {}]".format(*(f"{100 * v:.{d}f}" for v in _triple(n))),
    # seeds' values in fractions (a list) -> mean ± std in points
    "pct_ms": lambda d: lambda n: "{:.{d}f} ± {:.{d}f}".format(*(100 * v for v in _spread(n)), d=d),
    # mean ± std as stored ({mean, std} or a list), no scaling
    "ms": lambda d: lambda n: "{:.{d}f} ± {:.{d}f}".format(*_spread(n), d=d),
    # mean of a list in points
    "pct_mean": lambda d: lambda n: f"{100 * mean(n):.{d}f}",
    # a ratio, e.g. 0.573 -> 0.57x
    "x": lambda d: lambda x: f"{x:.{d}f}x",
}
# the formats that read a list or an entry as one value
READS_MANY = {"ci", "pct_ci", "pct_ms", "ms", "pct_mean"}


class Rows(list):
    """The values a KEY pattern names, in the order of their file."""


def _shape(node: Any) -> str:
    """What a value is, briefly, for an error message."""
    if isinstance(node, dict):
        return "an entry with keys " + ", ".join(list(map(str, node))[:6]) + (", ..." if len(node) > 6 else "")
    return repr(node) if len(repr(node)) <= 60 else f"a {type(node).__name__}"


def _bounds(node: Any) -> Tuple[float, float]:
    """The (low, high) bounds of a paired difference, checked."""
    if not isinstance(node, dict) or not {"low", "high"} <= set(node):
        raise ValueError(f"a verdict needs a paired difference with its interval {{delta, low, high}}, not {_shape(node)}")
    low, high = node["low"], node["high"]
    numbers = all(isinstance(v, (int, float)) and not isinstance(v, bool) and v == v for v in (low, high))  # v == v: not NaN
    if not numbers or low > high:
        raise ValueError(f"a verdict needs numeric bounds with low <= high, not low = {low!r}, high = {high!r}")
    return low, high


def verdict(node: Any) -> str:
    """"ahead" when the interval lies above 0, "behind" when below, "level" when it holds 0
    (a bound exactly at 0 is level: the interval does not exclude 0)."""
    low, high = _bounds(node)
    return "ahead" if low > 0 else "behind" if high < 0 else "level"


VS = {"ahead": "ahead of", "level": "level with", "behind": "behind"}
ORDER = ("ahead", "level", "behind")


def verdict_all(rows: Any) -> str:
    """One verdict for several rows: "<verdict> at every setting" when every row
    agrees, else how many rows say each ("ahead at 3 of 5 settings and level at 2")."""
    if not isinstance(rows, list) or not rows:
        raise ValueError(f"verdict_all needs several rows (a KEY pattern such as a.*.macro_f, or a list), not {_shape(rows)}")
    words = [verdict(row) for row in rows]
    counts = [(word, words.count(word)) for word in ORDER if word in words]
    if len(counts) == 1:
        return f"{counts[0][0]} at every setting"
    parts = [f"{counts[0][0]} at {counts[0][1]} of {len(words)} settings"] + [f"{word} at {n}" for word, n in counts[1:]]
    return ", ".join(parts[:-1]) + " and " + parts[-1]


# FORMAT (no digits) -> the words it prints for a paired difference, or for several rows
VERDICTS: Dict[str, Callable[[Any], str]] = {
    "verdict": verdict,
    "vs": lambda node: VS[verdict(node)],
    "verdict_all": verdict_all,
}
# the verdicts that read several rows as one value
READS_ROWS = {"verdict_all"}


def format_value(value: Any, fmt: str) -> str:
    if fmt in READS_ROWS:
        return VERDICTS[fmt](value)
    if fmt in VERDICTS:
        if isinstance(value, list):
            raise ValueError(f"{fmt} reads one paired difference; for several rows use verdict_all")
        return VERDICTS[fmt](value)
    if isinstance(value, Rows):
        return ", ".join(format_value(row, fmt) for row in value)  # each row formatted
    match = re.fullmatch(r"(\+?[a-z_]+)(\d)", fmt or "")
    if isinstance(value, list) and not (match and match.group(1) in READS_MANY):
        return ", ".join(format_value(v, fmt) for v in value)  # a list of values, each formatted
    if match and match.group(1) in FORMATS:
        return FORMATS[match.group(1)](int(match.group(2)))(value)
    if isinstance(value, str):
        return value
    if isinstance(value, (dict, list)):
        raise ValueError(f"{type(value).__name__} needs a format that reads one ({', '.join(FORMATS)})")
    if not fmt:
        return _minus(str(value))
    return _minus(format(value, fmt))


def lookup(data: Any, key: str) -> Any:
    """data[key] for a dotted key; a key holding dots is matched whole, list indexes are numbers."""
    parts = key.split(".")
    node = data
    while parts:
        if isinstance(node, dict) and "value" in node and "from" in node:
            node = node["value"]  # a fact of metrics/facts.json
        for n in range(len(parts), 0, -1):
            name = ".".join(parts[:n])
            if isinstance(node, dict) and name in node:
                node, parts = node[name], parts[n:]
                break
            if isinstance(node, list) and n == 1 and re.fullmatch(r"-?\d+", name) and -len(node) <= int(name) < len(node):
                node, parts = node[int(name)], parts[1:]
                break
        else:
            raise KeyError(".".join(parts))
    if isinstance(node, dict) and "value" in node and "from" in node:
        return node["value"]  # a fact of metrics/facts.json
    return node


def _matches(pattern: str, name: str) -> bool:
    """fnmatch with ``{a,b}`` alternatives (one level of braces)."""
    braces = BRACES.search(pattern)
    if braces:
        return any(_matches(pattern[: braces.start()] + option + pattern[braces.end() :], name) for option in braces.group(1).split(","))
    return fnmatchcase(name, pattern)


def lookup_rows(data: Any, key: str) -> Rows:
    """The values a KEY with a pattern part names: every key of that level that
    matches it, each followed by the rest of KEY. A pattern that matches no key,
    or a matched row without the rest of KEY, is an error."""
    parts = key.split(".")
    at = next(i for i, part in enumerate(parts) if PATTERN.search(part))
    node = lookup(data, ".".join(parts[:at])) if at else data
    if isinstance(node, dict) and "value" in node and "from" in node:
        node = node["value"]  # a fact of metrics/facts.json
    if not isinstance(node, dict):
        raise KeyError(".".join(parts[: at + 1]))
    names = [name for name in node if _matches(parts[at], name)]
    if not names:
        raise KeyError(".".join(parts[: at + 1]))
    rest = ".".join(parts[at + 1 :])
    rows = Rows()
    for name in names:
        if not rest:
            row = node[name]
            rows.append(row["value"] if isinstance(row, dict) and "value" in row and "from" in row else row)
        elif PATTERN.search(rest):
            rows.extend(lookup_rows(node[name], rest))
        else:
            try:
                rows.append(lookup(node[name], rest))
            except KeyError as err:
                raise KeyError(f"{name}.{err.args[0]}") from None
    return rows


def markdown_tables(text: str) -> Dict[str, Dict[str, Dict[str, str]]]:
    """The tables of a Markdown file a study wrote, by position ("0", "1", ...):
    each row by its first cell, each cell by its column header. Numbers keep
    the study's formatting, with a typographic minus."""
    tables: Dict[str, Dict[str, Dict[str, str]]] = {}
    header: List[str] = []
    for line in text.splitlines() + [""]:
        cells = [cell.strip() for cell in line.strip().strip("|").split("|")] if line.lstrip().startswith("|") else None
        if cells is None:
            header = []
        elif not header:
            header = cells
            tables[str(len(tables))] = {}
        elif not all(set(cell) <= set(":- ") for cell in cells):
            row = {name: _minus(cell) if NUMERIC.match(cell) else cell for name, cell in zip(header, cells)}
            tables[str(len(tables) - 1)][cells[0].strip("`")] = row
    return tables


def read_anchors(root: Path) -> Dict[str, str]:
    path = root / ANCHORS
    if not path.is_file():
        return {}
    rows = (ANCHOR_ROW.match(line) for line in path.read_text(encoding="utf8").splitlines())
    return {row.group(1): row.group(2) for row in rows if row}


class Renderer:
    """Resolves markers against the files under root, reading each JSON file once."""

    def __init__(self, root: Path = ROOT, derived: Dict[str, Any] = None, allow_missing: bool = False):
        self.root = root
        # a missing file, key or fact renders as MISSING and is counted, instead of failing
        self.allow_missing = allow_missing
        self.missing = 0
        self.json: Dict[str, Any] = {} if derived is None else {FACTS: derived}
        self.anchors = read_anchors(root)
        # the records behind each included table, and the tables included, in order
        self.coverage = Coverage(root, FOLDERS)
        self.included: List[str] = []

    def data(self, path: str) -> Any:
        if path not in self.json:
            file = self.root / path
            if not file.is_file():
                raise FileNotFoundError(f"{path}, which does not exist (run the study that writes it)")
            text = file.read_text(encoding="utf8")
            self.json[path] = markdown_tables(text) if file.suffix == ".md" else json.loads(text)
        return self.json[path]

    def value(self, marker: str, aliases: Dict[str, str]) -> str:
        anchor = ANCHOR.match(marker)
        if anchor:
            if anchor.group(1) not in self.anchors:
                raise KeyError(f"anchor {anchor.group(1)!r}, which {ANCHORS} does not list")
            return self.anchors[anchor.group(1)]
        match = VALUE.match(marker)
        if match is None:
            raise ValueError(f"{{{{{marker}}}}} is neither PATH : KEY | FORMAT nor anchor: NAME")
        source, key, fmt = match.groups()
        path = aliases.get(source, source)
        try:
            value = lookup_rows(self.data(path), key) if PATTERN.search(key) else lookup(self.data(path), key)
        except KeyError as err:
            if self.allow_missing:
                return self.count_missing()
            raise KeyError(f"{path} has no {key!r} (missing: {err.args[0]!r})") from None
        except FileNotFoundError:
            if self.allow_missing:
                return self.count_missing()
            raise
        try:
            return format_value(value, fmt)
        except (TypeError, ValueError):
            # a value a subset of runs leaves empty (None, no seeds) is missing too
            if self.allow_missing:
                return self.count_missing()
            raise

    def resolves(self, marker: str, aliases: Dict[str, str]) -> bool:
        """Whether ``marker`` names a value that exists (never told with --allow-missing, where every marker does)."""
        if self.allow_missing:
            return False
        try:
            self.value(marker, aliases)
        except (OSError, KeyError, ValueError, TypeError):
            return False
        return True

    def included_table(self, path: str) -> str:
        """An included file's text, with the note naming its rows whose records lack provenance."""
        self.included.append(path)
        text = (self.root / path).read_text(encoding="utf8").strip()
        lines = note(self.coverage.records(path) or [])
        return "\n\n".join([text, *lines])

    def count_missing(self) -> str:
        self.missing += 1
        return MISSING

    def render(self, source: Path, header: bool = True) -> str:
        """The source with its includes, values and anchors filled in."""
        name = source.relative_to(self.root).as_posix()
        aliases = {"facts": FACTS}
        lines: List[str] = []
        for number, line in enumerate(source.read_text(encoding="utf8").splitlines(), start=1):
            try:
                alias = ALIAS.match(line.strip())
                if alias:
                    aliases[alias.group(1)] = alias.group(2)
                    continue
                include = INCLUDE.match(line.strip())
                if include:
                    included = self.root / include.group(1)
                    if included.is_file():
                        line = self.included_table(include.group(1))
                    elif self.allow_missing:
                        line = f"{self.count_missing()} ({include.group(1)} not written yet)"
                    else:
                        raise FileNotFoundError(f"includes {include.group(1)}, which does not exist (run the study that writes it)")
                # a marker inside an inline code span is shown as written; one that names a real value is a
                # slip (never_worse.md printed `{{ facts : ... }}` in its targets table), so it is refused
                parts = CODE_SPAN.split(line)
                for span in parts[1::2]:
                    for marker in MARKER.findall(span):
                        if self.resolves(marker, aliases):
                            raise ValueError(f"`{{{{{marker}}}}}` names a value but sits in backticks, so it would print as written: "
                                             "take it out of the code span")
                parts[::2] = [MARKER.sub(lambda m: self.value(m.group(1), aliases), part) for part in parts[::2]]
                lines.append("".join(parts))
            except (OSError, KeyError, ValueError, TypeError) as err:
                message = err.args[0] if err.args else repr(err)
                raise SourceError(f"{name}:{number}: {message}") from None
        text = "\n".join(lines).rstrip() + "\n"
        return HEADER.format(source=name) + "\n" + text if header else text


def sources(root: Path = ROOT) -> Dict[Path, Path]:
    """Each page to write -> its source."""
    pages = {}
    for source in sorted((root / "docs" / "src").glob("*.md")):
        pages[root / "README.md" if source.name == "README.md" else root / "docs" / source.name] = source
    for source in sorted((root / "docs" / "benchmarks" / "src").glob("*.md")):
        pages[root / "docs" / "benchmarks" / source.name] = source
    if not pages:
        raise FileNotFoundError(f"no sources in {root / 'docs' / 'src'} or {root / 'docs' / 'benchmarks' / 'src'}")
    return pages


def render_all(root: Path = ROOT, with_facts: bool = True, allow_missing: bool = False) -> Dict[Path, str]:
    """Every page's text, metrics/facts.json's (bench/facts.py over root's metrics/)
    and metrics/provenance.json's."""
    return _render(Renderer(root, facts.compute(root, allow_missing) if with_facts else None, allow_missing), root)[0]


def _render(renderer: "Renderer", root: Path) -> "tuple[Dict[Path, str], Renderer]":
    derived = renderer.json.get(FACTS)
    pages = {page: renderer.render(source) for page, source in sources(root).items()}
    if derived is not None:
        pages[root / FACTS] = json.dumps(derived, indent=1, ensure_ascii=False) + "\n"
    pages[root / PROVENANCE] = json.dumps(summary(renderer.coverage, renderer.included), indent=1) + "\n"
    return pages, renderer


def main(
    check: bool = typer.Option(False, "--check", help="Write nothing; exit 1 if a page differs from what its sources give"),
    allow_missing: bool = typer.Option(
        False, "--allow-missing/--require-all",
        help=f"Render a value, table or fact whose file or key is missing as {MISSING} instead of failing (a workflow run on a subset of its studies)",
    ),
) -> None:
    try:
        renderer = Renderer(ROOT, facts.compute(ROOT, allow_missing), allow_missing)
        pages, renderer = _render(renderer, ROOT)
    except (SourceError, FileNotFoundError) as err:
        typer.echo(f"✘ {err}", err=True)
        raise typer.Exit(1)
    stale = [path for path, text in pages.items() if not path.exists() or path.read_text(encoding="utf8") != text]
    if check:
        for path in stale:
            typer.echo(f"✘ {path.relative_to(ROOT)} is out of date: run python scripts/write_docs.py", err=True)
        raise typer.Exit(1 if stale else 0)
    for path in stale:
        path.write_text(pages[path], encoding="utf8")
    missing = f"; {renderer.missing} values missing" if renderer.missing else ""
    typer.echo(f"✔ {len(pages)} pages from docs/src/, docs/benchmarks/src/ and metrics/ ({len(stale)} updated{missing})")


if __name__ == "__main__":
    typer.run(main)
