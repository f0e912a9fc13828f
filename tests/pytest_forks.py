"""Many short pytest runs that pay Python's start-up once (the clause map's mutation check,
``tests/controller/test_rulebook.py``): each run of its own process costs a second and a
half of starting Python and pytest and importing the project before its few tests.

``python -m tests.pytest_forks ARGS...`` is a process of one thread that collects ``ARGS``
(``--collect-only``: pytest, its plugins, ``tests.conftest``, the project and the test
modules imported as a run imports them, assertions rewritten) and then, for each line on
its standard input, a JSON request ``{"args": [...], "env": {...}, "timeout_s": n}``, forks
a child that sets ``env``, runs ``pytest.main(args)`` with its output in a file of its own
and exits with pytest's code. It answers one JSON line, ``{"code": n, "out": "..."}`` (the
output's last ``TAIL`` characters; ``code`` is null for a run that did not finish in
``timeout_s``, its process group killed). It never runs a test itself, so every run starts
from the state the collection left, copy-on-write, whatever the runs before it broke. It
ends at the end of its input.

A run that breaks a rule (``tests/mutation_plugin.py``) finds its modules already imported:
the plugin puts its mutant wherever the original is bound in any of them, a test module's
``from x import f`` included.
"""

from __future__ import annotations

import atexit
import gc
import json
import os
import queue
import random
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import IO, Any

TAIL = 3000
_POLL_S = 0.01


def _run_child(args: Sequence[str], env: Mapping[str, str], out: IO[bytes], answers: int) -> int:
    """In the forked child: the run, its output in ``out``; pytest's exit code."""
    os.setpgid(0, 0)  # its group, so a run that hangs is killed with what it started
    os.close(answers)
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.close(null)
    os.dup2(out.fileno(), 1)
    os.dup2(out.fileno(), 2)
    os.environ.update(env)
    random.seed()  # not the state every run inherits
    import pytest

    return int(pytest.main(list(args)))


def run(
    args: Sequence[str], env: Mapping[str, str], timeout_s: float, answers: int
) -> dict[str, Any]:
    """One run in a child of this process (``answers``, the server's, closed in it); its
    answer."""
    if threading.active_count() != 1:
        raise RuntimeError(f"a fork of a process of threads: {threading.enumerate()}")
    with tempfile.TemporaryFile() as out:
        sys.stdout.flush()
        sys.stderr.flush()
        # What the server holds is out of the collector's sight: pytest collects every run's
        # garbage hard at its end, which walked (and copied) the whole imported project.
        gc.freeze()
        pid = os.fork()
        if pid == 0:
            exit_code = 70  # EX_SOFTWARE: the run itself could not be made
            try:
                exit_code = _run_child(args, env, out, answers)
            except BaseException as exc:
                print(f"the run could not be made: {exc!r}", file=sys.stderr)
            finally:
                sys.stdout.flush()
                sys.stderr.flush()
                atexit._run_exitfuncs()  # what the process would do on its way out
                os._exit(exit_code)
        deadline = time.monotonic() + timeout_s
        code: int | None = None
        while True:
            done, status = os.waitpid(pid, os.WNOHANG)
            if done:
                code = os.waitstatus_to_exitcode(status)
                break
            if time.monotonic() > deadline:
                try:
                    os.killpg(pid, signal.SIGKILL)
                except ProcessLookupError:  # not yet a group of its own
                    os.kill(pid, signal.SIGKILL)
                os.waitpid(pid, 0)
                break
            time.sleep(_POLL_S)
        out.seek(0)
        text = out.read().decode(errors="replace")
    return {"code": code, "out": text[-TAIL:]}


def serve(collect: Sequence[str]) -> None:
    answers = os.fdopen(os.dup(1), "w")  # the answers' own; the runs' output goes elsewhere
    null = os.open(os.devnull, os.O_WRONLY)
    os.dup2(null, 1)
    os.close(null)
    import pytest

    pytest.main([*collect, "--collect-only"])
    for line in sys.stdin:
        request = json.loads(line)
        answer = run(request["args"], request["env"], request["timeout_s"], answers.fileno())
        answers.write(json.dumps(answer) + "\n")
        answers.flush()


class Lanes:
    """``n`` servers of runs, started at once with what they collect; a run takes one that is
    free. Used as a context manager: at its end every server reads the end of its input and
    is waited for."""

    def __init__(
        self, n: int, collect: Sequence[str], *, cwd: Path, env: Mapping[str, str]
    ) -> None:
        self._free: queue.SimpleQueue[subprocess.Popen[str]] = queue.SimpleQueue()
        self._servers: list[subprocess.Popen[str]] = []
        try:
            for _ in range(n):
                server = subprocess.Popen(
                    [sys.executable, "-m", __name__, *collect],
                    cwd=cwd,
                    env=dict(env),
                    stdin=subprocess.PIPE,
                    stdout=subprocess.PIPE,
                    text=True,
                )
                self._servers.append(server)
                self._free.put(server)
        except BaseException:
            self.close()
            raise

    def run(
        self, args: Sequence[str], env: Mapping[str, str], timeout_s: float
    ) -> tuple[int | None, str]:
        """pytest's exit code (None: no answer in ``timeout_s``) and its output's end."""
        server = self._free.get()
        try:
            assert server.stdin is not None and server.stdout is not None
            request = {"args": list(args), "env": dict(env), "timeout_s": timeout_s}
            server.stdin.write(json.dumps(request) + "\n")
            server.stdin.flush()
            line = server.stdout.readline()
            if not line:
                raise RuntimeError(f"a server of runs ended, exit {server.wait()}")
            answer = json.loads(line)
            return answer["code"], answer["out"]
        finally:
            self._free.put(server)

    def close(self) -> None:
        for server in self._servers:
            if server.stdin is not None:
                server.stdin.close()
        for server in self._servers:
            server.wait()
            if server.stdout is not None:
                server.stdout.close()

    def __enter__(self) -> Lanes:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


if __name__ == "__main__":
    serve(sys.argv[1:])
