"""The ``stemma`` command line: core's subcommands, and those installed packages add.

Packages add a subcommand by registering a :class:`Command` under the ``stemma.commands`` entry
point group. Exit codes are documented in :mod:`stemma.core.exit_codes`.
"""

from stemma.core.cli.commands import COMMAND_GROUP, Command
from stemma.core.cli.output import OutputFormat, add_format_option, print_rows
from stemma.core.exit_codes import CliError, ExitCode
from stemma.core.runs.roots import existing_root

__all__ = [
    # defining a subcommand
    "COMMAND_GROUP",
    "Command",
    "CliError",
    "ExitCode",
    # finding the root a reading command works on
    "existing_root",
    # printing
    "OutputFormat",
    "add_format_option",
    "print_rows",
]
