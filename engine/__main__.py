"""Command line for the rules engine: play a seeded random game, or validate record files.

    python -m engine play --players 7 --seed 1 [--targeting] [--blind-spies]
    python -m engine validate GAMES.jsonl [...]

This is the engine's only module that does I/O.
"""

from __future__ import annotations

import argparse
import json
import random
import sys

from engine import (
    GameOver,
    MissionCompleted,
    RecordError,
    TeamProposed,
    Variants,
    VotesRevealed,
    export_record,
    new_game,
    parse_record,
)
from engine.simulate import play_to_end


def _play(args: argparse.Namespace) -> int:
    rng = random.Random(args.seed)
    state = new_game(args.players, rng, Variants(targeting=args.targeting, blind_spies=args.blind_spies))
    print(f"{args.players} players, {state.spy_count} spies; seat {state.leader} leads first.")
    steps = play_to_end(state, rng)
    for _, _, events in steps:
        for event in events:
            if isinstance(event, TeamProposed):
                print(
                    f"Mission {event.mission}, proposal {event.proposal_number}: seat {event.leader} "
                    f"proposes {list(event.team)}"
                )
            elif isinstance(event, VotesRevealed):
                approvals = [seat for seat, v in enumerate(event.votes) if v]
                verdict = "approved" if event.approved else f"rejected ({event.rejections} this round)"
                print(f"  approve: {approvals} -> {verdict}")
            elif isinstance(event, MissionCompleted):
                print(
                    f"  mission {event.mission}: {event.fails} Fail card(s) -> "
                    f"{'success' if event.succeeded else 'failure'}"
                )
            elif isinstance(event, GameOver):
                print(f"{event.winner.value} win ({event.reason.value}); spies were {list(event.spies)}")
    if args.record:
        final_state = steps[-1][1]
        print(json.dumps(export_record(final_state, f"seed-{args.seed}")))
    return 0


def _validate(args: argparse.Namespace) -> int:
    broken = 0
    total = 0
    for path in args.files:
        with open(path, encoding="utf-8") as lines:
            for number, line in enumerate(lines, 1):
                if not line.strip():
                    continue
                total += 1
                try:
                    parse_record(json.loads(line))
                except json.JSONDecodeError as exc:
                    broken += 1
                    print(f"{path}:{number}: not JSON: {exc}")
                except RecordError as exc:
                    broken += 1
                    print(f"{path}:{number}: {exc}")
    print(f"{total - broken} of {total} records valid")
    return 1 if broken else 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m engine", description=__doc__.splitlines()[0])
    commands = parser.add_subparsers(dest="command", required=True)
    play = commands.add_parser("play", help="play a seeded random game and print what the table saw")
    play.add_argument("--players", type=int, default=7, choices=range(5, 11), metavar="5-10")
    play.add_argument("--seed", type=int, default=None)
    play.add_argument("--targeting", action="store_true")
    play.add_argument("--blind-spies", action="store_true")
    play.add_argument("--record", action="store_true", help="also print the game's resistance-record/1 JSON")
    play.set_defaults(run=_play)
    validate = commands.add_parser("validate", help="check resistance-record/1 JSON Lines files")
    validate.add_argument("files", nargs="+")
    validate.set_defaults(run=_validate)
    args = parser.parse_args(argv)
    return args.run(args)


if __name__ == "__main__":
    sys.exit(main())
