"""Run a demonstration in a child process, so that its failure cannot hurt the learner's kernel.

Some CUDA Graph mistakes do more than raise: a failed capture can leave the CUDA context in an
error state that later calls inherit, and a collective that waits for a rank that never comes hangs
for ever. :func:`isolated` runs such a demonstration in a fresh Python process with a time limit,
streams the child's output into the notebook as it is printed, and brings back the result or an
:class:`IsolatedFailure` carrying graphlab's explanation. :func:`demonstrate` is the form used by
the "watch it break" cells: it shows the explanation instead of raising.

The child is started with multiprocessing's "spawn" method, never "fork": a forked child would
inherit a copy of the parent's CUDA context, which CUDA does not support (the child's first CUDA
call fails or hangs). A spawned child starts a new interpreter and makes its own context. Spawning
re-imports the parent's main module, so a script (not a notebook) that calls :func:`isolated` must
do so under ``if __name__ == "__main__":``.

Functions defined in a notebook cannot be imported by the child, so the function and its
arguments are sent with cloudpickle, which copies such functions by value. Output is read with
``select`` on the child's pipes, which is POSIX only.

What the demonstration starts is stopped with it (:mod:`~graphlab.failures.process_tree` says
how). Precisely, when :func:`isolated` returns or raises:

- Every process in the child's process group has been sent SIGKILL (a server, a
  ``subprocess.Popen`` left running), on every POSIX system.
- On Linux, every process below the child has been killed and has ended, including one that
  left the group (``setsid``, a new session) and one whose parent exited (a double-forked
  daemon): the child is their subreaper, so they stay below it. This holds when fn returns or
  raises (the child stops them before it exits) and at the time limit (the parent stops them
  before it stops the child).
- Not reaped without a cgroup: a process that detached from its parent when the child itself
  died abruptly (a segfault, ``os._exit``, a signal), since the kernel then hands it to init.
  Where this process may create a cgroup (as root, or in a delegated cgroup v2), the child runs
  in a new one, and whatever is in it at the end is killed, whatever its parent: then nothing
  the child started outlives the call.
- Never reaped: a process started by a privileged helper outside the child's tree (a service
  that a request from fn made systemd or a daemon start).
"""

from __future__ import annotations

import codecs
import contextlib
import faulthandler
import io
import linecache
import math
import multiprocessing
import numbers
import os
import select
import signal
import sys
import time
import traceback
import types
from collections import ChainMap
from collections.abc import Callable
from multiprocessing.connection import Connection
from multiprocessing.process import BaseProcess
from pathlib import Path
from typing import Any, ClassVar

from graphlab.errors import GraphlabError
from graphlab.language import N_
from graphlab.language import gettext as _

from . import process_tree
from .explanation import Explanation, explain

__all__ = ["IsolatedFailure", "demonstrate", "isolated"]

try:
    import cloudpickle as _pickler
except ImportError:  # plain pickle still sends functions that live in importable modules
    import pickle as _pickler

DEFAULT_TIMEOUT_S = 120.0
_STDERR_TAIL = 8000  # characters of the child's stderr kept to explain a crash
_KILL_GRACE_S = 2.0  # after SIGTERM, how long a child gets before SIGKILL
_EXIT_GRACE_S = 10.0  # after sending its outcome, how long a child gets to exit by itself
# How often the parent asks whether the child still runs, besides watching its sentinel: a
# process the child forked inherits the sentinel's pipe, which then stays open when the child
# dies abruptly (os._exit, a crash) and would hold the call until its time limit.
_POLL_S = 0.25


def _code_with_file(rebuild: Any, args: tuple[Any, ...], filename: str) -> types.CodeType:
    """A code object as cloudpickle rebuilds it, with the file it was defined in put back."""
    code: types.CodeType = rebuild(*args).replace(co_filename=filename)
    return code


