"""The project's command lines stop quietly when whoever reads their output stops early (`… | head`)."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

COMMANDS = [
    ["-m", "engine", "play", "--players", "5", "--seed", "1"],
    ["-m", "deduction", "batch"],
    ["-m", "tgbot", "simulate", "--games", "2", "--players", "5"],
    ["-m", "tgbot", "demo", "--players", "5", "--seed", "1"],
]
RECORD = {"format": "resistance-record/1", "id": "x", "players": 5, "spies": 2, "missions": []}
REQUEST = json.dumps({"record": RECORD, "viewer": 0}).encode() + b"\n"  # for the batch protocol


@pytest.mark.parametrize("command", COMMANDS, ids=lambda c: " ".join(c[1:3]))
def test_a_reader_that_stops_early_ends_the_command_without_a_traceback(command):
    read_end, write_end = os.pipe()
    os.close(read_end)  # the reader is gone before the first line: every write fails
    try:
        done = subprocess.run(
            [sys.executable, *command], input=REQUEST, stdout=write_end, stderr=subprocess.PIPE, timeout=120
        )
    finally:
        os.close(write_end)
    assert done.returncode == 1
    assert done.stderr.decode() == ""
