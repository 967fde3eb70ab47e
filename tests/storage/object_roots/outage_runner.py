"""Three slow steps on a root, one at a time (the store may go away between them): ``ROOT``."""

from __future__ import annotations

import sys

from stemma.core import apply, run
from tests.storage.object_roots.lazy_steps import slow_square

if __name__ == "__main__":
    steps = [apply(name=f"slow/{x}", fn=slow_square, version="v1", x=x) for x in (1, 2, 3)]
    built = run(*steps, root=sys.argv[1], max_workers=1, parallel_steps=1)
    print("values=" + ",".join(str(b.value) for b in built), flush=True)