def _dumps(obj: object) -> bytes:
    """Pickle ``obj`` for the child, keeping the file name of every function sent by value.

    cloudpickle 3.1 and later send a notebook function's code with the file name
    ``<dynamic-code>`` (a payload that does not depend on where it was defined), so the child's
    traceback could not show the cell's lines that :func:`_cell_sources` sends, nor could
    :func:`explain` read ``x.item()`` on the line that failed. Each code object is sent as
    cloudpickle sends it, plus its file name.
    """
    if _pickler.__name__ != "cloudpickle":
        plain: bytes = _pickler.dumps(obj)
        return plain
    reduce_code = _pickler.Pickler.dispatch_table[types.CodeType]

    def keeping_file(code: types.CodeType) -> tuple[Any, ...]:
        rebuild, args = reduce_code(code)
        return _code_with_file, (rebuild, args, code.co_filename)

    class Pickler(_pickler.Pickler):  # type: ignore[misc]  # cloudpickle: no types
        dispatch_table: ClassVar[ChainMap[Any, Any]] = ChainMap(
            {types.CodeType: keeping_file}, _pickler.Pickler.dispatch_table
        )

    buffer = io.BytesIO()
    Pickler(buffer).dump(obj)
    return buffer.getvalue()


class IsolatedFailure(GraphlabError, RuntimeError):
    """A function run by :func:`isolated` raised, crashed, or ran out of time.

    ``explanation`` is graphlab's :class:`~graphlab.failures.explanation.Explanation` of what
    happened;
    ``exitcode`` is the child's exit status (0 when fn raised, negative when a signal killed
    it); ``timed_out`` says whether it was stopped at the time limit;
    ``child_traceback`` is the traceback printed in the child ("" when it did not raise).
    """

    def __init__(
        self,
        message: str,
        explanation: Explanation,
        exitcode: int | None = None,
        timed_out: bool = False,
        child_traceback: str = "",
    ):
        super().__init__(f"{message}\n{explanation}")
        self.explanation = explanation
        self.exitcode = exitcode
        self.timed_out = timed_out
        self.child_traceback = child_traceback


def isolated(
    fn: Callable[..., Any], /, *args: Any, timeout: float | None = DEFAULT_TIMEOUT_S, **kwargs: Any
) -> Any:
    """Call ``fn(*args, **kwargs)`` in a child process and return its (picklable) result.

    The child's stdout and stderr are copied to this process's ``sys.stdout``/``sys.stderr`` as
    they arrive. Raises :class:`IsolatedFailure` when fn raises, when the child dies (a crash,
    ``os._exit``), or when it has not finished after ``timeout`` seconds (then it is killed).
    ``timeout=None`` waits for ever. Processes fn started are stopped with it (the module's
    docstring says precisely which).
    """
    _check_timeout(timeout)
    if _pickler.__name__ == "pickle" and getattr(fn, "__module__", None) == "__main__":
        raise GraphlabError(
            _(
                "{name} is defined in a notebook or script, which a child process cannot import: "
                "`pip install cloudpickle` (it sends such functions by value), or move the "
                "function into a module."
            ).format(name=repr(getattr(fn, "__name__", fn)))
        )
    try:
        payload = _dumps((fn, args, kwargs, _cell_sources()))
    except Exception as exc:
        raise GraphlabError(
            _(
                "cannot send {name} and its arguments to a child process ({error}): pass plain "
                "data (numbers, strings, lists, tensors), not open files, generators or locks"
            ).format(name=repr(getattr(fn, "__name__", fn)), error=f"{type(exc).__name__}: {exc}")
        ) from None
    ctx = multiprocessing.get_context("spawn")
    out_r, out_w = ctx.Pipe(duplex=False)
    err_r, err_w = ctx.Pipe(duplex=False)
    res_r, res_w = ctx.Pipe(duplex=False)
    cgroup = process_tree.new_cgroup()
    child = ctx.Process(
        target=_child_main, args=(payload, out_w, err_w, res_w, cgroup), name="graphlab-isolated"
    )
    child.start()
    assert child.pid is not None  # it has started
    # Both sides put the child in a group of its own, so that it is done whichever runs first.
    with contextlib.suppress(OSError):
        os.setpgid(child.pid, child.pid)
    # The child holds the write ends now; closing ours lets EOF arrive when it exits.
    for conn in (out_w, err_w, res_w):
        conn.close()
    try:
        outcome, stderr_tail, timed_out = _pump(child, out_r, err_r, res_r, timeout)
        if not timed_out:
            child.join(_EXIT_GRACE_S)  # it has ended, or is ending, by itself
    finally:
        for conn in (out_r, err_r, res_r):
            conn.close()
        _stop(child)
        if cgroup is not None:
            process_tree.kill_cgroup(cgroup)
    return _result(outcome, stderr_tail, timed_out, child.exitcode, timeout)


