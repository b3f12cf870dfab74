"""One task's command for ``taskloom tasks work``: its own process group, which dies with
the worker, the task on its standard input, and its output read within bounds.

``subprocess.run`` is not enough here. It kills only the process it started, so a timeout or
an interrupt would leave the command's children working on a task already failed or given to
another worker; it reads until every process holding the output has closed it, so a command
that leaves a job in the background would be waited for (or failed as timed out) after it
exits with success; and it keeps all of the output, so a command printing gigabytes would take
gigabytes of the worker's memory when 16 KiB of it are kept.
A worker killed outright (``kill -9``) takes its command with it: the command runs under a
guard (:mod:`taskloom.cli.command_guard`) that stops the group when the worker is gone, and
on Linux ends what the command left running when it is over, detached or not.
"""

from __future__ import annotations

import contextlib
import errno
import os
import shutil
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from types import FrameType
from typing import IO, NamedTuple

from taskloom.domain.errors import CommandNotStarted, TaskFailed

CHUNK_BYTES = 64 * 1024
WITHDRAWN_POLL_S = 0.25
"""How often a running command's task is checked for a lost lease."""
NOT_RUN = 127
"""The guard's exit status when it could not start the command, as a shell's."""
STOP_SIGNALS = tuple(
    getattr(signal, name) for name in ("SIGINT", "SIGTERM", "SIGHUP") if hasattr(signal, name)
)
"""What stops a worker and gives its task back: Ctrl-C, ``SIGTERM``, and ``SIGHUP`` (its
terminal closed, its ssh session dropped)."""
STOP_GRACE_S = 2.0
"""How long a command stopped by a timeout or an interrupt has to exit after ``SIGTERM``
(to its whole process group) before ``SIGKILL``."""
GUARD_GRACE_S = 3.0
"""How much longer the guard, which sends that ``SIGKILL`` itself (on Linux to the command and
its strays one by one, then ends), is waited for before ``SIGKILL`` to the group ends it too."""
GUARD = str(Path(__file__).with_name("command_guard.py"))
OUTPUT_GRACE_S = 0.5
"""How long the output may stay open after the command has exited: a process it left in the
background still holding it is then stopped, and what was read is the result."""


class Finished(NamedTuple):
    """A command's exit status and the output :func:`run` kept of it."""

    returncode: int
    stdout: bytes
    stderr: bytes


class _Starting:
    """Whether the main thread is starting a command, and the interrupt that came meanwhile.

    A signal raised between the command's fork and the wait that stops it on an interrupt
    (inside ``Popen``, or as its output readers start) would leave the command and its
    children running on a task given back. While a command starts, an
    interrupt is held, and raised once the command can be stopped with it."""

    def __init__(self) -> None:
        self.now = False
        self.held: BaseException | None = None

    def done(self) -> None:
        """The command has started (or could not): raise the interrupt held meanwhile."""
        self.now = False
        held, self.held = self.held, None
        if held is not None:
            raise held


_STARTING = _Starting()


def _on_signal(signum: int, frame: FrameType | None) -> None:
    """SIGINT or SIGTERM: ``KeyboardInterrupt`` named after the signal, raised where the
    worker is (it gives its task back), unless a command is starting (see :class:`_Starting`)."""
    interrupt = KeyboardInterrupt(signal.Signals(signum).name)
    if _STARTING.now:
        _STARTING.held = _STARTING.held or interrupt
        return
    raise interrupt


