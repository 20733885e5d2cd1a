"""Which records behind each published table carry full provenance (where,
when and how they ran: spacy_imbalance.sweeps.provenance), and the note a
table gets naming its rows without it. Nothing here fills a record in: what
was not measured when a run ran stays unrecorded.

A published table is a file of a project's metrics/ (its docs include it).
The records behind it are found from what the table was written from, first
match:

- a study table (a ``spacy-imbalance benchmark table`` command of the
  project's project.yml): metrics/<corpus>/<config>[-<tag>]-s<seed>.json for
  each config (or CONFIG@VARIANT: names.system_run) and setting, and each
  reference's untagged runs;
- a table over a folder of records (``folders``: table name -> glob, given
  by the project);
- the table's own JSON (<name>.json next to it), which is
  - a headline table's (corpus, encoder, seeds, systems):
    metrics/<corpus>/<encoder>/<system>-s<seed>.json;
  - runs collected from a GPU machine: each run in it;
  - a benchmark summary (run name -> {runs, ...}): <run>-s<seed>.json beside it;
  - results keyed <run>-s<seed>: those runs' files;
  - else a measurement (speed, scale, feature cache ...): the record itself.

A table none of these finds is reported as unmapped, never passed over.
"""
import json
import re
import shlex
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Dict, Iterable, List, Mapping, Optional, Tuple

import srsly

from .names import run_name, seed_of, system_run

# a study table's command: the package's (as an executable or a module), or the script it replaced
TABLE_COMMANDS = (("spacy-imbalance", "benchmark", "table"), ("spacy_imbalance", "benchmark", "table"), ("scripts/study_table.py",))
# each study table's configs, tags and references, keyed metrics/<corpus>/<name>.md
Studies = Dict[str, Tuple[List[str], List[str], List[str]]]
SEED = re.compile(r"^(?P<row>.+)-s(?P<seed>\d+)$")
# issue 45: the share of the records behind published tables that carry full provenance
TARGET = 0.95
NONE_NOTE = "Rows without recorded provenance (trained before records carried it)"
PARTIAL_NOTE = "Rows whose recorded provenance lacks {fields} (recorded before records held them)"


@dataclass(frozen=True)
class Record:
    """One record behind a table: the row it is part of (a run's name, or
    the measurement's), its seed, its file (relative to the project root),
    and what its provenance lacks of a full one (nothing: full)."""

    row: str
    seed: Optional[int]
    path: str
    missing: Tuple[str, ...]

    @property
    def state(self) -> str:
        """full, partial (a provenance block without some fields) or none."""
        if not self.missing:
            return "full"
        return "none" if self.missing == ("provenance",) else "partial"


def _row_and_seed(name: str) -> Tuple[str, Optional[int]]:
    match = SEED.match(name)
    return (match.group("row"), int(match.group("seed"))) if match else (name, None)


def study_tables(root: Path) -> Studies:
    """Each study table the commands of root/project.yml write -> (configs,
    tags, references), keyed metrics/<corpus>/<name>.md; none without a
    project.yml."""
    path = root / "project.yml"
    if not path.is_file():
        return {}
    # read as weasel reads it (srsly's YAML)
    project = srsly.read_yaml(path) or {}
    tables: Studies = {}
    for command in project.get("commands") or []:
        for line in command.get("script") or []:
            name, options = _table_command(shlex.split(line))
            if name is None:
                continue
            tags = [setting.partition("=")[0] for setting in options.get("--setting", [])]
            for corpus in options.get("--corpus", []):
                tables[f"metrics/{corpus}/{name}.md"] = (options.get("--config", []), tags, options.get("--reference", []))
    return tables


def _table_command(words: List[str]) -> Tuple[Optional[str], Dict[str, List[str]]]:
    """The study's name and options of a command line that writes a study
    table; (None, {}) for any other."""
    for start in range(len(words)):
        for command in TABLE_COMMANDS:
            end = start + len(command)
            if tuple(words[start:end]) == command and end < len(words):
                return words[end], _options(words[end + 1:])
    return None, {}


def _options(words: List[str]) -> Dict[str, List[str]]:
    """``--key value`` pairs of a command line, each key's values in order (a bare flag: no value)."""
    options: Dict[str, List[str]] = {}
    for i, word in enumerate(words):
        if word.startswith("--") and i + 1 < len(words) and not words[i + 1].startswith("--"):
            options.setdefault(word, []).append(words[i + 1])
    return options


