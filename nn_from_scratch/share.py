"""Each sandbox's share of the machine: CPU and memory, with a cgroup or, where none, a fallback.

A :class:`Share` is made with each :class:`~.sandbox.Box`. Where this process can
make control groups (:mod:`.cgroups`: v1, or v2 as root or in a delegated slice),
the sandbox gets its own: the launcher that starts ``bwrap`` writes itself into
it before anything of the kernel's runs, and everything the sandbox starts stays
in it. Then CPU is shared by weight between sandboxes, and every byte it holds
(``memfd`` files, System V shared memory, its ``tmpfs`` folders) counts against
the memory cap that :mod:`.memory_watch` sets.

Where no cgroup can be had, it falls back, and says so once on stderr:

- CPU: the seccomp filter refuses ``setsid`` and ``sched_setaffinity``, so the
  whole sandbox stays in the one session its launcher starts. With the
  scheduler's autogroups (``kernel.sched_autogroup_enabled``, on by default in
  most distributions) a session is scheduled as one: a sandbox gets a
  session's share however many threads it runs. Without autogroups, each
  sandbox is also held to one core of its own (the one fewest live sandboxes
  use), which it cannot leave.
- Memory: what no process's resident memory shows is refused (``memfd_create``,
  ``memfd_secret``, ``shmget``: System V shared memory), and the watchdog adds
  the sandbox's ``tmpfs`` folders (HOME, ``/tmp``, ``/dev/shm``) to its count.
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
_LIVE: dict[str, "Share"] = {}  # token -> the share of each sandbox not yet removed
# Runs before bwrap, as its own process: joins the group (its cgroup.procs files) or keeps to
# its cores ("cpus=0,1"), then becomes bwrap; argv: those, "--", bwrap's command.
_LAUNCH = """\
import os, sys
cut = sys.argv.index('--')
for what in sys.argv[1:cut]:
    if what.startswith('cpus='):
        os.sched_setaffinity(0, [int(cpu) for cpu in what[5:].split(',')])
    else:
        with open(what, 'w') as procs:
            procs.write(str(os.getpid()))
os.execv(sys.argv[cut + 1], sys.argv[cut + 1:])
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

    def launcher(self, command: list[str]) -> list[str]:
        """``command`` (``bwrap``'s), started in this share: in its group, or on its cores."""
        places = self.group.procs if self.group else []
        if self.cores:
            places.append("cpus=" + ",".join(map(str, sorted(self.cores))))
        return [sys.executable, "-I", "-S", "-c", _LAUNCH, *places, "--", *command]

    def tmpfs_used(self, pid: int) -> int:
        """Bytes in the tmpfs folders of the sandbox whose ``bwrap`` is ``pid`` (0 with a
        group, which charges them itself, or before the sandbox has its root)."""
        if self.group is not None:
            return 0
        import psutil

        try:
            inside = [child.pid for child in psutil.Process(pid).children()]
        except psutil.Error:
            return 0
        used = 0
        for child in inside[:1]:  # its PID 1, in the sandbox's root
            for folder in self.folders:
                try:
                    stat = os.statvfs(f"/proc/{child}/root{folder}")
                except OSError:
                    continue
                used += (stat.f_blocks - stat.f_bfree) * stat.f_frsize
        return used

    def remove(self) -> None:
        """Kill what is left in its group and remove the group (the sandbox has ended)."""
        _LIVE.pop(self.token, None)
        if self.group is not None:
            self.group.remove()


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
