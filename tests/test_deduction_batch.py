"""The command line of the deduction engine, run as a real subprocess.

`python -m deduction batch` follows the protocol of shared/spec/game-record.md: one JSON
answer per request line, in order, flushed after each line, `{"error": ...}` for a broken
request, and the stream goes on. `explain`, `evaluate` and `fit` are checked for what they
print and write.
"""

from __future__ import annotations

import json
import math
import os
import queue
import random
import re
import subprocess
import sys
import threading
from itertools import combinations
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from deduction import batch
from deduction.analysis import deduce
from deduction.behaviour import BehaviourParams
from deduction.knowledge import Viewer
from engine import GameRecord, Variants, apply, export_record, new_game, parse_record, record_of, record_to_dict
from engine.simulate import play_to_end, random_action
from tests.records import impossible_record

ROOT = Path(__file__).resolve().parents[1]
TIMEOUT = 60


def env() -> dict[str, str]:
    e = dict(os.environ)
    e["PYTHONPATH"] = str(ROOT) + (os.pathsep + e["PYTHONPATH"] if e.get("PYTHONPATH") else "")
    e["PYTHONIOENCODING"] = "utf-8"
    return e


def run_cli(*args: str, stdin: str | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "deduction", *args],
        input=stdin,
        capture_output=True,
        text=True,
        encoding="utf-8",
        cwd=ROOT,
        env=env(),
        timeout=TIMEOUT,
    )


# ---------------------------------------------------------------- records


def played_game(seed: int, players: int, steps: int | None = None, **rates: float):
    """A random legal game (stopped after `steps` actions if given): its state."""
    rng = random.Random(seed)
    state = new_game(players, rng, Variants(targeting=bool(seed % 2)))
    done = 0
    while not state.is_over and (steps is None or done < steps):
        state, _ = apply(state, random_action(state, rng, **rates))
        done += 1
    return state


def game_with_fails(players: int, seed: int = 0):
    """A finished game whose record shows at least one Fail card."""
    while True:
        state = played_game(seed, players, spy_fail_rate=0.8)
        record = record_of(state, f"g{seed}")
        if any(m.fails for m in record.missions):
            return state
        seed += 1


def brute_uniform(record: GameRecord, viewer: int | None, known: list[int] | None = None) -> tuple[list[float], int]:
    played = [m for m in record.missions if m.fails is not None]
    consistent = [
        set(c)
        for c in combinations(range(record.players), record.spies)
        if all(len(set(c) & set(m.proposals[-1].team)) >= m.fails for m in played)
    ]
    allowed = consistent
    if viewer is not None:
        allowed = [s for s in consistent if (s == set(known) if known is not None else viewer not in s)]
    return [sum(seat in s for s in allowed) / len(allowed) for seat in range(record.players)], len(consistent)


def wrong_team_size_record() -> dict:
    data = impossible_record()
    data["missions"][0]["proposals"][0]["team"] = [0, 1, 2]
    data["missions"][0]["fails"] = 1
    return data


# ---------------------------------------------------------------- batch


def check_answer(answer: dict, record: GameRecord, viewer: int | None, known: list[int] | None = None) -> None:
    assert set(answer) == {"spy_probability", "consistent"}, answer
    p = answer["spy_probability"]
    assert isinstance(p, list) and len(p) == record.players
    assert all(isinstance(x, float | int) and not isinstance(x, bool) and 0.0 <= x <= 1.0 for x in p)
    assert isinstance(answer["consistent"], int) and not isinstance(answer["consistent"], bool)
    assert sum(p) == pytest.approx(record.spies, abs=1e-9)
    expected, consistent = brute_uniform(record, viewer, known)
    assert answer["consistent"] == consistent
    assert p == pytest.approx(expected, abs=1e-12)
    if viewer is not None:
        assert p[viewer] == 0.0 or known is not None
    if known is not None:
        assert p == [1.0 if s in known else 0.0 for s in range(record.players)]


