"""Every Python block on the documentation site runs, and every tutorial example runs.

The conventions (documented for writers in ``docs/contributing/docs.md``):

- Every ```` ```python ```` block of a page runs, in page order, in one fresh directory per page,
  so later blocks can import files that earlier ones saved.
- ``<!-- file: name.py -->`` on the line before a block saves it as ``name.py`` (then runs it);
  other blocks are saved as ``block_<line>.py``.
- ``<!-- docs-test: skip REASON -->`` on the line before a block leaves it out; a reason is
  required.
- ``<!-- docs-test: after PAGE -->`` anywhere on a page runs PAGE's blocks first, in the same
  directory (a page that queries what a tutorial built).
- A block that holds only ``--8<--`` snippet lines is code included from a file under
  ``examples/``; that file is tested by running it, and is not run again here.
- ``<!-- docs-test: slurm -->`` anywhere on a page says its included examples need the local
  SLURM cluster. They are not run here (so these tests never need a cluster) but by a test in
  ``tests/slurm/`` marked ``slurm``, which must name the script:
  :func:`test_slurm_examples_are_run_by_a_slurm_test` checks that one does. The page's own
  Python blocks still run here, so they must not need the cluster.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import textwrap
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests.docs.console_blocks import (
    console_blocks,
    console_settings,
    missing_fragment,
    output_of,
)
from tests.docs.console_runner import run_transcripts, without_teardown_abort

REPO = Path(__file__).resolve().parents[2]
DOCS = REPO / "docs"
EXAMPLES = REPO / "examples"

_FENCE_OPEN = re.compile(r"^(?P<indent>[ \t]*)(?P<fence>`{3,})(?P<info>[^`]*)$")
_FILE = re.compile(r"^\s*<!--\s*file:\s*(?P<name>[\w./-]+\.py)\s*-->\s*$")
_SKIP = re.compile(r"^\s*<!--\s*docs-test:\s*skip\b(?P<reason>[^>]*)-->\s*$")
_AFTER = re.compile(r"^\s*<!--\s*docs-test:\s*after\s+(?P<page>[\w./-]+\.md)\s*-->\s*$", re.M)
_SLURM = re.compile(r"^\s*<!--\s*docs-test:\s*slurm\s*-->\s*$", re.M)
_SNIPPET = re.compile(r'^\s*-{2}8<-{2}\s+"(?P<path>[^"]+)"\s*$')


@dataclass(frozen=True, kw_only=True)
class CodeBlock:
    """One fenced Python block of a page."""

    page: Path
    """The markdown file, absolute."""
    line: int
    """The 1-based line of the opening fence."""
    code: str
    """The block's text, dedented."""
    filename: str
    """What the block is saved as before it runs."""
    skip_reason: str | None = None
    """Why the block does not run, when a skip comment precedes it."""
    snippets: tuple[str, ...] = ()
    """The files a snippet-only block includes (``path`` or ``path:section``)."""

    @property
    def where(self) -> str:
        """``docs/page.md:LINE``, for messages."""
        return f"{self.page.relative_to(REPO)}:{self.line}"


def python_blocks(page: Path) -> list[CodeBlock]:
    """Every ```` ```python ```` block of ``page``, in order, with its directives."""
    lines = page.read_text(encoding="utf-8").splitlines()
    blocks: list[CodeBlock] = []
    index = 0
    while index < len(lines):
        opened = _FENCE_OPEN.match(lines[index])
        if opened is None:
            index += 1
            continue
        indent, fence = opened["indent"], opened["fence"]
        end = index + 1
        while end < len(lines) and lines[end].strip() != fence:
            end += 1
        language = opened["info"].strip().split(" ")[0].lower()
        if language in ("python", "py"):
            body = [line.removeprefix(indent) for line in lines[index + 1 : end]]
            previous = lines[index - 1] if index > 0 else ""
            blocks.append(_block(page, index + 1, textwrap.dedent("\n".join(body)), previous))
        index = end + 1
    return blocks


