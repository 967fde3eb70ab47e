from __future__ import annotations

import json
from pathlib import Path

import pytest

from stemma.core.errors import ArtifactTypeError, UnfingerprintableError
from stemma.core.identity import content_id, digest_tree, file_ref_artifact_id
from stemma.core.operations import (
    COMMON_COLUMNS,
    ArtifactType,
    ColumnType,
    ConfigDraft,
    CustomDraft,
    DataDraft,
    FileRefDraft,
    MetricDraft,
    artifact_types,
    get_artifact_type,
    register_artifact_type,
)

CSV = b'id,name,note\n1,a,"two\nlines"\n2,b,plain\n\n'


def test_data_draft_records_columns_and_row_count() -> None:
    artifact = DataDraft.draft(CSV, "design_1.csv", step_number=2).finalize()
    assert artifact.fields == {"columns": ["id", "name", "note"], "row_count": 2}
    assert artifact.artifact_id == content_id(CSV)
    assert (artifact.artifact_type, artifact.extension, artifact.size) == ("data", ".csv", len(CSV))
    assert artifact.content == CSV
    assert artifact.origin_step == 2


def test_data_draft_of_empty_content_has_no_columns_or_rows() -> None:
    artifact = DataDraft.draft(b"", "empty").finalize()
    assert artifact.fields == {"columns": [], "row_count": 0}
    assert artifact.extension == ".csv"


def test_data_draft_with_a_byte_order_mark_reads_clean_column_names() -> None:
    artifact = DataDraft.draft(b"\xef\xbb\xbfx,y\n1,2\n", "bom.csv").finalize()
    assert artifact.fields["columns"] == ["x", "y"]


def test_data_draft_that_is_not_utf8_raises_naming_the_artifact() -> None:
    with pytest.raises(ArtifactTypeError, match=r"data artifact 'latin.csv'"):
        DataDraft.draft(b"caf\xe9,x\n", "latin.csv").finalize()


def test_metric_draft_is_sorted_key_compact_json() -> None:
    first = MetricDraft.draft({"b": 1, "a": [1.5, None]}, "m.json").finalize()
    second = MetricDraft.draft({"a": [1.5, None], "b": 1}, "m.json").finalize()
    assert first.content == b'{"a":[1.5,null],"b":1}'
    assert first.artifact_id == second.artifact_id == content_id(first.content or b"")


@pytest.mark.parametrize("value", [float("nan"), object(), {1, 2}])
def test_metric_draft_with_non_json_content_raises(value: object) -> None:
    with pytest.raises(ArtifactTypeError, match=r"metric artifact 'bad.json': content is not"):
        MetricDraft.draft({"loss": value}, "bad.json").finalize()


def test_config_draft_exposes_references_in_first_seen_order() -> None:
    first, second = "a" * 32, "b" * 32
    content = {
        "model": {"$artifact": first},
        "inputs": [{"$artifact": second}, {"nested": {"$artifact": first}}],
        "$literal": 3,
    }
    draft = ConfigDraft.draft(content, "run.json")
    assert draft.references() == (first, second)
    artifact = draft.finalize()
    assert artifact.fields == {"references": [first, second]}
    assert json.loads(artifact.content or b"") == content


@pytest.mark.parametrize(
    "bad",
    [{"$artifact": "short"}, {"$artifact": "a" * 32, "extra": 1}, {"$artifact": 7}],
)
def test_config_draft_with_a_malformed_reference_raises_naming_the_path(bad: object) -> None:
    with pytest.raises(ArtifactTypeError, match=r"content\['x'\]\[0\] must be exactly"):
        ConfigDraft.draft({"x": [bad]}, "cfg.json")


def test_file_ref_draft_matches_the_identity_helper(tmp_path: Path) -> None:
    path = tmp_path / "out" / "result.bin"
    path.parent.mkdir()
    path.write_bytes(b"payload")
    artifact = FileRefDraft.draft(path, relative_to=tmp_path).finalize()
    expected = file_ref_artifact_id(digest_tree(path), "out/result.bin")
    assert artifact.artifact_id == expected
    assert artifact.content is None
    assert artifact.fields == {"path": "out/result.bin", "content_hash": content_id(b"payload")}
    assert (artifact.original_name, artifact.size) == ("result.bin", 7)


def test_file_ref_draft_of_a_directory_changes_id_with_content(tmp_path: Path) -> None:
    tree = tmp_path / "tree"
    tree.mkdir()
    (tree / "a.txt").write_text("1")
    before = FileRefDraft.draft(tree, relative_to=tmp_path).finalize().artifact_id
    (tree / "a.txt").write_text("2")
    after = FileRefDraft.draft(tree, relative_to=tmp_path).finalize().artifact_id
    assert before != after


