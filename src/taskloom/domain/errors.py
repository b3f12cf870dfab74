"""One error hierarchy for the whole package.

::

    TaskloomError                  base; ``code`` and ``http_status`` on every class
    ├── InvalidInput               bad argument from a caller, a model or a person (400)
    │   └── TooLarge               a request body over the server's limit (413)
    ├── NotFound                   unknown thread, card, goal, task or result (404)
    ├── InvariantViolation         the change would break a rule of the board/goal (409)
    ├── Conflict                   a compare-and-set lost (stale version or goal id) (409)
    │   └── LeaseLost              queue lease token no longer current (409)
    ├── BudgetExceeded             goal is budget-limited (409)
    ├── ProviderError              an LLM provider failed or answered badly (502)
    ├── TurnFailed                 a goal turn failed after spending tokens (502)
    ├── TaskFailed                 a worker's handler failed its task, to retry (500)
    │   └── NoRetry                … and no other attempt can succeed (500)
    ├── WaitTimeout                a task did not end within the wait (504); a TimeoutError
    ├── Interrupted                Ctrl-C stopped a CLI command (499): one line, exit 130
    └── StoreError                 the database failed (500); driver errors are mapped here
        └── StoreBusy              the database stayed locked past the busy timeout (503)

Domain code raises these; the store maps driver exceptions onto ``StoreError`` so that
``sqlite3``/``psycopg`` errors never escape; tools turn any of them into error text for the model;
the HTTP server turns them into JSON with ``http_status``; the CLI prints ``Error: <message>``.
"""

from __future__ import annotations


class TaskloomError(Exception):
    """The base of every error taskloom raises; each class has a ``code`` and an ``http_status``."""

    code = "error"
    http_status = 500

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message

    def __str__(self) -> str:
        return self.message


class InvalidInput(TaskloomError):
    """A bad argument from a caller, a model or a person."""

    code = "invalid_input"
    http_status = 400


class TooLarge(InvalidInput):
    """A request body over the server's limit."""

    code = "too_large"
    http_status = 413


class RequestTimeout(TaskloomError):
    """A request body that did not arrive whole within the server's limit."""

    code = "request_timeout"
    http_status = 408


class NotFound(TaskloomError):
    """An unknown thread, card, goal, task or result."""

    code = "not_found"
    http_status = 404


class InvariantViolation(TaskloomError):
    """The change would break a rule of the board or the goal."""

    code = "invariant_violation"
    http_status = 409


class Conflict(TaskloomError):
    """A compare-and-set lost: the version or goal id is stale."""

    code = "conflict"
    http_status = 409


class LeaseLost(Conflict):
    """The queue lease token is no longer current: the task was reclaimed or ended."""

    code = "lease_lost"
    http_status = 409


class BudgetExceeded(TaskloomError):
    """The goal has spent its budget."""

    code = "budget_exceeded"
    http_status = 409


class ProviderError(TaskloomError):
    """An LLM provider failed or answered badly."""

    code = "provider_error"
    http_status = 502


class TurnFailed(TaskloomError):
    """Raise from a turn function that failed after spending, with what it spent:
    ``raise TurnFailed(tokens_used=300) from exc``. The goal loop and the scheduler tick
    charge it before the failure counts, so a provider that breaks after the first of a
    turn's calls still spends the goal's budget, and a flaky one is stopped by it."""

    code = "turn_failed"
    http_status = 502

    def __init__(self, tokens_used: int = 0, elapsed_s: float = 0.0, message: str = "") -> None:
        super().__init__(message)
        self.tokens_used = tokens_used
        self.elapsed_s = elapsed_s

    def __str__(self) -> str:
        """The message given, else the error it was raised from."""
        return self.message or str(self.__cause__ or "the turn failed")


class TaskFailed(TaskloomError):
    """Raise from a :class:`taskloom.Worker` handler to fail its task with just this message
    as the error (any other exception is stored as ``TypeName: message``); the task is
    retried while attempts remain."""

    code = "task_failed"
    http_status = 500


class NoRetry(TaskFailed):
    """Raise from a worker's handler when no other attempt can succeed: the task goes dead
    now, its attempts left unused."""

    code = "task_failed_no_retry"
    http_status = 500


class CommandNotStarted(BaseException):
    """``tasks work``: the command could not be started at all (a missing ``#!``
    interpreter, an exec format error): no task can succeed with it, so the worker gives its
    task back and stops instead of failing every task it claims. A :class:`BaseException`, as
    an interrupt is, for the worker to give the task back and let it through."""


class WaitTimeout(TaskloomError, TimeoutError):
    """``Queue.wait`` gave up: the task had not ended when the timeout ran out. Also a
    :class:`TimeoutError`, so code that already catches that catches this."""

    code = "wait_timeout"
    http_status = 504


class Interrupted(TaskloomError):
    """Ctrl-C (or SIGTERM, SIGHUP where a command turns them into ``KeyboardInterrupt``)
    stopped a CLI command: the CLI prints ``Interrupted.`` (``Interrupted: DETAIL.``) on
    stderr, one line, and exits ``status`` (130 for Ctrl-C, as a shell reports a death by
    SIGINT), never a traceback and never ``Error:``. Every command gets it from the CLI's root
    group; one that can say what was or was not done raises it with that ``detail``."""

    code = "interrupted"
    http_status = 499  # the client went away (nginx's code), were it ever sent

    def __init__(self, detail: str = "", *, status: int = 130) -> None:
        super().__init__(f"Interrupted: {detail}." if detail else "Interrupted.")
        self.detail = detail
        self.status = status


class StoreError(TaskloomError):
    """The database failed; driver errors are mapped to this."""

    code = "store_error"
    http_status = 500


class StoreBusy(StoreError):
    """The database stayed locked past the busy timeout."""

    code = "store_busy"
    http_status = 503
