"""A trial's record (its metrics file) as resuming reads and writes it.

A finished trial is not run again while its record is fresh: it holds the
values its caller expects (a config's fingerprint, a step budget, advise's
key) and the fields the caller needs. ``runner.run_pending`` resumes with
it, for ``advise`` and for the benchmark (``benchmark.runs``).
"""
import json
from pathlib import Path
from typing import Any, Dict, Iterable, Mapping, Optional, Union

import srsly

Record = Dict[str, Any]


def read_record(path: Union[str, Path]) -> Optional[Record]:
    """The record at ``path``, None when there is none; a ValueError naming
    the file when it is not a JSON object (a file cut off while written by
    an older, non-atomic writer). Read by the standard library, so that
    floats come back as written: srsly reads 0.3 back as 0.30000000000000004."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf8")
    except FileNotFoundError:
        return None
    try:
        record = json.loads(text)
    except ValueError as err:
        raise ValueError(f"{path} is not a readable record: {err}") from None
    if not isinstance(record, dict):
        raise ValueError(f"{path} is not a record: a JSON {type(record).__name__}, not an object")
    return record


def is_fresh(
    record: Optional[Mapping[str, Any]], expected: Mapping[str, Any], requires: Iterable[str] = (),
    defaults: Optional[Mapping[str, Any]] = None,
) -> bool:
    """Whether ``record`` (None: there is none) holds every value of
    ``expected`` (compared with ==) and every field of ``requires``. A field
    of ``expected`` the record lacks reads as its value in ``defaults``
    (what records written before the field existed meant by its absence),
    and without one the record is stale."""
    if record is None:
        return False
    defaults = defaults or {}
    for key, value in expected.items():
        if key in record:
            held = record[key]
        elif key in defaults:
            held = defaults[key]
        else:
            return False
        if held != value:
            return False
    return all(key in record for key in requires)


def write_record(path: Union[str, Path], record: Mapping[str, Any]) -> None:
    """Compact JSON (records hold per-sentence counts) ending in a newline,
    never half written: a stopped sweep leaves the old record or none."""
    # imported here: docs_io imports spaCy, which a sweep whose trials are all fresh never needs
    from ..corpus.docs_io import write_text_atomic

    write_text_atomic(Path(path), srsly.json_dumps(dict(record), indent=0) + "\n")