class Coverage:
    """The records behind each table under ``root``, each file read once;
    ``folders``: the tables that read every record of a folder (table name
    -> glob, relative to the table's folder)."""

    def __init__(self, root: Path, folders: Optional[Mapping[str, str]] = None):
        self.root = root
        self.folders = dict(folders or {})
        self._studies: Optional[Studies] = None
        self._missing: Dict[Path, Tuple[str, ...]] = {}

    @property
    def studies(self) -> Studies:
        if self._studies is None:
            self._studies = study_tables(self.root)
        return self._studies

    def records(self, table: str) -> Optional[List[Record]]:
        """The records behind ``table`` (a path relative to root), or None
        when no rule of this module finds them."""
        folder = (self.root / table).parent
        if table in self.studies:
            configs, tags, references = self.studies[table]
            names = [run_name(*system_run(config, tag)) for config in configs for tag in tags] + list(references)
            return [record for name in names for record in self._runs(folder, name)]
        name = Path(table).name
        if name in self.folders:
            return [self._file(path, folder) for path in sorted(folder.glob(self.folders[name]))]
        own = (self.root / table).with_suffix(".json")
        if not own.is_file():
            return None
        data = _read(own)
        if not isinstance(data, dict):
            return None
        return self._from_own_json(own, data, folder)

    def _from_own_json(self, own: Path, data: Dict[str, Any], folder: Path) -> List[Record]:
        if {"corpus", "encoder", "seeds", "systems"} <= set(data):  # a headline table
            runs = self.root / "metrics" / data["corpus"] / data["encoder"]
            paths = [runs / f"{system}-s{seed}.json" for system in data["systems"] for seed in data["seeds"]]
            return [self._file(path, runs) for path in paths if path.is_file()]
        if {"archive", "runs"} <= set(data) and isinstance(data["runs"], dict):  # collected from a GPU machine
            return [Record(*_row_and_seed(key), self._relative(own), tuple(_missing(run))) for key, run in data["runs"].items()]
        values = list(data.values())
        if values and all(isinstance(value, dict) and "runs" in value for value in values):  # a benchmark summary
            return [record for run in data for record in self._runs(folder, run)]
        if data and all(SEED.match(key) and (folder / f"{key}.json").is_file() for key in data):  # results of runs
            return [self._file(folder / f"{key}.json", folder) for key in data]
        return [self._file(own, folder)]  # a measurement: the table's own record

    def _runs(self, folder: Path, run: str) -> List[Record]:
        """Every seed's record of ``run`` in ``folder`` (<run>-s<seed>.json; run may hold a folder)."""
        base = folder / run
        if not base.parent.is_dir():
            return []
        pattern = re.compile(re.escape(base.name) + r"-s\d+\.json$")
        # by seed, as a number (s10 after s2); the pattern makes sure every file has one
        paths = sorted((path for path in base.parent.iterdir() if pattern.fullmatch(path.name)), key=seed_of)
        return [self._file(path, folder) for path in paths]

    def _file(self, path: Path, folder: Path) -> Record:
        if path not in self._missing:
            data = _read(path)
            self._missing[path] = tuple(_missing(data if isinstance(data, dict) else {}))
        name = path.relative_to(folder).with_suffix("").as_posix()
        return Record(*_row_and_seed(name), self._relative(path), self._missing[path])

    def _relative(self, path: Path) -> str:
        return path.relative_to(self.root).as_posix()


def _read(path: Path) -> Any:
    try:
        return json.loads(path.read_text(encoding="utf8"))
    except ValueError as err:
        raise ValueError(f"{path} is not JSON ({err})") from None


def _missing(record: Dict[str, Any]) -> List[str]:
    from spacy_imbalance.sweeps.provenance import missing_fields

    return missing_fields(record.get("provenance"))


def _rows(records: Iterable[Record]) -> str:
    """`row` (seeds ...), each row once; the seeds said once when every row has the same."""
    seeds: Dict[str, List[int]] = {}
    for record in records:
        seeds.setdefault(record.row, [])
        if record.seed is not None and record.seed not in seeds[record.row]:
            seeds[record.row].append(record.seed)
    shared = {tuple(sorted(s)) for s in seeds.values()}
    if len(shared) == 1:
        common = sorted(next(iter(shared)))
        names = ", ".join(f"`{row}`" for row in seeds)
        return names + (f" ({_seeds(common)} each)" if common and len(seeds) > 1 else f" ({_seeds(common)})" if common else "")
    return ", ".join(f"`{row}`" + (f" ({_seeds(sorted(s))})" if s else "") for row, s in seeds.items())


def _seeds(seeds: List[int]) -> str:
    return f"seed{'s' if len(seeds) > 1 else ''} {', '.join(map(str, seeds))}"


def note(records: List[Record]) -> List[str]:
    """The lines a table gets under it: its rows whose records carry no
    provenance, and those whose provenance lacks fields (which ones); none
    when every record is full."""
    lines = []
    without = [record for record in records if record.state == "none"]
    if without:
        lines.append(f"{NONE_NOTE}: {_named(without, records)}.")
    partial = [record for record in records if record.state == "partial"]
    if partial:
        fields = sorted({field for record in partial for field in record.missing})
        lines.append(f"{PARTIAL_NOTE.format(fields=', '.join(fields))}: {_named(partial, records)}.")
    return lines


def _named(some: List[Record], records: List[Record]) -> str:
    # a table all of whose records are alike says so instead of listing every run
    if len(some) == len(records):
        return f"every row ({len(records)} record{'s' if len(records) > 1 else ''})"
    return _rows(some)


def counts(records: List[Record]) -> Dict[str, int]:
    states = [record.state for record in records]
    return {"records": len(states), "full": states.count("full"), "partial": states.count("partial"), "none": states.count("none")}


def summary(coverage: Coverage, tables: Iterable[str]) -> Dict[str, Any]:
    """metrics/provenance.json: per published table its records with full,
    partial and no provenance, the totals over the records behind any (each
    record once) and the share with full provenance against TARGET, and
    the tables whose records no rule finds."""
    from spacy_imbalance.sweeps.provenance import FIELDS, GPU_FIELDS

    per_table: Dict[str, Any] = {}
    every: Dict[Tuple[str, str, Optional[int]], Record] = {}
    unmapped = []
    for table in dict.fromkeys(tables):
        records = coverage.records(table)
        if records is None:
            unmapped.append(table)
            continue
        per_table[table] = counts(records)
        every.update({(record.path, record.row, record.seed): record for record in records})
    total = counts(list(every.values()))
    share = round(total["full"] / total["records"], 4) if total["records"] else None
    return {
        "fields": list(FIELDS), "gpu_fields": list(GPU_FIELDS),
        "total": {**total, "share_full": share, "target": TARGET, "meets_target": share is not None and share >= TARGET},
        "tables": per_table,
        "unmapped": unmapped,
    }
