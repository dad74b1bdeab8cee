"""Nothing finished is lost: a journal of graded notebooks, and results only a grader can sign.

- **The key.** The grader signs what it writes (the journal's lines, ``--json-file``
  results) with HMAC-SHA256 under a key of its own, made once in the user's state
  folder (``$XDG_STATE_HOME/nn_from_scratch/grader.key``, mode 0600; or the folder in
  ``NN_FROM_SCRATCH_STATE``). No sandboxed kernel can read it, so a file that a
  submission wrote, or edited, fails the signature: ``--merge`` refuses it. To merge
  results graded on several machines, give them the same key file.
- **The journal.** Each notebook's rows are appended (and flushed to disk) the moment
  it is graded, in the state folder, one file per class (by the paths graded). If the
  grader is stopped for any reason, ``grade --resume`` with the same arguments keeps
  every row already there whose notebook has not changed since (same SHA-256) and
  grades only the rest.
"""
import hashlib
import hmac
import json
import os
import secrets
from collections.abc import Sequence
from pathlib import Path
from typing import Any

__all__ = ["Journal", "class_id", "key", "sign", "state_folder", "verify"]

STATE_ENV = "NN_FROM_SCRATCH_STATE"


def state_folder() -> Path:
    """``$NN_FROM_SCRATCH_STATE``, else ``$XDG_STATE_HOME/nn_from_scratch`` (~/.local/state)."""
    if os.environ.get(STATE_ENV):
        folder = Path(os.environ[STATE_ENV])
    else:
        base = os.environ.get("XDG_STATE_HOME") or Path.home() / ".local" / "state"
        folder = Path(base) / "nn_from_scratch"
    folder.mkdir(parents=True, exist_ok=True, mode=0o700)
    return folder


def key() -> bytes:
    """The grader's signing key, made on first use (32 random bytes, readable by you alone)."""
    path = state_folder() / "grader.key"
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:
        return bytes.fromhex(path.read_text().strip())
    with os.fdopen(fd, "w") as f:
        f.write(secrets.token_hex(32) + "\n")
    return bytes.fromhex(path.read_text().strip())


def _canonical(data: Any) -> bytes:
    return json.dumps(data, sort_keys=True, ensure_ascii=False, separators=(",", ":")).encode()


def sign(data: Any) -> str:
    """The signature of ``data`` (anything JSON holds), hex."""
    return hmac.new(key(), _canonical(data), hashlib.sha256).hexdigest()


def verify(data: Any, signature: object) -> bool:
    return isinstance(signature, str) and hmac.compare_digest(sign(data), signature)


def class_id(paths: Sequence[str | Path], *options: str) -> str:
    """A short name for a class: the paths graded (resolved) and the options that change rows."""
    named = sorted(str(Path(p).resolve()) for p in paths)
    return hashlib.sha256(json.dumps([named, *options]).encode()).hexdigest()[:16]


class Journal:
    """``journals/<class id>.jsonl`` in the state folder: a signed line per graded notebook."""

    def __init__(self, class_name: str) -> None:
        folder = state_folder() / "journals"
        folder.mkdir(exist_ok=True, mode=0o700)
        self.path = folder / f"{class_name}.jsonl"

    def load(self) -> dict[str, dict[str, Any]]:
        """What an earlier run finished: submission digest -> its graded notebook (as JSON);
        lines that are cut short or not signed by this grader are left out."""
        done: dict[str, dict[str, Any]] = {}
        if not self.path.exists():
            return done
        for line in self.path.read_text(encoding="utf-8").splitlines():
            try:
                entry = json.loads(line)
                if verify([entry["digest"], entry["graded"]], entry["signature"]):
                    done[entry["digest"]] = entry["graded"]
            except (ValueError, KeyError, TypeError):
                continue  # the last line of a grader that was stopped while writing it
        return done

    def start(self, keep: bool) -> None:
        """Begin a run: keep what is there (``--resume``), or start the journal afresh."""
        if not keep:
            self.path.unlink(missing_ok=True)

    def add(self, digest: str, graded: dict[str, Any]) -> None:
        """Append one graded notebook, on disk before this returns."""
        entry = {"digest": digest, "graded": graded, "signature": sign([digest, graded])}
        fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
        with os.fdopen(fd, "a", encoding="utf-8") as f:
            f.write(json.dumps(entry, ensure_ascii=False) + "\n")
            f.flush()
            os.fsync(f.fileno())