def _cell_sources() -> dict[str, Any]:
    """The source lines of the notebook cells this process has run, as :mod:`linecache` holds them.

    A function defined in a cell names the cell as its file, and no such file exists on disk: the
    shell keeps the lines in linecache only. The child gets a copy, so that its traceback shows the
    cell's lines, and :func:`explain` sees them (``x.item()`` on the line that failed is what
    tells a host sync from another operation CUDA refuses during capture).
    """
    return {
        name: entry
        for name, entry in list(linecache.cache.items())
        if len(entry) == 4 and entry[1] is None and not os.path.exists(name)
    }


def _check_timeout(timeout: object) -> None:
    """Refuse a time limit that is not a number of seconds above zero (None: no limit)."""
    if timeout is None:
        return
    if (
        isinstance(timeout, bool)
        or not isinstance(timeout, numbers.Real)
        or not math.isfinite(timeout)
        or timeout <= 0
    ):
        raise GraphlabError(
            _(
                "timeout={timeout} is not a time limit: give the seconds the run may take as a "
                "number above zero (e.g. timeout=30), or timeout=None to wait for ever"
            ).format(timeout=repr(timeout))
        )


def demonstrate(
    fn: Callable[..., Any], /, *args: Any, timeout: float | None = DEFAULT_TIMEOUT_S, **kwargs: Any
) -> Any:
    """Run ``fn`` with :func:`isolated` and show what went wrong instead of raising.

    For the "watch it break" cells of the course. Returns the :class:`IsolatedFailure` (or fn's
    result, if it did not fail). In a notebook the explanation is shown as HTML, elsewhere as text.
    """
    try:
        result = isolated(fn, *args, timeout=timeout, **kwargs)
    except IsolatedFailure as failure:
        _show(failure.explanation)
        return failure
    name = fn.__name__ if hasattr(fn, "__name__") else _("the demonstration")
    print(_("{name} finished without an error.").format(name=name))
    return result


def _child_main(
    payload: bytes, out_w: Connection, err_w: Connection, res_w: Connection, cgroup: Path | None
) -> None:
    """Entry point of the child: route output into the pipes, run fn, send back the outcome.

    Before fn runs, the child leads a process group, becomes the subreaper of what fn starts and
    joins ``cgroup`` (None: there is none); after, it stops every process below it.
    """
    with contextlib.suppress(OSError):
        os.setpgid(0, 0)  # lead a process group, so that what fn starts can be stopped with it
    process_tree.become_subreaper()
    if cgroup is not None:
        process_tree.join_cgroup(cgroup)
    os.dup2(out_w.fileno(), 1)  # C-level output (CUDA, NCCL, faulthandler) goes there too
    os.dup2(err_w.fileno(), 2)
    out_w.close()
    err_w.close()
    sys.stdout = open(1, "w", buffering=1, encoding="utf-8", errors="replace", closefd=False)  # noqa: SIM115
    sys.stderr = open(2, "w", buffering=1, encoding="utf-8", errors="replace", closefd=False)  # noqa: SIM115
    faulthandler.enable()  # a segfault prints the Python stack before the child dies
    try:
        fn, args, kwargs, cell_sources = _pickler.loads(payload)
        linecache.cache.update(cell_sources)
        outcome = ("ok", fn(*args, **kwargs))
    except BaseException as exc:
        outcome = (
            "error",
            {
                "summary": f"{type(exc).__name__}: {exc}".splitlines()[0],
                "explanation": explain(exc),
                "traceback": "".join(traceback.format_exception(exc)),
            },
        )
    sys.stdout.flush()
    sys.stderr.flush()
    try:
        blob = _pickler.dumps(outcome)
    except Exception as exc:
        blob = _pickler.dumps(("unpicklable", f"{type(exc).__name__}: {exc}"))
    res_w.send_bytes(blob)
    res_w.close()
    process_tree.stop_tree(os.getpid())


