"""``StepContext``: what a step's inputs (``OUT``, deps) mean when keyed and when run."""

from __future__ import annotations

import contextlib
import os
import threading
from collections.abc import Generator, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

from stemma.core.errors import LoweringError
from stemma.core.graph.markers import (
    OUT,
    OUT_URL,
    OUTPUT_PLACEHOLDER,
    OUTPUT_URL_PLACEHOLDER,
    PREFIX_PLACEHOLDER,
    REGION_PLACEHOLDER,
    WRITE_URL_PLACEHOLDER,
    Placeholder,
    StepHandle,
)

if TYPE_CHECKING:
    from stemma.core.graph.step import ArtifactStep


REGION_ENV = "STEMMA_REGION"
"""The environment variable a run-time ``StepContext.region`` is read from (None when unset)."""


class StepContext:
    """What a step's inputs mean when keyed and when run: output path and URL, deps, prefix, region.

    At fingerprint time ``OUT`` is the placeholder ``<output_path>``, the output's URL
    ``<output_url>``, the prefix ``<prefix>``, the region ``<region>``, and a dependency stands
    for its identity, so keys never depend on where things are stored. At run time all are
    real (paths as strings, as the seed's ``write_json`` expects).

    A step's ``build_config(ctx)`` is given one of each: a placeholder context when the step is
    keyed (by :func:`~stemma.core.graph.step.apply`), a real one when it runs.
    """

    def __init__(
        self,
        *,
        output_path: str,
        dep_values: Mapping[ArtifactStep, Any] | None,
        at_run_time: bool,
        prefix: str = PREFIX_PLACEHOLDER,
        region: str | None = REGION_PLACEHOLDER,
        output_url: str = OUTPUT_URL_PLACEHOLDER,
        write_url: str | None = None,
    ) -> None:
        self.output_path = output_path
        """Where this step's output goes: the path ``OUT`` stands for."""
        self.output_url = output_url
        """Where the output is kept once the step has run, as a URL (``<output_url>`` when keyed).

        On a root in an object store, the output's prefix in the bucket
        (``s3://bucket/prefix/outputs/…``), where stemma copies what the step wrote under
        ``OUT`` after it returns; on a root on a filesystem, the output's final path as a
        ``file://`` URL. It is the URL ``artifact.url()`` gives for an output written as a
        directory (one written as a single file is kept as the object ``.stemma-file`` in that
        prefix). The step writes ``OUT``, a local path; this is what to hand other systems.
        """
        self.at_run_time = at_run_time
        """False at fingerprint time (placeholders), True when the step runs (real values)."""
        self.prefix = prefix
        """The store root the step runs under (``<prefix>`` at fingerprint time)."""
        self.region = region
        """The run's region: ``$STEMMA_REGION``, None when unset (``<region>`` when keyed)."""
        self._dep_values = dep_values
        self._asked: dict[ArtifactStep, Placeholder] = {}
        self._write_url = output_path if write_url is None else write_url
        self.write_url_asked = False
        """Whether the step was given :attr:`write_url` (``OUT_URL``, or the attribute read)."""

    @property
    def write_url(self) -> str:
        """Where the step may write its output with its own tools: what ``OUT_URL`` stands for.

        On a root in an object store, a prefix in its bucket unique to this attempt
        (``s3://bucket/prefix/_stemma/attempts/{id}``): objects put under it become the
        step's output (a directory), or one object put at it (a file), once the step returns;
        on a root on a filesystem, the same local path as ``OUT``. ``<write_url>`` when keyed.
        """
        self.write_url_asked = True
        return self._write_url

    @classmethod
    def for_fingerprint(
        cls, dep_fingerprints: Mapping[ArtifactStep, str] | None = None
    ) -> StepContext:
        """A context with placeholders: ``OUT`` and deps stand for their identities.

        Args:
            dep_fingerprints: the deps' keys, each then shown as ``{"$step", "fingerprint"}``
                (as ``StepSpec.config`` shows it). None: the context ``build_config`` is keyed
                with; any handle is a dep, standing for itself until lowering gives its key
                (see :meth:`dep`).
        """
        values = (
            None
            if dep_fingerprints is None
            else {
                dep: {"$step": dep.name, "fingerprint": fp} for dep, fp in dep_fingerprints.items()
            }
        )
        output = Placeholder(OUTPUT_PLACEHOLDER, OUT)
        write_url = Placeholder(WRITE_URL_PLACEHOLDER, OUT_URL)
        return cls(output_path=output, dep_values=values, at_run_time=False, write_url=write_url)

    @classmethod
    def for_run(
        cls,
        output_path: Path,
        dep_paths: Mapping[ArtifactStep, Path],
        *,
        prefix: Path | str,
        output_url: str | None = None,
        write_url: str | None = None,
        region: str | None = None,
    ) -> StepContext:
        """A context with real paths, used when the step's function is called.

        Args:
            output_path: what ``OUT`` stands for.
            dep_paths: each dep's output.
            prefix: the store root as it was given: a path, or a root in an object store's URL
                (``s3://bucket/prefix``).
            output_url: where the output is kept
                (:func:`~stemma.core.store.root_urls.output_url`, which the engine passes);
                without it, ``output_path`` as a ``file://`` URL (a context made by hand knows
                no root).
            write_url: what ``OUT_URL`` stands for (an attempt's prefix in the root's bucket,
                which the engine passes on a root in an object store); ``output_path`` if not
                given.
            region: the run's region; ``$STEMMA_REGION`` (None when unset) if not given.
        """
        values = {dep: str(path) for dep, path in dep_paths.items()}
        return cls(
            output_path=str(output_path),
            dep_values=values,
            at_run_time=True,
            prefix=str(prefix),
            output_url=output_url or Path(output_path).absolute().as_uri(),
            write_url=write_url,
            region=region if region is not None else os.environ.get(REGION_ENV) or None,
        )

    @property
    def asked(self) -> tuple[ArtifactStep, ...]:
        """The handles :meth:`dep` was asked for in placeholder mode, in order."""
        return tuple(self._asked)

    def dep(self, handle: ArtifactStep) -> Any:
        """What ``handle`` stands for in this context: at run time, the path of its output.

        When ``build_config`` is keyed, any handle may be asked for, and it becomes a
        dependency of the step: it stands for itself as the str ``<dep:name@version>``, keyed as
        the handle would be in keyword inputs (a path made from it, ``<dep:data@v1>/a.json``,
        is keyed as that text, the dep's own key entering the step's through its deps).

        Raises:
            ValueError: ``handle`` is not a declared dependency of the step.
            LoweringError: two deps asked for when keyed have one name and version (a path
                made from either would read the same).
        """
        if self._dep_values is None:
            return self._stand_in(handle)
        try:
            return self._dep_values[handle]
        except KeyError:
            raise ValueError(
                f"step {handle.name!r} is not a declared dependency here; pass its handle in the "
                "step's inputs so it is tracked"
            ) from None

    def _stand_in(self, handle: ArtifactStep) -> Placeholder:
        if not isinstance(handle, StepHandle):  # pyright: ignore[reportUnnecessaryIsInstance]
            raise TypeError(f"ctx.dep() takes a step's handle, not {type(handle).__name__}")
        known = self._asked.get(handle)
        if known is not None:
            return known
        text = f"<dep:{handle.name}@{handle.version}>"
        if any(asked == text for asked in self._asked.values()):
            raise LoweringError(
                f"build_config asked for two different dependencies named {handle.name!r} at "
                f"version {handle.version!r}: a path made from either reads {text}, so the key "
                "could not tell them apart; give them distinct names or versions"
            )
        made = self._asked[handle] = Placeholder(text, handle)
        return made

    def resolve(self, value: Any) -> Any:
        """Return ``value`` with ``OUT`` and every handle inside it replaced."""
        if value is OUT:
            return self.output_path
        if value is OUT_URL:
            return self.write_url
        if isinstance(value, StepHandle):
            return self.dep(cast("ArtifactStep", value))
        if isinstance(value, dict):
            items: dict[Any, Any] = value  # pyright: ignore[reportUnknownVariableType]
            return {key: self.resolve(item) for key, item in items.items()}
        if isinstance(value, list | tuple):
            seq: list[Any] | tuple[Any, ...] = value  # pyright: ignore[reportUnknownVariableType]
            resolved = [self.resolve(item) for item in seq]
            return resolved if isinstance(value, list) else tuple(resolved)
        return value


_RUNNING = threading.local()


@contextlib.contextmanager
def running_under(root: Path) -> Generator[None]:
    """Mark this thread as running a step of the store at ``root`` (see :func:`current_root`)."""
    previous = getattr(_RUNNING, "root", None)
    _RUNNING.root = root
    try:
        yield
    finally:
        _RUNNING.root = previous


def current_root() -> Path:
    """The root of the store whose step this thread is running.

    Raises:
        RuntimeError: called outside a running step.
    """
    root: Path | None = getattr(_RUNNING, "root", None)
    if root is None:
        raise RuntimeError("current_root() is only known while a step runs (inside run())")
    return root
