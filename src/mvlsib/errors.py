"""Errors the CLI turns into a clean message and a non-zero exit instead of a traceback."""


class MvlsibError(Exception):
    """A problem with the user's input or environment, stated so that they can fix it."""
