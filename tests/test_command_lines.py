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


# ---------------------------------------------------------------- files the record readers cannot use

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def small_table_line() -> bytes:
    """A 5-player Plot record dealing In the Spotlight, a card of the large deck only."""
    from engine import Card
    from tests.test_engine_plot_rules import small_table_record

    return json.dumps(small_table_record(5, Card.IN_THE_SPOTLIGHT)).encode() + b"\n"


FAULTY_FILES = {
    "missing": (None, "No such file or directory"),
    "a directory": ("directory", "Is a directory"),
    "not UTF-8": (b'{"format": "resistance-record/1", "id": "\xff"}\n', "not UTF-8: byte 42 of the"),
    "nested too deeply": (b"[" * 100_000 + b"]" * 100_000 + b"\n", "not readable: nested too deeply"),
    "a card of the large deck at 5 players": (
        small_table_line,
        "missions[0].plot[0].card: the deck of a 5-player game has no in_the_spotlight",
    ),
}
# Every command that reads records from a file, with what it needs besides the file.
READERS = {
    "engine validate": (["-m", "engine", "validate"], []),
    "deduction explain": (["-m", "deduction", "explain"], ["--viewer", "0"]),
    "deduction evaluate": (["-m", "deduction", "evaluate"], ["--model", "uniform"]),
    "deduction fit": (["-m", "deduction", "fit"], ["--out", "params.json"]),
}


def run_reader(reader: str, file: str, cwd, stdin: bytes = b"") -> subprocess.CompletedProcess:
    command, rest = READERS[reader]
    env = {**os.environ, "PYTHONPATH": ROOT}
    return subprocess.run(
        [sys.executable, *command, file, *rest], input=stdin, capture_output=True, cwd=cwd, env=env, timeout=120
    )


@pytest.mark.parametrize("fault", list(FAULTY_FILES))
@pytest.mark.parametrize("reader", list(READERS))
def test_a_file_the_readers_cannot_use_ends_them_with_one_line_naming_it(reader, fault, tmp_path):
    """A missing file, a directory, a line that is not UTF-8 or is nested deeper than the parser goes,
    and a record the rules refuse: each command that reads records says what is wrong in one line
    that names the file, and exits 1; none ends with a traceback."""
    content, problem = FAULTY_FILES[fault]
    path = tmp_path / "games.jsonl"
    if content == "directory":
        path.mkdir()
    elif content is not None:
        path.write_bytes(content() if callable(content) else content)
    done = run_reader(reader, str(path), tmp_path)
    out, err = done.stdout.decode(), done.stderr.decode()
    assert done.returncode == 1, (out, err)
    assert "Traceback" not in err
    if reader == "engine validate":
        if content is None or content == "directory":  # said on the standard error; the count follows
            assert err == f"python -m engine validate: {path}: {problem}\n"
            assert out == "0 of 0 records valid; 1 file not read\n"
        else:
            assert err == ""
            first, count = out.splitlines()
            assert first.startswith(f"{path}:1: ") and problem in first and count == "0 of 1 records valid"
    else:
        assert out == ""
        assert len(err.splitlines()) == 1 and str(path) in err and problem in err, err


def finished_record_line() -> bytes:
    import random

    from engine import export_record, new_game
    from engine.simulate import play_to_end

    rng = random.Random(4)
    state = play_to_end(new_game(5, rng), rng)[-1][1]
    return json.dumps(export_record(state, "g")).encode() + b"\n"


@pytest.mark.parametrize("reader", list(READERS))
def test_a_file_named_dash_is_standard_input(reader, tmp_path):
    """`-` reads the records from standard input, as other command-line tools do (it was taken for
    a file named "-" and ended with a traceback); messages name it <stdin>."""
    good = finished_record_line()
    done = run_reader(reader, "-", tmp_path, stdin=good)
    assert done.returncode == 0, done.stderr.decode()
    assert done.stderr == b""
    broken = run_reader(reader, "-", tmp_path, stdin=good + small_table_line())
    assert broken.returncode == 1 and b"Traceback" not in broken.stderr
    problem = "missions[0].plot[0].card: the deck of a 5-player game has no in_the_spotlight"
    if reader == "engine validate":
        assert done.stdout.decode() == "1 of 1 records valid\n"
        assert broken.stdout.decode().splitlines() == [f"<stdin>:2: {problem}", "1 of 2 records valid"]
    elif reader == "deduction explain":
        assert "seen by seat 0" in done.stdout.decode()  # one record: the second line is no part of it
        assert broken.stderr.decode().startswith("error: <stdin>: not JSON: Extra data")
    else:
        assert broken.stderr.decode() == f"<stdin>:2: {problem}\n"


@pytest.mark.parametrize("command", [["-m", "deduction", "batch"], ["-m", "engine", "validate", "-"]])
def test_a_command_started_without_standard_input_says_so(command):
    """Started with its standard input closed (`<&-`), a command that reads it says so in one line
    and exits 1: the batch protocol ended with an AttributeError's traceback."""
    done = subprocess.run(
        [sys.executable, *command],
        capture_output=True,
        stdin=None,
        preexec_fn=lambda: os.close(0),
        env={**os.environ, "PYTHONPATH": ROOT},
        timeout=120,
    )
    assert done.returncode == 1
    assert done.stderr.decode().splitlines()[-1].endswith("<stdin>: there is no standard input")
    assert b"Traceback" not in done.stderr
