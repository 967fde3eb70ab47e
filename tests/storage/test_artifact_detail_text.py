"""The detail cell of `stemma artifacts`: a data artifact's rows, said in good English."""

from __future__ import annotations

import pytest

from stemma.storage.artifact_names import detail_text


@pytest.mark.parametrize(("count", "said"), [(1, "1 row "), (2, "2 rows "), (1200, "1,200 rows ")])
def test_detail_text_of_data_says_row_or_rows_by_count(count: int, said: str) -> None:
    row: dict[str, object] = {
        "original_name": "d",
        "row_count": count,
        "data_columns": ["x"],
        "size": 10,
    }
    assert detail_text(row) == f"d: {said}(x), 10 bytes"
