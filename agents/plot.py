"""Plot card decisions of a computer player: simple, honest, and from the seat's view alone.

The choices come from `AgentView.choices`, what the seat's own keyboard offers (the engine's
legal actions for that seat, which depend only on what the seat knows). No Confidence is used
against a team the seat expects to fail (a Resistance member) or to succeed (a spy), and on a
mission's fifth proposal, where it wins the game for the spies, by a spy always and by the
Resistance never; the other cards are used now and then, on a target drawn at random; the
leader deals at random and immediate cards go to a target drawn at random, except that a spy
who knows the other spies shows its role (Open Up, Establish Confidence) only to one of them.
"""

from __future__ import annotations

import random

import numpy as np

from agents.beliefs import Belief
from agents.view import AgentView
from engine import DealCard, OpenUp, Pass, Phase, UseNoConfidence, rules
from engine.plot import Card

USE_RATE = 0.5  # how often a held card other than No Confidence is used when its window comes
CONFIDENT = 0.5  # a team's chance of failing (Resistance) or succeeding (spy) that calls for No Confidence


def choose(view: AgentView, belief: Belief, rng: random.Random):
    """The seat's Plot decision: one of `view.choices`."""
    choices = view.choices
    if not choices:
        raise ValueError(f"seat {view.seat} has no Plot decision to make now")
    uses = [c for c in choices if not isinstance(c, Pass)]
    passing = [c for c in choices if isinstance(c, Pass)]
    if not passing:  # the deal and an immediate card must be resolved: any legal one that shows no spy
        return rng.choice(_unrevealing(view, uses))
    if view.public.phase is Phase.OVERTURN:
        return next(c for c in uses if isinstance(c, UseNoConfidence)) if _overturn(view, belief) else passing[0]
    if uses and rng.random() < USE_RATE:
        return rng.choice(uses)
    return passing[0]


def _unrevealing(view: AgentView, uses: list):
    """A spy who knows the other spies shows its role (Open Up, or Establish Confidence as the
    leader) only to one of them, who learns nothing from it; anyone else may show it to anyone."""
    fellows = set(view.own.known_spies) - {view.seat}
    if not fellows:
        return uses

    def shows_a_spy_to_the_resistance(action) -> bool:
        if isinstance(action, OpenUp):
            return action.to not in fellows
        return isinstance(action, DealCard) and action.card is Card.ESTABLISH_CONFIDENCE and action.to not in fellows

    return [action for action in uses if not shows_a_spy_to_the_resistance(action)] or uses


def _overturn(view: AgentView, belief: Belief) -> bool:
    team = view.public.team or ()
    mission = view.public.current_mission
    if not team or mission is None:
        return False
    if view.public.proposal_number >= rules.MAX_PROPOSALS_PER_MISSION:
        # No Confidence makes this the fifth failed proposal: the spies win the game at once.
        return view.is_spy
    matrix = np.zeros((1, view.players), dtype=bool)
    matrix[0, list(team)] = True
    succeeds = float(belief.success_chance(matrix, rules.fails_required(view.players, mission))[0])
    return (succeeds if view.is_spy else 1.0 - succeeds) > CONFIDENT