def _pump(
    child: BaseProcess,
    out_r: Connection,
    err_r: Connection,
    res_r: Connection,
    timeout: float | None,
) -> tuple[Any, str, bool]:
    """Copy the child's output to ours until it is done.

    Returns (outcome or None, the tail of its stderr, whether the time limit was reached). Done
    means the child has ended and what it wrote has been read, even if a process it started in
    the background still holds its output open; or the time limit.
    """
    deadline = None if timeout is None else time.monotonic() + timeout
    sinks = {out_r.fileno(): sys.stdout, err_r.fileno(): sys.stderr}
    decoders = {fd: codecs.getincrementaldecoder("utf-8")(errors="replace") for fd in sinks}
    stderr_tail = ""
    outcome = None
    result_open = True
    running = True
    while sinks or result_open:
        wait = None if deadline is None else deadline - time.monotonic()
        if wait is not None and wait <= 0:
            # Out of time; a child that already sent its outcome merely lingers at exit.
            return outcome, stderr_tail, result_open
        # Once the child is gone, read what is left without waiting for more.
        wait = 0 if not running else _POLL_S if wait is None else min(wait, _POLL_S)
        watched = list(sinks) + ([res_r.fileno()] if result_open else [])
        ready, _, _ = select.select(watched + ([child.sentinel] if running else []), [], [], wait)
        if not ready and not running:
            break  # the child is gone and nothing more is waiting to be read
        if not ready and not child.is_alive():
            running = False  # it died, its sentinel held open by a process it forked
            continue
        for fd in ready:
            if fd == child.sentinel:
                running = False
            elif fd == res_r.fileno():
                outcome = _receive(res_r)
                result_open = False
                # Once the outcome is in, the child only has to exit: do not wait long for it.
                deadline = time.monotonic() + _EXIT_GRACE_S
            else:
                data = os.read(fd, 65536)
                text = decoders[fd].decode(data, final=not data)
                if text:
                    sinks[fd].write(text)
                    sinks[fd].flush()
                    if fd == err_r.fileno():
                        stderr_tail = (stderr_tail + text)[-_STDERR_TAIL:]
                if not data:
                    del sinks[fd]
    return outcome, stderr_tail, False


def _receive(res_r: Connection) -> Any:
    """The outcome the child sent; None when it sent none (it crashed or called os._exit).

    What pickles in the child may still fail to load here: an exception class whose __init__
    takes more than the message, a class this process cannot import.
    """
    try:
        blob = res_r.recv_bytes()
    except EOFError:
        return None
    try:
        return _pickler.loads(blob)
    except Exception as exc:
        return ("unloadable", f"{type(exc).__name__}: {exc}")


def _stop(child: BaseProcess) -> None:
    """End the child, if it still runs, and every process it started (see the module's doc)."""
    assert child.pid is not None  # isolated() has started it
    if child.exitcode is None:
        # Not reaped yet, so its pid is still its own: stop what is below it before the child
        # ends and the kernel hands that to init.
        process_tree.stop_tree(child.pid)
    _signal_group(child, signal.SIGTERM)
    child.join(_KILL_GRACE_S)
    if child.is_alive():
        child.kill()
    child.join()
    _signal_group(child, signal.SIGKILL)


def _signal_group(child: BaseProcess, signum: int) -> None:
    """Send ``signum`` to the child's process group.

    The group's id is the child's pid, and only the child makes such a group (see _child_main);
    before the child has made it, the signal goes to the child alone.
    """
    assert child.pid is not None  # isolated() has started it
    try:
        os.killpg(child.pid, signum)
    except ProcessLookupError:
        if child.is_alive():
            with contextlib.suppress(ProcessLookupError):
                os.kill(child.pid, signum)
    except PermissionError:
        pass


