"""Plot card decisions of a computer player, from the seat's view and belief alone.

The choices come from `AgentView.choices`, what the seat's own keyboard offers (the engine's
legal actions for that seat, which depend only on what the seat knows). Each choice follows the
seat's belief: its chance that each other seat is a spy (exact for a spy who knows the other
spies), read as the chance that the seat is an *ally* (on its own side).

- **Strong Leader**: a Resistance member takes the lead from a leader more suspect than the
  average seat; a spy takes it from a leader it believes is in the Resistance.
- **The deal** (the leader): held cards first, Take Responsibility last (more cards are out to
  take by then), each to the seat most likely an ally, spread over allies holding fewer cards.
  Establish Confidence shows the leader's role to that ally.
- **Immediate cards**: Take Responsibility takes the card worth most, how useful it is times
  its holder's chance of not being an ally (No Confidence and Strong Leader first); Open Up
  shows the seat's role to the seat most likely an ally; Overheard Conversation looks at the
  more suspect neighbour whose side is not yet certain (a spy who knows the other spies learns
  nothing from it and looks where its cover, what a Resistance member in its seat would
  believe, points).
- **No Confidence**: against a team the seat expects to fail (a Resistance member) or to
  succeed (a spy); on a mission's fifth proposal, where it wins the game for the spies, by a
  spy always and by the Resistance never.
- **In the Spotlight**: a Resistance member lights the most suspect member of a team it
  expects may fail (a spy there must play Success or show a Fail to everyone). A spy never
  lights a team with a spy it knows on it (the member shown clean leaves the Fail to the
  others, its fellow spy among them); on a clean team it lights the member its cover suspects.
- **Keeping a Close Eye on You**: a Resistance member (or a blind spy looking for the others)
  watches the most suspect member whose side it is not sure of, once it is suspect enough; a
  spy who knows the others watches, for its cover, a Resistance member its cover suspects.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from typing import TypeVar

import numpy as np

from agents.beliefs import Belief, team_row
from agents.view import AgentView
from engine import (
    DealCard,
    OpenUp,
    Pass,
    Phase,
    Spotlight,
    TakeCard,
    UseNoConfidence,
    UseStrongLeader,
    Watch,
    rules,
)
from engine.plot import IMMEDIATE_CARDS, Card

CONFIDENT = 0.5  # a team's chance of failing (Resistance) or succeeding (spy) that calls for No Confidence
# A Resistance member lights a team whose chance of failing is at least this.
SPOTLIGHT_WHEN = 0.25
# A member watched is at least this likely a spy (below it the card waits for a likelier one).
WATCH_WHEN = 0.2
# How much less a receiver of the deal is worth, per card it already holds: the cards spread
# over allies rather than piling on one (which Take Responsibility could empty at once).
SPREAD = 0.05
# A role this close to certain is not worth a look.
CERTAIN = 1e-6
TIE = 1e-9
# How much a card held by an opponent is worth taking with Take Responsibility.
TAKE_VALUE = {
    Card.NO_CONFIDENCE: 3.0,
    Card.STRONG_LEADER: 3.0,
    Card.IN_THE_SPOTLIGHT: 2.5,
    Card.KEEPING_A_CLOSE_EYE_ON_YOU: 2.0,
    Card.OPINION_MAKER: 1.0,
}

T = TypeVar("T")


def choose(view: AgentView, belief: Belief, rng: random.Random, cover: Belief | None = None):
    """The seat's Plot decision: one of `view.choices`. `cover` is what a Resistance member in a
    spy's seat would believe (where a spy's choice only has to look like one), else `belief`."""
    choices = view.choices
    if not choices:
        raise ValueError(f"seat {view.seat} has no Plot decision to make now")
    cover = cover if cover is not None else belief
    phase = view.public.phase
    if phase is Phase.DEAL:
        if view.public.plot is not None and view.public.plot.receiving == view.seat:
            return _resolve(view, belief, cover, rng)
        return _deal(view, belief, rng)
    passing = next(c for c in choices if isinstance(c, Pass))
    if phase is Phase.LEAD:
        return next(c for c in choices if isinstance(c, UseStrongLeader)) if _takes_the_lead(view, belief) else passing
    if phase is Phase.OVERTURN:
        return next(c for c in choices if isinstance(c, UseNoConfidence)) if _overturn(view, belief) else passing
    if phase is Phase.SPOTLIGHT:
        return _spotlight(view, belief, cover, rng) or passing
    if phase is Phase.WATCH:
        return _watch(view, belief, cover, rng) or passing
    raise ValueError(f"no Plot decision in the {phase} phase")


def ally_chance(view: AgentView, belief: Belief) -> np.ndarray:
    """Each seat's chance of being on this seat's side."""
    spy = belief.spy_probability
    return spy if view.is_spy else 1.0 - spy


def _best(options: Sequence[T], score: Callable[[T], float], rng: random.Random) -> T:
    """The option of highest score, ties drawn with `rng`."""
    scores = [score(option) for option in options]
    top = max(scores)
    return rng.choice([option for option, s in zip(options, scores, strict=True) if s >= top - TIE])


# ---------------------------------------------------------------- the lead


def _takes_the_lead(view: AgentView, belief: Belief) -> bool:
    suspicion = belief.spy_probability
    leader = view.public.leader
    if view.is_spy:
        return suspicion[leader] < 0.5
    others = [seat for seat in range(view.players) if seat != view.seat]
    return suspicion[leader] > float(np.mean(suspicion[others])) + TIE


# ---------------------------------------------------------------- the deal and the immediate cards


def _deal(view: AgentView, belief: Belief, rng: random.Random) -> DealCard:
    deals = [c for c in view.choices if isinstance(c, DealCard)]
    card = min({d.card for d in deals}, key=_dealing_order)
    ally = ally_chance(view, belief)
    assert view.public.plot is not None
    hands = view.public.plot.hands
    return _best([d for d in deals if d.card is card], lambda d: ally[d.to] - SPREAD * len(hands[d.to]), rng)


def _dealing_order(card: Card) -> tuple[int, str]:
    """Held cards first, the immediate ones after, Take Responsibility last."""
    return (card is Card.TAKE_RESPONSIBILITY, card in IMMEDIATE_CARDS, card.value)


def _resolve(view: AgentView, belief: Belief, cover: Belief, rng: random.Random):
    choices = view.choices
    ally = ally_chance(view, belief)
    if isinstance(choices[0], TakeCard):
        return _best(choices, lambda c: (1.0 - ally[c.holder]) * TAKE_VALUE.get(c.card, 1.0), rng)
    if isinstance(choices[0], OpenUp):
        return _best(choices, lambda c: ally[c.to], rng)
    # Overheard Conversation: a spy who knows every spy learns nothing, and looks as its cover would.
    looking = cover if view.knows_all_spies else belief
    return _best(choices, lambda c: _worth_a_look(looking.spy_probability[c.target]), rng)


def _worth_a_look(suspicion: float) -> float:
    """A seat whose side is certain is worth nothing; among the rest, the more suspect the better."""
    return suspicion if CERTAIN < suspicion < 1.0 - CERTAIN else -1.0


# ---------------------------------------------------------------- the windows after the vote


def _overturn(view: AgentView, belief: Belief) -> bool:
    team = view.public.team or ()
    if not team or view.public.current_mission is None:
        return False
    if view.public.proposal_number >= rules.MAX_PROPOSALS_PER_MISSION:
        # No Confidence makes this the fifth failed proposal: the spies win the game at once.
        return view.is_spy
    fails = _fail_chance(view, belief)
    return (1.0 - fails if view.is_spy else fails) > CONFIDENT


def _fail_chance(view: AgentView, belief: Belief) -> float:
    assert view.public.team is not None and view.public.current_mission is not None
    needed = rules.fails_required(view.players, view.public.current_mission)
    return float(belief.reaching(team_row(view.players, view.public.team), needed)[0])


def _spies_on_team(view: AgentView, belief: Belief) -> bool:
    """Whether the team holds a spy this spy knows of (itself included)."""
    team = view.public.team or ()
    return any(belief.spy_probability[member] > CERTAIN for member in team)


def _spotlight(view: AgentView, belief: Belief, cover: Belief, rng: random.Random) -> Spotlight | None:
    lights = [c for c in view.choices if isinstance(c, Spotlight)]
    if view.is_spy:
        if _spies_on_team(view, belief):
            return None
        # Only members it knows are Resistance: a member shown clean says nothing of any spy.
        clean = [c for c in lights if belief.spy_probability[c.target] <= CERTAIN]
        return _best(clean, lambda c: cover.spy_probability[c.target], rng) if clean else None
    if _fail_chance(view, belief) < SPOTLIGHT_WHEN:
        return None
    return _best(lights, lambda c: belief.spy_probability[c.target], rng)


def _watch(view: AgentView, belief: Belief, cover: Belief, rng: random.Random) -> Watch | None:
    """One member watched per mission: a second card waits for another team."""
    singles = [c for c in view.choices if isinstance(c, Watch) and len(c.targets) == 1]
    if view.knows_all_spies:
        # It learns nothing; for its cover, a Resistance member its cover suspects.
        fellows = set(view.own.known_spies)
        candidates = [c for c in singles if c.targets[0] not in fellows]
        suspicion = cover.spy_probability
    else:
        candidates = singles
        suspicion = belief.spy_probability
    worth = [c for c in candidates if _worth_a_look(suspicion[c.targets[0]]) >= WATCH_WHEN]
    return _best(worth, lambda c: suspicion[c.targets[0]], rng) if worth else None
