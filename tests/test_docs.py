"""README.md and the docs are generated (scripts/write_docs.py) from sources
whose result numbers all come from metrics/: the pages match their sources,
every marker resolves to a committed file, and no source holds a hand-typed
result number."""
import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Iterator, List, Set, Tuple

import pytest

from scripts import write_docs  # scripts/: a folder of the project root, which pytest puts on sys.path

from .conftest import ROOT

SOURCES = [ROOT / "docs" / "src", ROOT / "docs" / "benchmarks" / "src"]
# quoted figures from the literature, each with its source
ANCHORS = ROOT / write_docs.ANCHORS

# What a source may write as text: settings, names and references, never a
# result. Each pattern is removed before numbers are looked for.
_N = r"\d+(?:[.,]\d+)*"
_LIST = rf"{_N}(?:\s*(?:,|/|and|or|to|-|…|\.\.\.)\s*{_N})*"
SETTINGS = [
    # versions: spaCy 3.8, Python ≥ 3.11, transformers < 4.53.3, 3.8.0
    rf"(?i:spacy|python|pytorch|torch|cupy|cuda|spacy-transformers|transformers|thinc|ray)\s*[≥≤<>=]*\s*\d+(?:\.\d+)+",
    r"\b\d+\.\d+\.\d+\b",
    # a parameter set to a value or a list of values: p = 0.3, λ = 0.5-0.9, rate 0.7, p = 0.1 / 0.3 / 0.5
    rf"(?<![\w])(?:p|λ|k|K|T|s|n|N|M|μ|γ|α|β|rate|ratio|thresholds?|lambda_?|gamma|alpha|beta|mu|margin|dropout|tolerance|temperature|learn_rate|initial_rate|warmup_share|z_O|z_entity|probability)(?: fixed| left)?(?: at| of)?\s*(?:=|>=|<=|≥|≤|<|>)?\s*{_LIST}",
    # the interval level, the held-out share, entity-token shares of the subsets
    r"\b(?:95|99) %",
    rf"{_N} % of (?:its|the) training sentences",
    rf"{_LIST}\s?% (?:of )?(?:entity tokens|all tokens)",
    # references into papers
    rf"(?:§|Sec\.|Eq\.|Eqs\.|Table|Fig\.|Figs\.|Theorem|Section|appendix)\s*{_LIST}",
]
SETTING = re.compile("|".join(f"(?:{p})" for p in SETTINGS))
# what is not prose: markers, comments, inline code, link targets, URLs
NOT_PROSE = re.compile(r"\{\{.*?\}\}|<!--.*?-->|`[^`]*`|\]\([^)]*\)|https?://\S+")
# a number, signed or not, not part of a name (WNUT-2017, L6, v2, AUC-2T, 1e-4, float16)
NUMBER = re.compile(r"(?:(?<![\w.,])(?:[+−-]|±\s?)|(?<![\w.,+−±-]))\d[\d,]*(?:\.\d+)?(?:[-–]\d[\d,]*(?:\.\d+)?)?(?:\s?%|x(?!\w)|×)?(?![\w])")
# a result: a decimal, a percentage, a sign, a ratio; a bare integer is taken as a setting or a count
RESULT = re.compile(r"\.\d|%|^[+−±]|x$|×$")


def source_files() -> List[Path]:
    return sorted(path for folder in SOURCES for path in folder.glob("*.md"))


def prose_lines(path: Path) -> Iterator[Tuple[int, str]]:
    """(line number, text) of the prose: fenced code and multi-line comments left out."""
    fenced = commented = False
    for number, line in enumerate(path.read_text(encoding="utf8").splitlines(), start=1):
        if line.lstrip().startswith("```"):
            fenced = not fenced
            continue
        if commented:
            commented = "-->" not in line
            continue
        if "<!--" in line and "-->" not in line:
            commented = True
            continue
        if not fenced:
            yield number, line


def hand_typed(line: str) -> List[str]:
    """The result-looking numbers of a prose line."""
    text = SETTING.sub(" ", NOT_PROSE.sub(" ", line))
    return [m.group(0) for m in NUMBER.finditer(text) if RESULT.search(m.group(0).strip())]


