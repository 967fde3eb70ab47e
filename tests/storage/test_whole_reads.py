"""Reading a large content whole: the same bytes as a plain read, made in huge pages."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from stemma.storage.whole_reads import HUGE_READ_BYTES, copy_whole, read_whole


@pytest.mark.parametrize("size", [0, 1, HUGE_READ_BYTES - 1, HUGE_READ_BYTES, 9 * 2**20 + 7])
def test_a_file_read_whole_is_its_bytes(tmp_path: Path, size: int) -> None:
    path = tmp_path / "content with space é"
    written = os.urandom(size)
    path.write_bytes(written)

    read = read_whole(path)

    assert type(read) is bytes
    assert read == written
    assert hash(read) == hash(written)  # a bytes like any other: hashable, usable as a key
    assert {read: 1}[written] == 1


def test_two_reads_of_one_file_are_two_objects_that_stay_as_read(tmp_path: Path) -> None:
    path = tmp_path / "content"
    first_bytes = b"a" * (HUGE_READ_BYTES + 1)
    path.write_bytes(first_bytes)
    first = read_whole(path)
    path.write_bytes(b"b" * (HUGE_READ_BYTES + 1))

    second = read_whole(path)

    assert first == first_bytes  # the second read wrote into a buffer of its own
    assert second == b"b" * (HUGE_READ_BYTES + 1)


def test_a_missing_file_is_file_not_found(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError):
        read_whole(tmp_path / "absent")


@pytest.mark.parametrize("size", [0, HUGE_READ_BYTES - 1, HUGE_READ_BYTES + 3])
def test_a_buffer_copied_whole_is_its_bytes_and_no_view_of_it(size: int) -> None:
    given = bytearray(os.urandom(size))

    before = bytes(given)

    copied = copy_whole(memoryview(given))
    given[:] = bytes(size)  # a copy: changing the buffer leaves it as it was

    assert type(copied) is bytes
    assert copied == before
