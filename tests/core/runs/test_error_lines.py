"""One line of an execution's error: the exception's own line, never the traceback's header."""

from __future__ import annotations

import traceback

import pytest
from pydantic import BaseModel, ValidationError

from stemma.core.runs.error_lines import TRACEBACK_HEADER, error_line


def _raise_value_error() -> None:
    raise ValueError("refusing part_3.csv")


def _traceback_of(action: object) -> str:
    assert callable(action)
    try:
        action()
    except Exception as err:
        return "".join(traceback.format_exception(err))
    raise AssertionError("the action did not raise")


def _chained() -> None:
    try:
        _raise_value_error()
    except ValueError as err:
        raise RuntimeError("the transform gave up") from err


class _Params(BaseModel):
    scale: float


def _invalid_params() -> None:
    _Params.model_validate({"scale": "big"})


def test_error_line_of_a_traceback_is_the_exception_line() -> None:
    text = _traceback_of(_raise_value_error)
    assert text.startswith(TRACEBACK_HEADER)
    assert error_line(text) == "ValueError: refusing part_3.csv"


def test_error_line_of_a_chained_traceback_is_the_last_exception() -> None:
    text = _traceback_of(_chained)
    assert "direct cause" in text
    assert error_line(text) == "RuntimeError: the transform gave up"


def test_error_line_of_a_multi_line_message_is_its_headline() -> None:
    text = _traceback_of(_invalid_params)
    with pytest.raises(ValidationError):
        _invalid_params()
    assert error_line(text).startswith("pydantic_core._pydantic_core.ValidationError: 1 validation")


@pytest.mark.parametrize(
    ("text", "line"),
    [
        (
            "its orchestrator died; settled by stemma reap",
            "its orchestrator died; settled by stemma reap",
        ),
        ("\n\nTypeError: part_0.csv\n(traceback)", "TypeError: part_0.csv"),
        ("", ""),
        (None, ""),
    ],
)
def test_error_line_of_plain_text_is_its_first_line(text: str | None, line: str) -> None:
    assert error_line(text) == line


def test_error_line_is_cut_to_the_width_with_an_ellipsis() -> None:
    text = _traceback_of(_raise_value_error)
    assert error_line(text, 12) == "ValueError:…"
    assert len(error_line(text, 12)) == 12
