"""Where, when and with what a run ran, for its record: the package version,
git commit and whether the code differed from it, the UTC time, the machine
(CPU model, platform, its cores and the cores the process may use), the
library versions, the command line, and on a GPU its name, driver, CUDA and
CuPy versions, with torch's. A number without these cannot be compared with
another (a GPU figure must say it was measured on one).
"""
import os
import platform
import subprocess
import sys
from datetime import datetime, timezone
from importlib import metadata
from pathlib import Path
from typing import Any, Dict, List, Mapping, Optional

# the distributions whose versions a record keeps, where installed (read from their metadata: nothing is imported)
LIBRARIES = ("spacy", "thinc", "numpy", "torch", "spacy-transformers", "transformers", "curated-transformers", "srsly")
# what a record's provenance holds in full (run_provenance writes them all), and on a GPU also GPU_FIELDS
FIELDS = ("package_version", "git_commit", "git_dirty", "time_utc", "python", "device", "cpu", "cpu_count", "cpu_cores",
          "platform", "libraries", "command")
GPU_FIELDS = ("gpu", "driver", "cuda_runtime", "cupy", "torch")
# the libraries every run imports, which a full record names
CORE_LIBRARIES = ("spacy", "thinc", "numpy")


def missing_fields(provenance: Any) -> List[str]:
    """What a record's provenance block lacks of a full one: ["provenance"]
    when it has none, else the FIELDS (and GPU_FIELDS on a GPU) not in it,
    and libraries.<name> for a CORE_LIBRARIES version it does not give."""
    if not isinstance(provenance, dict) or not provenance:
        return ["provenance"]
    fields = FIELDS + (GPU_FIELDS if provenance.get("device") == "gpu" else ())
    missing = [field for field in fields if field not in provenance]
    libraries = provenance.get("libraries")
    if isinstance(libraries, dict):
        missing += [f"libraries.{name}" for name in CORE_LIBRARIES if name not in libraries]
    command = provenance.get("command")
    if isinstance(command, dict) and "argv" not in command:
        missing.append("command.argv")
    return missing


def cpu_record() -> Dict[str, Any]:
    """The CPU's model name and the cores this process may run on."""
    name = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo", encoding="utf8") as info:
            name = next(line.split(":", 1)[1].strip() for line in info if line.startswith("model name"))
    except (OSError, StopIteration):
        pass
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    threads = os.environ.get("OMP_NUM_THREADS")
    return {
        "cpu": name,
        # the machine's logical cores, and those this process may run on (taskset, a container's share)
        "cpu_count": os.cpu_count(),
        "cpu_cores": cores,
        "platform": platform.platform(),
        "omp_threads": int(threads) if threads and threads.isdigit() else None,
    }


def library_versions() -> Dict[str, str]:
    """The installed versions of LIBRARIES (the ones not installed are left out)."""
    versions = {}
    for name in LIBRARIES:
        try:
            versions[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            continue
    return versions


def command_record(overrides: Optional[Mapping[str, Any]] = None) -> Dict[str, Any]:
    """The command line this process was started with, and the config
    overrides its run was given (where the writer has them)."""
    record: Dict[str, Any] = {"argv": list(sys.argv), "executable": sys.executable}
    if overrides is not None:
        record["overrides"] = dict(overrides)
    return record


def gpu_record(gpu_id: int) -> Dict[str, Any]:
    """GPU ``gpu_id``'s name, driver, CUDA runtime and CuPy version (the
    fields it cannot read are left out, with the reason)."""
    record: Dict[str, Any] = {"gpu_id": gpu_id}
    try:
        import cupy

        record["cupy"] = cupy.__version__
        runtime = cupy.cuda.runtime
        props = runtime.getDeviceProperties(gpu_id)
        name = props["name"]
        record["gpu"] = name.decode() if isinstance(name, bytes) else str(name)
        record["gpu_memory_mib"] = int(props["totalGlobalMem"]) // 2**20
        record["cuda_runtime"] = _cuda_version(runtime.runtimeGetVersion())
        record["cuda_driver_api"] = _cuda_version(runtime.driverGetVersion())
    except Exception as err:  # no CuPy, no GPU, or a CUDA error: say so in the record
        record["gpu_error"] = f"{type(err).__name__}: {err}"[:200]
    driver = _nvidia_smi_driver(gpu_id)
    if driver:
        record["driver"] = driver
    return record


def torch_record() -> Dict[str, Any]:
    try:
        import torch
    except ImportError:
        return {}
    return {"torch": torch.__version__, "torch_cuda": torch.version.cuda, "torch_threads": torch.get_num_threads()}


def git_commit(root: Optional[Path] = None) -> Optional[str]:
    """The commit of the checkout the package runs from, or None outside one."""
    folder = Path(root) if root else Path(__file__).resolve().parent
    try:
        result = subprocess.run(["git", "rev-parse", "HEAD"], cwd=folder, capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.SubprocessError):
        return None
    return result.stdout.strip() or None if result.returncode == 0 else None


def git_dirty(root: Optional[Path] = None) -> Optional[bool]:
    """Whether tracked files outside metrics/ differ from the commit (None
    outside a checkout). metrics/ is left out: a benchmark writes its records
    there as it goes, which would mark every run after the first dirty."""
    folder = Path(root) if root else Path(__file__).resolve().parent
    command = ["git", "status", "--porcelain", "--untracked-files=no", "--", ":/", ":(top,exclude)metrics"]
    try:
        result = subprocess.run(command, cwd=folder, capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.SubprocessError):
        return None
    return bool(result.stdout.strip()) if result.returncode == 0 else None


def run_provenance(
    gpu_id: int = -1, root: Optional[Path] = None, overrides: Optional[Mapping[str, Any]] = None
) -> Dict[str, Any]:
    """The record of where, when and how a run ran: package, commit and
    whether the code differed from it, the UTC time, the machine and its
    cores, the library versions, the command line (with ``overrides``, the
    config overrides of the run, where given), torch, and the GPU when
    ``gpu_id`` >= 0."""
    from .. import __version__

    record: Dict[str, Any] = {
        "package_version": __version__,
        "git_commit": git_commit(root),
        "git_dirty": git_dirty(root),
        "time_utc": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "python": platform.python_version(),
        "device": "gpu" if gpu_id >= 0 else "cpu",
        **cpu_record(),
        "libraries": library_versions(),
        "command": command_record(overrides),
        **torch_record(),
    }
    if gpu_id >= 0:
        record.update(gpu_record(gpu_id))
    return record


def _cuda_version(number: int) -> str:
    # CUDA encodes 13.0 as 13000, 12.4 as 12040
    return f"{number // 1000}.{(number % 1000) // 10}"


def _nvidia_smi_driver(gpu_id: int) -> Optional[str]:
    try:
        result = subprocess.run(
            ["nvidia-smi", f"--id={gpu_id}", "--query-gpu=driver_version", "--format=csv,noheader"],
            capture_output=True, text=True, timeout=20,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    return result.stdout.strip() or None if result.returncode == 0 else None
