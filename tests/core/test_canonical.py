import dataclasses
import enum
import math
from pathlib import Path

import pytest
import xxhash
from pydantic import BaseModel

from stemma.core import UnfingerprintableError, canonical_json, content_id, hash_canonical


class Color(enum.Enum):
    RED = "red"


@dataclasses.dataclass(frozen=True)
class Point:
    x: int
    y: int


class Params(BaseModel):
    lr: float = 0.1


class Opaque:
    pass


def test_canonical_json_sorts_keys_and_is_compact() -> None:
    assert canonical_json({"b": 1, "a": [1, 2.5, None, True]}) == '{"a":[1,2.5,null,true],"b":1}'


def test_canonical_json_dict_order_does_not_change_id() -> None:
    assert hash_canonical({"a": 1, "b": 2}) == hash_canonical({"b": 2, "a": 1})


@pytest.mark.parametrize(
    "value",
    [Color.RED, Point(1, 2), Params(), Path("/data/x.csv"), frozenset({3, 1, 2}), b"bytes"],
)
def test_canonical_json_structured_values_encode_stably(value: object) -> None:
    assert canonical_json(value) == canonical_json(value)
    assert hash_canonical(value) != hash_canonical(str(value))


def test_canonical_json_sets_encode_in_sorted_order() -> None:
    assert canonical_json({3, 1, 2}) == canonical_json({2, 3, 1})


@pytest.mark.parametrize(
    ("value", "expected_path"),
    [
        ({"fn": lambda: 0}, "config['fn']"),
        ({"model": [1, 2, Opaque()]}, "config['model'][2]"),
        ({"f": print}, "config['f']"),
        ({"x": math.nan}, "config['x']"),
        ({1: "int key"}, "config"),
    ],
)
def test_canonical_json_unknown_values_are_refused_naming_the_path(
    value: object, expected_path: str
) -> None:
    with pytest.raises(UnfingerprintableError) as info:
        canonical_json(value)
    assert str(info.value).startswith(expected_path + ":")


def test_canonical_json_refusal_says_how_to_fix() -> None:
    with pytest.raises(UnfingerprintableError, match="frozen dataclass or a pydantic model"):
        canonical_json({"x": Opaque()})


def test_content_id_is_raw_xxh3_128_of_the_bytes() -> None:
    payload = b"hello world" * 100
    assert content_id(payload) == xxhash.xxh3_128_hexdigest(payload)
    assert len(content_id(payload)) == 32
    assert all(c in "0123456789abcdef" for c in content_id(payload))


def test_return_values_made_plain_encode_exactly_as_before_when_they_encoded_before() -> None:
    """Keys are a contract: converting numpy in a return value changes no encoding that existed."""
    import collections

    import numpy as np

    from stemma.core.canonical import as_plain_data

    values: list[object] = [
        None,
        True,
        3,
        2.5,
        "s",
        np.float64(0.1),  # a float subclass: encoded as a float already
        np.str_("text"),  # a str subclass
        [1, (2, [3.5])],
        {"a": {"$b": [np.float64(1.5)]}},
        {1.5, "x"},
        frozenset({(1, 2)}),
        collections.OrderedDict(b=1, a=2),
        Point(1, 2),
        Params(),
        Color.RED,
        Path("x/y.csv"),
        b"raw",
    ]
    for value in values:
        assert canonical_json(as_plain_data(value)) == canonical_json(value), value


def test_numpy_values_are_made_plain_for_a_return_value_but_stay_refused_as_inputs() -> None:
    import numpy as np

    from stemma.core.canonical import as_plain_data

    value = {"n": np.int64(3), "rows": np.arange(3), "pair": (np.bool_(False), {np.int8(1)})}
    assert (
        canonical_json(as_plain_data(value)) == '{"n":3,"pair":[false,{"$set":[1]}],"rows":[0,1,2]}'
    )
    with pytest.raises(UnfingerprintableError, match="int64"):
        canonical_json(value)  # a step's inputs, and so its key, are encoded as they always were
