"""The ``progressive`` commands the tests run, each in a process of its own that does not pay
Python's start-up again: importing the project takes a command a second and a half of a
processor, and the suite runs hundreds of commands.

``python -m tests.command_forks SOCKET MODULE`` is a process of one thread that imports
``MODULE`` (``app.cli``, or ``tests.controller.permissive_cli``) and listens on the Unix
socket ``SOCKET``. For each connection it forks a shepherd, which reads one JSON request
(``{"args": [...], "env": {...}, "cwd": "...", "stdin": "..." | null}``) and forks the
command: a process of its own group with exactly ``env`` for its environment, ``cwd`` for
its folder, ``stdin`` (or nothing) on its standard input, its output and errors in files of
their own, that runs ``python -m MODULE ARGS`` as the interpreter would (``runpy``, run as
``__main__``) and exits with its code. The shepherd answers ``{"code": n, "out": "...",
"err": "..."}`` and exits. The server never runs a command itself, so every command starts
from the state the imports left, copy-on-write, whatever the commands before it did; and
commands run side by side as separate processes do.

``run_command`` is the tests' side: the server of a module is started once per test process,
at its first command, and ends with that process.
"""

from __future__ import annotations

import asyncio
import atexit
import contextlib
import gc
import json
import os
import random
import runpy
import signal
import socket
import subprocess
import sys
import tempfile
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

_READY_S = 60.0
_ANSWER_LIMIT = 256 * 1024 * 1024  # a command's whole output comes back on one line


def _command(module: str, request: Mapping[str, Any], out: int, err: int) -> int:
    """In the command's process: ``python -m module ARGS``; its exit code."""
    os.setpgid(0, 0)
    stdin = request.get("stdin")
    with tempfile.TemporaryFile() as given:
        if stdin is not None:
            given.write(str(stdin).encode())
            given.seek(0)
            os.dup2(given.fileno(), 0)
        else:
            null = os.open(os.devnull, os.O_RDONLY)
            os.dup2(null, 0)
            os.close(null)
    os.dup2(out, 1)
    os.dup2(err, 2)
    os.chdir(request["cwd"])
    os.environ.clear()
    os.environ.update(request["env"])
    random.seed()  # not the state every command inherits
    sys.argv = [module, *request["args"]]
    try:
        runpy.run_module(module, run_name="__main__", alter_sys=True)
    except SystemExit as done:
        code = done.code
        if code is None:
            return 0
        if isinstance(code, int):
            return code
        print(code, file=sys.stderr)
        return 1
    return 0


def _shepherd(module: str, conn: socket.socket) -> None:
    """In the shepherd: one request read, its command run in a child, the answer written."""
    with conn, conn.makefile("rwb") as stream:
        request = json.loads(stream.readline())
        with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
            sys.stdout.flush()
            sys.stderr.flush()
            pid = os.fork()
            if pid == 0:
                code = 70  # EX_SOFTWARE: the command could not be made
                try:
                    code = _command(module, request, out.fileno(), err.fileno())
                except BaseException as exc:
                    import traceback

                    traceback.print_exception(exc)
                finally:
                    with contextlib.suppress(BaseException):
                        sys.stdout.flush()
                        sys.stderr.flush()
                        atexit._run_exitfuncs()  # what the process does on its way out
                    os._exit(code)
            _, status = os.waitpid(pid, 0)
            out.seek(0)
            err.seek(0)
            answer = {
                "code": os.waitstatus_to_exitcode(status),
                "out": out.read().decode(errors="replace"),
                "err": err.read().decode(errors="replace"),
            }
        stream.write(json.dumps(answer).encode() + b"\n")
        stream.flush()


