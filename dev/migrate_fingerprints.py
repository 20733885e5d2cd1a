"""Carry finished benchmark runs over a rewrite of the configs that changes
their text but not what they train.

A run's metrics record ``config_sha256``, and scripts/benchmark.py retrains a
run whose record differs from its config's fingerprint. Records written before
the fingerprint ignored layout (the SHA-256 of the file's bytes), or before
the configs were last rewritten (a new component setting whose default
changes nothing), would all be retrained. For each record under metrics/ and
training/**/metrics/ whose ``config_sha256`` is the SHA-256 or the
fingerprint of configs/<config>.cfg as it was at --commit, this sets it to the fingerprint of
today's file, but only when the two configs, filled with every default as
``spacy init fill-config`` fills them, are the same settings. Anything else is
left as it is (and is retrained).

Every change is printed and appended, before the record is written, to
--log (metrics/fingerprint_migrations.tsv: UTC time, --commit, file, old
fingerprint, new), so that no record's fingerprint changes without a trace;
--dry-run prints what it would change and writes nothing.

    python dev/migrate_fingerprints.py --commit 40b2bde [--dry-run]
"""
import hashlib
import json
import subprocess
from datetime import datetime, timezone
from pathlib import Path
from typing import Dict, Iterator, Optional

import srsly
import typer
from thinc.api import Config

from spacy_imbalance.init_config import config_fingerprint, fill_config

ROOT = Path(__file__).resolve().parent.parent
LOG = Path("metrics") / "fingerprint_migrations.tsv"
LOG_HEADER = "time_utc\tcommit\tfile\told\tnew\n"


def old_text(commit: str, config: str, root: Path = ROOT) -> Optional[str]:
    result = subprocess.run(
        ["git", "show", f"{commit}:configs/{config}.cfg"], cwd=root, capture_output=True, text=True, encoding="utf8"
    )
    return result.stdout if result.returncode == 0 else None


def filled(text: str) -> str:
    return json.dumps(fill_config(Config().from_str(text, interpolate=False)), sort_keys=True)


def records(root: Path) -> Iterator[Path]:
    yield from sorted((root / "metrics").rglob("*.json"))
    yield from sorted(path for path in (root / "training").rglob("*.json") if "metrics" in path.parts)


def log_change(log: Path, commit: str, path: str, old: str, new: str) -> None:
    """One changed record appended to the log (its header first in a new log)."""
    log.parent.mkdir(parents=True, exist_ok=True)
    with log.open("a", encoding="utf8") as out:
        if out.tell() == 0:
            out.write(LOG_HEADER)
        out.write(f"{datetime.now(timezone.utc).isoformat(timespec='seconds')}\t{commit}\t{path}\t{old}\t{new}\n")


def main(
    commit: str = typer.Option(..., "--commit", help="The commit whose config texts the records were written with"),
    dry_run: bool = typer.Option(False, "--dry-run", help="Print what would change, change nothing"),
    log: Path = typer.Option(LOG, "--log", help="Append each change (time, commit, file, old, new) here; relative to --root"),
    root: Path = typer.Option(ROOT, "--root", help="Project folder (its metrics/, training/, configs/ and git history)"),
) -> None:
    mapping: Dict[str, Optional[Dict[str, str]]] = {}  # config -> {old sha: fingerprint}, None if not carried over
    moved = kept = 0
    log = log if log.is_absolute() else root / log
    for path in records(root):
        try:
            # the standard library's reader: srsly's reads 0.3 back as 0.30000000000000004, which would be written back
            report = json.loads(path.read_text(encoding="utf8"))
        except ValueError:
            continue
        if not isinstance(report, dict) or "config_sha256" not in report or "config" not in report:
            continue
        config = report["config"]
        if config not in mapping:
            mapping[config] = None
            current = root / "configs" / f"{config}.cfg"
            before = old_text(commit, config, root)
            if before is not None and current.is_file():
                now = current.read_text(encoding="utf8")
                if filled(before) == filled(now):
                    # records of either era: the file's SHA-256 (before fingerprints) or its fingerprint
                    mapping[config] = {
                        hashlib.sha256(before.encode("utf8")).hexdigest(): config_fingerprint(now),
                        config_fingerprint(before): config_fingerprint(now),
                    }
                else:
                    print(f"{config}: its settings changed since {commit}; its runs are not carried over")
        new = (mapping[config] or {}).get(report["config_sha256"])
        if new is None or new == report["config_sha256"]:
            kept += 1
            continue
        moved += 1
        name = path.relative_to(root).as_posix()
        print(f"{name}: config_sha256 {report['config_sha256']} -> {new}{' (dry run: not written)' if dry_run else ''}")
        if not dry_run:
            # logged before the record changes: a write that fails leaves a line too many, never one too few
            log_change(log, commit, name, report["config_sha256"], new)
            report["config_sha256"] = new
            # the benchmark's compact layout (per-run files hold per-sentence counts)
            srsly.write_json(path, report, indent=0)
    done = " (dry run)" if dry_run else (f"; each change logged in {log}" if moved else "")
    print(f"{moved} records carried over to today's fingerprints, {kept} left as they were{done}")


if __name__ == "__main__":
    typer.run(main)
