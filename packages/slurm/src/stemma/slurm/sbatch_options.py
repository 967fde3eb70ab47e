"""From a wave's request to submitit's sbatch parameters, and waves split into arrays: pure."""

from __future__ import annotations

import math
import re
from typing import Any

from stemma.core.backends.base import WaveRequest
from stemma.core.operations.time_limits import time_limit_seconds

# submitit's own parameters that a WaveRequest.extra must not override: they carry the array
# layout, the throttle and the log paths the backend relies on.
_RESERVED = frozenset({"array", "output", "error", "job_name", "array_parallelism", "time"})
_OPTION_NAME = re.compile(r"[A-Za-z][A-Za-z0-9_-]*")
# submitit writes each parameter as one ``#SBATCH --key=value`` line of a bash script, quoting
# the value but not the key; a line break (or any control character) in either would end that
# comment line and run the rest as a command.
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")


def time_limit_minutes(text: str) -> int:
    """SLURM's time forms in whole minutes, rounded up (at least one).

    ``MM``, ``MM:SS``, ``HH:MM:SS``, ``D-HH``, ``D-HH:MM``, ``D-HH:MM:SS`` (as ``sbatch --time``).

    Raises:
        ValueError: anything else, naming the accepted forms.
    """
    return max(1, math.ceil(time_limit_seconds(text) / 60))


def submitit_parameters(request: WaveRequest, *, python_path: str = "") -> dict[str, Any]:
    """The ``SlurmExecutor.update_parameters`` arguments for one wave.

    ``extra`` entries that name a submitit parameter (``partition``, ``account``, ``qos``,
    ``constraint``…) are passed as such; any other is an sbatch option
    (``{"reservation": "r1"}`` becomes ``--reservation=r1``).

    Raises:
        ValueError: a bad time limit, resources below their minimum, or an ``extra`` option the
            backend sets itself.
    """
    if request.cpus < 1 or request.memory_gb <= 0 or request.gpus < 0:
        raise ValueError(
            f"{request.job_name}: resources must be cpus >= 1, memory_gb > 0 and gpus >= 0, got "
            f"cpus={request.cpus}, memory_gb={request.memory_gb}, gpus={request.gpus}"
        )
    clash = sorted(_RESERVED & {key.replace("-", "_") for key in request.extra})
    if clash:
        raise ValueError(
            f"{request.job_name}: extra option(s) {clash} are set by the slurm backend itself "
            "(from the operation's resources and the run); remove them"
        )
    parameters: dict[str, Any] = {
        "job_name": request.job_name,
        "time": time_limit_minutes(request.time_limit),
        "cpus_per_task": request.cpus,
        "mem": f"{max(1, math.ceil(request.memory_gb * 1024))}M",
        "array_parallelism": max(1, request.max_parallel),
        "signal_delay_s": 30,
        "stderr_to_stdout": False,
    }
    if request.gpus:
        parameters["gres"] = f"gpu:{request.gpus}"
    if python_path:
        # Functions pickled by reference are imported in the job from the orchestrator's path.
        parameters["setup"] = [f"export PYTHONPATH={_shell_quote(python_path)}"]
    known = _known_parameters()
    additional: dict[str, str] = {}
    for key, value in request.extra.items():
        name = key.replace("-", "_")
        if name in known:
            parameters[name] = value
        else:
            additional[key.replace("_", "-")] = value
    if additional:
        parameters["additional_parameters"] = additional
    for key, value in (*parameters.items(), *additional.items()):
        if key not in ("setup", "additional_parameters"):  # setup: our own quoted line
            _check_sbatch_option(request.job_name, key, value)
    return parameters


def check_sbatch_text(field: str, text: str) -> None:
    """Refuse text bound for an sbatch script line (a path, a name) holding a control character.

    Raises:
        ValueError: naming ``field``, the text and the fix.
    """
    if _CONTROL.search(text):
        raise ValueError(
            f"{field} {text!r} holds a line break or another control character, which would "
            "end its line of the sbatch script and run the rest as a command; remove it"
        )


def _check_sbatch_option(job_name: str, key: str, value: object) -> None:
    if not _OPTION_NAME.fullmatch(key):
        raise ValueError(
            f"{job_name}: sbatch option name {key!r} is not one: use letters, digits, '-' and "
            "'_', starting with a letter (for example 'reservation')"
        )
    check_sbatch_text(f"{job_name}: sbatch option {key!r} value", str(value))


def split_wave(count: int, max_array_size: int) -> list[range]:
    """Index ranges of the arrays a wave of ``count`` elements is submitted as.

    SLURM requires every index of an array to be below ``MaxArraySize``, and submitit numbers
    each array from 0, so an array holds at most ``max_array_size`` elements.
    """
    if max_array_size < 1:
        raise ValueError(f"max_array_size must be at least 1, got {max_array_size}")
    return [
        range(start, min(start + max_array_size, count))
        for start in range(0, count, max_array_size)
    ]


def _known_parameters() -> frozenset[str]:
    from submitit.slurm.slurm import SlurmExecutor

    return frozenset(SlurmExecutor._valid_parameters())  # pyright: ignore[reportPrivateUsage]


def _shell_quote(text: str) -> str:
    import shlex

    return shlex.quote(text)
