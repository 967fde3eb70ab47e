"""The ```` ```console ```` blocks of a page: the commands they show, what they print, and how the
two are compared (see ``docs/contributing/docs.md``).

A console block is a transcript: ``$ command`` lines, each followed by the output it printed. A
page that says ``<!-- docs-test: console cwd=/home/you/stemma-tutorial -->`` has its transcripts
run and compared, after both sides are normalized (:func:`normalized`): what differs from run to
run (run ids, times, durations, process ids, hashes and UUIDs, the working directory) is
replaced by a placeholder, and runs of spaces by one, so a table whose columns moved still
compares equal. No I/O here: ``console_runner.py`` runs what this reads.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

_FENCE_OPEN = re.compile(r"^(?P<indent>[ \t]*)(?P<fence>`{3,})(?P<info>[^`]*)$")
_PAGE = re.compile(r"^\s*<!--\s*docs-test:\s*console\b(?P<settings>[^>]*)-->\s*$", re.M)
_OUTPUT_OF = re.compile(r"^\s*<!--\s*docs-test:\s*output-of\s+(?P<script>[\w./-]+)\s*-->\s*$", re.M)
_SKIP = re.compile(r"^\s*<!--\s*docs-test:\s*skip\b(?P<reason>[^>]*)-->\s*$")
_BACKGROUND = re.compile(r"^\s*<!--\s*docs-test:\s*background\s+held=(?P<held>\d+)\s*-->\s*$")
_BACKGROUND_OUTPUT = re.compile(r"^\s*<!--\s*docs-test:\s*background output\s*-->\s*$")
_PROMPT = "$ "


@dataclass(frozen=True, kw_only=True)
class Command:
    """One ``$ command`` line of a transcript and the output shown under it."""

    line: str
    """The command, without its prompt."""
    output: tuple[str, ...]
    """The lines shown under it, up to the next command or the block's end."""


@dataclass(frozen=True, kw_only=True)
class ConsoleBlock:
    """One ```` ```console ```` block of a page, with the directive on the line before it."""

    page: Path
    line: int
    """The 1-based line of the opening fence."""
    commands: tuple[Command, ...]
    """Its ``$`` lines; empty for a block of output alone."""
    output: tuple[str, ...]
    """A block of output alone: its lines (empty when the block has commands)."""
    skip_reason: str | None = None
    """Why it is not run, from ``<!-- docs-test: skip REASON -->``."""
    held: int | None = None
    """``<!-- docs-test: background held=N -->``: its one command runs in the background, its
    sleeps held, until N sleeps of the page's code are held."""
    background_output: bool = False
    """``<!-- docs-test: background output -->``: the output of the command in the background,
    compared once it ends."""

    @property
    def where(self) -> str:
        """``page.md:LINE``, for messages."""
        return f"{self.page.name}:{self.line}"


@dataclass(frozen=True, kw_only=True)
class ConsoleSettings:
    """What a page's ``<!-- docs-test: console … -->`` says its transcripts were made as."""

    cwd: str
    """The directory the page's commands run in, as the page shows it."""
    user: str = "you"
    """The login name the commands run as (``$USER``)."""
    host: str = "vm"
    """The machine's name the commands see (``socket.gethostname()``)."""


def console_settings(page: Path) -> ConsoleSettings | None:
    """The page's console settings; None when its transcripts are not run.

    Raises:
        ValueError: the directive lacks ``cwd=`` or has a setting it does not know.
    """
    found = _PAGE.search(page.read_text(encoding="utf-8"))
    if found is None:
        return None
    pairs = dict(item.split("=", 1) for item in found["settings"].split() if "=" in item)
    unknown = set(pairs) - {"cwd", "user", "host"}
    if "cwd" not in pairs or unknown or len(pairs) != len(found["settings"].split()):
        raise ValueError(
            f"{page}: write <!-- docs-test: console cwd=/home/you/dir [user=you] [host=vm] -->"
        )
    return ConsoleSettings(**pairs)


def output_of(page: Path) -> str | None:
    """``<!-- docs-test: output-of examples/x.py -->``: the script whose output the page shows."""
    found = _OUTPUT_OF.search(page.read_text(encoding="utf-8"))
    return found["script"] if found else None


