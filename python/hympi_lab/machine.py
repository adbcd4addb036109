"""Detecting the machine a study runs on: cores, NUMA domains, caches
(hwloc's lstopo), memory and a Slurm allocation."""

from __future__ import annotations

import os
import shutil
import subprocess
import xml.etree.ElementTree as ET
from dataclasses import dataclass
from pathlib import Path
from typing import Optional

from .atomic import write_atomic
from .errors import OutputError


@dataclass
class Machine:
    host: str
    cores: int                      # CPUs this process may run on (affinity mask)
    numa_domains: int
    caches: dict[str, int]          # "L1d"/"L2"/"L3" -> bytes (one of each kind)
    memory_bytes: int
    slurm: Optional[dict[str, str]]  # SLURM_* variables when inside an allocation
    hwloc: str                      # how the topology was found


def detect_machine() -> Machine:
    """Cores, NUMA domains and caches (hwloc's lstopo XML), memory, Slurm."""
    try:
        cores = len(os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        cores = os.cpu_count() or 1
    numa, caches, how = 1, {}, "lstopo not found: NUMA domains and caches unknown"
    lstopo = _lstopo()
    if lstopo:
        try:
            numa, caches = _parse_lstopo(lstopo_xml(lstopo))
            how = f"hwloc ({os.path.basename(lstopo)} --of xml)"
        except (subprocess.SubprocessError, OSError, ET.ParseError) as err:
            how = f"lstopo failed ({err}); NUMA domains and caches unknown"
    memory = 0
    try:
        with open("/proc/meminfo", encoding="ascii") as handle:
            for line in handle:
                if line.startswith("MemTotal:"):
                    memory = int(line.split()[1]) * 1024
    except OSError:
        pass
    slurm = {k: v for k, v in os.environ.items() if k.startswith("SLURM_")} or None
    return Machine(os.uname().nodename, cores, numa, caches, memory, slurm, how)


def _lstopo() -> Optional[str]:
    return shutil.which("lstopo-no-graphics") or shutil.which("lstopo")


def lstopo_xml(lstopo: str) -> str:
    """This machine's topology as hwloc's XML (raises on failure)."""
    return subprocess.run([lstopo, "--of", "xml"], capture_output=True, text=True,
                          timeout=30, check=True).stdout


def write_topology(path: Path) -> bool:
    """This machine's topology, as lstopo's XML, whole at `path`, for Open
    MPI to read instead of probing it at every launch (launch.py,
    with_topology_file). False, and nothing written, when lstopo is missing
    or fails, its XML does not parse, or the file cannot be written."""
    lstopo = _lstopo()
    if not lstopo:
        return False
    try:
        xml = lstopo_xml(lstopo)
        ET.fromstring(xml)
        write_atomic(path, xml)
    except (subprocess.SubprocessError, OSError, ET.ParseError, OutputError):
        return False
    return True


def _parse_lstopo(xml: str) -> tuple[int, dict[str, int]]:
    root = ET.fromstring(xml)
    numa = 0
    caches: dict[str, int] = {}
    for obj in root.iter("object"):
        kind = obj.get("type", "")
        if kind == "NUMANode":
            numa += 1
        elif kind.endswith("Cache") and obj.get("cache_size"):
            # hwloc 2: L1Cache/L2Cache/L3Cache (+ L1iCache); hwloc 1: Cache with depth.
            name = kind[:-5] if kind != "Cache" else f"L{obj.get('depth', '?')}"
            if obj.get("cache_type") == "2" or name.endswith("i"):
                continue  # instruction caches do not hold our data
            caches.setdefault(name.replace("d", "") + ("d" if name.startswith("L1") else ""),
                              int(obj.get("cache_size", "0")))
    return max(1, numa), caches
