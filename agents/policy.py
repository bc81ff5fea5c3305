"""The computer player: one seat's view in, that seat's action out."""

from __future__ import annotations

import random

from agents import plot, resistance, spy
from agents.beliefs import Deductions, cover_belief, own_belief, table_belief
from agents.difficulty import NORMAL, Difficulty
from agents.sabotage import SabotageRates, default_rates
from agents.view import AgentView, view_of
from engine import PLOT_PHASES, Action, CastVote, GameState, Phase, ProposeTeam, rules


def decide(
    view: AgentView,
    rng: random.Random,
    difficulty: Difficulty = NORMAL,
    deductions: Deductions | None = None,
    rates: SabotageRates | None = None,
) -> Action:
    """The action of the seat of `view`, which the game must be waiting for: a proposal, a vote or a
    mission card, or in a Plot card decision one of `view.choices`.

    Everything random comes from `rng`; `deductions` may be shared by every seat of a game (it
    only caches answers that depend on the public record and the viewer). Raises `ValueError`
    when the game does not wait for this seat and `NotImplementedError` in a phase it does not know.
    """
    public = view.public
    if view.seat not in public.waiting_for:
        raise ValueError(f"the game does not wait for seat {view.seat}")
    deductions = deductions if deductions is not None else Deductions()
    rates = rates if rates is not None else default_rates()
    if public.phase in PLOT_PHASES:
        cover = cover_belief(view, deductions) if view.is_spy else None
        return plot.choose(view, own_belief(view, deductions), rng, cover)
    if public.phase is Phase.MISSION:
        if not view.is_spy:
            return resistance.play(view)
        return spy.play(view, own_belief(view, deductions), rates, difficulty, rng)
    if public.phase not in (Phase.PROPOSING, Phase.VOTING):
        raise NotImplementedError(f"computer players do not play the {public.phase} phase")
    if difficulty.noise and rng.random() < difficulty.noise:
        return random_choice(view, rng)
    belief = own_belief(view, deductions)
    if public.phase is Phase.PROPOSING:
        if view.is_spy:
            return spy.propose(view, belief, table_belief(view, deductions), rng)
        return resistance.propose(view, belief, rng)
    if view.is_spy:
        return spy.vote(view, belief, cover_belief(view, deductions), deductions, rng)
    return resistance.vote(view, belief)


def random_choice(view: AgentView, rng: random.Random) -> Action:
    """A proposal or vote drawn at random among the legal ones (a team uniformly among the teams
    of a mission drawn among the open ones), or a Plot card choice drawn among `view.choices`."""
    public = view.public
    if public.phase in PLOT_PHASES:
        return rng.choice(view.choices)
    if public.phase is Phase.PROPOSING:
        mission = rng.choice(public.open_missions)
        team = tuple(sorted(rng.sample(range(view.players), rules.team_size(view.players, mission))))
        return ProposeTeam(view.seat, team, mission if public.variants.targeting else None)
    if public.phase is Phase.VOTING:
        return CastVote(view.seat, rng.random() < 0.5)
    raise NotImplementedError(f"no random choice in the {public.phase} phase")


def act(
    state: GameState,
    seat: int,
    rng: random.Random,
    difficulty: Difficulty = NORMAL,
    deductions: Deductions | None = None,
    rotation: frozenset[int] | None = None,
) -> Action:
    """`decide` for `seat` of `state`: the view is built here, so nothing else of the state is used.
    `rotation`: the seats played by computer players, who share a spy's Fail rotation (None: all)."""
    return decide(view_of(state, seat, rotation), rng, difficulty, deductions)
