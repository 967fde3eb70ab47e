"""The errors stemma.core raises: one root, one subclass per failure a caller can act on."""

from __future__ import annotations

from pathlib import Path
from typing import Any


class StemmaError(Exception):
    """Root of every error stemma raises on purpose."""


class UnfingerprintableError(StemmaError, TypeError):
    """A value in a step's config cannot be encoded canonically, so it cannot be part of a key.

    The message names the value's path in the config (``inputs.data['model'][2]``) and how to fix
    it. Nothing ever falls back to ``repr``: a key that changes between processes is worse than
    an error.
    """


class LoweringError(StemmaError, ValueError):
    """A step graph cannot be lowered: a bad version, a fixed step over a mutable one, a pin."""


class FingerprintMismatchError(LoweringError):
    """A step pinned with ``expected_fingerprint`` lowered to another fingerprint."""


class InputsChangedError(StemmaError, RuntimeError):
    """A step's inputs changed between ``apply`` and its run: a mutated object, a new file."""


class StepConfigError(StemmaError, RuntimeError):
    """A step's ``build_config`` failed when the step ran, or gave other arguments than when keyed.

    The step fails (its dependents are skipped) and nothing of it runs; ``__cause__`` holds the
    error ``build_config`` raised, if it raised one.
    """


class StepCycleError(StemmaError, ValueError):
    """The step graph has a cycle; the message lists the steps around it."""


class StepFailedError(StemmaError, RuntimeError):
    """One or more steps failed; ``__cause__`` is the first failure's own exception.

    Attributes:
        failed: names of the steps whose own code failed.
        skipped: names of the steps not run because a dependency failed.
    """

    def __init__(self, message: str, *, failed: list[str], skipped: list[str]) -> None:
        super().__init__(message)
        self.failed = failed
        self.skipped = skipped

    def __reduce__(self) -> tuple[Any, ...]:
        # Keyword-only fields: pickle (a worker's result, a multiprocessing pool) rebuilds it
        # through this, not through ``type(self)(*self.args)``.
        return (_rebuild_step_failure, (type(self), str(self), self.failed, self.skipped))


def _rebuild_step_failure(
    kind: type[StepFailedError], message: str, failed: list[str], skipped: list[str]
) -> StepFailedError:
    return kind(message, failed=failed, skipped=skipped)


class RunCancelledError(StepFailedError):
    """A lazy run was cancelled (Ctrl-C, ``stemma cancel``, the dashboard) before it finished.

    What finished is committed; a rerun redoes only the cancelled and skipped steps.
    """


class OpeningInterrupted(SystemExit):
    """Ctrl-C (SIGINT or SIGTERM) reached a run before it was listed: the script exits plainly.

    A ``SystemExit`` with code 130, so Python ends without a traceback (``finally`` blocks
    still run). Nothing of the run was recorded, and what its opening had started (a worker)
    was stopped (docs/concepts/cancellation.md, "Early presses").
    """

    def __init__(self) -> None:
        super().__init__(OPENING_INTERRUPTED_CODE)


OPENING_INTERRUPTED_CODE = 130
"""The exit code of a script stopped while its run was opening (as a shell shows Ctrl-C)."""


class StoreUnavailableError(StemmaError, ImportError):
    """A store or backend was asked for by name but the package providing it is not installed."""


class BackendUnavailableError(StemmaError, ImportError):
    """A backend was asked for by name but no installed package provides it.

    The message names the backends installed here and the package to install.
    """


class DamagedStoreError(StemmaError, RuntimeError):
    """A store's table (or database) cannot be read: a file of it is damaged or missing.

    Stores raise a subclass naming the table; the message says to run ``stemma check ROOT``,
    which names the damaged file and the fix. Defined here so that core's command line can
    report it in one line (exit 7, ``ExitCode.DAMAGED``), and go on showing what it can,
    without knowing which store it is.
    """


class RootURLError(StemmaError, ValueError):
    """A root given as a URL that cannot be used: an unknown scheme, no bucket, or an object store.

    Raised before anything is written; the message names the root and what to give instead.
    """


class NotARootError(StemmaError, ValueError):
    """The root asked for is a file (or lies under one), so it cannot be a stemma root.

    Raised when the root is opened, before any work; the message names the path, where it came
    from (the ``root`` argument, ``$STEMMA_ROOT`` or the default) and what to give instead.
    """


class ReadOnlyRootError(StemmaError, PermissionError):
    """A step must run on a root this process cannot write; raised before the step starts.

    What is built there is still answered; the message names the path (or, for a root in an
    object store whose credentials may read but not write, the root's URL) and what to do.

    Attributes:
        root: the stemma root (an object root's local half on this machine).
        path: the place under it that cannot be written (None for an object root).
        url: an object root's URL (None for a root on a filesystem).
    """

    def __init__(
        self,
        message: str,
        *,
        root: Path | None = None,
        path: Path | None = None,
        url: str | None = None,
    ) -> None:
        super().__init__(message)  # (one argument: str() is the message, and it pickles)
        self.root = root
        self.path = path
        self.url = url


class LineageError(StemmaError, ValueError):
    """An output's source cannot be inferred by filename stem: no candidate, or several.

    Attributes:
        output_name: the original name of the first output that failed to match.
        candidate_names: the original names of the candidates it was matched against.
    """

    def __init__(self, message: str, *, output_name: str, candidate_names: list[str]) -> None:
        super().__init__(message)
        self.output_name = output_name
        self.candidate_names = candidate_names


class PairingError(StemmaError, ValueError):
    """Multi-role inputs cannot be paired as asked: unequal ZIP lengths, wrong role count."""


class BatchingError(StemmaError, ValueError):
    """Batching settings are invalid, or a paired group is larger than a unit may be."""


class OperationDefinitionError(StemmaError, TypeError):
    """An operation class is malformed; raised by its ``class`` statement.

    The message names the class, the field and the fix.
    """


class OperationConfigError(StemmaError, ValueError):
    """An operation was given an unknown or invalid param, resource or execution setting."""


class UnknownOperationError(StemmaError, LookupError):
    """No operation is registered under the name asked for; the message lists those that are."""


class ArtifactTypeError(StemmaError, ValueError):
    """An artifact type is unknown, registered twice differently, or its content is invalid."""


class ResultValidationError(StemmaError, ValueError):
    """An operation returned a result that does not match its declared outputs."""


class UnpicklableStepError(StemmaError, TypeError):
    """A step's function cannot be sent to a worker process; the message names both fixes."""


class StepCodeError(StemmaError, RuntimeError):
    """A step's own code failed in its worker; the message holds its error and traceback."""
