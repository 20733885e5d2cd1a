"""One command measured in a process of its own: wall time and the peak
resident memory of it and its children (the project's scale and audit-workers
measurements)."""
import subprocess
import sys
from typing import Dict, List, Optional

# the probe runs the command as its only child, so RUSAGE_CHILDREN is that
# command's tree and no other measurement's
PROBE = (
    "import resource, subprocess, sys, time\n"
    "start = time.perf_counter()\n"
    "code = subprocess.run(sys.argv[1:]).returncode\n"
    "seconds = time.perf_counter() - start\n"
    "peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss\n"
    "print(f'{code} {seconds} {peak}')\n"
)


def measured(command: List[str], log: Optional[str] = None) -> Dict[str, float]:
    """Run ``command``; {"seconds", "peak_mb"}. Its output goes to ``log``
    (or is kept for the error); a failure ends the script with its tail."""
    result = subprocess.run([sys.executable, "-c", PROBE, *command], capture_output=True, text=True)
    lines = result.stdout.strip().splitlines()
    if log is not None:
        with open(log, "w", encoding="utf8") as out:
            out.write("\n".join(lines[:-1]) + "\n" + result.stderr)
    if not lines or len(lines[-1].split()) != 3 or int(lines[-1].split()[0]) != 0:
        raise SystemExit(f"{' '.join(command[:4])}... failed:\n{(result.stdout + result.stderr)[-3000:]}")
    _, seconds, peak_kb = lines[-1].split()
    return {"seconds": round(float(seconds), 1), "peak_mb": round(int(peak_kb) / 1024, 1)}
