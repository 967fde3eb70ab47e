from __future__ import annotations

import subprocess
import sys

_CHECK = """
import sys
import stemma.storage
loaded = sorted(name for name in ("textual", "submitit", "stemma.tui", "stemma.slurm")
                if name in sys.modules)
print(",".join(loaded))
"""


def test_import_stemma_storage_loads_no_ui_or_cluster_library() -> None:
    result = subprocess.run(
        [sys.executable, "-c", _CHECK], capture_output=True, text=True, timeout=120, check=True
    )

    assert result.stdout.strip() == ""
