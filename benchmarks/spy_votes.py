"""How readable the computer spies' votes are: how each role votes on teams it is not on, by
whether the team holds a spy, over games among computer players (and, with `--mixed`, beside
other policies), and how often a spy's vote differs from its cover (what a Resistance member in
its seat would vote).

    .venv/bin/python benchmarks/spy_votes.py [--games 300] [--players 5] [--seed votes] [--mixed easy|random]

A vote on a proposal before the fifth (the fifth is approved by everyone who does not want the
game to end) by a seat not on the team is a tell when spies and Resistance members cast it
differently on the same kind of team: a spy that rejects every spy-free team it is not on, where a
Resistance member approves some, is read by anyone who counts.
"""

from __future__ import annotations

import argparse
import random
import time
from collections import Counter

from agents import resistance
from agents.beliefs import Deductions, cover_belief
from agents.difficulty import EASY, NORMAL
from agents.mixed import at_random, computer
from agents.view import view_of
from engine import CastVote, Phase, apply, new_game, rules, waiting_for


def tally(games: int, players: int, seed: str, mixed: str | None) -> tuple[Counter, Counter]:
    """(votes, deviations): votes counted by (role, team holds a spy, approved), off the team and
    before the fifth proposal, of the normal computer players only; deviations counted by (team holds
    a spy, the spy's vote, its cover's vote) for every such spy vote."""
    deductions = Deductions()
    agent = computer(NORMAL, deductions)
    rest = None if mixed is None else computer(EASY, deductions) if mixed == "easy" else at_random
    votes: Counter = Counter()
    deviations: Counter = Counter()
    for deal in range(games):
        rng = random.Random(f"{seed}:{deal}")
        deductions.clear()
        state = new_game(players, rng, None)
        agent_seat = deal % players
        while not state.is_over:
            seat = waiting_for(state)[0]
            view = view_of(state, seat)
            policy = agent if rest is None or seat == agent_seat else rest
            action = policy(view, rng)
            public = view.public
            if (
                isinstance(action, CastVote)
                and policy is agent
                and public.phase is Phase.VOTING
                and seat not in public.team
                and public.proposal_number < rules.MAX_PROPOSALS_PER_MISSION
            ):
                holds_spy = any(s in state.spies for s in public.team)
                role = "spy" if view.is_spy else "resistance"
                votes[(role, holds_spy, action.approve)] += 1
                if view.is_spy:
                    covered = resistance.approves(view, cover_belief(view, deductions))
                    deviations[(holds_spy, action.approve, covered)] += 1
            state, _ = apply(state, action)
    return votes, deviations


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--games", type=int, default=300)
    parser.add_argument("--players", type=int, default=5)
    parser.add_argument("--seed", default="votes")
    parser.add_argument("--mixed", choices=("easy", "random"), default=None)
    args = parser.parse_args()
    started = time.perf_counter()
    votes, deviations = tally(args.games, args.players, args.seed, args.mixed)
    print(f"{args.games} games at {args.players} players, seed {args.seed!r}, others {args.mixed or 'computer'}")
    print("votes off the team, proposals 1-4: approved (of votes)")
    for holds_spy in (False, True):
        kind = "teams holding a spy" if holds_spy else "spy-free teams"
        cells = []
        for role in ("resistance", "spy"):
            approved, rejected = votes[(role, holds_spy, True)], votes[(role, holds_spy, False)]
            total = approved + rejected
            cells.append(f"{role} {approved / total:.1%} ({total})" if total else f"{role} -")
        print(f"  {kind:>20}: " + ", ".join(cells))
    total = sum(deviations.values())
    against = sum(n for (holds, own, covered), n in deviations.items() if own != covered)
    print(f"spy votes unlike the cover's: {against / total:.1%} of {total}" if total else "no spy votes")
    for (holds_spy, own, covered), n in sorted(deviations.items()):
        if own != covered:
            kind = "holding a spy" if holds_spy else "spy-free"
            cover = "approve" if covered else "reject"
            print(f"  {'approved' if own else 'rejected'} a {kind} team the cover would {cover}: {n}")
    print(f"({time.perf_counter() - started:.0f} s)")


if __name__ == "__main__":
    main()
