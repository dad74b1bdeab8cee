"""Each sandbox's share of the machine: CPU and memory, with a cgroup or, where none, a fallback.

A :class:`Share` is made with each :class:`~.sandbox.Box`. Where this process can
make control groups (:mod:`.cgroups`: v1, or v2 as root or in a delegated slice),
the sandbox gets its own: the launcher that starts ``bwrap`` writes itself into
it before anything of the kernel's runs, and everything the sandbox starts stays
in it. Then CPU is shared by weight between sandboxes and, where the group has a
cpuset, by cores: two sandboxes on two cores keep to one each, one alone gets
them all (:func:`_rebalance`, as notebooks start and end running); and every byte it holds
(``memfd`` files, System V shared memory, its ``tmpfs`` folders) counts against
the memory cap that :mod:`.memory_watch` sets. (Weights alone shared the time
but not the wake-ups: a classmate's checks, hundreds of round trips each waiting
behind 16 busy loops and 16 busy threads of its neighbour's, took 2.1-2.4x its
time alone, red team round seventeen; with cores of their own, 1.2x.)

Where no cgroup can be had, it falls back, and says so once on stderr:

- CPU: the seccomp filter refuses ``setsid`` and ``sched_setaffinity``, so the
  whole sandbox stays in the one session its launcher starts. With the
  scheduler's autogroups (``kernel.sched_autogroup_enabled``, on by default in
  most distributions) a session is scheduled as one: a sandbox gets a
  session's share however many threads it runs. Without autogroups, each
  sandbox is also held to one core of its own (the one fewest live sandboxes
  use), which it cannot leave.
- Memory: what no process's resident memory shows is refused (``memfd_create``,
  ``memfd_secret``, ``shmget``: System V shared memory), and the watchdog counts
  the resident memory of every process in the sandbox's PID namespace and its
  ``tmpfs`` folders (HOME, ``/tmp``, ``/dev/shm``): :meth:`Share.held`.
"""
import functools
import os
import sys
from collections import Counter
from pathlib import Path

from . import cgroups
from .i18n import _

__all__ = ["FALLBACK_REFUSED", "Share", "of_process"]

FALLBACK_REFUSED = ("setsid", "sched_setaffinity", "memfd_create", "memfd_secret", "shmget")
_PAGE = os.sysconf("SC_PAGE_SIZE") if hasattr(os, "sysconf") else 4096
_LIVE: dict[str, "Share"] = {}  # token -> the share of each sandbox not yet removed
# Runs before bwrap, as its own process: joins the group (its cgroup.procs files) or keeps to
# its cores ("cpus=0,1"), then becomes bwrap; argv: those, "--", bwrap's command. bwrap's
# options (the grader's private folder, its paths) go to it through a pipe (bwrap --args FD),
# not argv: the sandbox's PID 1 is a fork of bwrap, and its /proc/1/cmdline, which the kernel
# can read, would show them. bwrap reads the pipe empty before the kernel starts, so the end
# the kernel inherits gives it nothing. The pipe holds 1 MB; the options are a few KB.
_LAUNCH = """\
import fcntl, os, sys
cut = sys.argv.index('--')
for what in sys.argv[1:cut]:
    if what.startswith('cpus='):
        os.sched_setaffinity(0, [int(cpu) for cpu in what[5:].split(',')])
    else:
        with open(what, 'w') as procs:
            procs.write(str(os.getpid()))
program, *rest = sys.argv[cut + 1:]
inner = rest.index('--')
read, write = os.pipe()
fcntl.fcntl(write, fcntl.F_SETPIPE_SZ, 1 << 20)
os.write(write, b''.join(arg.encode() + b'\\0' for arg in rest[:inner]))
os.close(write)
os.set_inheritable(read, True)
os.execv(program, [program, '--args', str(read), *rest[inner:]])
"""


def _autogroups() -> bool:
    try:
        return Path("/proc/sys/kernel/sched_autogroup_enabled").read_text().strip() == "1"
    except OSError:
        return False


@functools.cache
def _say_fallback(autogroups: bool) -> None:
    """The one line a run prints when its sandboxes get no cgroup."""
    cpu = (_("each sandbox stays in one session, scheduled as one (autogroups)") if autogroups
           else _("each sandbox is held to one core of its own"))
    print(_("No control groups here (run the grader as root, or under systemd-run --user "
            "--scope on a machine with cgroup v2): {cpu}; memory files and System V shared "
            "memory are refused, and tmpfs folders count toward --memory.").format(cpu=cpu),
          file=sys.stderr, flush=True)


