"""The help page names every key of every screen, under that screen's label."""

from __future__ import annotations

import re

import pytest
from textual.binding import Binding
from textual.screen import Screen

from stemma.tui.screens import ArtifactScreen, RunScreen, RunsScreen, StepScreen
from stemma.tui.screens.help import HELP

SHOWN_AS = {"slash": "/", "enter": "Enter", "escape": "Esc", "question_mark": "?"}
"""How the page writes a binding's key."""
UNLISTED = {"backspace"}
"""Keys the page need not name: backspace does what Esc does."""
_LABEL = re.compile(r"^\[b\](?P<label>[^\[]+)\[/b\]\s+(?P<keys>.*)$")


def _sections() -> dict[str, str]:
    """Each label's text: its line and the indented lines under it."""
    sections: dict[str, str] = {}
    label = ""
    for line in HELP.splitlines():
        if (found := _LABEL.match(line)) is not None:
            label = found["label"]
            sections[label] = found["keys"]
        elif line.startswith(" " * 12) and label:
            sections[label] += " · " + line.strip()
        else:
            label = ""
    return sections


def _keys(screen: type[Screen[None]]) -> set[str]:
    keys: set[str] = set()
    for binding in screen.BINDINGS:
        assert isinstance(binding, Binding)
        keys |= {k for k in binding.key.split(",") if k not in UNLISTED}
    return {SHOWN_AS.get(key, key) for key in keys}


@pytest.mark.parametrize(
    ("screen", "labels"),
    [
        (RunsScreen, ("Runs", "Runs, Run")),
        (RunScreen, ("Run", "Runs, Run")),
        (StepScreen, ("Step",)),
        (ArtifactScreen, ("Artifact",)),
    ],
    ids=["runs", "run", "step", "artifact"],
)
def test_the_help_page_names_every_key_of_each_screen(
    screen: type[Screen[None]], labels: tuple[str, ...]
) -> None:
    sections = _sections()
    text = " · ".join(sections[label] for label in (*labels, "Everywhere"))
    named = {item.strip().split(" ")[0].rstrip(":") for item in text.split(" · ")}
    assert _keys(screen) - named == set()
