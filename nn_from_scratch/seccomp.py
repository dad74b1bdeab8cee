"""The system calls a sandboxed kernel may not make: a seccomp filter for ``bwrap --seccomp``.

The sandbox (:mod:`.sandbox`) already hides the machine and caps the kernel's
memory, processes and disk. What its namespaces leave open is a way to get a
*new* set of them: a process that creates a user namespace gets every
capability inside it, and could mount a tmpfs of its own that no limit counts,
or reach the instructor's kernel keyring. So, as Flatpak and Docker do, the
filter refuses with ``EPERM``:

- ``clone`` and ``unshare`` asking for a new user namespace (``clone3``, whose
  flags a filter cannot read, says ``ENOSYS``, and the C library falls back to
  ``clone``, which the filter can read);
- mounting and namespace juggling (``mount``, ``setns``, ``pivot_root``, the
  new mount API), the kernel keyring (``keyctl``, ``add_key``, ``request_key``),
  and ``bpf``, ``perf_event_open``, ``userfaultfd``, ``kexec_load``, and ``io_uring``
  (a large part of the kernel that no lesson needs, refused by Docker's default profile too:
  red team, round twenty-two, found it open).

Everything else is allowed: a lesson needs threads, processes, sockets on its
own loopback and files in its own folders. A graded kernel whose lesson starts no program
(all but lesson 12's) then stacks a second filter of its own that also refuses
:data:`PROGRAMS`: a program it started would run code the grader's reading never sees
(matplotlib's ``subprocess_run_for_testing`` ran the library's relu in a child Python:
red team, round nineteen). The program is classic BPF, one
8-byte instruction at a time (``struct sock_filter``), written out here for the
two architectures the wheels of JAX exist for. Where the sandbox has no control group,
:mod:`.share` adds ``setsid``, ``sched_setaffinity``, ``memfd_create``, ``memfd_secret``
and ``shmget``. Another architecture gets
``None``, and the sandbox runs without the filter (the namespaces still hold).
"""
import platform
import struct

__all__ = ["BLOCKED", "PROGRAMS", "program", "seccomp_number"]

# struct seccomp_data: the syscall number at 0, the architecture at 4, arguments from 16.
_NR, _ARCH, _ARG0 = 0, 4, 16
_LOAD, _JEQ, _JSET, _RET = 0x20, 0x15, 0x45, 0x06  # BPF_LD|W|ABS, BPF_JMP|JEQ|K, JSET, BPF_RET|K
_ALLOW, _ERRNO = 0x7FFF0000, 0x00050000  # SECCOMP_RET_ALLOW, SECCOMP_RET_ERRNO | errno
_EPERM, _ENOSYS = 1, 38
CLONE_NEWUSER = 0x10000000
_X32 = 0x40000000  # x86-64's other ABI: its numbers have this bit; refused whole

# (audit architecture, {name: number}) per machine, from the kernel's syscall tables
_TABLES = {
    "x86_64": (0xC000003E, {
        "clone": 56, "unshare": 272, "clone3": 435, "mount": 165, "umount2": 166,
        "pivot_root": 155, "setns": 308, "keyctl": 250, "add_key": 248, "request_key": 249,
        "bpf": 321, "perf_event_open": 298, "userfaultfd": 323, "kexec_load": 246,
        "open_tree": 428, "move_mount": 429, "fsopen": 430, "fsconfig": 431, "fsmount": 432,
        "fspick": 433, "mount_setattr": 442, "setsid": 112, "sched_setaffinity": 203,
        "memfd_create": 319, "memfd_secret": 447, "shmget": 29, "execve": 59,
        "execveat": 322, "seccomp": 317, "io_uring_setup": 425, "io_uring_enter": 426,
        "io_uring_register": 427}),
    "aarch64": (0xC00000B7, {
        "clone": 220, "unshare": 97, "clone3": 435, "mount": 40, "umount2": 39,
        "pivot_root": 41, "setns": 268, "keyctl": 219, "add_key": 217, "request_key": 218,
        "bpf": 280, "perf_event_open": 241, "userfaultfd": 282, "kexec_load": 104,
        "open_tree": 428, "move_mount": 429, "fsopen": 430, "fsconfig": 431, "fsmount": 432,
        "fspick": 433, "mount_setattr": 442, "setsid": 157, "sched_setaffinity": 122,
        "memfd_create": 279, "memfd_secret": 447, "shmget": 194, "execve": 221,
        "execveat": 281, "seccomp": 277, "io_uring_setup": 425, "io_uring_enter": 426,
        "io_uring_register": 427}),
}
_MACHINES = {"amd64": "x86_64", "arm64": "aarch64"}
# refused outright; clone and unshare only with CLONE_NEWUSER, clone3 with ENOSYS
# what starts a program: refused, in a graded kernel, once its lesson's own cells need none
# (:meth:`.kernel.Kernel.forbid_programs`)
PROGRAMS = ("execve", "execveat")
BLOCKED = ("mount", "umount2", "pivot_root", "setns", "keyctl", "add_key", "request_key", "bpf",
           "perf_event_open", "userfaultfd", "kexec_load", "open_tree", "move_mount", "fsopen",
           "fsconfig", "fsmount", "fspick", "mount_setattr", "io_uring_setup", "io_uring_enter",
           "io_uring_register")


def _op(code: int, k: int, jt: int = 0, jf: int = 0) -> bytes:
    return struct.pack("=HBBI", code, jt, jf, k)


def program(machine: str | None = None, also: tuple[str, ...] = ()) -> bytes | None:
    """The compiled filter for ``machine`` (default: this one), or ``None`` if it has no table.

    ``also``: more calls to refuse with ``EPERM`` (the sandbox's fallback for CPU and memory
    where it has no cgroup, :mod:`.share`)."""
    name = (machine or platform.machine()).lower()
    table = _TABLES.get(_MACHINES.get(name, name))
    if table is None:
        return None
    arch, numbers = table
    refuse, not_there = _op(_RET, _ERRNO | _EPERM), _op(_RET, _ERRNO | _ENOSYS)
    ops = [_op(_LOAD, _ARCH), _op(_JEQ, arch, jt=1), refuse,  # another ABI: nothing at all
           _op(_LOAD, _NR)]
    if arch == _TABLES["x86_64"][0]:
        ops += [_op(_JSET, _X32, jf=1), refuse]
    for name in (*BLOCKED, *also):
        ops += [_op(_JEQ, numbers[name], jf=1), refuse]
    ops += [_op(_JEQ, numbers["clone3"], jf=1), not_there]
    for name in ("clone", "unshare"):  # flags are the first argument of both
        ops += [_op(_JEQ, numbers[name], jf=4), _op(_LOAD, _ARG0),
                _op(_JSET, CLONE_NEWUSER, jf=1), refuse, _op(_RET, _ALLOW)]
    ops.append(_op(_RET, _ALLOW))
    return b"".join(ops)


def seccomp_number(machine: str | None = None) -> int | None:
    """The number of the ``seccomp`` system call on ``machine`` (default: this one), or None."""
    name = (machine or platform.machine()).lower()
    table = _TABLES.get(_MACHINES.get(name, name))
    return None if table is None else table[1]["seccomp"]
