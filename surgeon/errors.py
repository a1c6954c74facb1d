"""The one exception type users see: its message is a complete one-line explanation."""


class SurgeonError(Exception):
    """A problem with the user's input or environment, reported as one line (never a traceback)."""
