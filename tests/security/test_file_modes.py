"""What stemma creates follows the user's umask (a group-shared root stays shareable), and
nothing it creates is executable."""

import os
import pathlib
import stat
from collections.abc import Iterator

import pytest

from stemma.core import OUT, apply, resolve
from stemma.core.file_lock import FileLock
from stemma.core.store import open_run_store


def _write_text(text: str, out: str) -> int:
    # OUT arrives as a path string (the step writes its output there).
    pathlib.Path(out).write_text(text)
    return len(text)


@pytest.fixture
def group_umask() -> Iterator[None]:
    # What a team sharing a root sets: files and folders writable by the group.
    previous = os.umask(0o002)
    try:
        yield
    finally:
        os.umask(previous)


@pytest.mark.usefixtures("group_umask")
def test_lock_file_is_created_with_the_users_umask(tmp_path: pathlib.Path) -> None:
    lock = FileLock(tmp_path / "locks" / "a.lock", create_parents=True)
    assert lock.acquire()
    lock.release()
    assert stat.S_IMODE((tmp_path / "locks" / "a.lock").stat().st_mode) == 0o664


@pytest.mark.usefixtures("group_umask")
@pytest.mark.parametrize("backend", ["local-thread", "local"])
def test_a_run_creates_everything_with_the_umask_and_nothing_executable(
    tmp_path: pathlib.Path, backend: str
) -> None:
    store = open_run_store(tmp_path / "root")
    step = apply(name="modes/text", fn=_write_text, version="v0", text="hello", out=OUT)
    assert resolve(step, store=store, backend=backend).value == 5
    made = [p for p in (tmp_path / "root").rglob("*") if not p.is_symlink()]
    assert len(made) > 20
    wrong = {
        str(p.relative_to(tmp_path)): oct(stat.S_IMODE(p.stat().st_mode))
        for p in made
        if stat.S_IMODE(p.stat().st_mode) != (0o775 if p.is_dir() else 0o664)
    }
    assert wrong == {}, "created without the umask's group write, or executable"
