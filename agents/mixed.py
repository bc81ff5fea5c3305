"""One computer player among others that play another way: how it does beside partners and
opponents that are not copies of itself (a person, another program).

Each game seats the agent at one seat (in turn, game after game) and the other policy everywhere
else; the same deal is played again with the other policy at that seat too, so the agent's win rate
as Resistance and as spy is read against what the other policy wins from the very same seats.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable

from agents.beliefs import Deductions
from agents.difficulty import EASY, NORMAL, Difficulty
from agents.policy import decide, random_choice
from agents.sabotage import default_rates
from agents.view import AgentView, view_of
from engine import Action, Phase, PlayCard, Side, Variants, apply, new_game, waiting_for

Policy = Callable[[AgentView, random.Random], Action]


def computer(difficulty: Difficulty, deductions: Deductions) -> Policy:
    rates = default_rates()
    return lambda view, rng: decide(view, rng, difficulty, deductions, rates)


def at_random(view: AgentView, rng: random.Random) -> Action:
    """Proposals and votes at random among the legal ones; a spy fails half its missions."""
    if view.public.phase is Phase.MISSION:
        return PlayCard(view.seat, view.is_spy and rng.random() < 0.5)
    return random_choice(view, rng)


def won_by_seat(players: int, deal: int, seed: int, variants: Variants, policies: dict[int, Policy], rest: Policy):
    """Play one deal, `policies` at their seats and `rest` at every other; the final state. The seats
    of `policies` share a spy's Fail rotation only among themselves: the others play their own way."""
    rng = random.Random(f"{seed}:{deal}")
    state = new_game(players, rng, variants)
    rotation = frozenset(policies) if policies else None
    while not state.is_over:
        seat = waiting_for(state)[0]
        state, _ = apply(state, policies.get(seat, rest)(view_of(state, seat, rotation), rng))
    return state


def mixed_table(games: int, players: int, seed: int, others: str = "easy", variants: Variants | None = None) -> dict:
    """The NORMAL agent at one seat, `others` ("easy": the computer players without coordination
    and with noisy choices; "random") at the rest; win rates as Resistance and as spy, against
    `others` in the same seat on the same deals."""
    variants = variants or Variants()
    started = time.perf_counter()
    deductions = Deductions()
    agent = computer(NORMAL, deductions)
    rest = computer(EASY, deductions) if others == "easy" else at_random
    tally = {key: [0, 0] for key in ("agent_resistance", "agent_spy", "others_resistance", "others_spy")}
    for deal in range(games):
        seat = deal % players
        for who, policies in (("agent", {seat: agent}), ("others", {})):
            deductions.clear()
            state = won_by_seat(players, deal, seed, variants, policies, rest)
            spy = seat in state.spies
            won = (state.winner is Side.SPIES) == spy
            counts = tally[f"{who}_{'spy' if spy else 'resistance'}"]
            counts[0] += 1
            counts[1] += int(won)
    report = {"games": games, "players": players, "seed": seed, "others": others}
    for key, (played, won) in tally.items():
        report[key] = {"games": played, "win_rate": round(won / played, 4) if played else None}
    report["seconds"] = round(time.perf_counter() - started, 1)
    return report


def table(report: dict) -> str:
    lines = [f"{report['games']} games at {report['players']} players, one agent, the other seats {report['others']}"]
    for side in ("resistance", "spy"):
        agent, others = report[f"agent_{side}"], report[f"others_{side}"]
        lines.append(
            f"  as {side}: agent wins {agent['win_rate']:.1%} of {agent['games']}, "
            f"{report['others']} in the same seats {others['win_rate']:.1%}"
        )
    lines.append(f"  {report['seconds']:.1f} s")
    return "\n".join(lines)
