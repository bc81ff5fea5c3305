"""How long one hint takes, and how fast the batch protocol answers a whole data set.

    .venv/bin/python benchmarks/deduction_speed.py [--games ../shared/data/human-games/train.jsonl]

One hint: 10 players, 4 spies and a full record (5 missions, 25 proposals), seen by a
Resistance seat, with the behaviour model and its reasons. Prints the median and the
99th percentile over repeated runs, for each of `--rounds` rounds, with how busy the machine
was meanwhile (its load average, and the share of CPU time it spent idle and stolen by the
host, from /proc/stat): on a shared virtual machine the same code's median moves by a third
from one minute to the next, so one round alone is not a result.

The process keeps its freed heap memory for reuse as the bot does (`deduction.heap`);
`--default-allocator` measures with glibc's defaults instead. Batch: every game of the file as one request
(Resistance viewer seat 0 unless seat 0 was a spy, outcome included and ignored),
through `python -m deduction batch` in a subprocess.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

from deduction.analysis import deduce
from deduction.heap import keep_freed_heap
from deduction.knowledge import Viewer
from deduction.reasons import explain
from engine import CastVote, GameRecord, PlayCard, ProposeTeam, apply, new_game, record_of, rules

ROOT = Path(__file__).resolve().parents[1]
# What a hint should cost on an idle machine (milliseconds).
GOAL_MEDIAN_MS, GOAL_P99_MS = 0.5, 1.0


def full_ten_player_record() -> GameRecord:
    """Every mission goes to its fifth proposal; results alternate so all five missions are played."""
    spies = (1, 4, 6, 9)
    state = new_game(10, spies=spies, first_leader=0)
    for mission, should_fail in enumerate((False, True, False, True, False), 1):
        for proposal in range(1, 6):
            size = rules.team_size(10, mission)
            team = tuple(sorted((state.leader + i) % 10 for i in range(size)))
            state, _ = apply(state, ProposeTeam(state.leader, team))
            for seat in range(10):
                state, _ = apply(state, CastVote(seat, proposal == 5 or seat % 4 == 0))
        fails_left = state.current_round.fails_required if should_fail else 0
        for seat in state.current_round.team:
            fail = fails_left > 0 and seat in spies
            fails_left -= fail
            state, _ = apply(state, PlayCard(seat, fail))
    record = record_of(state, "benchmark")
    assert len(record.missions) == 5 and sum(len(m.proposals) for m in record.missions) == 25
    return record


def time_one_hint(runs: int) -> list[float]:
    # The record as the bot hands it over (`tgbot.hints`): made once per hint, its outcome left out.
    record = full_ten_player_record().without_outcome()
    viewer = Viewer.resistance(0)
    deduce(record, viewer)  # warm the caches of assignments and parameters
    timings = []
    for _ in range(runs):
        started = time.perf_counter()
        explain(record, deduce(record, viewer))
        timings.append(time.perf_counter() - started)
    return timings


def time_batch(games: Path) -> tuple[int, float]:
    requests = []
    for line in games.read_text(encoding="utf-8").splitlines():
        record = json.loads(line)
        spies = set(record.get("outcome", {}).get("spies", []))
        viewer = next(seat for seat in range(record["players"]) if seat not in spies)
        requests.append(json.dumps({"record": record, "viewer": viewer}))
    started = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-m", "deduction", "batch"],
        input="\n".join(requests) + "\n",
        capture_output=True,
        text=True,
        cwd=ROOT,
        check=True,
    )
    elapsed = time.perf_counter() - started
    answers = done.stdout.splitlines()
    errors = sum(1 for a in answers if "error" in json.loads(a))
    if len(answers) != len(requests) or errors:
        raise SystemExit(f"batch answered {len(answers)} of {len(requests)} requests, {errors} errors")
    return len(requests), elapsed


def cpu_times() -> list[int] | None:
    """The whole machine's CPU time so far, by kind (user, nice, system, idle, iowait, irq,
    softirq, steal), or None where /proc/stat does not exist."""
    try:
        with open("/proc/stat", encoding="ascii") as stat:
            return [int(field) for field in stat.readline().split()[1:9]]
    except OSError:
        return None


def busy_note(before: list[int] | None, after: list[int] | None) -> str:
    load = ", ".join(f"{x:.2f}" for x in os.getloadavg())
    if before is None or after is None:
        return f"load average {load}"
    spent = [b - a for a, b in zip(before, after, strict=True)]
    total = sum(spent) or 1
    return f"load average {load}; all CPUs idle {spent[3] / total:.0%}, stolen {spent[7] / total:.0%}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=2000, help="hints per round")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument(
        "--default-allocator", action="store_true", help="leave glibc's heap trimming as it is, unlike the bot"
    )
    parser.add_argument("--games", type=Path, default=ROOT.parent / "shared" / "data" / "human-games" / "train.jsonl")
    args = parser.parse_args()
    kept = not args.default_allocator and keep_freed_heap()
    print("freed heap memory " + ("kept for reuse, as the bot does" if kept else "given back as glibc's defaults do"))

    for round_number in range(1, args.rounds + 1):
        before = cpu_times()
        timings = sorted(time_one_hint(args.runs))
        p99 = timings[min(len(timings) - 1, int(0.99 * len(timings)))]
        median = statistics.median(timings)
        met = median * 1e3 <= GOAL_MEDIAN_MS and p99 * 1e3 <= GOAL_P99_MS
        print(
            f"round {round_number}: one hint, 10 players, full record: median {median * 1e3:.3f} ms, "
            f"p99 {p99 * 1e3:.3f} ms over {len(timings)} runs ({busy_note(before, cpu_times())}); "
            f"goal {GOAL_MEDIAN_MS} / {GOAL_P99_MS} ms {'met' if met else 'not met'}"
        )
    if args.games.exists():
        count, elapsed = time_batch(args.games)
        print(
            f"batch over {args.games.name}: {count} requests in {elapsed:.1f} s "
            f"({count / elapsed:.0f} per second, {elapsed / count * 1e3:.2f} ms each, start-up included)"
        )
    else:
        print(f"batch: {args.games} not found, skipped")


if __name__ == "__main__":
    main()
