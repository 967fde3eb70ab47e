"""Every process stemma starts gets an argv list, never a shell string (a scan of the source)."""

import ast
import pathlib

import pytest

PACKAGES = pathlib.Path(__file__).resolve().parents[2] / "packages"
_STARTERS = {
    ("subprocess", "run"),
    ("subprocess", "Popen"),
    ("subprocess", "call"),
    ("subprocess", "check_call"),
    ("subprocess", "check_output"),
}
_SHELL_ONLY = {
    ("os", "system"),
    ("os", "popen"),
    ("subprocess", "getoutput"),
    ("subprocess", "getstatusoutput"),
    ("asyncio", "create_subprocess_shell"),
}
_ARGV_BUILDERS = {"list", "tuple"}


def _sources() -> list[pathlib.Path]:
    return sorted(PACKAGES.glob("*/src/**/*.py"))


def _dotted(node: ast.expr) -> tuple[str, str] | None:
    if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
        return node.value.id, node.attr
    return None


def _is_argv(node: ast.expr) -> bool:
    """A list or tuple display, a comprehension, or ``list(…)``/``tuple(…)``: never a string."""
    if isinstance(node, ast.List | ast.Tuple | ast.ListComp):
        return True
    return (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Name)
        and node.func.id in _ARGV_BUILDERS
    )


def shell_problems(source: str, where: str) -> list[str]:
    """What in ``source`` starts a process from a string or through a shell."""
    problems: list[str] = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.ImportFrom) and node.module in ("subprocess", "os", "asyncio"):
            starters = {name for _, name in _STARTERS | _SHELL_ONLY}
            for alias in node.names:
                if alias.name in starters:
                    problems.append(f"{where}:{node.lineno} imports {alias.name} unqualified")
        if not isinstance(node, ast.Call):
            continue
        called = _dotted(node.func)
        if called in _SHELL_ONLY:
            problems.append(f"{where}:{node.lineno} calls {'.'.join(called)} (a shell)")
        if called not in _STARTERS:
            continue
        for keyword in node.keywords:
            if keyword.arg == "shell" and not (
                isinstance(keyword.value, ast.Constant) and keyword.value.value is False
            ):
                problems.append(f"{where}:{node.lineno} passes shell=")
        if not node.args or not _is_argv(node.args[0]):
            problems.append(f"{where}:{node.lineno} passes no argv list to {'.'.join(called)}")
    return problems


def test_every_process_stemma_starts_gets_an_argv_list_and_no_shell() -> None:
    sources = _sources()
    assert len(sources) > 100  # the scan found the packages
    problems = [
        problem
        for path in sources
        for problem in shell_problems(
            path.read_text(encoding="utf-8"), str(path.relative_to(PACKAGES))
        )
    ]
    assert problems == []


@pytest.mark.parametrize(
    "source",
    [
        "import subprocess\nsubprocess.run('scancel ' + job, check=True)",
        "import subprocess\nsubprocess.run(['sbatch', path], shell=True)",
        "import subprocess\nsubprocess.Popen(f'srun {cmd}')",
        "import os\nos.system('squeue')",
        "from subprocess import check_output\ncheck_output(['ls'])",
        "import subprocess\nsubprocess.run(argv_from_somewhere)",
    ],
)
def test_scan_finds_a_shell_string_or_shell_true(source: str) -> None:
    assert shell_problems(source, "example.py") != []
