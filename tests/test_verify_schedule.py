"""Snippet mode's children share one feed of files: whichever child is up and idle takes the next
file, the largest first (``runner.run_job(feed=, shared=True)``). CPU only (predict mode)."""

from __future__ import annotations

import queue
import threading

import pytest

from torchsync_lint.finding import Finding
from torchsync_lint.verify import runner, schedule
from torchsync_lint.verify.snippet import extract_file

pytest.importorskip("torch")

SETTINGS = {"sleep_ms": 20.0, "short_sleep_ms": 5.0, "reps": 3}
SOURCE = "import torch\n\n\ndef f(x):\n    a = x.sum().item()\n    b = x.max().item()\n    return a + b\n"


def _batches(tmp_path, n_files):
    batches = []
    for k in range(n_files):
        mod = tmp_path / f"m{k}.py"
        mod.write_text(SOURCE)
        findings = {}
        for i, line in enumerate((5, 6)):
            text = SOURCE.splitlines()[line - 1]
            col = text.index("=") + 2
            findings[10 * k + i] = Finding(str(mod), line, col + 1, line, len(text) + 1, "TSL001", "n", "m")
        got = extract_file(str(mod), list(findings.items()))
        batches.append(schedule.tasks_of(got, findings))
    return batches


def test_children_share_one_feed_of_files_and_each_sees_its_end(tmp_path):
    batches = _batches(tmp_path, 4)
    feed: "queue.Queue" = queue.Queue()
    for b in batches:
        feed.put(b)
    feed.put(None)
    started = runner.start_many(2, "predict", SETTINGS)
    job = {"kind": "snippet", "mode": "predict", "settings": SETTINGS, "sys_path": [str(tmp_path)], "tasks": []}
    out = {}
    threads = [threading.Thread(target=lambda i=i: out.update({i: runner.run_job(
        dict(job), 60, started=started[i], feed=feed, shared=True)})) for i in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(180)
    for st in started:
        st.close()
    assert sorted(i for res in out.values() for i in res.results) == sorted(t["id"] for b in batches for t in b)
    for res in out.values():
        for r in res.results.values():
            assert not r.get("failure"), r
    for b in batches:  # a file's tasks ran in one child
        assert len({i for i, res in out.items() if b[0]["id"] in res.results and b[1]["id"] in res.results}) == 1
    assert feed.get_nowait() is None  # the end stays for anyone else


def test_a_child_takes_nothing_before_it_is_up(tmp_path):
    """A shared feed's file goes to a child only once it has imported torch and its packages: a
    child still starting leaves the feed to the others."""
    batches = _batches(tmp_path, 1)
    feed: "queue.Queue" = queue.Queue()
    feed.put(batches[0])
    feed.put(None)
    started = runner.start_many(1, "predict", SETTINGS)
    job = {"kind": "snippet", "mode": "predict", "settings": SETTINGS, "sys_path": [str(tmp_path)], "tasks": []}
    res = runner.run_job(dict(job), 60, started=started[0], feed=feed, shared=True)
    started[0].close()
    assert set(res.results) == {t["id"] for t in batches[0]}
    assert res.times["begin"] >= res.times["preloaded"] >= res.times["ready"]
