"""``artifact.url()`` and ``ctx.output_url`` on a root on a filesystem: the output as a file URL.

(Roots in a bucket: tests/storage/object_roots/test_output_urls.py.)
"""

from __future__ import annotations

import pathlib
from typing import Any
from urllib.parse import unquote, urlsplit

import pytest

from stemma.core import OUT, ArtifactStep, ExternalRun, StepSpec, apply, lower, run
from stemma.core.graph.context import StepContext
from tests.core.lazy_functions import CALLS_ENV, write_json


@pytest.fixture(autouse=True)
def _calls_dir(tmp_path: pathlib.Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "calls").mkdir()
    monkeypatch.setenv(CALLS_ENV, str(tmp_path / "calls"))


def _told(out_path: str, url: str) -> str:
    """Write a directory output; return the URL the step's context gave."""
    pathlib.Path(out_path).mkdir()
    (pathlib.Path(out_path) / "part-0.txt").write_text("zero")
    return url


def _url_step() -> ArtifactStep:
    return apply(
        name="urls/told",
        fn=_told,
        version="v1",
        build_config=lambda ctx: {"out_path": ctx.output_path, "url": ctx.output_url},
    )


def test_an_outputs_url_is_its_local_path_as_a_file_uri_escaped(tmp_path: pathlib.Path) -> None:
    root = tmp_path / "my roots é"  # a space and non-ASCII: both percent-encoded in the URL

    [built] = run(
        apply(name="urls/json", fn=write_json, version="v1", data={"a": 1}, out_path=OUT),
        root=root,
        backend="local-thread",
    )

    url = built.url()
    assert url == built.path().as_uri()
    assert url.startswith("file:///")
    assert "my%20roots%20%C3%A9/outputs/urls/json/v1-" in url
    assert pathlib.Path(unquote(urlsplit(url).path)) == built.path()  # names the output itself
    assert pathlib.Path(unquote(urlsplit(url).path)).read_text() == built.path().read_text()


def test_a_step_is_told_its_outputs_url_and_it_is_the_artifacts(tmp_path: pathlib.Path) -> None:
    [built] = run(_url_step(), root=tmp_path / "a root", backend="local-thread")

    assert built.value == built.url()  # the final place, not the scratch ``OUT`` stood for
    assert built.value.endswith(f"/outputs/urls/told/v1-{built.fingerprint[:16]}")


def test_the_output_url_is_a_placeholder_when_keyed_and_no_part_of_the_key(
    tmp_path: pathlib.Path,
) -> None:
    seen: list[str] = []

    def config(ctx: StepContext) -> dict[str, Any]:
        seen.append(ctx.output_url)
        return {"out_path": ctx.output_path, "url": ctx.output_url}

    step = apply(name="urls/told", fn=_told, version="v1", build_config=config)
    [here] = run(step, root=tmp_path / "here", backend="local-thread")
    [there] = run(_url_step(), root=tmp_path / "there", backend="local-thread")

    assert seen[0] == "<output_url>"  # what the key was made from
    assert here.fingerprint == there.fingerprint == lower(step).fingerprint
    assert here.value != there.value  # each root told the step its own place


def test_an_external_runner_tells_the_step_its_outputs_url(tmp_path: pathlib.Path) -> None:
    step = _url_step()
    memo: dict[ArtifactStep, StepSpec] = {}
    lower(step, memo)
    with ExternalRun(root=tmp_path / "external") as ext:
        [spec] = ext.order(memo.values())
        call = ext.prepare(spec)
        built = ext.record(call, spec.step.fn(**call.kwargs))

    assert built.value == built.url() == built.path().as_uri()


def _write_at(where: str) -> str:
    """Write a one-file output at ``where`` with plain file calls; return what it was told."""
    pathlib.Path(where).write_text("written at OUT_URL")
    return where


def test_out_url_on_a_root_on_a_filesystem_is_outs_own_path(tmp_path: pathlib.Path) -> None:
    from stemma.core import OUT_URL

    given = apply(name="urls/own-tools", fn=_write_at, version="v1", where=OUT_URL)
    asked = apply(
        name="urls/own-tools",
        fn=_write_at,
        version="v1",
        build_config=lambda ctx: {"where": ctx.write_url},
    )
    [built] = run(given, root=tmp_path / "root with space é")

    assert pathlib.Path(built.value).is_absolute()  # a local path, as OUT would be
    assert built.path().read_text() == "written at OUT_URL"
    assert lower(asked).fingerprint == lower(given).fingerprint  # asked of the context: one key
    assert lower(asked).config["inputs"] == {"where": "<write_url>"}
    by_out = apply(name="urls/own-tools", fn=_write_at, version="v1", where=OUT)
    assert lower(by_out).fingerprint != lower(given).fingerprint
