"""Headless Chromium driven over the Chrome DevTools Protocol, for the tests that look at a
page as a reader would: the website's (test_site), the class report's (test_grade_report) and
JupyterLab's with a student notebook open (test_jupyterlab, through jupyterlab_ui).
The ``browser`` fixture (in conftest) skips where Chromium is not installed."""
import base64
import json
import os
import shutil
import signal
import subprocess
import time
import urllib.request
from pathlib import Path

CHROMIUM_FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                  "--disable-component-update", "--disable-sync", "--no-first-run",
                  "--hide-scrollbars", "--mute-audio", "--remote-debugging-port=0"]
WIDTH, HEIGHT = 1280, 900


def chromium() -> str | None:
    return next(filter(None, map(shutil.which, ("chromium", "chromium-browser"))), None)


class Browser:
    """Headless Chromium driven over the Chrome DevTools Protocol (no driver, no download)."""

    def __init__(self, executable: str, profile: Path):
        import websocket  # websocket-client

        self.log = open(profile.parent / "chromium.log", "w")
        # Its own process group, so that close() ends every process it starts, and only those.
        self.process = subprocess.Popen(
            [executable, *CHROMIUM_FLAGS, f"--user-data-dir={profile}",
             f"--window-size={WIDTH},{HEIGHT}", "about:blank"],
            stdout=self.log, stderr=subprocess.STDOUT, start_new_session=True)
        port_file, deadline = profile / "DevToolsActivePort", time.monotonic() + 30
        while not (port_file.exists() and port_file.read_text().strip()):
            if self.process.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"Chromium did not start; see {self.log.name}")
            time.sleep(0.1)
        port = port_file.read_text().split()[0]
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/json/list", timeout=10) as r:
            target = next(t for t in json.load(r) if t["type"] == "page")
        self.ws = websocket.create_connection(target["webSocketDebuggerUrl"], timeout=30,
                                              suppress_origin=True)
        self.next_id, self.events = 0, []
        for domain in ("Page", "Runtime", "Log", "Network"):
            self.call(f"{domain}.enable")
        self.resize(WIDTH, HEIGHT)

    def call(self, method: str, **params):
        self.next_id += 1
        self.ws.send(json.dumps({"id": self.next_id, "method": method, "params": params}))
        while True:
            message = json.loads(self.ws.recv())
            if message.get("id") == self.next_id:
                if "error" in message:
                    raise RuntimeError(f"{method}: {message['error']}")
                return message.get("result", {})
            self.events.append(message)

    def wait_for(self, event: str, timeout: float = 30):
        deadline = time.monotonic() + timeout
        while not any(e.get("method") == event for e in self.events):
            if time.monotonic() > deadline:
                raise TimeoutError(event)
            self.ws.settimeout(max(0.1, deadline - time.monotonic()))
            self.events.append(json.loads(self.ws.recv()))
        self.ws.settimeout(30)

    def open(self, url: str | None = None, click: str | None = None):
        """Load ``url`` (or follow the link ``click`` selects) and wait for its images, fonts
        and MathJax. Returns the console errors."""
        self.events = []
        if url:
            self.call("Page.navigate", url=url)
        else:
            self.call("Runtime.evaluate", expression=f"document.querySelector({click!r}).click()")
        self.wait_for("Page.loadEventFired")
        self.js("""(async () => {
            await Promise.all([...document.images].map(i => {
                i.loading = 'eager'; return i.decode().catch(() => null); }));
            if (window.MathJax && MathJax.startup && MathJax.startup.promise)
                await MathJax.startup.promise;
            await document.fonts.ready;
        })()""")
        return self.errors()

    def errors(self) -> list[str]:
        found = []
        for e in self.events:
            method, params = e.get("method"), e.get("params", {})
            if method == "Runtime.consoleAPICalled" and params["type"] in ("error", "assert"):
                found.append(" ".join(str(a.get("value", a.get("description", "")))
                                      for a in params["args"]))
            elif method == "Runtime.exceptionThrown":
                details = params["exceptionDetails"]
                found.append(details.get("exception", {}).get("description") or details["text"])
            elif method == "Log.entryAdded" and params["entry"]["level"] == "error":
                entry = params["entry"]
                found.append(f"{entry['text']} {entry.get('url', '')}".strip())
        return found

    def requests(self) -> list[str]:
        """The URLs the page asked for since it was opened (itself included)."""
        return [e["params"]["request"]["url"] for e in self.events
                if e.get("method") == "Network.requestWillBeSent"]

    def js(self, expression: str):
        result = self.call("Runtime.evaluate", expression=expression, awaitPromise=True,
                           returnByValue=True)
        if "exceptionDetails" in result:
            raise RuntimeError(result["exceptionDetails"])
        return result["result"].get("value")

    def resize(self, width: int, height: int):
        self.call("Emulation.setDeviceMetricsOverride", width=width, height=height,
                  deviceScaleFactor=1, mobile=width < 600)

    def screenshot(self, path: Path):
        path.parent.mkdir(exist_ok=True)
        path.write_bytes(base64.b64decode(self.call("Page.captureScreenshot")["data"]))

    def close(self):
        try:
            self.call("Browser.close")
            self.process.wait(10)
        except Exception:  # it may be gone already: ending it is all that matters now
            pass
        finally:
            self.ws.close()
            for sig in (signal.SIGTERM, signal.SIGKILL):
                try:
                    os.killpg(self.process.pid, sig)  # the group is this browser's alone
                except ProcessLookupError:
                    break
                time.sleep(0.5)
            self.process.wait()
            self.log.close()
