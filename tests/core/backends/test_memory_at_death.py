"""The memory facts of a worker killed for memory: /proc/meminfo and the cgroup's limit, read."""

import pathlib

from stemma.core.backends.memory_at_death import (
    MemoryAtDeath,
    cgroup_memory_limit,
    memory_at_death,
    system_memory,
)

_V2_MOUNTS = "30 23 0:26 / /sys/fs/cgroup rw,nosuid - cgroup2 cgroup2 rw,nsdelegate\n"


def _proc(tmp: pathlib.Path, cgroup: str, mountinfo: str) -> pathlib.Path:
    proc = tmp / "proc"
    proc.mkdir()
    (proc / "cgroup").write_text(cgroup)
    (proc / "mountinfo").write_text(mountinfo)
    return proc


def _write(path: pathlib.Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


def test_the_tightest_cgroup_v2_limit_over_the_cgroup_and_its_ancestors(
    tmp_path: pathlib.Path,
) -> None:
    mount = tmp_path / "cg"
    _write(mount / "job" / "memory.max", "4294967296\n")
    _write(mount / "job" / "step" / "memory.max", "max\n")
    proc = _proc(tmp_path, "0::/job/step\n", _V2_MOUNTS.replace("/sys/fs/cgroup", str(mount)))
    assert cgroup_memory_limit(proc) == 4 << 30


def test_no_cgroup_limit_where_v2_says_max_or_v1_says_about_two_to_the_63(
    tmp_path: pathlib.Path,
) -> None:
    mount = tmp_path / "cg"
    _write(mount / "job" / "memory.max", "max\n")
    proc = _proc(tmp_path, "0::/job\n", _V2_MOUNTS.replace("/sys/fs/cgroup", str(mount)))
    assert cgroup_memory_limit(proc) is None
    v1 = tmp_path / "v1"
    _write(v1 / "memory" / "api" / "memory.limit_in_bytes", "9223372036854771712\n")
    mounts = f"35 31 0:32 / {v1 / 'memory'} rw,relatime - cgroup cgroup rw,memory\n"
    (tmp_path / "other").mkdir()
    proc = _proc(tmp_path / "other", "4:memory:/api\n0::/\n", mounts)
    assert cgroup_memory_limit(proc) is None


def test_a_cgroup_v1_memory_limit_is_read_where_its_controller_is_mounted(
    tmp_path: pathlib.Path,
) -> None:
    v1 = tmp_path / "v1" / "memory"
    _write(v1 / "slurm" / "job_7" / "memory.limit_in_bytes", str(2 << 30))
    mounts = (
        f"32 31 0:29 / {tmp_path / 'v1' / 'cpu'} rw - cgroup cgroup rw,cpu\n"
        f"35 31 0:32 / {v1} rw,relatime - cgroup cgroup rw,memory\n"
    )
    proc = _proc(tmp_path, "1:cpu:/slurm/job_7\n4:memory:/slurm/job_7\n", mounts)
    assert cgroup_memory_limit(proc) == 2 << 30


def test_no_cgroup_files_no_limit(tmp_path: pathlib.Path) -> None:
    assert cgroup_memory_limit(tmp_path / "absent") is None


def test_system_memory_reads_memtotal_and_memavailable_in_bytes(tmp_path: pathlib.Path) -> None:
    meminfo = tmp_path / "meminfo"
    meminfo.write_text("MemTotal:  24683784 kB\nMemFree: 1 kB\nMemAvailable:   2097152 kB\n")
    assert system_memory(meminfo) == (24683784 * 1024, 2 << 30)
    assert system_memory(tmp_path / "absent") == (None, None)


def test_the_facts_in_words_and_in_their_recorded_shape() -> None:
    facts = MemoryAtDeath(
        peak_rss_bytes=int(3.1 * (1 << 30)),
        system_total_bytes=24 << 30,
        system_available_bytes=2 << 30,
        cgroup_limit_bytes=4 << 30,
    )
    assert facts.describe() == (
        "peak RSS 3.1 GiB; system 2.0 GiB of 24.0 GiB available; cgroup limit 4.0 GiB"
    )
    assert facts.as_metadata() == {
        "peak_rss_bytes": int(3.1 * (1 << 30)),
        "system_total_bytes": 24 << 30,
        "system_available_bytes": 2 << 30,
        "cgroup_limit_bytes": 4 << 30,
    }
    unknown = MemoryAtDeath(None, None, None, None)
    assert unknown.describe() == "peak RSS unknown; system memory unknown; no cgroup limit"
    assert "  cgroup_limit_bytes: null" in unknown.block()


def test_the_facts_now_on_this_host() -> None:
    facts = memory_at_death(300 * 1024)
    assert facts.peak_rss_bytes == 300 << 20
    total, available = facts.system_total_bytes, facts.system_available_bytes
    assert total is not None
    assert available is not None
    assert 0 < available <= total