def _block(page: Path, line: int, code: str, previous: str) -> CodeBlock:
    named = _FILE.match(previous)
    skipped = _SKIP.match(previous)
    reason = skipped["reason"].strip() if skipped else None
    if skipped and not reason:
        raise ValueError(f"{page}:{line}: a docs-test skip needs a reason")
    code_lines = [text for text in code.splitlines() if text.strip()]
    found = [_SNIPPET.match(text) for text in code_lines]
    snippets = tuple(match["path"] for match in found if match is not None)
    if snippets and len(snippets) != len(code_lines):
        raise ValueError(f"{page}:{line}: a block holds either snippet lines or code, not both")
    return CodeBlock(
        page=page,
        line=line,
        code=code + "\n",
        filename=named["name"] if named else f"block_{line}.py",
        skip_reason=reason,
        snippets=snippets,
    )


def prerequisites(page: Path) -> list[Path]:
    """The pages whose blocks must run first, from ``<!-- docs-test: after PAGE -->``."""
    text = page.read_text(encoding="utf-8")
    return [DOCS / match["page"] for match in _AFTER.finditer(text)]


def doc_pages() -> list[Path]:
    """Every markdown page of the site, sorted."""
    return sorted(path for path in DOCS.rglob("*.md") if "hooks" not in path.parts)


BLOCK_TIMEOUT = 240
PAGES = [page for page in doc_pages() if python_blocks(page)]


def needs_slurm(page: Path) -> bool:
    """Whether the page's included examples run on SLURM (``<!-- docs-test: slurm -->``)."""
    return _SLURM.search(page.read_text(encoding="utf-8")) is not None


def included_examples(*, slurm: bool = False) -> list[Path]:
    """The example scripts the pages include code from: these are the tutorials' scripts.

    Args:
        slurm: the scripts of pages marked ``<!-- docs-test: slurm -->`` instead of the others.
    """
    found = {
        REPO / snippet.split(":", 1)[0]
        for page in doc_pages()
        if needs_slurm(page) == slurm
        for block in python_blocks(page)
        for snippet in block.snippets
    }
    return sorted(path for path in found if path.parent == EXAMPLES)


EXAMPLE_SCRIPTS = included_examples()
SLURM_TESTS = REPO / "tests" / "slurm"


def _environment(workdir: Path) -> dict[str, str]:
    env = dict(os.environ)
    env["STEMMA_ROOT"] = str(workdir / ".stemma")
    env.pop("STEMMA_STORE", None)
    # A block imports the files earlier blocks saved.
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(workdir), env.get("PYTHONPATH")]))
    return env


def _run_script(script: Path, workdir: Path, where: str) -> str:
    done = subprocess.run(
        [sys.executable, script.name],
        cwd=workdir,
        env=_environment(workdir),
        capture_output=True,
        text=True,
        timeout=BLOCK_TIMEOUT,
        check=False,
    )
    code, _ = without_teardown_abort(done.returncode, done.stderr)
    assert code == 0, f"{where} exited {code}\n--- stdout\n{done.stdout}\n--- stderr\n{done.stderr}"
    return done.stdout


def _run_block(block: CodeBlock, workdir: Path) -> None:
    script = workdir / block.filename
    script.write_text(block.code, encoding="utf-8")
    _run_script(script, workdir, block.where)


def _run_page(page: Path, workdir: Path, seen: set[Path]) -> int:
    """Run the page's prerequisites, then its blocks; return how many blocks ran."""
    if page in seen:
        return 0
    seen.add(page)
    ran = sum(_run_page(before, workdir, seen) for before in prerequisites(page))
    settings = console_settings(page)
    if settings is not None:  # its transcripts run too, each where the page shows it
        blocks: list[Any] = python_blocks(page)
        return ran + run_transcripts(page, workdir, settings, blocks, _environment(workdir))
    for block in python_blocks(page):
        if block.skip_reason is None and not block.snippets:
            _run_block(block, workdir)
            ran += 1
    return ran


@pytest.mark.parametrize("page", PAGES, ids=[str(p.relative_to(DOCS)) for p in PAGES])
def test_doc_page_python_blocks_run_in_order(page: Path, tmp_path: Path) -> None:
    blocks = python_blocks(page)
    runnable = [b for b in blocks if b.skip_reason is None and not b.snippets]
    ran = _run_page(page, tmp_path, set())
    assert ran >= len(runnable)