def test_pages_match_their_sources():
    result = subprocess.run([sys.executable, str(ROOT / "scripts" / "write_docs.py"), "--check"], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr


def test_no_hand_typed_result_numbers():
    found = []
    for path in source_files():
        if path == ANCHORS:
            continue
        for number, line in prose_lines(path):
            numbers = hand_typed(line)
            if numbers:
                found.append(f"{path.relative_to(ROOT)}:{number}: {', '.join(numbers)}")
    assert not found, "hand-typed result numbers (use {{ FILE : KEY | FORMAT }}, a fact of bench/facts.py or an anchor):\n" + "\n".join(found)


def _tracked() -> Set[str]:
    result = subprocess.run(["git", "ls-files", "metrics", "docs"], cwd=ROOT, capture_output=True, text=True)
    if result.returncode != 0:
        pytest.skip("not a git checkout")
    return set(result.stdout.split())


def named_files(path: Path) -> Iterator[Tuple[int, str]]:
    """(line number, file) of every file a source's markers read: includes,
    aliases and values (an alias resolved to its file; ``facts`` is
    metrics/facts.json). tests/test_project.py checks that a command writes each."""
    aliases = {"facts": write_docs.FACTS}
    for number, line in enumerate(path.read_text(encoding="utf8").splitlines(), start=1):
        alias = write_docs.ALIAS.match(line.strip())
        include = write_docs.INCLUDE.match(line.strip())
        if alias:
            aliases[alias.group(1)] = alias.group(2)
            names = [alias.group(2)]
        elif include:
            names = [include.group(1)]
        else:
            prose = write_docs.CODE_SPAN.sub("", line)  # a marker in backticks is shown, not read
            markers = [m.group(1) for m in write_docs.MARKER.finditer(prose) if not write_docs.ANCHOR.match(m.group(1))]
            values = [write_docs.VALUE.match(marker) for marker in markers]
            names = [aliases.get(v.group(1), v.group(1)) for v in values if v]
        for name in names:
            yield number, name


def test_every_marker_names_a_committed_file():
    tracked = _tracked() | {write_docs.FACTS}
    missing = [f"{path.relative_to(ROOT)}:{number}: {name}" for path in source_files()
               for number, name in named_files(path) if name not in tracked]
    assert not missing, "markers that name files git does not track:\n" + "\n".join(missing)


def test_facts_name_committed_files():
    facts = json.loads((ROOT / write_docs.FACTS).read_text(encoding="utf8"))
    tracked = _tracked()
    untracked = [f"{name}: {path}" for name, fact in facts.items() for path in fact["from"] if path not in tracked]
    assert not untracked, untracked


def test_every_anchor_names_its_source():
    rows = [line for line in ANCHORS.read_text(encoding="utf8").splitlines() if write_docs.ANCHOR_ROW.match(line)]
    assert rows, f"no anchors in {ANCHORS}"
    for row in rows:
        cells = [cell.strip() for cell in row.strip().strip("|").split("|")]
        assert len(cells) == 4 and all(cells), f"an anchor needs a name, a value, what it is and its source: {row}"


def test_hand_typed_numbers_are_found():
    assert hand_typed("uniform gains +4.4 [+2.4, +6.2] over ner") == ["+4.4", "+2.4", "+6.2"]
    assert hand_typed("17.3 ± 1.3 macro-F1, 0.57x the time, 54 % of them") == ["17.3", "± 1.3", "0.57x", "54 %"]
    assert hand_typed("3-8x as often, in 1-2 % of the cases, 7-12 points") == ["3-8x", "1-2 %"]
    assert hand_typed("with p = 0.3, λ = 0.5-0.9 on WNUT-2017 with spaCy 3.8, 3 seeds, all-MiniLM-L6-v2, 1e-4") == []
    assert hand_typed("`0.5` {{ m.json : a | pct1 }} [x](metrics/a-0.5.md) <!-- 12.5 --> the 95 % interval") == []


def _write(root: Path, name: str, text: str) -> Path:
    path = root / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf8")
    return path


def test_write_docs_includes_files_and_fills_values(tmp_path):
    _write(tmp_path, "metrics/table.md", "| a |\n| --- |\n| 1 |\n")
    _write(tmp_path, "metrics/m.json", json.dumps({"ner": {"macro_f": [0.17, 0.16, 0.18], "vs": {"delta": -0.025, "low": -0.041, "high": 0.0004}}, "ratio": 0.573, "runs.v1": [3]}))
    _write(tmp_path, "docs/src/anchors.md", "| name | value | source |\n| --- | --- | --- |\n| `bert` | 56.5 | a paper |\n")
    _write(tmp_path, "docs/src/README.md", "# Top\n")
    source = _write(
        tmp_path,
        "docs/benchmarks/src/study.md",
        "prose\n\n<!-- include: metrics/table.md -->\n<!-- alias: m = metrics/m.json -->\n"
        "{{ m : ner.macro_f | pct_ms1 }}; {{ m : ner.vs | ci1 }}; {{ metrics/m.json : ratio | x2 }}; "
        "{{ m : ner.macro_f.0 | pct1 }}; {{ m : runs.v1.0 }}; {{ anchor: bert }}\n",
    )
    pages = write_docs.render_all(tmp_path, with_facts=False)
    text = pages[tmp_path / "docs" / "benchmarks" / "study.md"]
    assert text.startswith("<!-- Generated by scripts/write_docs.py from docs/benchmarks/src/study.md")
    assert "prose\n\n| a |\n| --- |\n| 1 |\n" in text and "alias" not in text
    assert "17.0 ± 1.0; −2.5 [−4.1, +0.04]; 0.57x; 17.0; 3; 56.5\n" in text
    source.write_text("# Study\n\nwrite `{{ FILE : KEY | FORMAT }}`\n", encoding="utf8")
    assert "write `{{ FILE : KEY | FORMAT }}`" in write_docs.render_all(tmp_path, with_facts=False)[tmp_path / "docs" / "benchmarks" / "study.md"]
    assert pages[tmp_path / "README.md"].endswith("\n# Top\n")
    for marker, message in [
        ("<!-- include: metrics/missing.md -->", "metrics/missing.md"),
        ("{{ metrics/missing.json : a | .1f }}", "metrics/missing.json"),
        ("{{ metrics/m.json : ner.micro_f | .1f }}", "'ner.micro_f'"),
        ("{{ anchor: gpt }}", "gpt"),
        # a count through a percent format (262 false positives printed as 26200.0)
        ("{{ metrics/m.json : runs.v1.0 | pct1 }}", "3 is a count"),
        # a real value in backticks would print as written; an illustration in backticks stays (below)
        ("`{{ metrics/m.json : ratio | x2 }}`", "sits in backticks"),
    ]:
        source.write_text(f"# Study\n\n{marker}\n", encoding="utf8")
        with pytest.raises(write_docs.SourceError, match=re.escape(message)) as err:
            write_docs.render_all(tmp_path, with_facts=False)
        assert "docs/benchmarks/src/study.md:3" in str(err.value)


def test_write_docs_allow_missing_writes_a_dash_for_what_no_file_gives(tmp_path):
    """--allow-missing (the project test's quick workflow): a missing file, key
    or empty value renders as "–" and is counted; the real pages never use it."""
    _write(tmp_path, "metrics/m.json", json.dumps({"ner": {"macro_f": [0.17, 0.16], "vs": None}}))
    _write(tmp_path, "docs/src/README.md", "# Top\n")
    _write(
        tmp_path, "docs/benchmarks/src/study.md",
        "<!-- include: metrics/missing.md -->\n{{ metrics/m.json : ner.macro_f | pct_ms1 }}; "
        "{{ metrics/missing.json : a | .1f }}; {{ metrics/m.json : ner.micro_f | .1f }}; {{ metrics/m.json : ner.vs | ci1 }}\n",
    )
    renderer = write_docs.Renderer(tmp_path, None, allow_missing=True)
    pages, renderer = write_docs._render(renderer, tmp_path)
    text = pages[tmp_path / "docs" / "benchmarks" / "study.md"]
    assert "– (metrics/missing.md not written yet)\n16.5 ± 0.7; –; –; –\n" in text
    assert renderer.missing == 4
    with pytest.raises(write_docs.SourceError):
        write_docs.render_all(tmp_path, with_facts=False)
