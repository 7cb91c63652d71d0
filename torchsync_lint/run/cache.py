"""Reports of unchanged files, kept between runs.

A file's whole ``FileReport`` (findings, per-finding temperatures, its call-graph summary, noqa
comments) depends only on its bytes, its path and package (the module name), the options that
reach ``check_source`` and the linter's own code. All of these go into the key, so a hit is
exactly what checking the file again would give; hot paths across files are still resolved on
every run, from the cached summaries. Entries are JSON (``report_data``: nothing read from a
cache folder is executed), written atomically, and carry their own key; an unreadable, foreign or
corrupt entry is a miss and is written again.
"""

from __future__ import annotations

import hashlib
import importlib.util
import os
import json
import sys
import tempfile
from functools import lru_cache
from typing import Optional

FORMAT = 1
# what the cache folder writes about itself, as Ruff's and pytest's do: git never lists its entries
GITIGNORE = "# written by torchsync-lint: its cache, never to be committed\n*\n"


def _libcst_version() -> bytes:
    """LibCST's version file, read without importing LibCST: a run answered from the cache (the
    flake8 plugin on an unchanged file) never loads the parser. Without that file, the version
    its installed metadata gives."""
    try:
        spec = importlib.util.find_spec("libcst")
        if spec is not None and spec.origin:
            with open(os.path.join(os.path.dirname(spec.origin), "_version.py"), "rb") as fh:
                return fh.read()
    except (OSError, ImportError, ValueError):
        pass
    try:
        from importlib import metadata  # only here: its import costs more than the file read above

        return metadata.version("libcst").encode()
    except Exception:  # not installed as a distribution: nothing more to tell
        return b""


@lru_cache(maxsize=None)
def code_fingerprint() -> str:
    """The linter's own code (every module of the package), LibCST's and Python's versions."""
    h = hashlib.sha256(f"{FORMAT}|{sys.version}|".encode())
    h.update(_libcst_version())
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))  # the package, not run/ alone
    for folder, dirs, files in sorted(os.walk(root)):
        dirs.sort()
        for name in sorted(files):
            if name.endswith(".py"):
                path = os.path.join(folder, name)
                h.update(os.path.relpath(path, root).encode())
                with open(path, "rb") as fh:
                    h.update(fh.read())
    return h.hexdigest()


def key(data: bytes, path: str, module_name: str, options: object) -> str:
    h = hashlib.sha256()
    # TSL110's extra syncing calls come from the config through the environment (worker processes)
    extra = os.environ.get("TORCHSYNC_LINT_EXTRA_SYNC_CALLS", "")
    for part in (code_fingerprint(), os.path.abspath(path), path, module_name, repr(options), extra):
        h.update(part.encode("utf-8", "surrogateescape"))
        h.update(b"\0")
    h.update(data)
    return h.hexdigest()


# entries that could not be encoded (a value the interface format does not cover: the linter's
# bug, never the user's): counted, and told once per process, so that it cannot hide
unencodable = 0


def write_json(path: str, payload: dict) -> None:
    """Write ``payload`` as JSON to ``path`` atomically (a temporary file, then a rename); a
    read-only or full disk only costs speed, so its errors are dropped. A payload that cannot be
    encoded is not written either, but said (once): every later run would derive it again."""
    global unencodable
    try:
        text = json.dumps(payload, separators=(",", ":"))  # one shot: the C encoder (``dump`` streams in Python)
    except (TypeError, ValueError) as exc:
        unencodable += 1
        if unencodable == 1:
            sys.stderr.write(f"torchsync-lint: internal error: a cache entry could not be encoded ({exc}); "
                             "the run goes on without it\n")
        return
    tmp = None
    try:
        os.makedirs(os.path.dirname(path), exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=os.path.dirname(path), suffix=".tmp")
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
        os.replace(tmp, path)
        tmp = None
    except OSError:
        pass
    finally:
        if tmp is not None:
            try:
                os.unlink(tmp)
            except OSError:
                pass


class ReportCache:
    def __init__(self, directory: str) -> None:
        self.directory = directory

    def _file(self, k: str) -> str:
        return os.path.join(self.directory, k[:2], k + ".json")

    def get(self, k: str) -> Optional[dict]:
        try:
            with open(self._file(k), "rb") as fh:
                entry = json.loads(fh.read().decode("utf-8"))
        except Exception:  # missing, truncated, not ours: check the file again
            return None
        if not isinstance(entry, dict) or entry.get("key") != k or not isinstance(entry.get("data"), dict):
            return None
        return entry["data"]

    def _ignore_itself(self) -> None:
        """A ``.gitignore`` of ``*`` in the cache folder (once; an existing one is left alone)."""
        path = os.path.join(self.directory, ".gitignore")
        if os.path.exists(path):
            return
        try:
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
        except OSError:  # written by a concurrent run, or a read-only folder: nothing to do
            return
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(GITIGNORE)

    def put(self, k: str, data: dict) -> None:
        write_json(self._file(k), {"key": k, "data": data})
        self._ignore_itself()  # the folder exists now (unless the write failed: then nothing happens)