def requests_and_checks() -> list[tuple[str, object]]:
    """Request lines, each with either the (record, viewer, known_spies) to check or "error"."""
    out: list[tuple[str, object]] = []
    for players, steps in ((5, None), (7, 120), (10, None), (8, 60)):
        state = game_with_fails(players) if steps is None else played_game(players, players, steps, spy_fail_rate=0.8)
        record = record_of(state, f"g{players}")
        public = record_to_dict(record.without_outcome())
        resistance = next(s for s in range(players) if s not in state.spies)
        spy = state.spies[-1]
        out += [
            (json.dumps({"record": public, "viewer": resistance}), (record, resistance, None)),
            (json.dumps({"record": public, "viewer": None}), (record, None, None)),
            (
                json.dumps({"record": public, "viewer": spy, "known_spies": list(state.spies)}),
                (record, spy, list(state.spies)),
            ),
        ]
    return out


BROKEN = {
    "not JSON": "this is not JSON {",
    "not an object": "[1, 2, 3]",
    "missing record": json.dumps({"viewer": 0}),
    "wrong team size": json.dumps({"record": wrong_team_size_record(), "viewer": 3}),
    "viewer out of range": json.dumps({"record": {**impossible_record(), "missions": []}, "viewer": 5}),
    "negative viewer": json.dumps({"record": {**impossible_record(), "missions": []}, "viewer": -1}),
    "known_spies without the viewer": json.dumps(
        {"record": {**impossible_record(), "missions": []}, "viewer": 0, "known_spies": [1, 2]}
    ),
    "impossible record": json.dumps({"record": impossible_record(), "viewer": 0}),
    "spies that cannot explain the fails": json.dumps(
        {"record": impossible_record(), "viewer": 2, "known_spies": [2, 3]}
    ),
}


def test_batch_answers_every_request_in_order() -> None:
    good = requests_and_checks()
    lines: list[tuple[str, object]] = []
    broken = list(BROKEN.items())
    for i, item in enumerate(good):
        lines.append(item)
        if i < len(broken):  # every broken line is followed by a good one
            lines.append((broken[i][1], ("error", broken[i][0])))
    assert len(good) > len(broken)
    done = run_cli("batch", "--model", "uniform", stdin="".join(line + "\n" for line, _ in lines))
    assert done.returncode == 0, done.stderr
    out = done.stdout.splitlines()
    assert len(out) == len(lines), done.stdout
    for text, (_, check) in zip(out, lines, strict=True):
        answer = json.loads(text)  # stdout holds nothing but JSON lines
        assert isinstance(answer, dict)
        if check[0] == "error":
            assert set(answer) == {"error"}, (check[1], answer)
            assert isinstance(answer["error"], str) and answer["error"].strip(), check[1]
        else:
            check_answer(answer, *check)


def test_batch_error_for_a_wrong_team_size_names_the_field() -> None:
    done = run_cli("batch", "--model", "uniform", stdin=BROKEN["wrong team size"] + "\n")
    assert done.returncode == 0
    (line,) = done.stdout.splitlines()
    error = json.loads(line)["error"]
    assert "missions[0].proposals[0].team" in error


def test_batch_default_model_sums_to_spies() -> None:
    state = game_with_fails(7, seed=3)
    record = record_of(state, "g")
    seat = next(s for s in range(7) if s not in state.spies)
    done = run_cli("batch", stdin=json.dumps({"record": record_to_dict(record), "viewer": seat}) + "\n")
    assert done.returncode == 0, done.stderr
    (line,) = done.stdout.splitlines()
    answer = json.loads(line)
    assert set(answer) == {"spy_probability", "consistent"}
    assert sum(answer["spy_probability"]) == pytest.approx(3, abs=1e-9)
    assert answer["spy_probability"][seat] == 0.0
    assert answer["spy_probability"] == pytest.approx(list(deduce(record, Viewer.resistance(seat)).spy_probability))


