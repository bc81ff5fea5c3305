"""Command line for the rules engine: play a seeded random game, or validate record files.

    python -m engine play --players 7 --seed 1 [--targeting] [--blind-spies] [--plot] [--record]
    python -m engine validate GAMES.jsonl [...]    (- reads the records from standard input)

This module and engine.cli (what the project's command lines share) are the engine's only I/O.
"""

from __future__ import annotations

import argparse
import json
import random
import sys

from engine import (
    CardDealt,
    CardsDrawn,
    CardTaken,
    CardWatched,
    ConfidenceEstablished,
    ConversationOverheard,
    Event,
    GameOver,
    MissionCompleted,
    NoConfidenceUsed,
    OpenedUp,
    OpenVotesShown,
    RecordError,
    SpotlightCardShown,
    SpotlightUsed,
    StrongLeaderUsed,
    TeamProposed,
    Variants,
    VotesRevealed,
    export_record,
    new_game,
    parse_record,
)
from engine.cli import Unreadable, numbered_lines, quiet_when_output_closes, shown_name
from engine.record import NotJSON, read_json
from engine.simulate import play_to_end


def _play(args: argparse.Namespace) -> int:
    rng = random.Random(args.seed)
    variants = Variants(targeting=args.targeting, blind_spies=args.blind_spies, plot_cards=args.plot)
    state = new_game(args.players, rng, variants)
    print(f"{args.players} players, {state.spy_count} spies; seat {state.leader} leads first.")
    if state.plot is not None:
        print(f"  seat {state.leader} draws {[card.value for card in state.plot.drawn]}")
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
            elif (line := _plot_line(event)) is not None:
                print(f"  {line}")
    if args.record:
        final_state = steps[-1][1]
        print(json.dumps(export_record(final_state, f"seed-{args.seed}")))
    return 0


def _plot_line(event: Event) -> str | None:
    """What the table saw of a Plot card, in one line."""
    if isinstance(event, CardsDrawn):
        return f"seat {event.leader} draws {[card.value for card in event.cards]}"
    if isinstance(event, CardDealt):
        return f"{event.card.value} goes to seat {event.to}" + (" (dealt at random)" if event.drawn else "")
    if isinstance(event, CardTaken):
        return f"seat {event.by} takes {event.card.value} from seat {event.holder}"
    if isinstance(event, ConversationOverheard):
        return f"seat {event.by} looks at the role of seat {event.target}"
    if isinstance(event, OpenedUp):
        return f"seat {event.by} shows their role to seat {event.to}"
    if isinstance(event, ConfidenceEstablished):
        return f"leader {event.by} shows their role to seat {event.to}"
    if isinstance(event, StrongLeaderUsed):
        return f"seat {event.seat} takes the lead with Strong Leader"
    if isinstance(event, OpenVotesShown):
        return "open votes: " + ", ".join(f"seat {s} {'approves' if v else 'rejects'}" for s, v in event.votes)
    if isinstance(event, NoConfidenceUsed):
        return f"seat {event.seat} uses No Confidence: the team is thrown out"
    if isinstance(event, SpotlightUsed):
        return f"seat {event.by} puts seat {event.target} in the spotlight"
    if isinstance(event, SpotlightCardShown):
        return f"seat {event.seat} plays {'Fail' if event.fail else 'Success'} face up"
    if isinstance(event, CardWatched):
        return f"seat {event.by} watches the card of seat {event.target}"
    return None


def _validate(args: argparse.Namespace) -> int:
    broken = total = unread = 0
    for path in args.files:
        name = shown_name(path)
        try:
            for number, line in numbered_lines(path):
                if not line.strip():
                    continue
                total += 1
                try:
                    parse_record(read_json(line))
                except json.JSONDecodeError as exc:
                    broken += 1
                    print(f"{name}:{number}: not JSON: {exc}")
                except (NotJSON, RecordError) as exc:
                    broken += 1
                    print(f"{name}:{number}: {exc}")
        except Unreadable as exc:
            # As other tools do: say so on the standard error and go on with the other files.
            unread += 1
            print(f"python -m engine validate: {exc}", file=sys.stderr)
    summary = f"{total - broken} of {total} records valid"
    if unread:
        summary += f"; {unread} {'file' if unread == 1 else 'files'} not read"
    print(summary)
    return 1 if broken or unread else 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m engine", description=__doc__.splitlines()[0])
    commands = parser.add_subparsers(dest="command", required=True)
    play = commands.add_parser("play", help="play a seeded random game and print what the table saw")
    play.add_argument("--players", type=int, default=7, choices=range(5, 11), metavar="5-10")
    play.add_argument("--seed", type=int, default=None)
    play.add_argument("--targeting", action="store_true")
    play.add_argument("--blind-spies", action="store_true")
    play.add_argument("--plot", action="store_true", help="play with the Plot cards of The Plot Thickens")
    play.add_argument("--record", action="store_true", help="also print the game's resistance-record/1 JSON")
    play.set_defaults(run=_play)
    validate = commands.add_parser(
        "validate",
        help="check resistance-record/1 JSON Lines files",
        description="Check resistance-record/1 JSON Lines files: one line for each broken record, naming its"
        " first offending field, then how many were valid. Exits 1 if any record is broken or any file"
        " cannot be read.",
    )
    validate.add_argument("files", nargs="+", metavar="FILE", help="a JSON Lines file; - for standard input")
    validate.set_defaults(run=_validate)
    args = parser.parse_args(argv)
    return quiet_when_output_closes(lambda: args.run(args))


if __name__ == "__main__":
    sys.exit(main())
