"""User-facing errors: one paragraph that says what went wrong and what to do.

Anything raised as `SslperfError` is printed by the CLI without a traceback;
anything else is a bug in sslperf and keeps its traceback.
"""


class SslperfError(Exception):
    """An error caused by input or environment, with advice for the user."""

    exit_code = 2

    def __init__(self, message: str, hint: str | None = None):
        super().__init__(message)
        self.message = message
        self.hint = hint

    def __str__(self) -> str:
        return f"{self.message} {self.hint}" if self.hint else self.message

    def __reduce__(self):       # pickled whole (a fleet task's error crosses machines), hint and all
        return type(self), (self.message, self.hint), self.__dict__


class UnknownLibrary(SslperfError):
    """A library name that no source or installed library matches."""


class MissingTool(SslperfError):
    """A program sslperf needs (compiler, make, cargo …) is not installed."""


class BuildFailed(SslperfError):
    """A configure or compile step failed; the log is kept."""

    exit_code = 3


class NothingMeasured(SslperfError):
    """A run in which no case gave a result: each failed (or, some of them, was n/a)."""

    exit_code = 1


class BuildInterrupted(SslperfError):
    """The user stopped a build; nothing was installed."""

    exit_code = 130
