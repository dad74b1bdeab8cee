"""JupyterLab as a student starts it, for tests/test_jupyterlab.py: the installed server on a
free port with a token, in a home and Jupyter folders of its own (a fresh install: no
settings, no kernels but the one the requirements install), stopped with every kernel it
started; and the few things a student does in it, done through its own UI in headless
Chromium (tests/chromium.py): open a notebook, Run > Run All Cells, type into a cell, run it.
"""
import json
import os
import secrets
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

from chromium import Browser

STARTUP = 90  # seconds for the server to answer (loaded CI machines take 10-20)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Lab:
    """A JupyterLab server serving ``root``; :meth:`stop` ends it and every kernel it started."""

    def __init__(self, root: Path, home: Path):
        import psutil

        self.root, self.port, self.token = root, free_port(), secrets.token_hex(16)
        env = {key: value for key, value in os.environ.items()
               if not key.startswith(("JUPYTER", "JPY_", "IPYTHON"))}
        env.update(HOME=str(home), JUPYTER_CONFIG_DIR=str(home / "jupyter-config"),
                   JUPYTER_DATA_DIR=str(home / "jupyter-data"),
                   JUPYTER_RUNTIME_DIR=str(home / "jupyter-runtime"),
                   IPYTHONDIR=str(home / "ipython"), XDG_CONFIG_HOME=str(home / ".config"),
                   XDG_DATA_HOME=str(home / ".local" / "share"),
                   XDG_STATE_HOME=str(home / ".local" / "state"),
                   XDG_CACHE_HOME=str(home / ".cache"))
        self.log = open(home / "jupyterlab.log", "w")
        self.process = subprocess.Popen(
            [sys.executable, "-m", "jupyterlab", "--no-browser", "--ServerApp.ip=127.0.0.1",
             f"--ServerApp.port={self.port}", "--ServerApp.port_retries=0",
             f"--IdentityProvider.token={self.token}", f"--ServerApp.root_dir={root}",
             "--LabApp.news_url=None", "--LabApp.check_for_updates_class="
             "jupyterlab.NeverCheckForUpdate",
             *(["--allow-root"] if os.getuid() == 0 else [])],  # CI's containers run as root
            env=env, cwd=root, stdout=self.log, stderr=subprocess.STDOUT,
            start_new_session=True)
        self._server = psutil.Process(self.process.pid)
        deadline = time.monotonic() + STARTUP
        while True:
            try:
                self.api("status")
                break
            except OSError:
                if self.process.poll() is not None or time.monotonic() > deadline:
                    self.stop()
                    raise RuntimeError(f"JupyterLab did not start; see {self.log.name}") from None
                time.sleep(0.3)

    def url(self, path: str, *query: str) -> str:
        return f"http://127.0.0.1:{self.port}/{path}?{'&'.join((*query, f'token={self.token}'))}"

    def api(self, path: str, method: str = "GET"):
        request = urllib.request.Request(
            f"http://127.0.0.1:{self.port}/api/{path}", method=method,
            headers={"Authorization": f"token {self.token}"})
        with urllib.request.urlopen(request, timeout=10) as response:
            body = response.read()
        return json.loads(body) if body else None

    def stop(self) -> None:
        """Shut the server down through its API (it shuts its kernels down), then end whatever
        is left of it and of the processes it started: kernels run in sessions of their own."""
        import psutil

        started = []
        try:
            started = self._server.children(recursive=True)
            self.api("shutdown", method="POST")
            self.process.wait(20)
        except Exception:  # gone, or deaf: ending it by signal below is all that matters now
            pass
        for process in [self._server, *started]:
            for sig in (signal.SIGTERM, signal.SIGKILL):
                try:
                    process.send_signal(sig)
                    process.wait(5)
                    break
                except psutil.NoSuchProcess:
                    break
                except psutil.TimeoutExpired:
                    continue
        self.process.wait()
        self.log.close()


class Student:
    """What a student does in JupyterLab's page, through its UI (the mouse and the keyboard)."""

    def __init__(self, browser: Browser, lab: Lab):
        self.browser, self.lab = browser, lab
        # A headless page never has the window's focus, and an editor without it takes no
        # typing: the page is told it has it, as the student's window would.
        browser.call("Emulation.setFocusEmulationEnabled", enabled=True)

    def wait(self, condition: str, timeout: float, what: str):
        """Poll the page's JavaScript ``condition`` until it is truthy; its value."""
        deadline = time.monotonic() + timeout
        while True:
            value = self.browser.js(condition)
            if value:
                return value
            if time.monotonic() > deadline:
                raise TimeoutError(f"{what}: not within {timeout:.0f} s")
            time.sleep(0.25)

    def click(self, selector: str, index: int = 0, inner: str = "", timeout: float = 20) -> None:
        """A real click (pressed and released) at the middle of the ``index``-th element
        ``selector`` selects (or of the element ``inner`` selects within it)."""
        box = self.wait(f"""(() => {{
            let e = document.querySelectorAll({selector!r})[{index}];
            if (e && {inner!r}) e = e.querySelector({inner!r});
            if (!e) return null; e.scrollIntoView({{block: 'center'}});
            const r = e.getBoundingClientRect();
            const at = [r.x + Math.min(r.width / 2, 40), r.y + Math.min(r.height / 2, 8)];
            const hit = document.elementFromPoint(...at);  // on it, not on what covers it
            return r.width && hit && e.contains(hit) ? at : null; }})()""",
                        timeout, f"no {selector} to click")
        for kind in ("mouseMoved", "mousePressed", "mouseReleased"):
            self.browser.call("Input.dispatchMouseEvent", type=kind, x=box[0], y=box[1],
                              button="left", buttons=1 if kind == "mousePressed" else 0,
                              clickCount=1)

    def key(self, key: str, code: str, modifiers: int = 0, text: str = "") -> None:
        """One key pressed and released (``modifiers``: 8 Shift, 2 Ctrl)."""
        for kind in ("keyDown", "keyUp"):
            self.browser.call("Input.dispatchKeyEvent", type=kind, key=key, code=code,
                              modifiers=modifiers, text=text if kind == "keyDown" else "",
                              windowsVirtualKeyCode={"Enter": 13, "a": 65, "s": 83}.get(key, 0))

    def save(self) -> None:
        """Ctrl+S, and wait until no tab is marked unsaved (the page may then be left without
        a "Leave site?" question, which would stop the next page from loading)."""
        self.key("s", "KeyS", modifiers=2)
        self.wait("!document.querySelector('.lm-TabBar-tab.jp-mod-dirty')", 30, "saved")

    def type(self, text: str) -> None:
        """Text typed into whatever has the focus (as an input method would insert it)."""
        self.browser.call("Input.insertText", text=text)
