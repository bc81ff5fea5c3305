"""What the project's command lines share."""

from __future__ import annotations

import os
import sys
from collections.abc import Callable


def quiet_when_output_closes(command: Callable[[], int]) -> int:
    """`command()`, stopping quietly when whoever reads its output stops early (`… | head`), as
    command-line tools do; Python would print a BrokenPipeError's traceback instead."""
    try:
        return command()
    except BrokenPipeError:
        # What is still buffered for stdout would raise again when Python exits: send it nowhere.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 1
