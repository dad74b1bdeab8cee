"""A control group per sandbox: its share of the CPU, its memory cap, its processes, all counted.

The kernel charges a control group (cgroup) with all the CPU time of the
processes in it and all the memory they hold: what they map, their page cache,
and the memory that is in no process's resident set (``memfd`` files, System V
shared memory, files in a ``tmpfs``). So each sandbox gets one, and every
process it starts is born in it: sessions, process groups, threads and
affinity change nothing.

- CPU: sandboxes have equal weights (v1 ``cpu.shares``, v2 ``cpu.weight``), so
  when they all want the CPU each gets the same share, however many threads it
  runs; an idle one leaves its share to the others.
- Memory: ``set_memory`` writes the cap (v1 ``memory.limit_in_bytes`` and, with
  swap accounting, ``memory.memsw.limit_in_bytes``; v2 ``memory.max`` with
  ``memory.swap.max`` 0); past it the kernel reclaims caches, then kills, and
  ``oom_kills`` counts it.
- Processes: ``pids.max`` (the sandbox's process limit, threads included).
- Cores, where the ``cpuset`` controller is there: ``set_cpus`` keeps every process
  of the group to some cores, which no affinity it asks for can widen
  (:mod:`.share` gives each live sandbox cores of its own).

Where: cgroup v1 (one hierarchy per controller: a group beside the grader's own
in each), or v2 (a folder of the grader's, ``nn-from-scratch-PID``, under the
nearest cgroup it may write whose controllers it may enable: as root, any; as a
user, a delegated systemd slice). :func:`hierarchy` finds it once per process;
``None`` where there is none (then :mod:`.share` falls back).
"""
import atexit
import functools
import os
import signal
import time
from dataclasses import dataclass
from pathlib import Path

__all__ = ["Group", "Hierarchy", "hierarchy"]

ROOT = Path("/sys/fs/cgroup")
PREFIX = "nn-from-scratch"
_NEEDED = ("cpu", "memory")  # without both, no cgroup at all; these where they are there:
_OPTIONAL = ("pids", "cpuset")


@dataclass(frozen=True)
class Hierarchy:
    """Where this process makes its sandboxes' groups: ``parents[controller]`` (v1), or one
    folder for all (v2, under the key ``""``)."""

    version: int
    parents: dict[str, Path]


def _read(path: Path) -> str:
    try:
        return path.read_text()
    except OSError:
        return ""


def _write(path: Path, value: str) -> bool:
    try:
        path.write_text(value)
        return True
    except OSError:
        return False


def _own_paths() -> dict[str, str]:
    """This process's cgroup in each hierarchy: ``{"cpu": "/", "memory": "/a/b", "": "/"}``."""
    paths = {}
    for line in _read(Path("/proc/self/cgroup")).splitlines():
        _, controllers, path = line.split(":", 2)
        for controller in controllers.split(","):
            paths[controller] = path
    return paths


def _v1(root: Path) -> Hierarchy | None:
    own, parents = _own_paths(), {}
    for controller in (*_NEEDED, *_OPTIONAL):
        parent = root / controller / own.get(controller, "/").lstrip("/")
        probe = parent / f"{PREFIX}-{os.getpid()}-probe"
        try:
            probe.mkdir()
            probe.rmdir()
        except OSError:
            continue  # not mounted, or not ours to write
        _sweep(parent)
        parents[controller] = parent
    return Hierarchy(1, parents) if all(c in parents for c in _NEEDED) else None


def _v2(root: Path) -> Hierarchy | None:
    here = root / _own_paths().get("", "/").lstrip("/")
    for top in (here, *here.parents):  # the nearest that works; never above the mount
        if not top.is_relative_to(root):
            break
        if not os.access(top, os.W_OK):
            continue
        _sweep(top)
        for controller in (*_NEEDED, *_OPTIONAL):  # refused where top holds processes: above
            _write(top / "cgroup.subtree_control", f"+{controller}")
        ours = top / f"{PREFIX}-{os.getpid()}"
        try:
            ours.mkdir(exist_ok=True)
        except OSError:
            continue
        if set(_NEEDED) <= set(_read(ours / "cgroup.controllers").split()):
            for controller in _read(ours / "cgroup.controllers").split():
                if controller in (*_NEEDED, *_OPTIONAL):
                    _write(ours / "cgroup.subtree_control", f"+{controller}")
            atexit.register(_rmdir, ours)
            return Hierarchy(2, {"": ours})
        _rmdir(ours)
    return None


def _sweep(parent: Path) -> None:
    """Remove the empty groups left by graders that ended without removing them (killed)."""
    for folder in parent.glob(f"{PREFIX}-*"):
        pid = folder.name[len(PREFIX) + 1:].split("-")[0]
        if not pid.isdigit() or int(pid) == os.getpid():
            continue
        try:
            os.kill(int(pid), 0)
            continue  # that grader still runs
        except ProcessLookupError:
            pass
        except OSError:
            continue
        for inner in folder.glob(f"{PREFIX}-*"):  # v2: its sandboxes' groups
            _rmdir(inner)
        _rmdir(folder)


