"""What a played mission's cards prove, spotlighted cards taken into account.

Mission cards are shuffled before they are shown, so a mission's Fail cards could be anyone's
among the members who played their own card; a card played face up under In the Spotlight
(The Plot Thickens) is no longer hidden among them: a Fail proves its player a spy, and either
way the other Fail cards lie among the other members.
"""

from __future__ import annotations

from dataclasses import dataclass

from engine import MissionRound

SPOTLIGHT = "spotlight"


@dataclass(frozen=True)
class MissionFacts:
    mission: int  # the mission's number on the board
    hidden_players: tuple[int, ...]  # members whose own card was shuffled in unseen
    hidden_fails: int  # the Fail cards among theirs
    shown_spies: tuple[int, ...]  # members whose Fail card everyone saw


def mission_facts(m: MissionRound) -> MissionFacts:
    """The facts of a played mission."""
    assert m.fails is not None, "only a played mission has facts"
    spotlight = next((use for use in m.plot if use.kind == SPOTLIGHT), None) if m.plot else None
    if spotlight is None:
        return MissionFacts(m.mission, m.card_players, m.fails, ())
    shown_fail = bool(spotlight.fail)
    return MissionFacts(
        m.mission,
        tuple(seat for seat in m.card_players if seat != spotlight.target),
        m.fails - shown_fail,
        (spotlight.target,) if shown_fail else (),
    )
