"""What the project's command lines share."""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Iterator

# The file name that stands for standard input, as in other command-line tools.
STDIN = "-"


def quiet_when_output_closes(command: Callable[[], int]) -> int:
    """`command()`, stopping quietly when whoever reads its output stops early (`… | head`), as
    command-line tools do; Python would print a BrokenPipeError's traceback instead."""
    try:
        return command()
    except BrokenPipeError:
        # What is still buffered for stdout would raise again when Python exits: send it nowhere.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 1


class Unreadable(Exception):
    """A file a command was given that cannot be read; the message is one line naming it and why."""


def shown_name(path: str) -> str:
    """How messages name a file given on the command line: `-` is standard input."""
    return "<stdin>" if path == STDIN else path


def numbered_lines(path: str) -> Iterator[tuple[int, bytes]]:
    """The lines of the file `path` (standard input for `-`), numbered from 1: bytes split at line
    feeds only, so that each line is decoded on its own and one that is not UTF-8 is that line's
    fault alone. `Unreadable` if the file cannot be opened or read (missing, a directory...)."""
    try:
        if path == STDIN:
            if sys.stdin is None:
                raise Unreadable(f"{shown_name(path)}: there is no standard input")
            yield from enumerate(sys.stdin.buffer, 1)
        else:
            with open(path, "rb") as lines:
                yield from enumerate(lines, 1)
    except OSError as exc:
        raise Unreadable(f"{shown_name(path)}: {exc.strerror or exc}") from None


def read_bytes(path: str) -> bytes:
    """The whole of the file `path` (standard input for `-`); `Unreadable` as `numbered_lines`."""
    return b"".join(line for _, line in numbered_lines(path))