@contextlib.contextmanager
def stopping_on_signals() -> Iterator[None]:
    """Within it, Ctrl-C, ``SIGTERM`` and ``SIGHUP`` stop the worker and the command it runs,
    whenever they come (see :func:`run`). Signals reach only the main thread: elsewhere it
    changes nothing. A signal the worker was started ignoring (``SIGINT`` under ``cmd &`` in
    a script, ``SIGHUP`` under ``nohup``) stays ignored, as Python itself leaves it."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = {
        signum: signal.signal(signum, _on_signal)
        for signum in STOP_SIGNALS
        if signal.getsignal(signum) is not signal.SIG_IGN
    }
    try:
        yield
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler)


def run(
    argv: list[str],
    data: bytes,
    env: dict[str, str],
    timeout: float | None,
    head: int,
    tail: int,
    withdrawn: threading.Event | None = None,
    on_strays: Callable[[int], None] | None = None,
) -> Finished:
    """Run ``argv`` with ``data`` on its stdin; keep at most ``head`` bytes of its stdout and
    ``tail`` of its stderr. A timeout, ``withdrawn`` set (the task's lease was lost) or an
    interrupt stops the command's whole process group: the first two as :class:`TaskFailed`,
    the interrupt propagating. The worker's end of the guard's pipe is held until the command
    is over: closed by the worker's death, it tells the guard to stop the group.
    ``on_strays`` hears, however the command ended, how many processes it left running were
    ended (on Linux; see :mod:`taskloom.cli.command_guard`), when any were."""
    with _lifeline() as lifeline, _report() as (report, told):
        try:
            return _run(argv, data, env, timeout, head, tail, withdrawn, lifeline, told)
        finally:
            strays = _strays(report)
            if strays and on_strays is not None:
                on_strays(strays)


def _run(
    argv: list[str],
    data: bytes,
    env: dict[str, str],
    timeout: float | None,
    head: int,
    tail: int,
    withdrawn: threading.Event | None,
    lifeline: int,
    told: int,
) -> Finished:
    """:func:`run`, with the guard's ends of its pipes."""
    proc: subprocess.Popen[bytes] | None = None
    threads: list[threading.Thread] = []
    out, err = bytearray(), bytearray()
    _STARTING.now = threading.current_thread() is threading.main_thread()
    try:
        try:
            proc = subprocess.Popen(
                [sys.executable, "-I", "-S", GUARD, str(lifeline), str(told), "--", *argv],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                env=env,
                pass_fds=(lifeline, told),
                start_new_session=True,  # its own process group: stopped whole, children too
            )
        except OSError as exc:
            raise TaskFailed(f"could not run {argv[0]}: {exc.strerror or exc}") from None
        finally:
            os.close(lifeline)
            os.close(told)
        assert proc.stdin and proc.stdout and proc.stderr
        threads += [
            _thread(_feed, proc.stdin, data),
            _thread(_keep_head, proc.stdout, out, head),
            _thread(_keep_tail, proc.stderr, err, tail),
        ]
        _STARTING.done()
        returncode = _wait(proc, timeout, withdrawn)
        if returncode is None:
            _stop(proc, threads)
            raise TaskFailed("stopped: the task's lease was lost (killed)")
    except subprocess.TimeoutExpired:
        assert proc is not None
        _stop(proc, threads)
        raise TaskFailed(f"timed out after {timeout:g} s (killed)") from None
    except BaseException:  # Ctrl-C or SIGTERM in the worker: the command stops with it
        if proc is not None:
            _stop(proc, threads)
        _STARTING.done()  # an interrupt held while starting goes before a failure to start
        raise
    if not _joined(threads, OUTPUT_GRACE_S):  # the output is held open by what it left behind
        _signal_group(proc, signal.SIGKILL)
        _joined(threads, STOP_GRACE_S)
    said = bytes(err).decode("utf-8", "replace")
    if returncode == NOT_RUN and said.startswith(f"could not run {argv[0]}: ") and not out:
        raise CommandNotStarted(_why_not_run(argv[0], said.strip()))
    return Finished(returncode, bytes(out), bytes(err))


@contextlib.contextmanager
def _lifeline() -> Iterator[int]:
    """A pipe's end for the guard; the worker holds the other until the block is over."""
    lifeline, held = os.pipe()  # neither is inherited, unless passed on
    try:
        yield lifeline
    finally:
        os.close(held)


@contextlib.contextmanager
def _report() -> Iterator[tuple[int, int]]:
    """The pipe on which the guard tells how many strays it ended: the worker's end, read
    once the guard is gone, and the guard's, closed once passed on."""
    report, told = os.pipe()
    os.set_blocking(report, False)
    try:
        yield report, told
    finally:
        os.close(report)


def _strays(report: int) -> int:
    """What the guard, gone now, wrote on its report pipe: 0 for nothing."""
    try:
        said = os.read(report, 64)
    except OSError:  # nothing written (off Linux, or the guard was killed)
        return 0
    return int(said) if said.strip().isdigit() else 0


def _why_not_run(program: str, said: str) -> str:
    """The guard's ``could not run …``, and for a script that is there, the missing
    interpreter its ``#!`` line names (what "No such file or directory" then means)."""
    path = shutil.which(program)
    if path is None or not said.endswith(os.strerror(errno.ENOENT)):
        return said
    with contextlib.suppress(OSError), open(path, "rb") as file:
        line = file.readline(200)
        if line.startswith(b"#!"):
            named = line[2:].decode("utf-8", "replace").strip()
            return f"could not run {program}: the interpreter on its #! line is missing: {named}"
    return said


def _wait(
    proc: subprocess.Popen[bytes], timeout: float | None, withdrawn: threading.Event | None
) -> int | None:
    """The command's exit status; ``TimeoutExpired`` after ``timeout``; ``None`` within
    :data:`WITHDRAWN_POLL_S` of ``withdrawn`` being set (the command still runs)."""
    if withdrawn is None:
        return proc.wait(timeout)
    deadline = None if timeout is None else time.monotonic() + timeout
    while not withdrawn.is_set():
        left = WITHDRAWN_POLL_S if deadline is None else deadline - time.monotonic()
        try:
            return proc.wait(max(0.0, min(left, WITHDRAWN_POLL_S)))
        except subprocess.TimeoutExpired:
            if deadline is not None and time.monotonic() >= deadline:
                raise
    return None


def _thread(target: Callable[..., None], *args: object) -> threading.Thread:
    thread = threading.Thread(target=target, args=args, daemon=True)
    thread.start()
    return thread


def _feed(pipe: IO[bytes], data: bytes) -> None:
    """The task on the command's stdin; a command that does not read it all is its business."""
    try:
        pipe.write(data)
        pipe.close()
    except (BrokenPipeError, OSError):
        pass


def _keep_head(pipe: IO[bytes], into: bytearray, limit: int) -> None:
    """Read ``pipe`` to its end, keeping its first ``limit`` bytes."""
    with pipe:
        while chunk := os.read(pipe.fileno(), CHUNK_BYTES):
            if len(into) < limit:
                into += chunk[: limit - len(into)]


def _keep_tail(pipe: IO[bytes], into: bytearray, limit: int) -> None:
    """Read ``pipe`` to its end, keeping its last ``limit`` bytes."""
    with pipe:
        while chunk := os.read(pipe.fileno(), CHUNK_BYTES):
            into += chunk
            if len(into) > 2 * limit:
                del into[:-limit]
    del into[:-limit]


def _stop(proc: subprocess.Popen[bytes], threads: list[threading.Thread]) -> None:
    """``SIGTERM`` to the command's process group, then ``SIGKILL`` to what is left."""
    try:
        _signal_group(proc, signal.SIGTERM)
        with contextlib.suppress(subprocess.TimeoutExpired):
            proc.wait(STOP_GRACE_S + GUARD_GRACE_S)
    finally:
        _signal_group(proc, signal.SIGKILL)
        proc.wait()
    _joined(threads, STOP_GRACE_S)


def _signal_group(proc: subprocess.Popen[bytes], signum: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):  # the group has ended
        os.killpg(proc.pid, signum)


def _joined(threads: list[threading.Thread], within: float) -> bool:
    """Whether every thread ended within ``within`` seconds (all of them, not each)."""
    deadline = time.monotonic() + within
    for thread in threads:
        thread.join(max(0.0, deadline - time.monotonic()))
    return not any(thread.is_alive() for thread in threads)
