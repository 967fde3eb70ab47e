"""Each table's schema, declared once: its Arrow and polars forms agree, and cost no pyarrow."""

from __future__ import annotations

import subprocess
import sys

import polars as pl
import pytest

from stemma.storage.schemas import COMMIT_ORDER, TableSpec, user_content_table

USER_TABLE = user_content_table(
    "user/every_kind",
    (
        ("s", "string"),
        ("i", "int64"),
        ("f", "float64"),
        ("b", "bool"),
        ("raw", "binary"),
        ("j", "json"),
        ("l", "list<string>"),
    ),
)


@pytest.mark.parametrize("spec", [*COMMIT_ORDER, USER_TABLE], ids=lambda spec: spec.name)
def test_a_tables_polars_schema_is_its_arrow_schema_as_polars_reads_it(spec: TableSpec) -> None:
    read = pl.from_arrow(spec.arrow_schema.empty_table())  # pyright: ignore[reportUnknownMemberType]
    assert isinstance(read, pl.DataFrame)
    assert read.schema == spec.polars_schema
    assert tuple(spec.arrow_schema.names) == spec.columns


def test_required_columns_stay_non_nullable_in_arrow() -> None:
    index = next(spec for spec in COMMIT_ORDER if spec.name == "artifacts/index")
    nullable = {field.name: field.nullable for field in index.arrow_schema}
    assert nullable["artifact_id"] is False
    assert nullable["created_at"] is False
    assert nullable["metadata"] is True
    assert str(index.arrow_schema.field("created_at").type) == "timestamp[us, tz=UTC]"


def test_importing_the_schemas_and_staging_imports_neither_pyarrow_nor_deltalake() -> None:
    code = (
        "import sys, stemma.storage.schemas, stemma.storage.staging; "
        "print(sorted(m for m in ('pyarrow', 'deltalake') if m in sys.modules))"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True
    )
    assert done.stdout.strip() == "[]"
