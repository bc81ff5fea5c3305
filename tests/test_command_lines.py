"""The project's command lines stop quietly when whoever reads their output stops early (`… | head`)."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import numpy as np
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


def test_the_programs_run_with_numpys_spurious_floating_point_flags_ignored(monkeypatch):
    """Some BLAS builds raise floating-point flags inside products of finite numbers, and numpy
    wrote "invalid value encountered in matmul" to the standard error of `resistance-bot demo` (one
    run in twenty here) and to the bot's log. The programs run their commands with those flags
    ignored, and leave their caller's setting as it was."""
    import deduction.__main__ as deduction_cli
    import tgbot.__main__ as bot_cli

    seen = []

    def record_setting(*_args) -> int:
        seen.append(np.geterr())
        return 0

    monkeypatch.setattr(deduction_cli, "_batch", record_setting)
    monkeypatch.setattr(bot_cli, "run", record_setting)
    before = np.geterr()
    assert deduction_cli.main(["batch"]) == 0
    assert bot_cli.main(["run"]) == 0
    ignored = {"divide": "ignore", "over": "ignore", "under": "ignore", "invalid": "ignore"}
    assert seen == [ignored, ignored]
    assert np.geterr() == before