@pytest.mark.parametrize("name", ["", "dir/x.csv", "..", "a\\b.csv"])
def test_draft_with_a_path_as_original_name_raises(name: str) -> None:
    with pytest.raises(ArtifactTypeError, match="must be a plain file name"):
        DataDraft.draft(b"x\n", name)


def test_draft_metadata_is_canonicalized_and_checked() -> None:
    artifact = MetricDraft.draft({}, "m.json", metadata={"seed": 1}).finalize()
    assert artifact.metadata == {"seed": 1}
    with pytest.raises(UnfingerprintableError, match=r"metric artifact 'm.json'.metadata"):
        MetricDraft.draft({}, "m.json", metadata={"fn": print}).finalize()


def test_builtin_artifact_types_are_registered_with_their_tables() -> None:
    assert {"config", "data", "file_ref", "metric"} <= set(artifact_types())
    data = get_artifact_type("data")
    assert (data.table, data.builtin) == ("artifacts/data", True)
    assert data.schema_fields == {"columns": ColumnType.STRING_LIST, "row_count": "int64"}


def test_get_unknown_artifact_type_lists_registered() -> None:
    with pytest.raises(ArtifactTypeError, match=r"unknown artifact type 'dta'; registered: .*data"):
        get_artifact_type("dta")


def test_register_artifact_type_then_draft_one() -> None:
    kind = register_artifact_type(
        "structure_for_tests", "artifacts/structures_for_tests", {"chain_count": "int64"}
    )
    assert kind == ArtifactType(
        key="structure_for_tests",
        table="artifacts/structures_for_tests",
        schema_fields={"chain_count": ColumnType.INT64},
    )
    assert get_artifact_type("structure_for_tests") is kind
    artifact = CustomDraft.draft(
        "structure_for_tests", b"ATOM", "s1.pdb", fields={"chain_count": 2}
    ).finalize()
    assert artifact.artifact_id == content_id(b"ATOM")
    assert (artifact.artifact_type, artifact.extension) == ("structure_for_tests", ".pdb")
    assert artifact.fields == {"chain_count": 2}


def test_register_artifact_type_again_is_idempotent_but_redefining_raises() -> None:
    first = register_artifact_type("again_for_tests", "artifacts/again", {"n": "int64"})
    assert register_artifact_type("again_for_tests", "artifacts/again", {"n": "int64"}) == first
    with pytest.raises(ArtifactTypeError, match="already registered"):
        register_artifact_type("again_for_tests", "artifacts/again", {"n": "string"})


@pytest.mark.parametrize(
    ("key", "table", "fields", "message"),
    [
        ("Bad Key", "artifacts/x", {}, "must be lower case"),
        ("any", "artifacts/x", {}, "not 'any'"),
        ("ok_for_tests", "../escape", {}, "must be 'artifacts/<name>'"),
        ("ok_for_tests", "results/ok", {}, "must be 'artifacts/<name>'"),
        ("ok_for_tests", "artifacts/data", {}, "not one of stemma's own"),
        ("ok_for_tests", "artifacts/index", {}, "not one of stemma's own"),
        ("ok_for_tests", "artifacts/metrics", {}, "not one of stemma's own"),
        ("ok_for_tests", "artifacts/ok", {"size": "int64"}, r"\['size'\] are common columns"),
        ("ok_for_tests", "artifacts/ok", {"x": "decimal"}, "accepted: string, int64"),
    ],
)
def test_register_artifact_type_refuses_bad_definitions(
    key: str, table: str, fields: dict[str, str], message: str
) -> None:
    with pytest.raises(ArtifactTypeError, match=message):
        register_artifact_type(key, table, fields)
    assert "ok_for_tests" not in artifact_types()


def test_custom_draft_fields_must_match_the_schema() -> None:
    register_artifact_type("scored_for_tests", "artifacts/scored", {"score": "float64"})
    with pytest.raises(ArtifactTypeError, match=r"missing \['score'\], unknown \['scor'\]"):
        CustomDraft.draft("scored_for_tests", b"x", "a.txt", fields={"scor": 1.0})
    with pytest.raises(ArtifactTypeError, match="is built in"):
        CustomDraft.draft("data", b"x", "a.csv", fields={})


def test_common_columns_include_the_id_and_content() -> None:
    assert {"artifact_id", "content", "original_name", "extension", "size"} <= set(COMMON_COLUMNS)