def _rmdir(folder: Path) -> bool:
    try:
        folder.rmdir()
        return True
    except FileNotFoundError:
        return True
    except OSError:
        return False


@functools.cache
def hierarchy(root: Path = ROOT) -> Hierarchy | None:
    """Where this process's sandboxes get their groups, found once; ``None`` if nowhere."""
    if (root / "cpu").is_dir() or (root / "memory").is_dir():
        return _v1(root)
    if (root / "cgroup.controllers").is_file():
        return _v2(root)
    return None


class Group:
    """One sandbox's group (a folder per controller in v1): made at once, empty until the
    sandbox's first process writes itself into :attr:`procs`; :meth:`remove` ends it."""

    def __init__(self, where: Hierarchy, name: str, processes: int) -> None:
        self.version, self.name = where.version, name
        self.dirs = {c: parent / name for c, parent in where.parents.items()}
        made = []
        try:
            for folder in self.dirs.values():
                folder.mkdir()
                made.append(folder)
        except OSError:
            for folder in made:  # none half made: the caller falls back
                _rmdir(folder)
            raise
        if "pids" in self.dirs or self.version == 2:
            _write(self._dir("pids") / "pids.max", str(processes))
        if "cpuset" in self.dirs:  # v1: a new cpuset is empty, and takes no process until set
            parent = where.parents["cpuset"]
            for name in ("cpuset.cpus", "cpuset.mems"):
                _write(self.dirs["cpuset"] / name, _read(parent / name).strip())
        if self.version == 2:
            _write(self._dir("memory") / "memory.oom.group", "1")  # one killed: all killed

    def _dir(self, controller: str) -> Path:
        return self.dirs["" if self.version == 2 else controller]

    @property
    def procs(self) -> list[str]:
        """The files a process writes its id to, to be in this group in every hierarchy."""
        return sorted({str(folder / "cgroup.procs") for folder in self.dirs.values()})

    def set_memory(self, cap: int) -> bool:
        """Cap all the memory the group holds at ``cap`` bytes, swap included; False if the
        kernel refused (it holds more already)."""
        memory = self._dir("memory")
        if self.version == 2:
            _write(memory / "memory.swap.max", "0")
            return _write(memory / "memory.max", str(cap))
        done = _write(memory / "memory.limit_in_bytes", str(cap))
        if (memory / "memory.memsw.limit_in_bytes").exists():  # swap accounting is on
            done = _write(memory / "memory.memsw.limit_in_bytes", str(cap)) and done
        return done

    def set_cpus(self, cpus: list[int]) -> bool:
        """Keep every process of the group, now and later, to ``cpus`` (its cpuset: no process
        in it can leave, whatever affinity it asks for); False where there is no cpuset."""
        folder = self.dirs.get("cpuset") if self.version == 1 else self.dirs[""]
        if folder is None or not (folder / "cpuset.cpus").exists():
            return False
        return _write(folder / "cpuset.cpus", ",".join(map(str, cpus)))

    def oom_kills(self) -> int:
        """How many of its processes the kernel has killed for passing the memory cap."""
        memory = self._dir("memory")
        text = _read(memory / ("memory.events" if self.version == 2 else "memory.oom_control"))
        for line in text.splitlines():
            if line.startswith("oom_kill "):
                return int(line.split()[1])
        return 0

    def peak(self) -> int:
        """The most memory it has held, in bytes (0 where the kernel does not say)."""
        memory = self._dir("memory")
        text = _read(memory / ("memory.peak" if self.version == 2 else
                               "memory.max_usage_in_bytes")).strip()
        return int(text) if text.isdigit() else 0

    def pids(self) -> list[int]:
        """Its processes (in any of its hierarchies, each once)."""
        return sorted({int(pid) for folder in self.dirs.values()
                       for pid in _read(folder / "cgroup.procs").split()})

    def kill(self) -> None:
        """SIGKILL to every process in it (v2: ``cgroup.kill``, which none can outrun)."""
        if self.version == 2 and _write(self.dirs[""] / "cgroup.kill", "1"):
            return
        for pid in self.pids():
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass  # it ended already

    def remove(self, wait: float = 5.0) -> bool:
        """Kill what is left in it and remove its folders; False if one is still busy after
        ``wait`` seconds (a process the kernel has not yet reaped)."""
        deadline = time.monotonic() + wait
        while True:
            self.kill()
            left = [folder for folder in self.dirs.values() if not _rmdir(folder)]
            if not left or time.monotonic() > deadline:
                self.dirs = {c: d for c, d in self.dirs.items() if d in left}
                return not left
            time.sleep(0.05)
