"""A large content on a bucket root: kept as an object of its own beside the tables.

A data artifact of 512 KiB or more is put at ``{root}/contents/{ab}/{cd}/{id}`` by the worker
that made it, before its unit is staged; its row in the bucket's data table has no content. A
unit of a later step (another worker process) reads it back whole through ``item.content``.
"""

from __future__ import annotations

import json

from benchmarks.bench_ops import MakeData, ReadsData
from stemma.core.front.pipeline import Pipeline
from stemma.storage import DeltaStore
from stemma.storage.content_files import LARGE_CONTENT_BYTES
from tests.storage.object_roots.conftest import bucket_keys


def test_a_large_content_is_an_object_of_its_own_and_a_unit_reads_it_whole(
    bucket_root: str,
) -> None:
    size = int(LARGE_CONTENT_BYTES * 1.05)  # (random_csv makes about 1 % less)
    pipeline = Pipeline.create("large-in-bucket", root=bucket_root, max_workers=1)
    made = pipeline.run(MakeData, params={"count": 2, "size": size})
    read = pipeline.run(ReadsData, inputs={"data": made.output("data")})
    assert pipeline.finalize()["overall_success"]

    ids = sorted(pipeline.artifact_ids(made.output("data")))
    keys = bucket_keys(bucket_root)
    assert [k for k in keys if k.startswith("contents/")] == [
        f"contents/{i[:2]}/{i[2:4]}/{i}" for i in ids
    ]
    store = DeltaStore(bucket_root)
    loaded = store.load_artifacts(ids)
    assert {len(loaded[i].content or b"") for i in ids} == {loaded[i].size for i in ids}
    assert all(loaded[i].size >= LARGE_CONTENT_BYTES for i in ids)
    sizes = store.load_artifacts(pipeline.artifact_ids(read.output("sizes")))
    seen = {json.loads(a.content or b"{}")["size"] for a in sizes.values()}
    assert seen == {loaded[i].size for i in ids}  # the units read every byte (one metric: alike)