def console_blocks(page: Path) -> list[ConsoleBlock]:
    """Every ```` ```console ```` block of ``page``, in order, with its directive."""
    lines = page.read_text(encoding="utf-8").splitlines()
    blocks: list[ConsoleBlock] = []
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
        if opened["info"].strip().split(" ")[0].lower() == "console":
            body = [line.removeprefix(indent) for line in lines[index + 1 : end]]
            previous = lines[index - 1] if index > 0 else ""
            blocks.append(_block(page, index + 1, body, previous))
        index = end + 1
    return blocks


def _block(page: Path, line: int, body: list[str], previous: str) -> ConsoleBlock:
    skipped, held = _SKIP.match(previous), _BACKGROUND.match(previous)
    if skipped and not skipped["reason"].strip():
        raise ValueError(f"{page}:{line}: a docs-test skip needs a reason")
    commands: list[Command] = []
    alone: list[str] = []
    for text in body:
        if text.startswith(_PROMPT):
            commands.append(Command(line=text.removeprefix(_PROMPT), output=()))
        elif commands:
            last = commands[-1]
            commands[-1] = Command(line=last.line, output=(*last.output, text))
        else:
            alone.append(text)
    if held and len(commands) != 1:
        raise ValueError(f"{page}:{line}: a background block shows exactly one command")
    return ConsoleBlock(
        page=page,
        line=line,
        commands=tuple(commands),
        output=tuple(alone),
        skip_reason=skipped["reason"].strip() if skipped else None,
        held=int(held["held"]) if held else None,
        background_output=_BACKGROUND_OUTPUT.match(previous) is not None,
    )


_RULES: tuple[tuple[re.Pattern[str], str], ...] = (
    # A run id's stamp and random part (sims_20261201_155215_829403da): the name stays.
    (re.compile(r"_\d{8}_\d{6}_[0-9a-f]{8}\b"), "_<run>"),
    (re.compile(r"\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?(\+00:00|Z)?"), "<time>"),
    (re.compile(r"\bpid \d+"), "pid <pid>"),
    # ``stemma runs``' secs column: the number before the steps column (``4.50  0/7``).
    (re.compile(r"\b\d+\.\d\d(?=[ \t]+\d+/\d+\b)"), "<secs>"),
    (re.compile(r"\b\d+(\.\d+)?\s?(ms|s)\b"), "<duration>"),
    # A directory named by an id under two of its first digits' (working/3_op/28/41/2841…).
    (re.compile(r"\b([0-9a-f]{2})/([0-9a-f]{2})/\1\2[0-9a-f]{4,60}\b"), "<hash>"),
    # A UUID (a Delta data file's name), before its 8 and 12 digit parts become hashes.
    (re.compile(r"\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b"), "<uuid>"),
    # Ids and keys: the tests of keys keep them (tests/core/graph/test_golden_keys.py).
    (re.compile(r"\b[0-9a-f]{8,64}\b"), "<hash>"),
    (re.compile(r"[ \t]+"), " "),
)


def normalized(text: str, *, paths: dict[str, str] | None = None) -> list[str]:
    """``text``'s lines with what differs from run to run replaced (see the module's doc).

    Args:
        text: a transcript's output, shown or printed.
        paths: directories to write as the page writes them (the real working directory to
            the page's ``cwd``), replaced first, longest first.
    """
    for real, shown in sorted((paths or {}).items(), key=lambda item: -len(item[0])):
        text = text.replace(real, shown)
    for pattern, placeholder in _RULES:
        text = pattern.sub(placeholder, text)
    lines = [line.rstrip() for line in text.splitlines()]
    while lines and not lines[-1]:
        lines.pop()
    return lines


def missing_fragment(fragments: list[tuple[str, ...]], printed: str) -> tuple[str, ...] | None:
    """The first of ``fragments`` not found in ``printed`` after the one before it, else None.

    Each fragment is compared normalized, as a run of whole lines: a page that shows pieces of
    one script's output (``<!-- docs-test: output-of … -->``) shows them in the order printed.
    """
    lines = normalized(printed)
    start = 0
    for fragment in fragments:
        wanted = normalized("\n".join(fragment))
        at = next(
            (
                i
                for i in range(start, len(lines) - len(wanted) + 1)
                if lines[i : i + len(wanted)] == wanted
            ),
            None,
        )
        if at is None:
            return fragment
        start = at + len(wanted)
    return None
