"""Write project.yml from studies.yml (bench/project.py says how a study
expands into its command).

    python scripts/write_project.py           # (re)write project.yml
    python scripts/write_project.py --check   # exit 1 if project.yml is not what studies.yml gives
"""
from pathlib import Path

import typer

from bench.project import StudyError, write_project

ROOT = Path(__file__).resolve().parent.parent


def main(check: bool = typer.Option(False, "--check", help="Only check that project.yml is current")) -> None:
    try:
        text = write_project(ROOT)
    except StudyError as err:
        raise SystemExit(f"studies.yml: {err}")
    target = ROOT / "project.yml"
    current = target.read_text(encoding="utf8") if target.exists() else ""
    if check:
        if current != text:
            raise SystemExit("project.yml is not what studies.yml gives: run python scripts/write_project.py")
        print("project.yml is current")
        return
    if current == text:
        print("project.yml unchanged")
        return
    target.write_text(text, encoding="utf8")
    print(f"Wrote {target.relative_to(ROOT)} ({text.count(chr(10))} lines) from studies.yml")


if __name__ == "__main__":
    typer.run(main)
