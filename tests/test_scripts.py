"""The scripts of scripts/ (and of dev/) are command-line entry points over the bench
package (their library code is tested in tests/bench/): each one starts
from any folder, with bench importable from the clone's root (run.sh puts it on the
environment's path; it is not installed with the package)."""
import subprocess
import sys

import pytest

from .conftest import ROOT

SCRIPTS = sorted([*ROOT.glob("scripts/**/*.py"), *ROOT.glob("dev/**/*.py")])
# the scripts that import bench or dev's packages: importable through the clone root run.sh adds to the path
BENCH_SCRIPTS = [path for path in SCRIPTS if any(f"from {top}" in path.read_text(encoding="utf8") for top in ("bench", "dev."))]


def test_the_benchmark_scripts_use_bench():
    names = {path.relative_to(ROOT).as_posix() for path in BENCH_SCRIPTS}
    # the benchmark itself is `spacy-imbalance benchmark` (tests/cli/test_benchmark.py); these are studies
    # the audit's validation is `spacy-imbalance audit-check` (tests/cli/test_audit_check.py)
    assert {"scripts/headline_table.py", "scripts/advise_validation.py"} <= names


@pytest.mark.parametrize("script", BENCH_SCRIPTS, ids=lambda path: path.relative_to(ROOT).as_posix())
def test_a_script_starts_from_another_folder(script, tmp_path):
    result = subprocess.run([sys.executable, str(script), "--help"], cwd=tmp_path, capture_output=True, text=True)
    assert result.returncode == 0, result.stderr[-2000:]
    assert "Usage:" in result.stdout or "usage:" in result.stdout


def _git(folder, *args):
    subprocess.run(["git", *args], cwd=folder, check=True, capture_output=True)


def test_migrate_fingerprints_logs_each_change_and_leaves_every_other_field(tmp_path, monkeypatch):
    """A record's fingerprint is changed by this script only, each change
    printed and logged (file, old, new); --dry-run writes nothing."""
    import hashlib
    import json

    from dev import migrate_fingerprints
    from spacy_imbalance.init_config import config_fingerprint

    # the same settings, compared without filling every default (spaCy's fill-config: seconds a call)
    monkeypatch.setattr(migrate_fingerprints, "filled", config_fingerprint)

    text = (ROOT / "configs" / "ner.cfg").read_text(encoding="utf8")
    (tmp_path / "configs").mkdir()
    (tmp_path / "configs" / "ner.cfg").write_text(text, encoding="utf8")
    _git(tmp_path, "init", "-q")
    _git(tmp_path, "add", ".")
    _git(tmp_path, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "-m", "c")
    (tmp_path / "configs" / "ner.cfg").write_text("# the same settings, written again\n" + text, encoding="utf8")
    old = hashlib.sha256(text.encode("utf8")).hexdigest()  # a record from before fingerprints: the file's SHA-256
    record = tmp_path / "metrics" / "c" / "ner-s0.json"
    record.parent.mkdir(parents=True)
    record.write_text(json.dumps({"config": "ner", "config_sha256": old, "macro": {"f": 0.3}}), encoding="utf8")
    log = tmp_path / "metrics" / "fingerprint_migrations.tsv"

    migrate_fingerprints.main(commit="HEAD", dry_run=True, log=migrate_fingerprints.LOG, root=tmp_path)
    assert json.loads(record.read_text(encoding="utf8"))["config_sha256"] == old and not log.exists()

    migrate_fingerprints.main(commit="HEAD", dry_run=False, log=migrate_fingerprints.LOG, root=tmp_path)
    new = config_fingerprint(text)
    assert json.loads(record.read_text(encoding="utf8")) == {"config": "ner", "config_sha256": new, "macro": {"f": 0.3}}
    lines = log.read_text(encoding="utf8").splitlines()
    assert lines[0] == "time_utc\tcommit\tfile\told\tnew"
    assert lines[1].split("\t")[1:] == ["HEAD", "metrics/c/ner-s0.json", old, new] and len(lines) == 2
    # run again: nothing left to change, nothing logged
    migrate_fingerprints.main(commit="HEAD", dry_run=False, log=migrate_fingerprints.LOG, root=tmp_path)
    assert len(log.read_text(encoding="utf8").splitlines()) == 2
