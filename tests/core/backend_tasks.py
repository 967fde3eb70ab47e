"""Units of work for the local-backend tests: importable by name in spawned workers."""

import os
import signal
import time


def square(value: int) -> int:
    return value * value


def fail(message: str) -> None:
    raise ValueError(message)


def die(_: object) -> None:
    os.kill(os.getpid(), signal.SIGKILL)


def sigint_disposition(_: object) -> bool:
    return signal.getsignal(signal.SIGINT) is signal.SIG_IGN


def sleep_and_report(path: str) -> None:
    with open(path, "w") as stream:
        stream.write(str(os.getpid()))
    time.sleep(120)


def slow_square(value: int) -> int:
    time.sleep(1.0)
    return value * value


def die_later(_: object) -> None:
    time.sleep(0.3)
    os.kill(os.getpid(), signal.SIGKILL)


def ignore_sigterm_and_report(path: str) -> None:
    """A stubborn tool: SIGTERM does nothing; only SIGKILL ends it."""
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    sleep_and_report(path)


def hold_and_die(megabytes: int) -> None:
    """Hold ``megabytes`` of resident memory, then SIGKILL this worker at once (OOM-like)."""
    ballast = bytearray(megabytes * 1024 * 1024)
    ballast[::4096] = b"x" * len(ballast[::4096])
    os.kill(os.getpid(), signal.SIGKILL)
