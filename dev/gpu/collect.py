"""Keep what a GPU call brought back, compactly, under metrics/<corpus>/gpu/.

A call ends with ``tar czf $OUT/<name>.tgz metrics $(find training -name "*.log")``;
the device tool copies the archive here. This script reads it and writes:

- the speed tables (speed_*.json/.md) and check summaries as they are;
- <study>.json for every folder of benchmark runs (metrics/<corpus>/<folder>/):
  per run its test macro/micro-F1, dev curve, steps and seconds, without the
  per-sentence counts (the full run files stay in the archive), and the runs
  whose training failed with the last line of their log (e.g. CUDA out of
  memory);
- <study>.md, a table of the same.

    python dev/gpu/collect.py /work/.device/5/call2.tgz --study transformer_400_steps --corpus wnut17
"""
import io
import json
import re
import tarfile
from pathlib import Path
from typing import Dict, List

import typer

ROOT = Path(__file__).resolve().parent.parent.parent
RUN = re.compile(r"-s\d+\.json$")
TABLES = re.compile(r"^metrics/(?P<corpus>[^/]+)/(?P<name>(speed_|gpu_check)[^/]*\.(json|md))$")


def last_error(log: str) -> str:
    lines = [line for line in log.strip().splitlines() if line.strip()]
    errors = [line for line in lines if re.match(r"^\w+(\.\w+)*(Error|Exception)\b", line)]
    return (errors or lines or ["(empty log)"])[-1][:100]


def main(
    archive: Path = typer.Argument(..., exists=True, dir_okay=False, help="A .tgz a GPU call wrote to $OUT"),
    study: str = typer.Option(..., "--study", help="Name of the compact files (<study>.json and .md)"),
    corpus: str = typer.Option("wnut17", "--corpus"),
) -> None:
    out = ROOT / "metrics" / corpus / "gpu"
    out.mkdir(parents=True, exist_ok=True)
    runs: Dict[str, dict] = {}
    failed: Dict[str, str] = {}
    with tarfile.open(archive) as tar:
        for member in tar.getmembers():
            if not member.isfile():
                continue
            data = tar.extractfile(member).read()
            match = TABLES.match(member.name)
            if match and match["corpus"] == corpus:
                (out / match["name"]).write_bytes(data)
                continue
            if member.name.startswith("metrics/") and f"/{corpus}/" in member.name and RUN.search(member.name):
                report = json.loads(data)
                if "macro" not in report:
                    continue
                name = Path(member.name).stem
                runs[name] = {
                    "config": report.get("config"), "seed": report.get("seed"), "overrides": report.get("overrides"),
                    "macro_f": report["macro"]["f"], "micro_f": report["micro"]["f"],
                    "train_steps": report.get("train_steps"), "train_seconds": report.get("train_seconds"),
                    "dev_curve": report.get("dev_curve"), "gpu_id": report.get("gpu_id"),
                    # where it ran (GPU name, driver, CUDA, CuPy, torch, CPU cores): runs before 0.2 lack it
                    "provenance": report.get("provenance"),
                }
            elif member.name.endswith(".log"):
                log = data.decode("utf8", errors="replace")
                if "Traceback" in log:
                    failed[Path(member.name).stem] = last_error(log)
    failed = {name: error for name, error in failed.items() if name not in runs}
    (out / f"{study}.json").write_text(json.dumps({"archive": archive.name, "runs": runs, "failed": failed}, indent=1))
    devices = sorted({_device_words(run["provenance"]) for run in runs.values()})
    lines: List[str] = [
        f"Ran on {'; '.join(devices)}." if devices else "",
        "",
        "| run | test macro-F1 | micro-F1 | steps | train s | dev macro-F1 by step |",
        "| --- | --: | --: | --: | --: | --- |",
    ]
    for name, run in sorted(runs.items()):
        curve = ", ".join(f"{int(step)}: {100 * score:.0f}" for step, score in run["dev_curve"] or [])
        # a run cut short between its evaluation and its record has no steps or seconds
        steps = run["train_steps"] if run["train_steps"] is not None else "–"
        seconds = f"{run['train_seconds']:.0f}" if run["train_seconds"] is not None else "–"
        lines.append(f"| {name} | {100 * run['macro_f']:.1f} | {100 * run['micro_f']:.1f} | {steps} | {seconds} | {curve or '–'} |")
    for name, error in sorted(failed.items()):
        lines.append(f"| {name} | failed: {error} | | | | |")
    (out / f"{study}.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


def _device_words(provenance) -> str:
    if not provenance:
        return "a device the run did not record"
    if provenance.get("device") != "gpu":
        return f"the CPU ({provenance.get('cpu')}, {provenance.get('cpu_cores')} cores)"
    return (f"{provenance.get('gpu', 'an unnamed GPU')} (driver {provenance.get('driver', '?')}, CUDA {provenance.get('cuda_runtime', '?')}, "
            f"CuPy {provenance.get('cupy', '?')}, torch {provenance.get('torch', '?')}, {provenance.get('cpu_cores')} CPU cores)")


if __name__ == "__main__":
    typer.run(main)