def serve(path: str, module: str) -> None:
    __import__(module)
    parent = os.getppid()
    signal.signal(signal.SIGCHLD, signal.SIG_IGN)  # the shepherds are reaped as they end
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as listener:
        listener.bind(path)
        listener.listen(64)
        listener.settimeout(1.0)
        # What the server holds is out of the collector's sight in every command.
        gc.freeze()
        while os.getppid() == parent:  # the test process that started it is still there
            try:
                conn, _ = listener.accept()
            except TimeoutError:
                continue
            pid = os.fork()
            if pid == 0:
                code = 0
                try:
                    listener.close()
                    signal.signal(signal.SIGCHLD, signal.SIG_DFL)
                    _shepherd(module, conn)
                except BaseException:
                    code = 70
                finally:
                    os._exit(code)
            conn.close()


# ------------------------------------------------------------------------------------------
# The tests' side

_servers: dict[str, tuple[subprocess.Popen[bytes], str]] = {}


def _server(module: str) -> str:
    """The socket of the module's server in this process, started at the first command."""
    if module in _servers:
        return _servers[module][1]
    folder = tempfile.mkdtemp(prefix="progressive-commands-")
    path = str(Path(folder) / "socket")
    server = subprocess.Popen(
        [sys.executable, "-m", __name__, path, module],
        stdin=subprocess.DEVNULL,
        start_new_session=True,  # a test's signal to its own group never reaches it
    )
    _servers[module] = (server, path)
    return path


@atexit.register
def _stop_servers() -> None:
    for server, path in _servers.values():
        server.terminate()
        with contextlib.suppress(subprocess.TimeoutExpired):
            server.wait(5)
        with contextlib.suppress(OSError):
            os.unlink(path)
            os.rmdir(os.path.dirname(path))


async def run_command(
    module: str,
    args: Sequence[str],
    *,
    env: Mapping[str, str],
    cwd: Path | str | None = None,
    stdin: str | None = None,
) -> tuple[int, str, str]:
    """``python -m module ARGS`` in a process of its own: exit code, output, errors. An
    environment that sets the interpreter up otherwise (``PYTHONPATH`` naming a copy of the
    software, any other ``PYTHON...`` setting) is a fresh interpreter's: the command is
    started as such."""
    if _interpreter(env) != _interpreter(os.environ):
        return await _started(module, args, env=env, cwd=cwd, stdin=stdin)
    path = _server(module)
    loop = asyncio.get_running_loop()
    deadline = loop.time() + _READY_S
    while True:
        try:
            reader, writer = await asyncio.open_unix_connection(path, limit=_ANSWER_LIMIT)
            break
        except (FileNotFoundError, ConnectionRefusedError) as exc:
            server = _servers[module][0]
            if server.poll() is not None:
                ended = f"the server of {module} ended, exit {server.returncode}"
                raise RuntimeError(ended) from exc
            if loop.time() > deadline:
                raise
            await asyncio.sleep(0.02)
    try:
        request = {
            "args": list(args),
            "env": dict(env),
            "cwd": str(cwd if cwd is not None else Path.cwd()),
            "stdin": stdin,
        }
        writer.write(json.dumps(request).encode() + b"\n")
        await writer.drain()
        line = await reader.readline()
    finally:
        writer.close()
        await writer.wait_closed()
    if not line:
        raise RuntimeError(f"the server of {module} gave no answer for {list(args)}")
    answer = json.loads(line)
    return int(answer["code"]), str(answer["out"]), str(answer["err"])


def _interpreter(env: Mapping[str, str]) -> dict[str, str]:
    return {k: v for k, v in env.items() if k.startswith("PYTHON")}


async def _started(
    module: str,
    args: Sequence[str],
    *,
    env: Mapping[str, str],
    cwd: Path | str | None,
    stdin: str | None,
) -> tuple[int, str, str]:
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        module,
        *args,
        env=dict(env),
        cwd=cwd,
        stdin=asyncio.subprocess.PIPE if stdin is not None else asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    out, err = await proc.communicate(stdin.encode() if stdin is not None else None)
    assert proc.returncode is not None
    return proc.returncode, out.decode(), err.decode()


if __name__ == "__main__":
    serve(sys.argv[1], sys.argv[2])