class Share:
    """What the sandbox named ``token`` gets: ``group`` (a :class:`~.cgroups.Group`), or the
    fallback's ``refused`` system calls and ``cores``. ``processes``: its process limit;
    ``folders``: its tmpfs folders, as the sandbox sees them."""

    def __init__(self, token: str, processes: int, folders: tuple[str, ...]) -> None:
        self.token, self.folders = token, folders
        self.group: cgroups.Group | None = None
        self.cores: set[int] | None = None
        self.refused: tuple[str, ...] = ()
        self._seen_root: str | None = None
        self.running = False  # its notebook's code has begun: cores of its own (see run)
        where = cgroups.hierarchy()
        if where is not None:
            try:
                self.group = cgroups.Group(where, f"{cgroups.PREFIX}-{os.getpid()}-{token}",
                                           processes)
            except OSError:
                self.group = None  # a full or read-only hierarchy: the fallback below
        if self.group is None:
            self.refused = FALLBACK_REFUSED
            autogroups = _autogroups()
            if not autogroups:
                self.cores = {_least_used_core()}
            _say_fallback(autogroups)
        _LIVE[token] = self
        _rebalance()

    def run(self) -> None:
        """Its notebook's code is about to run: from now on, cores of its own. Until then (a
        kernel started ahead, while the worker's notebook before it runs, has run nothing of
        the student's yet) it takes none from the running sandboxes: with --jobs 1, the
        kernel started ahead held one of two cores, and the running notebook took 1.37x its
        time without the sandbox (benchmarks/grade_throughput.py, 2026-12-01)."""
        self.running = True
        _rebalance()

    def launcher(self, command: list[str]) -> list[str]:
        """``command`` (``bwrap``'s), started in this share: in its group, or on its cores."""
        places = self.group.procs if self.group else []
        if self.cores:
            places.append("cpus=" + ",".join(map(str, sorted(self.cores))))
        return [sys.executable, "-I", "-S", "-c", _LAUNCH, *places, "--", *command]

    def held(self, pid: int) -> int:
        """Bytes the sandbox whose ``bwrap`` is ``pid`` holds, as seen without a group: the
        resident memory of each of its processes, read through its own ``/proc`` (its PID
        namespace: its processes and no others), and its tmpfs folders. 0 until it has a root."""
        root = self._root(pid)
        if root is None:
            return 0
        used = 0
        try:
            pids = [name for name in os.listdir(f"{root}/proc") if name.isdigit()]
        except OSError:
            return 0
        for name in pids:
            try:
                with open(f"{root}/proc/{name}/statm") as statm:
                    used += int(statm.read().split()[1]) * _PAGE
            except (OSError, IndexError, ValueError):
                continue  # it ended while we looked
        for folder in self.folders:
            try:
                stat = os.statvfs(f"{root}{folder}")
            except OSError:
                continue
            used += (stat.f_blocks - stat.f_bfree) * stat.f_frsize
        return used

    def _root(self, pid: int) -> str | None:
        """``/proc/CHILD/root``: the sandbox's root, seen through its first process."""
        if self._seen_root is None:
            try:
                with open(f"/proc/{pid}/task/{pid}/children") as children:
                    first = children.read().split()[:1]
            except OSError:
                return None
            if first and os.path.isdir(f"/proc/{first[0]}/root/proc/1"):
                self._seen_root = f"/proc/{first[0]}/root"
        return self._seen_root

    def remove(self) -> None:
        """Kill what is left in its group and remove the group (the sandbox has ended)."""
        _LIVE.pop(self.token, None)
        if self.group is not None:
            self.group.remove()
        _rebalance()


def _rebalance() -> None:
    """Give each running sandbox with a group cores of its own, as evenly as the machine's
    cores allow: one running sandbox gets them all; two on two cores, one each (a core of its
    own keeps its wake-ups quick however many loops its neighbour runs: red team, round
    seventeen); more sandboxes than cores share them, round the cores, by their groups' equal
    weights. A sandbox whose notebook has not begun (:meth:`Share.run`) runs only the
    grader's start of its kernel: it may use any core, and holds none."""
    cores = sorted(os.sched_getaffinity(0))
    grouped = [share for share in _LIVE.values() if share.group is not None]
    running = [share for share in grouped if share.running]
    per = max(1, len(cores) // max(1, len(running)))
    for i, share in enumerate(running):
        assert share.group is not None
        share.group.set_cpus(cores[i * per:] if i == len(running) - 1 and i * per < len(cores)
                             else cores[i * per % len(cores):][:per])
    for share in grouped:
        if not share.running:
            assert share.group is not None
            share.group.set_cpus(cores)


def _least_used_core() -> int:
    """The core of this machine that the fewest live sandboxes are held to."""
    cores = sorted(os.sched_getaffinity(0))
    used = Counter(core for share in _LIVE.values() for core in share.cores or ())
    return min(cores, key=lambda core: (used[core], core))


def of_process(pid: int) -> Share | None:
    """The share of the sandbox whose ``bwrap`` (or launcher) is process ``pid``, if any."""
    import psutil

    try:
        command = " ".join(psutil.Process(pid).cmdline())
    except psutil.Error:
        return None
    for token, share in list(_LIVE.items()):
        if f"nn-from-scratch-{token}" in command:
            return share
    return None
