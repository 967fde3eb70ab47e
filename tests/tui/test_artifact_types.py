"""The dashboard's artifact screen shows the type a lazy step gave its output (``type=``)."""

from __future__ import annotations

import json
import pathlib

from stemma.core import OUT, apply, run
from stemma.tui.client import DashboardClient


def write_text(text: str, out_path: str) -> None:
    pathlib.Path(out_path).write_text(text)


def shout(source: str, out_path: str) -> None:
    pathlib.Path(out_path).write_text(json.dumps(pathlib.Path(source).read_text().upper()))


def test_the_artifact_view_shows_the_type_of_a_lazy_steps_output(tmp_path: pathlib.Path) -> None:
    words = apply("words", write_text, version="v1", type="text", text="hi", out_path=OUT)
    loud = apply("loud", shout, version="v1", type="json", source=words, out_path=OUT)
    built_words, built_loud = run(words, loud, root=tmp_path, backend="local-thread")
    view = DashboardClient(tmp_path).artifact(built_loud.artifact_id)
    assert "json (file_ref)" in view.origin
    [edge] = view.up
    assert (edge.artifact_id, edge.artifact_type) == (built_words.artifact_id, "text (file_ref)")
    plain = DashboardClient(tmp_path).artifact(built_words.artifact_id)
    assert [e.artifact_type for e in plain.down if e.artifact_id == built_loud.artifact_id] == [
        "json (file_ref)"
    ]