def start_batch(**text_mode) -> subprocess.Popen:
    """The batch command running, its three streams piped to the test."""
    return subprocess.Popen(
        [sys.executable, "-m", "deduction", "batch", "--model", "uniform"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        cwd=ROOT,
        env=env(),
        **text_mode,
    )


def test_batch_flushes_each_answer() -> None:
    proc = start_batch(text=True, encoding="utf-8")
    lines: queue.Queue[str] = queue.Queue()

    def reader() -> None:
        assert proc.stdout is not None
        for line in proc.stdout:
            lines.put(line)

    thread = threading.Thread(target=reader, daemon=True)
    thread.start()
    try:
        assert proc.stdin is not None
        requests = requests_and_checks()[:4]
        requests.insert(2, (BROKEN["impossible record"], None))
        for request, check in requests:
            proc.stdin.write(request + "\n")
            proc.stdin.flush()
            try:
                answer = json.loads(lines.get(timeout=TIMEOUT))
            except queue.Empty:
                pytest.fail("no answer line came back before the next request: the answer was not flushed")
            if check is None:
                assert set(answer) == {"error"}
            else:
                check_answer(answer, *check)
        proc.stdin.close()
        assert proc.wait(timeout=TIMEOUT) == 0
        thread.join(timeout=TIMEOUT)
        assert lines.empty()
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def test_batch_stops_quietly_when_nobody_reads_the_answers() -> None:
    """A reader that goes away ends the stream: the command stops without a traceback."""
    proc = start_batch()
    assert proc.stdin is not None and proc.stdout is not None and proc.stderr is not None
    request = empty_table_request() + b"\n"
    proc.stdin.write(request)
    proc.stdin.flush()
    assert json.loads(proc.stdout.readline())["consistent"] == 10
    proc.stdout.close()
    try:
        proc.stdin.write(request * 3)
        proc.stdin.close()
    except BrokenPipeError:
        pass  # it stopped already
    assert proc.wait(timeout=TIMEOUT) != 0
    assert proc.stderr.read() == b""


@pytest.mark.parametrize("command", ["batch", "explain", "evaluate"])
def test_unknown_model_exits_non_zero(command: str, tmp_path: Path) -> None:
    file = tmp_path / "record.json"
    file.write_text(json.dumps(impossible_record()), encoding="utf-8")
    args = [command] if command == "batch" else [command, str(file)]
    done = run_cli(*args, "--model", "nonsense", stdin="")
    assert done.returncode != 0
    assert done.stdout == ""
    assert "nonsense" in done.stderr


def run_batch_bytes(stdin: bytes) -> subprocess.CompletedProcess:
    """The batch command fed raw bytes, as another program's pipe may carry them."""
    return subprocess.run(
        [sys.executable, "-m", "deduction", "batch", "--model", "uniform"],
        input=stdin,
        capture_output=True,
        cwd=ROOT,
        env=env(),
        timeout=TIMEOUT,
    )


def empty_table_request(viewer: int = 0) -> bytes:
    return json.dumps({"record": {**impossible_record(), "missions": []}, "viewer": viewer}).encode()


def test_every_request_line_gets_exactly_one_answer_on_its_own_line() -> None:
    """Undecodable and too deeply nested lines are broken requests like any other: each gets its
    error on its line, so the n-th answer is always the n-th request's, and the stream goes on.
    So is a 5-player Plot record dealing a card of the large deck (it ended the stream with a
    KeyError). A blank line holds no request and gets no answer. Lines end at a line feed only: a
    carriage return inside a line is JSON whitespace."""
    from engine import Card
    from tests.test_engine_plot_rules import small_table_record

    good = empty_table_request()
    lines = [
        good,
        b"\xff\xfe not UTF-8",
        b"[" * 100_000 + b"]" * 100_000,
        b'{"record": {"x": ' + b"[" * 100_000 + b"]" * 100_000 + b"}}",
        json.dumps({"record": small_table_record(5, Card.OPEN_UP), "viewer": 0}).encode(),
        good.replace(b", ", b",\r "),
        good + b"\r",
    ]
    blank = [b"", b"   ", b"\t"]
    done = run_batch_bytes(b"\n".join(lines[:1] + blank + lines[1:]) + b"\n")
    assert done.returncode == 0 and done.stderr == b"", done.stderr.decode(errors="replace")[-2000:]
    answers = [json.loads(line) for line in done.stdout.decode("ascii").split("\n")[:-1]]
    assert len(answers) == len(lines), answers
    expected = {"spy_probability": [0.0, 0.5, 0.5, 0.5, 0.5], "consistent": 10}
    assert [a if "error" not in a else "error" for a in answers] == [expected] + ["error"] * 4 + [expected] * 2
    assert all(set(a) == {"error"} and a["error"].strip() for a in answers[1:5])
    assert answers[4]["error"] == "record.missions[0].plot[0].card: the deck of a 5-player game has no open_up"


RECORD_TEXT = json.dumps(impossible_record())


@pytest.mark.parametrize(
    ("line", "name"),
    [
        ('{"record": ' + RECORD_TEXT + ', "viewer": 0, "viewer": 3}', "viewer"),
        ('{"record": ' + RECORD_TEXT.replace('"fails": 2', '"fails": 2, "fails": 0') + ', "viewer": 3}', "fails"),
    ],
)
def test_a_field_given_twice_is_refused_not_guessed(line: str, name: str) -> None:
    """JSON leaves a repeated name's meaning open; taking either value would be a guess."""
    assert batch.answer(line, "uniform") == {"error": f'not readable: "{name}" given twice in one object'}


@pytest.mark.parametrize("key", ["03", "\u0663", "\u00b2", "+1", " 1", "1.0", "5", "-1"])
def test_a_seat_named_in_known_is_a_plain_seat_number(key: str) -> None:
    """`known` names each seat as its number written plainly ("3"): another spelling of a number
    (a leading zero, other digits) is refused like a seat that is not at the table."""
    request = {"record": {**impossible_record(), "missions": []}, "viewer": 0, "known": {key: "spy"}}
    assert batch.answer(json.dumps(request), "uniform") == {"error": f"known: {key!r} is not a seat from 0 to 4"}


@pytest.mark.parametrize("record", [None, 5, "resistance-record/1", [impossible_record()]])
def test_a_record_that_is_not_an_object_is_named_once(record: object) -> None:
    """Fields inside the record are named from the request ("record.missions[0]..."); the
    record itself is just "record"."""
    request = json.dumps({"record": record, "viewer": 0})
    assert batch.answer(request, "uniform") == {"error": "record: must be a JSON object"}


@pytest.mark.parametrize(
    ("extra", "error"),
    [
        ({"knownSpies": [1, 2]}, "knownSpies: unknown field"),
        ({"known_spy": [1, 2]}, "known_spy: unknown field"),
        ({"seen": []}, "seen: unknown field"),
        ({"known_spies": None}, "known_spies: must be a list of seat numbers"),
    ],
)
def test_a_request_field_the_protocol_does_not_have_is_refused(extra: dict, error: str) -> None:
    """A misspelt `known_spies` must not quietly turn a spy's question into a Resistance member's."""
    request = {"record": {**impossible_record(), "missions": []}, "viewer": 1, **extra}
    assert batch.answer(json.dumps(request), "uniform") == {"error": error}


@pytest.mark.parametrize(
    ("known_spies", "error"),
    [
        ([1, 4], "known_spies: must list all 3 spies"),
        ([1, 4, 6, 0], "known_spies: must list all 3 spies"),
        ([1, 4, 4], "known_spies: must list distinct seats from 0 to 6"),
        ([1, 4, 7], "known_spies: must list distinct seats from 0 to 6"),
        ([1, 4, -1], "known_spies: must list distinct seats from 0 to 6"),
        ([1, 4, True], "known_spies: must be a list of seat numbers"),
        ([1, 4, 6.0], "known_spies: must be a list of seat numbers"),
        ([4, 5, 6], "known_spies: must include the viewer, who is a spy"),
    ],
)
def test_a_spy_viewers_list_of_spies_is_checked(known_spies: list, error: str) -> None:
    from tests.test_record_format import spec_example

    request = {"record": spec_example(), "viewer": 1, "known_spies": known_spies}
    assert batch.answer(json.dumps(request), "uniform") == {"error": error}


def test_a_spy_under_blind_spies_knows_no_other_spy() -> None:
    """Under Blind Spies nobody at the table knows every spy: an exact answer from `known_spies`
    would rest on what the viewer cannot know."""
    from tests.test_record_format import spec_example

    record = spec_example() | {"variants": {"targeting": False, "blind_spies": True, "plot_cards": False}}
    request = {"record": record, "viewer": 1, "known_spies": [1, 4, 6]}
    assert batch.answer(json.dumps(request), "uniform") == {
        "error": "known_spies: under Blind Spies a spy does not know the other spies"
    }
    seen_by_the_table = batch.answer(json.dumps({"record": record, "viewer": None}), "uniform")
    assert set(seen_by_the_table) == {"spy_probability", "consistent"}


@pytest.mark.parametrize(
    "seen",
    [
        {"known": {"4": "spy"}},
        {"seen_cards": [{"mission": 1, "seat": 4, "fail": True}]},
    ],
)
def test_only_a_game_with_plot_cards_shows_roles_or_cards(seen: dict) -> None:
    """Without Plot cards nobody at the table is shown a role or a card: such knowledge in a
    request cannot be the viewer's, and is refused rather than folded in."""
    from tests.test_record_format import spec_example

    for variants in ({}, {"variants": {"targeting": False, "blind_spies": False, "plot_cards": False}}):
        request = {"record": spec_example() | variants, "viewer": 0, **seen}
        assert batch.answer(json.dumps(request), "uniform") == {
            "error": "known, seen_cards: only a game with Plot cards shows a player a role or a card"
        }
        nothing_seen = {"record": spec_example() | variants, "viewer": 0, "known": {}, "seen_cards": []}
        assert "error" not in batch.answer(json.dumps(nothing_seen), "uniform")


@pytest.mark.parametrize("constant", ["NaN", "Infinity", "-Infinity"])
def test_numbers_json_does_not_have_are_not_read(constant: str) -> None:
    """Python's reader takes NaN and Infinity, JSON has neither: a line holding one is not JSON,
    even where the record allows any value (its `source`)."""
    record = json.dumps(impossible_record() | {"source": {"site": "x"}}).replace('"x"', constant)
    line = '{"record": ' + record + ', "viewer": 0}'
    assert batch.answer(line, "uniform") == {"error": f"not JSON: {constant} is not a JSON number"}


# ---------------------------------------------------------------- explain

TABLE_ROW = re.compile(r"^\s+seat\s+(\d+)\s+\S+\s+([\d.]+)%\s*$")


def table(stdout: str) -> dict[int, float]:
    rows = {}
    for line in stdout.splitlines():
        match = TABLE_ROW.match(line)
        if match:
            seat = int(match.group(1))
            assert seat not in rows, f"seat {seat} twice in the table"
            rows[seat] = float(match.group(2)) / 100
    return rows


@pytest.mark.parametrize("model", [None, "uniform", "behaviour"])
def test_explain_names_every_other_seat(model: str | None, tmp_path: Path) -> None:
    state = game_with_fails(8, seed=11)
    record = record_of(state, "g")
    file = tmp_path / "record.json"
    file.write_text(json.dumps(export_record(state, "g")), encoding="utf-8")
    viewer = next(s for s in range(8) if s not in state.spies)
    extra = [] if model is None else ["--model", model]
    done = run_cli("explain", str(file), "--viewer", str(viewer), *extra)
    assert done.returncode == 0, done.stderr
    rows = table(done.stdout)
    assert set(rows) == set(range(8)) - {viewer}, done.stdout
    expected = deduce(record.without_outcome(), Viewer.resistance(viewer), model or "behaviour").spy_probability
    for seat, shown in rows.items():
        assert shown == pytest.approx(expected[seat], abs=0.0006)


def test_explain_outsider_names_every_seat(tmp_path: Path) -> None:
    state = game_with_fails(6, seed=5)
    file = tmp_path / "record.json"
    file.write_text(json.dumps(export_record(state, "g")), encoding="utf-8")
    done = run_cli("explain", str(file), "--model", "uniform")
    assert done.returncode == 0, done.stderr
    assert set(table(done.stdout)) == set(range(6))


def test_explain_impossible_record_is_an_error_not_a_crash(tmp_path: Path) -> None:
    file = tmp_path / "record.json"
    file.write_text(json.dumps(impossible_record()), encoding="utf-8")
    done = run_cli("explain", str(file), "--viewer", "0")
    assert done.returncode != 0
    assert "Traceback" not in done.stderr and done.stderr.strip()


# ---------------------------------------------------------------- evaluate and fit


def finished_games(count: int, seed: int, **rates: float) -> list:
    """`count` finished random games (5-10 players, both variants) with at least one played mission."""
    rng = random.Random(seed)
    states = []
    while len(states) < count:
        players = rng.randint(5, 10)
        state = new_game(players, rng, Variants(targeting=rng.random() < 0.5))
        state = play_to_end(state, rng, **rates)[-1][1]
        if state.played_rounds:
            states.append(state)
    return states


def expected_uniform_scores(records: list[GameRecord]) -> tuple[int, float, float]:
    """Predictions, Brier and log loss of the uniform model, as a Resistance viewer after every played mission."""
    squared, losses = [], []
    for record in records:
        spies = set(record.outcome.spies)
        played = [i for i, m in enumerate(record.missions) if m.fails is not None]
        for cut in played:
            snapshot = GameRecord(record.id, record.players, record.spies, record.missions[: cut + 1])
            for viewer in set(range(record.players)) - spies:
                probability, _ = brute_uniform(snapshot, viewer)
                for seat in range(record.players):
                    if seat != viewer:
                        truth = float(seat in spies)
                        p = probability[seat]
                        squared.append((p - truth) ** 2)
                        q = min(max(p, 1e-6), 1 - 1e-6)
                        losses.append(-(truth * math.log(q) + (1 - truth) * math.log(1 - q)))
    return len(squared), sum(squared) / len(squared), sum(losses) / len(losses)


def test_evaluate_uniform(tmp_path: Path) -> None:
    states = finished_games(6, seed=7, spy_fail_rate=0.7)
    sources = [None, {"roles": "resistance"}, None, {"site": "test"}, {"site": "test", "roles": "resistance"}]
    lines = [
        export_record(state, f"g{i}", source) for i, (state, source) in enumerate(zip(states[:5], sources, strict=True))
    ]
    # A sixth game played with Avalon roles: not scored by default.
    lines.append(export_record(states[5], "avalon", {"roles": "avalon"}))
    file = tmp_path / "games.jsonl"
    file.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    plain = [parse_record(line) for line in lines[:5]]
    predictions, brier, log_loss = expected_uniform_scores(plain)

    done = run_cli("evaluate", str(file), "--model", "uniform")
    assert done.returncode == 0, done.stderr
    assert "Brier" in done.stdout and "log loss" in done.stdout
    # predictions, Brier, log loss, ECE, the ECE a perfectly calibrated model shows on them, and how
    # often that model meets the goal
    row = re.search(
        r"^\s*all\s+(\d+)\s+([\d.]+)\s+([\d.]+)\s+([\d.]+)\s+([\d.]+)\s+([\d.]+)%\s*$", done.stdout, re.MULTILINE
    )
    assert row, done.stdout
    assert float(row.group(5)) > 0 and 0 <= float(row.group(6)) <= 100
    assert "a perfectly calibrated model shows an ECE of at most 0.01 after every mission" in done.stdout
    assert int(row.group(1)) == predictions
    assert float(row.group(2)) == pytest.approx(brier, abs=1e-4)
    assert float(row.group(3)) == pytest.approx(log_loss, abs=1e-3)

    done = run_cli("evaluate", str(file), "--model", "uniform", "--json")
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert report["games"] == 5
    assert report["all"]["predictions"] == predictions
    assert 0.0 < report["all"]["brier"] < 1.0
    assert report["all"]["brier"] == pytest.approx(brier, abs=1e-4)
    assert report["all"]["log_loss"] == pytest.approx(log_loss, abs=1e-3)
    goal = report["goal"]
    assert goal["ece"] == 0.01 and goal["player_counts"] == []  # five games: too few for a count's own goal
    assert 0 <= goal["calibrated_meets_everywhere"] <= goal["calibrated_meets_every_checkpoint"] <= 1


def test_evaluate_refuses_a_parameter_file_it_cannot_use_in_one_line(tmp_path: Path) -> None:
    """A parameter file of an older vote model, or one that is not JSON, ends `evaluate` with one line
    naming the file and why, not a traceback."""
    file = tmp_path / "games.jsonl"
    file.write_text(json.dumps(export_record(finished_games(1, seed=3)[0], "g0")) + "\n", encoding="utf-8")
    params = json.loads((ROOT / "deduction" / "params" / "behaviour.json").read_text(encoding="utf-8"))
    params["vote_features"] = params["vote_features"][:-1]
    older = tmp_path / "older.json"
    older.write_text(json.dumps(params), encoding="utf-8")
    broken = tmp_path / "broken.json"
    broken.write_text("{", encoding="utf-8")
    for path, why in ((older, "other vote features"), (broken, "Expecting property name")):
        done = run_cli("evaluate", str(file), "--params", str(path))
        assert done.returncode == 1 and "Traceback" not in done.stderr
        assert done.stderr.strip().startswith(f"--params {path}:") and why in done.stderr
        assert len(done.stderr.strip().splitlines()) == 1


def sabotage_cells(states: list) -> set[int]:
    """Missions (fails_required 1) played by a team holding exactly one spy."""
    missions = set()
    for state in states:
        for m in state.played_rounds:
            if m.fails_required == 1 and len(set(m.proposals[-1].team) & set(state.spies)) == 1:
                missions.add(m.mission)
    return missions


@pytest.mark.parametrize("fail_rate", [1.0, 0.0])
def test_fit_writes_parameters_that_reflect_the_data(fail_rate: float, tmp_path: Path) -> None:
    states = finished_games(30, seed=21, spy_fail_rate=fail_rate)
    file = tmp_path / "games.jsonl"
    file.write_text(
        "".join(json.dumps(export_record(state, f"g{i}")) + "\n" for i, state in enumerate(states)), encoding="utf-8"
    )
    out = tmp_path / "params.json"
    done = run_cli("fit", str(file), "--out", str(out))
    assert done.returncode == 0, done.stderr
    assert out.exists()
    params = BehaviourParams.load(out)
    assert params.sabotage_log_prob.shape == (6, 3, 5, 5)
    observed = sabotage_cells(states)
    assert observed, "the generated games should hold a team with exactly one spy"
    for mission in observed:
        p_fail = float(np.exp(params.sabotage_log_prob[mission, 1, 1, 1]))
        p_pass = float(np.exp(params.sabotage_log_prob[mission, 1, 1, 0]))
        assert p_fail + p_pass == pytest.approx(1.0, abs=1e-4)
        if fail_rate == 1.0:
            assert p_fail > 0.5, (mission, p_fail)
        else:
            assert p_fail < 0.5, (mission, p_fail)
    # A team with one spy cannot show two Fail cards.
    assert np.all(np.exp(params.sabotage_log_prob[1:, 1, 1, 2:]) < 1e-6)


def test_batch_reads_targeting_proposals_and_automatic_turns():
    """A record with per-proposal missions, variants, seat_players and every kind of automatic
    turn is answered, and what the deadlines filled in does not move the answer."""
    from tests.test_record_format import targeting_record

    data = targeting_record()
    answer = batch.answer(json.dumps({"record": data, "viewer": 0}), "behaviour")
    assert "error" not in answer and answer["spy_probability"][0] == 0
    assert abs(sum(answer["spy_probability"]) - 2) < 1e-9
    flipped = json.loads(json.dumps(data))
    flipped["missions"][0]["proposals"][1]["votes"][3:] = [True, True]  # seats 3 and 4 were filled in
    assert batch.answer(json.dumps({"record": flipped, "viewer": 0}), "behaviour") == answer


def earlier_game() -> dict:
    """A finished record of the same five players as `targeting_record`, roles revealed."""
    from tests.test_record_format import five_rejections, targeting_record

    return five_rejections() | {"id": "earlier", "seat_players": targeting_record()["seat_players"]}


def test_batch_accepts_a_history_and_ignores_it():
    """`history` (earlier finished records of the same players) may come with a request; this
    model reads no habits from it, so the answer is the one without it."""
    from tests.test_record_format import targeting_record

    data = targeting_record()
    plain = batch.answer(json.dumps({"record": data, "viewer": 0}), "behaviour")
    earlier = earlier_game()
    with_history = batch.answer(json.dumps({"record": data, "viewer": 0, "history": [earlier, earlier]}), "behaviour")
    assert "error" not in with_history
    assert with_history == plain


@pytest.mark.parametrize("history", [None, "earlier", {"0": "earlier"}])
def test_a_history_that_is_not_a_list_is_refused(history: object) -> None:
    from tests.test_record_format import targeting_record

    request = {"record": targeting_record(), "viewer": 0, "history": history}
    assert batch.answer(json.dumps(request), "uniform") == {"error": "history: must be a list of records"}


def test_what_a_history_holds_is_not_read() -> None:
    """This model learns nothing from earlier games, so their records are not even parsed: one
    this reader would refuse changes nothing either."""
    from tests.test_record_format import targeting_record

    data = targeting_record()
    plain = batch.answer(json.dumps({"record": data, "viewer": 0}), "behaviour")
    odd = [1, {**earlier_game(), "players": 8}, {"id": "unfinished"}]
    assert batch.answer(json.dumps({"record": data, "viewer": 0, "history": odd}), "behaviour") == plain


@pytest.mark.parametrize(
    ("line", "problem"),
    [
        ('{"format": "resistance-record/1", "id": "a", "id": "b"}', '"id" given twice'),
        ('{"format": "resistance-record/1", "id": "a", "source": {"weight": NaN}}', "NaN is not a JSON number"),
    ],
)
def test_evaluate_and_fit_read_their_records_as_strictly_as_a_request(tmp_path: Path, line: str, problem: str) -> None:
    """A record line with a name given twice (which value counts is not guessed) or NaN (not JSON)
    stops `python -m deduction evaluate` and `fit` at that line, as it gets a batch request an error."""
    from deduction.__main__ import read_games

    games = tmp_path / "games.jsonl"
    games.write_text(json.dumps(record_to_dict(parse_record(impossible_record()))) + "\n" + line + "\n")
    with pytest.raises(SystemExit) as stopped:
        read_games(str(games))
    assert str(stopped.value).startswith(f"{games}:2: ") and problem in str(stopped.value)


@settings(max_examples=60, deadline=None)
@given(
    st.integers(5, 10),
    st.booleans(),
    st.booleans(),
    st.booleans(),
    st.sampled_from([0.0, 0.15]),
    st.integers(0, 2**32),
    st.integers(1, 300),
)
def test_every_exported_record_round_trips_and_gets_an_answer_for_every_viewer(
    players, targeting, blind_spies, plot_cards, deadline_rate, seed, steps
):
    """The engine's export and the batch protocol agree, all variants and deadlines, mid-game or over:
    the record parses and writes back the same; every Resistance member and an outsider get an answer
    whose probabilities sum to the spies, the same `consistent`, and the same with or without the
    outcome and a seat's private results."""
    rng = random.Random(seed)
    variants = Variants(targeting=targeting, blind_spies=blind_spies, plot_cards=plot_cards)
    state = new_game(players, rng, variants)
    for _ in range(steps):
        if state.is_over:
            break
        state, _ = apply(state, random_action(state, rng, deadline_rate=deadline_rate))
    full = json.loads(json.dumps(export_record(state, "g", private_for=0 if plot_cards else None)))
    assert record_to_dict(parse_record(full)) == full
    public = {key: value for key, value in full.items() if key not in ("outcome", "private")}
    consistent = set()
    for viewer in [None, *(s for s in range(players) if s not in state.spies)]:
        answered = batch.answer(json.dumps({"record": public, "viewer": viewer}), "behaviour")
        assert "error" not in answered, answered
        assert batch.answer(json.dumps({"record": full, "viewer": viewer}), "behaviour") == answered
        probabilities = answered["spy_probability"]
        assert abs(sum(probabilities) - state.spy_count) < 1e-9
        assert viewer is None or probabilities[viewer] == 0.0
        consistent.add(answered["consistent"])
    assert len(consistent) == 1


def test_evaluate_scores_one_part_of_the_fixed_split(tmp_path: Path) -> None:
    """`--holdout validation` scores the validation games alone, with a model fitted on the training
    part: a file of training games only has nothing to score, and folds and a holdout do not mix."""
    from deduction.evaluate import split_of

    states = finished_games(30, seed=12, spy_fail_rate=0.7)
    lines = [export_record(state, f"h{i}") for i, state in enumerate(states)]
    held = [line for line in lines if split_of(line["id"]) == "validation"]
    assert held, "the seed gives no validation game"
    file = tmp_path / "games.jsonl"
    file.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    done = run_cli("evaluate", str(file), "--holdout", "validation", "--json")
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert report["games"] == len(held) and report["holdout"] == "validation"
    assert report["all"]["predictions"] == len(predictions_of(held))

    training_only = tmp_path / "training.jsonl"
    training_only.write_text(
        "".join(json.dumps(line) + "\n" for line in lines if split_of(line["id"]) == "train"), encoding="utf-8"
    )
    done = run_cli("evaluate", str(training_only), "--holdout", "validation")
    assert done.returncode != 0 and "no finished games to score" in done.stderr
    done = run_cli("evaluate", str(file), "--holdout", "test", "--folds", "5")
    assert done.returncode != 0 and "not both" in done.stderr


def predictions_of(lines: list[dict]) -> list[tuple[int, int, int]]:
    """(game, checkpoint, seat) for every prediction `evaluate` makes on these records."""
    rows = []
    for g, line in enumerate(lines):
        record = parse_record(line)
        spies = set(record.outcome.spies)
        for cut in range(1, len(record.played_missions) + 1):
            for viewer in set(range(record.players)) - spies:
                rows += [(g, cut, seat) for seat in range(record.players) if seat != viewer]
    return rows