def _result(
    outcome: Any, stderr_tail: str, timed_out: bool, exitcode: int | None, timeout: float | None
) -> Any:
    if timed_out:
        raise IsolatedFailure(
            _("the isolated run did not finish within {seconds} s and was stopped").format(
                seconds=f"{timeout:g}"
            ),
            _timeout_explanation(timeout),
            exitcode=exitcode,
            timed_out=True,
        )
    if outcome is None:
        raise IsolatedFailure(
            _("the isolated process ended without returning: {how}").format(
                how=_describe_exit(exitcode)
            ),
            _crash_explanation(exitcode, stderr_tail),
            exitcode=exitcode,
        )
    kind, value = outcome
    if kind == "ok":
        return value
    if kind in _NOT_SENT:
        message, key, cause, fix = _NOT_SENT[kind]
        raise IsolatedFailure(
            _("{message} ({error})").format(message=_(message), error=value),
            Explanation(
                key=key,
                title=_("The outcome could not be sent back from the child process"),
                seen=value,
                cause=_(cause),
                fix=_(fix),
                lesson="",
            ),
            exitcode=exitcode,
        )
    raise IsolatedFailure(
        _("the isolated run raised {error}").format(error=value["summary"]),
        value["explanation"],
        exitcode=exitcode,
        child_traceback=value["traceback"],
    )


# An outcome the child could not pickle, or that this process could not load: what to say.
_NOT_SENT = {
    "unpicklable": (
        N_("the function finished but its result could not be sent back"),
        "result-not-picklable",
        N_("Results travel between processes by pickling; this one cannot be pickled."),
        N_("Return plain data (numbers, lists, dicts, CPU tensors) instead."),
    ),
    "unloadable": (
        N_("the child's result or exception was sent back but cannot be rebuilt here"),
        "result-not-loadable",
        N_(
            "Outcomes travel between processes by pickling; this one pickled in the child but "
            "does not load here, as happens with an exception class whose __init__ needs more "
            "arguments than it passes to Exception (unpickling calls it with those alone)."
        ),
        N_(
            "Return plain data (numbers, lists, dicts, CPU tensors); for your own exception "
            "class, pass every argument of __init__ on to super().__init__(...)."
        ),
    ),
}


def _describe_exit(exitcode: int | None) -> str:
    if exitcode is not None and exitcode < 0:
        try:
            return _("killed by signal {signal}").format(signal=signal.Signals(-exitcode).name)
        except ValueError:
            return _("killed by signal {signal}").format(signal=-exitcode)
    return _("exit status {status}").format(status=exitcode)


def _crash_explanation(exitcode: int | None, stderr_tail: str) -> Explanation:
    # A process killed by an uncaught C++ exception or by NCCL's watchdog prints the reason on
    # stderr before it dies: explain that text when graphlab knows it.
    from_output = explain(stderr_tail)
    if from_output.matched:
        return from_output
    return Explanation(
        key="child-crashed",
        title=_("The demonstration's process died"),
        seen=_describe_exit(exitcode),
        cause=_(
            "The child process ended without returning or raising: a crash in native code "
            "(a segmentation fault, an abort in CUDA or NCCL) or an explicit os._exit(). Its "
            "output above shows what it printed last."
        ),
        fix=_(
            "Your own Python session is unaffected. Read the child's last output above; run the "
            "demonstration step by step, still isolated, to find the line that kills it."
        ),
        lesson="",
    )


def _timeout_explanation(timeout: float | None) -> Explanation:
    return Explanation(
        key="child-timeout",
        title=_("The demonstration hung and was stopped"),
        seen=_("no result after {seconds} s").format(seconds=f"{timeout:g}"),
        cause=_(
            "The child process was still running at the time limit. With CUDA graphs this is "
            "usually a wait that can never end: a collective that another rank never launches, "
            "or a stream waiting on an event that is never recorded."
        ),
        fix=_(
            "Your own Python session is unaffected. Check that every rank runs the same "
            "collectives in the same order, or give the demonstration a longer timeout if it "
            "was merely slow."
        ),
        lesson="",
    )


def _show(explanation: Explanation) -> None:
    """HTML in a notebook, text elsewhere."""
    try:
        from IPython.core.getipython import get_ipython
        from IPython.display import display
    except ImportError:
        print(explanation)
        return
    if get_ipython() is None:
        print(explanation)
    else:
        display(explanation)
