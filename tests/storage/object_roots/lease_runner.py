"""One runner of ``slow/square`` on a root, as a separate machine would run it: ``ROOT``."""

from __future__ import annotations

import sys

from stemma.core import apply, run
from tests.storage.object_roots.lazy_steps import slow_square

if __name__ == "__main__":
    [built] = run(
        apply(name="slow/square", fn=slow_square, version="v1", x=7),
        root=sys.argv[1],
        max_workers=1,
    )
    print(f"value={built.value} cached={built.cached}", flush=True)
