"""The classroom preflight: a checklist with a fix for every problem, and an honest exit status."""
import re
import subprocess
import sys
import time
from pathlib import Path

from nn_from_scratch import doctor

ROOT = Path(__file__).resolve().parent.parent


def test_doctor_on_this_machine_is_ready_and_quick():
    start = time.perf_counter()
    result = subprocess.run([sys.executable, "-m", "nn_from_scratch", "doctor"], cwd=ROOT,
                            capture_output=True, text=True, timeout=120)
    assert time.perf_counter() - start < 60  # under 30 s on an idle 2-core machine
    out = result.stdout
    assert result.returncode == 0, out + result.stderr
    # Python and JAX: ✓ when the lessons were executed with them, ! (a note, not a failure)
    # when not, as on CI's second run with the newest JAX.
    assert re.search(r"^[✓!] Python 3\.", out, re.M) and re.search(r"^[✓!] JAX ", out, re.M)
    for line in ("device(s)", "CPU core(s)", "✓ mnist-5k",
                 "✓ 8 simulated CPU devices", "✓ two processes talk over 127.0.0.1",
                 "lesson sources in", "student notebooks in", "✓ smoke run init -> predict",
                 "✓ the grader's sandbox works: a kernel ran a cell in it"):
        assert line in out, line
    assert "Ready for the lessons." in out


def test_a_classroom_folder_without_the_lessons_is_a_failure_with_a_fix(tmp_path):
    checks = doctor.check_course(tmp_path)
    failed = [c for c in checks if c.symbol == doctor.FAIL]
    assert len(failed) == 3 and all("--course PATH" in c.fix for c in failed)
    assert "✗ no student notebooks in" in str(failed[-1]) and "fix:" in str(failed[-1])


def test_the_exit_status_is_1_when_anything_is_missing(tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(doctor, "check_parallel", lambda: [])  # keep this test quick
    monkeypatch.setattr(doctor, "check_sandbox", lambda: [])
    monkeypatch.setattr(doctor, "check_data", lambda: [doctor.Check(doctor.WARN, "no MNIST")])
    code = doctor.doctor_command(type("Args", (), {"course": tmp_path})())
    out = capsys.readouterr().out
    assert code == 1 and "3 missing" in out and "Fix the ✗ lines above before class." in out


def test_lessons_executed_with_another_jax_are_a_note_not_a_failure(tmp_path):
    (tmp_path / "notebooks").mkdir()
    (tmp_path / "notebooks" / "00_x.ipynb").write_text(
        '{"metadata": {"nn_from_scratch": {"executed": {"python": "3.11.7", "jax": "0.0.1"}}}}')
    checks = doctor.check_versions(tmp_path)
    jax_check = next(c for c in checks if "JAX" in c.what)
    assert jax_check.symbol == doctor.WARN and "0.0.1" in jax_check.what
    assert "pip install 'jax==0.0.1'" in jax_check.fix


def test_the_chinese_editions_are_checked_lesson_by_lesson(tmp_path):
    for folder in ("lessons", "notebooks/zh", "student/zh"):
        (tmp_path / folder).mkdir(parents=True)
    for stem in ("00_a", "01_b"):
        (tmp_path / "lessons" / f"{stem}.md").write_text("# lesson")
        (tmp_path / "notebooks" / "zh" / f"{stem}.ipynb").write_text("{}")
    (tmp_path / "student" / "zh" / "00_a.ipynb").write_text("{}")
    full, student = doctor.check_chinese(tmp_path)
    assert full.symbol == doctor.OK and "2 Chinese executed lessons" in str(full)
    assert student.symbol == doctor.WARN and "1 of 2" in str(student)
    assert "missing: 01_b" in str(student) and "tools/translations.py build" in student.fix


def test_a_sandbox_that_cannot_start_is_a_note_with_the_fix(monkeypatch):
    from nn_from_scratch import sandbox

    def unavailable():
        raise sandbox.Unavailable("it needs user namespaces: sudo apt install bubblewrap")

    monkeypatch.setattr(sandbox, "bwrap", unavailable)
    (check,) = doctor.check_sandbox()
    assert check.symbol == doctor.WARN and "--no-sandbox" in check.what
    assert check.fix == "it needs user namespaces: sudo apt install bubblewrap"


def test_a_refused_download_host_says_it_was_refused_at_once_not_checked_for_5_s(monkeypatch):
    import socket

    from nn_from_scratch import mnist

    closed = socket.socket()
    closed.bind(("127.0.0.1", 0))
    port = closed.getsockname()[1]
    closed.close()  # nothing listens there: the connection is refused at once
    monkeypatch.delenv("NN_FROM_SCRATCH_OFFLINE")
    monkeypatch.setattr(mnist, "MNIST_HOST", ("127.0.0.1", port))
    start = time.perf_counter()
    [line] = [c.what for c in doctor.check_data() if "cannot be reached" in c.what]
    assert time.perf_counter() - start < 4
    assert line.startswith("127.0.0.1 cannot be reached (Connection refused, after 0.")
    assert "5 s" not in line


def test_as_root_the_checklist_says_jupyterlab_needs_allow_root_and_only_then(monkeypatch):
    monkeypatch.setattr(doctor.os, "geteuid", lambda: 0)
    [note] = [c for c in doctor.check_course(ROOT) if "root" in c.what]
    assert note.symbol == doctor.WARN and note.fix == "jupyter lab student/ --allow-root"
    monkeypatch.setattr(doctor.os, "geteuid", lambda: 1000)
    assert not [c for c in doctor.check_course(ROOT) if "root" in c.what]
