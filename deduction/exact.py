"""What logic alone decides: which assignments remain, who is certainly a spy or not,
and which groups must hold a spy."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from deduction.assignments import all_assignments, assignment_floats, consistent_mask, spies_on
from deduction.knowledge import Viewer
from deduction.missions import mission_facts
from engine import GameRecord


class ImpossibleRecord(ValueError):
    """No spy assignment fits the record and the asker's knowledge together."""


@dataclass(frozen=True)
class SpyGroup:
    """At least `at_least` of `seats` are spies, because of the named mission."""

    mission: int
    seats: tuple[int, ...]
    at_least: int


@dataclass(frozen=True)
class ExactFacts:
    assignments: np.ndarray  # every assignment, one row each
    consistent: np.ndarray  # mask: not ruled out by the record
    possible: np.ndarray  # mask: not ruled out by the record nor the viewer's knowledge
    possible_rows: np.ndarray  # the possible assignments themselves (`assignments[possible]`)
    certain_spies: tuple[int, ...]  # seats other than the viewer that are spies in every possible assignment
    certain_resistance: tuple[int, ...]  # seats other than the viewer that are spies in none
    spy_groups: tuple[SpyGroup, ...]


def viewer_mask(viewer: Viewer, assignments: np.ndarray, record: GameRecord | None = None) -> np.ndarray:
    """True for each assignment the viewer's own knowledge allows. `record` is needed for the
    mission cards the viewer watched (their missions' Fail cards)."""
    players = assignments.shape[1]
    if viewer.seat is None:
        return np.ones(len(assignments), dtype=bool)
    if not 0 <= viewer.seat < players:
        raise ValueError(f"viewer seat {viewer.seat} is not at a table of {players}")
    if viewer.known_spies is None:
        resistance = ~assignments[:, viewer.seat]
        if not viewer.known_roles and not viewer.seen_cards:
            return resistance  # the usual case: all the asker knows is their own role
        return resistance & _seen_mask(viewer, assignments, record)
    spies = set(viewer.known_spies)
    if viewer.seat not in spies:
        raise ValueError("a spy viewer's known_spies must include the viewer's own seat")
    if len(spies) != len(viewer.known_spies) or not all(0 <= s < players for s in spies):
        raise ValueError("known_spies must list distinct seats at the table")
    if len(spies) != int(assignments[0].sum()):
        raise ValueError(f"known_spies must list all {int(assignments[0].sum())} spies")
    wanted = np.zeros(players, dtype=bool)
    wanted[list(spies)] = True
    return (assignments == wanted).all(axis=1)


def _seen_mask(viewer: Viewer, assignments: np.ndarray, record: GameRecord | None) -> np.ndarray:
    """What Plot cards showed the viewer alone: roles seen are certain; a watched Fail card makes
    its player a spy, and the mission's other Fail cards lie among its other members.

    A card watched before its mission's cards were shown (the record has no result yet) proves a
    spy if it was a Fail and nothing yet if a Success. A watched card that was not shuffled in
    (the deadline's Success, a spotlighted card) showed nothing everyone does not see."""
    players = assignments.shape[1]
    mask = np.ones(len(assignments), dtype=bool)
    for seat, is_spy in viewer.known_roles:
        if not 0 <= seat < players:
            raise ValueError(f"known: no seat {seat} at a table of {players}")
        mask &= assignments[:, seat] == is_spy
    if not viewer.seen_cards:
        return mask
    if record is None:
        raise ValueError("the record is needed to read watched mission cards")
    rounds = {m.mission: m for m in record.missions}  # under Targeting too, a mission is played once
    watched: dict[int, dict[int, bool]] = {}  # per played mission, the hidden cards seen: seat -> a Fail
    for card in viewer.seen_cards:
        mission = rounds.get(card.mission)
        if mission is None or card.seat not in (mission.team or ()):
            raise ValueError(f"seen_cards: seat {card.seat} played no card on mission {card.mission}")
        if card.fail:
            mask &= assignments[:, card.seat]
        if not mission.played:
            continue
        if card.seat not in mission_facts(mission).hidden_players:
            if card.fail and card.seat in mission.auto_cards:
                raise ValueError(f"seen_cards: the deadline played seat {card.seat}'s card, a Success")
            continue
        seen = watched.setdefault(card.mission, {})
        if seen.get(card.seat, card.fail) != card.fail:
            raise ValueError(f"seen_cards: seat {card.seat}'s card on mission {card.mission} seen both ways")
        seen[card.seat] = card.fail
    # Two cards watched on one mission (two Keeping a Close Eye on You cards) tell more together
    # than apart: the Fails not seen lie among the members whose cards were not seen.
    for number, seen in watched.items():
        facts = mission_facts(rounds[number])
        unseen = tuple(s for s in facts.hidden_players if s not in seen)
        mask &= spies_on(assignments, unseen) >= facts.hidden_fails - sum(seen.values())
    return mask


def exact_facts(record: GameRecord, viewer: Viewer, consistent: np.ndarray | None = None) -> ExactFacts:
    """`consistent`: the record's `consistent_mask`, when the caller has it already."""
    assignments = all_assignments(record.players, record.spies)
    if consistent is None:
        consistent = consistent_mask(record, assignments)
    possible = consistent & viewer_mask(viewer, assignments, record)
    count = np.count_nonzero(possible)
    if not count:
        if viewer.is_spy:
            raise ImpossibleRecord("the given spies cannot explain the Fail cards of the record")
        raise ImpossibleRecord("no spy assignment explains the record's Fail cards with this viewer in the Resistance")
    rows = assignments[possible]
    # How many possible assignments make each seat a spy, as a product (exact: whole numbers),
    # which numpy hands to BLAS where `all` and `any` down the rows would go one row at a time.
    spy_counts = assignment_floats(record.players, record.spies)[0] @ possible.astype(np.float32)
    always = spy_counts == count
    never = spy_counts == 0
    others = [s for s in range(record.players) if s != viewer.seat]
    groups = []
    for mission in record.played_missions:
        if not mission.fails:
            continue  # no Fail card, no group
        facts = mission_facts(mission)
        if facts.hidden_fails:
            # A seat the viewer knows to be Resistance cannot be one of the spies.
            seats = tuple(s for s in facts.hidden_players if s != viewer.seat or viewer.is_spy)
            groups.append(SpyGroup(mission.mission, seats, facts.hidden_fails))
    return ExactFacts(
        assignments=assignments,
        consistent=consistent,
        possible=possible,
        possible_rows=rows,
        certain_spies=tuple(s for s in others if always[s]),
        certain_resistance=tuple(s for s in others if never[s]),
        spy_groups=tuple(groups),
    )
