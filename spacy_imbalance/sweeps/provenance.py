"""Where and with what a run ran, for its record: the package version and
git commit, the CPU and the cores the process may use, and on a GPU its name,
driver, CUDA and CuPy versions, with torch's. A number without these cannot
be compared with another (a GPU figure must say it was measured on one).
"""
import os
import platform
import subprocess
from pathlib import Path
from typing import Any, Dict, Optional


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
    return {"cpu": name, "cpu_cores": cores, "omp_threads": int(threads) if threads and threads.isdigit() else None}


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


def run_provenance(gpu_id: int = -1, root: Optional[Path] = None) -> Dict[str, Any]:
    """The record of where a run ran: package and commit, CPU, torch, and the
    GPU when ``gpu_id`` >= 0."""
    from .. import __version__

    record: Dict[str, Any] = {
        "package_version": __version__,
        "git_commit": git_commit(root),
        "python": platform.python_version(),
        "device": "gpu" if gpu_id >= 0 else "cpu",
        **cpu_record(),
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