@pytest.mark.parametrize("script", EXAMPLE_SCRIPTS, ids=[p.name for p in EXAMPLE_SCRIPTS])
def test_example_script_runs_in_a_fresh_root(script: Path, tmp_path: Path) -> None:
    copied = tmp_path / script.name
    copied.write_bytes(script.read_bytes())
    printed = _run_script(copied, tmp_path, str(script.relative_to(REPO)))
    for page in doc_pages():  # a page showing pieces of its output shows what it prints
        if output_of(page) != str(script.relative_to(REPO)):
            continue
        shown = [b.output for b in console_blocks(page) if not b.commands and not b.skip_reason]
        missing = missing_fragment(shown, printed)
        assert missing is None, (
            f"{page.relative_to(REPO)} shows output {script.name} did not print (or not in this "
            "order):\n" + "\n".join(missing or ()) + f"\n--- printed\n{printed}"
        )


def test_slurm_examples_are_run_by_a_slurm_test() -> None:
    examples = included_examples(slurm=True)
    assert not set(examples) & set(EXAMPLE_SCRIPTS), "an example is included by both kinds"
    slurm_tests = [
        path.read_text(encoding="utf-8")
        for path in SLURM_TESTS.glob("test_*.py")
        if "pytestmark = pytest.mark.slurm" in path.read_text(encoding="utf-8")
    ]
    for example in examples:
        named = f'"examples" / "{example.name}"'
        assert any(named in text for text in slurm_tests), (
            f"{example.relative_to(REPO)} is on a docs-test: slurm page, so a slurm-marked test "
            f"in tests/slurm must run it (name it as REPO / {named})"
        )


def test_snippet_blocks_include_tested_example_files() -> None:
    included = [
        (block.where, snippet)
        for page in doc_pages()
        for block in python_blocks(page)
        for snippet in block.snippets
    ]
    assert included, "no page includes code from examples/ yet"
    for where, snippet in included:
        path = REPO / snippet.split(":", 1)[0]
        assert path.parent == EXAMPLES, f"{where}: include code from examples/, not {snippet}"
        assert path.is_file(), f"{where}: {snippet} names no file"


def test_every_tutorial_includes_a_tested_example_script() -> None:
    tutorials = sorted((DOCS / "tutorials").glob("*.md"))
    assert tutorials
    for page in tutorials:
        snippets = [s for block in python_blocks(page) for s in block.snippets]
        assert any(s.startswith("examples/") for s in snippets), f"{page.name} includes no example"


def test_skipped_blocks_are_rare_and_say_why() -> None:
    skipped = [b for page in doc_pages() for b in python_blocks(page) if b.skip_reason]
    total = sum(len(python_blocks(page)) for page in doc_pages())
    assert all(b.skip_reason for b in skipped)
    assert len(skipped) * 10 <= total, [b.where for b in skipped]


def test_block_finder_reads_directives(tmp_path: Path) -> None:
    page = tmp_path / "page.md"
    page.write_text(
        "<!-- docs-test: after tutorials/lazy-steps.md -->\n"
        "<!-- file: first.py -->\n"
        "```python\nprint(1)\n```\n\n"
        "- in a list:\n\n"
        "    <!-- docs-test: skip needs a GPU -->\n"
        "    ```python\n    print(2)\n    ```\n\n"
        '```python\n--8<-- "examples/query_lineage.py:report"\n```\n'
        "```console\n$ python first.py\n```\n",
        encoding="utf-8",
    )
    assert not needs_slurm(page)
    marked = tmp_path / "marked.md"
    marked.write_text("# On the cluster\n\n<!-- docs-test: slurm -->\n", encoding="utf-8")
    assert needs_slurm(marked)
    first, second, third = python_blocks(page)
    assert (first.filename, first.code, first.skip_reason) == ("first.py", "print(1)\n", None)
    assert (second.code, second.skip_reason) == ("print(2)\n", "needs a GPU")
    assert third.snippets == ("examples/query_lineage.py:report",)
    assert prerequisites(page) == [DOCS / "tutorials" / "lazy-steps.md"]
