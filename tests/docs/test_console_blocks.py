"""The transcripts a page shows are run and compared: what changed fails, what only varies not."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.docs.console_blocks import (
    console_blocks,
    console_settings,
    missing_fragment,
    normalized,
    output_of,
)
from tests.docs.console_runner import run_transcripts
from tests.docs.test_code_blocks import python_blocks

PAGE = """# A page

<!-- docs-test: console cwd=/home/you/demo -->

<!-- file: hi.py -->
```python
import os
import time

time.sleep(30)  # the page's own sleeps cost nothing
print("hello from", os.getcwd())
```

```console
$ python hi.py
hello from /home/you/demo
$ echo {shown}
{shown}
```
"""


def _page(tmp_path: Path, shown: str) -> Path:
    page = tmp_path / "page.md"
    page.write_text(PAGE.replace("{shown}", shown), encoding="utf-8")
    return page


def _run(page: Path, workdir: Path) -> int:
    settings = console_settings(page)
    assert settings is not None
    env = {**os.environ, "STEMMA_ROOT": str(workdir / ".stemma")}
    return run_transcripts(page, workdir, settings, list(python_blocks(page)), env)


def test_a_transcript_that_prints_what_the_page_shows_passes(tmp_path: Path) -> None:
    (tmp_path / "work").mkdir()
    assert _run(_page(tmp_path, "same"), tmp_path / "work") == 2


def test_a_transcript_that_prints_other_than_the_page_shows_fails(tmp_path: Path) -> None:
    (tmp_path / "work").mkdir()
    page = _page(tmp_path, "same")
    page.write_text(page.read_text().replace("$ echo same\nsame", "$ echo new\nold"))
    with pytest.raises(AssertionError, match=r"`echo new` printed other than the page shows"):
        _run(page, tmp_path / "work")


def test_the_finder_reads_commands_outputs_and_directives(tmp_path: Path) -> None:
    page = tmp_path / "p.md"
    page.write_text(
        "<!-- docs-test: console cwd=/home/you/t host=box -->\n"
        "<!-- docs-test: output-of examples/x.py -->\n"
        "<!-- docs-test: background held=2 -->\n```console\n$ python slow.py 6\n```\n"
        "<!-- docs-test: background output -->\n```console\nstopped\n```\n"
        "<!-- docs-test: skip needs a cluster -->\n```console\n$ sinfo\n```\n"
        "```console\n$ a\none\n$ b\ntwo\nthree\n```\n",
        encoding="utf-8",
    )
    settings = console_settings(page)
    assert settings is not None
    assert (settings.cwd, settings.user, settings.host) == ("/home/you/t", "you", "box")
    assert output_of(page) == "examples/x.py"
    held, after, skipped, plain = console_blocks(page)
    assert (held.held, held.commands[0].line) == (2, "python slow.py 6")
    assert (after.background_output, after.output) == (True, ("stopped",))
    assert skipped.skip_reason == "needs a cluster"
    assert [(c.line, c.output) for c in plain.commands] == [
        ("a", ("one",)),
        ("b", ("two", "three")),
    ]


def test_a_console_directive_without_its_directory_is_refused(tmp_path: Path) -> None:
    page = tmp_path / "p.md"
    page.write_text("<!-- docs-test: console host=vm -->\n", encoding="utf-8")
    with pytest.raises(ValueError, match="cwd="):
        console_settings(page)


@pytest.mark.parametrize(
    ("shown", "printed"),
    [
        ("run sims_20261201_155215_829403da: done", "run sims_20261206_053020_d71f40a0: done"),
        ("started 2026-12-01T15:52:15.866309+00:00", "started 2026-12-06T05:30:20.1+00:00"),
        ("sims  running  2026-12-01 15:52  4.50  0/7", "sims running 2026-12-06 05:30 11.20 0/7"),
        ("on vm (pid 5418)", "on vm (pid 30383)"),
        ("step tutorial/x (1d04ea8b) took 1.2s", "step tutorial/x (0f2e9c5d) took 30 ms"),
        ("path: /home/you/t/.stemma/x", "path: /tmp/pytest-1/t0/.stemma/x"),
        (
            "/home/you/t/.stemma/working/2_op/28/41/28414355eb2146faad0b10dfaef91818/x.txt",
            "/tmp/pytest-1/t0/.stemma/working/2_op/26/b4/26b44a4d3de94e4ab836c8d368368ad6/x.txt",
        ),
        (
            "part-00000-26b4e0c2-7d1a-4c55-9b0e-3f8a1c2d4e5f-c000.zstd.parquet",
            "part-00000-0daffc4d-d438-42fc-8d58-834339e51ba9-c000.zstd.parquet",
        ),
    ],
)
def test_what_varies_from_run_to_run_compares_equal(shown: str, printed: str) -> None:
    paths = {"/tmp/pytest-1/t0": "/home/you/t"}
    assert normalized(shown, paths=paths) == normalized(printed, paths=paths)


@pytest.mark.parametrize(
    ("shown", "printed"),
    [
        ("step  name  status  done  total", "step  name  status  total  done"),
        ("4 cancelled, 2 completed, 1 skipped", "4 completed, 1 skipped"),
        ("sims_20261201_155215_829403da", "lazy_20261201_155215_829403da"),
        ("{'loss': 0.366}", "{'loss': 0.367}"),
        ("working/2_op/28/41/28414355eb21", "working/2_op/26/b4/28414355eb21"),
        (
            "part-00001-26b4e0c2-7d1a-4c55-9b0e-3f8a1c2d4e5f",
            "part-00000-0daffc4d-d438-42fc-8d58-834339e51ba9",
        ),
    ],
)
def test_what_changed_compares_unequal(shown: str, printed: str) -> None:
    assert normalized(shown) != normalized(printed)


def test_fragments_must_appear_whole_and_in_order() -> None:
    printed = "a\nb 1\nc\nd\n"
    assert missing_fragment([("b 1", "c"), ("d",)], printed) is None
    assert missing_fragment([("d",), ("b 1",)], printed) == ("b 1",)
    assert missing_fragment([("b 2",)], printed) == ("b 2",)
