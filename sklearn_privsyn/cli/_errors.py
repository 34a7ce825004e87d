"""The command line's exit statuses and its two kinds of user error."""

#: Exit status of a data or validation error.
EXIT_DATA = 1
#: Exit status of a usage error (argparse's own).
EXIT_USAGE = 2


class CLIError(Exception):
    """A user error: printed as one line on stderr, exit status ``EXIT_DATA``."""


class UsageError(Exception):
    """A usage error found after parsing: exit status ``EXIT_USAGE``."""
