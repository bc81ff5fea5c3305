"""Short, true statements that explain a deduction, as data (a code and its arguments).

Exact facts come first. The behavioural reasons for a seat are the evidence groups that moved
its probability most, as the model itself measures them (`deduction.attribution`): each
names the group, a true fact about it, and `points`, the signed change in percentage points
that removing that evidence would undo (+ raised the seat's spy chance). The bot words each
code in the player's language; `deduction.__main__` words them in English.
"""

from __future__ import annotations

from dataclasses import dataclass
from operator import add, sub
from typing import NamedTuple

import numpy as np

from deduction.analysis import Deduction
from deduction.attribution import MISSION_RESULT, PROPOSALS, VOTES, Attribution, attribute
from deduction.features import RecordArrays
from engine import GameRecord

MAX_REASONS_PER_SEAT = 3
MIN_POINTS = 3  # a smaller effect is noise to a player reading a phone
# A seat the evidence moved this far in all, by effects each under MIN_POINTS, is told so: its number
# would otherwise stand without a word of why.
MIN_SMALL_EFFECTS_POINTS = 10
FEW_ASSIGNMENTS = 12  # below this, the count itself is worth saying
EXACT_SEAT_CODES = frozenset({"certain_spy", "certain_resistance"})
EXACT_TABLE_CODES = frozenset({"assignments_remaining", "mission_fails"})


class Reason(NamedTuple):
    # A named tuple, not a dataclass: a hint builds a score of these, and a tuple is made in half the time.
    code: str
    args: dict


@dataclass(frozen=True)
class Explanation:
    table: tuple[Reason, ...]  # exact facts about the whole table (assignments left, missions with Fail cards)
    seats: tuple[tuple[Reason, ...], ...]  # per seat: its exact fact, then its largest effects (none for the asker)

    def all(self) -> tuple[Reason, ...]:
        """Every reason: the table's, then each seat's."""
        return self.table + tuple(reason for seat in self.seats for reason in seat)


def explain(
    record: GameRecord, deduction: Deduction, per_seat: int = MAX_REASONS_PER_SEAT, min_points: int = MIN_POINTS
) -> Explanation:
    rows = deduction.facts.possible_rows
    attribution = attribute(rows, deduction.evidence)
    facts = _Facts(record, deduction.arrays, attribution)
    points = np.rint(attribution.effects * 100).astype(int).tolist()  # (groups, players)
    # Per seat, the groups by the size of their effect on it, largest first; no more than can be shown.
    # Rounded first so that effects equal but for floating-point noise (two voters who voted alike)
    # keep the groups' own order, whichever way the arithmetic went.
    larger_first = np.rint(np.abs(attribution.effects) * -1e6)  # millionths, negated
    order = larger_first.argsort(axis=0, kind="stable")[:per_seat].T.tolist()
    certain_spies, certain_resistance = set(deduction.certain_spies), set(deduction.certain_resistance)
    seats = []
    for seat in range(record.players):
        if seat == deduction.viewer.seat:
            seats.append(())
            continue
        reasons = []
        if seat in certain_spies:
            reasons.append(Reason("certain_spy", {"seat": seat}))
        elif seat in certain_resistance:
            reasons.append(Reason("certain_resistance", {"seat": seat}))
        for g in order[seat]:
            if len(reasons) >= per_seat or abs(points[g][seat]) < min_points:
                break
            reasons.append(facts.reason(g, seat, points[g][seat]))
        if not reasons:
            reasons.extend(_without_a_reason(deduction, attribution, points, seat))
        seats.append(tuple(reasons))
    return Explanation(table=tuple(_table_reasons(deduction)), seats=tuple(seats))


def _prior(d: Deduction) -> float | None:
    """Each other seat's chance of being a spy before any evidence, as the viewer sees the table; None
    for a spy who knows the spies (every number is exact)."""
    players, spies = len(d.spy_probability), round(sum(d.spy_probability))
    if d.viewer.seat is None:
        return spies / players
    if d.viewer.is_spy:
        return None
    return spies / (players - 1)


def _without_a_reason(d: Deduction, attribution: Attribution, points: list[list[int]], seat: int) -> list[Reason]:
    """What moved a seat 10 points or more that no single reason names: missions with Fail cards it
    was not on (their Fail cards, said under the list, point at the others: the seat loses that share),
    or many votes and teams each under `MIN_POINTS`."""
    prior = _prior(d)
    if prior is None or seat in {s for group in d.spy_groups for s in group.seats}:
        return []
    behaviour = float(attribution.effects[:, seat].sum())
    exact = round((d.spy_probability[seat] - prior - behaviour) * 100)
    missions = sorted({group.mission for group in d.spy_groups})
    if missions and exact <= -MIN_SMALL_EFFECTS_POINTS:  # (a rise off those teams comes from elsewhere)
        return [Reason("off_failed_teams", {"seat": seat, "missions": missions, "points": int(exact)})]
    total = round(behaviour * 100)
    if abs(total) >= MIN_SMALL_EFFECTS_POINTS:
        count = sum(1 for g in range(len(points)) if points[g][seat] != 0)
        return [Reason("small_effects", {"seat": seat, "points": int(total), "count": count})]
    return []


def _table_reasons(d: Deduction) -> list[Reason]:
    reasons = []
    if d.possible <= FEW_ASSIGNMENTS and not d.viewer.is_spy:
        reasons.append(Reason("assignments_remaining", {"count": d.possible}))
    certain = set(d.certain_spies) | set(d.certain_resistance)
    for group in reversed(d.spy_groups):
        if set(group.seats) <= certain:
            continue  # said seat by seat
        reasons.append(
            Reason("mission_fails", {"mission": group.mission, "seats": list(group.seats), "at_least": group.at_least})
        )
    return reasons


class _Facts:
    """True facts about the record's evidence groups, counted once per explanation."""

    def __init__(self, record: GameRecord, arrays: RecordArrays, attribution: Attribution) -> None:
        self.record, self.arrays = record, arrays
        self.played = record.played_missions
        self.groups = attribution.groups
        self.effects = attribution.effects
        self._facts: dict[int, tuple[str, int]] = {}  # per vote or proposal group: the fact cited
        self._counts: dict[str, list[int]] | None = None

    def reason(self, g: int, seat: int, points: int) -> Reason:
        group = self.groups[g]
        if group.kind == MISSION_RESULT:
            mission = self.played[group.index]
            return Reason(
                "mission_result",
                {
                    "seat": seat,
                    "mission": mission.mission,
                    "succeeded": bool(mission.succeeded),
                    "fails": mission.fails,
                    "on_team": seat in mission.proposals[-1].team,
                    "points": points,
                },
            )
        if group.kind == VOTES:
            fact, count = self._group_fact(g)
            return Reason("votes", {"seat": seat, "voter": group.index, "fact": fact, "count": count, "points": points})
        if group.kind == PROPOSALS:
            fact, count = self._group_fact(g)
            return Reason(
                "proposals", {"seat": seat, "leader": group.index, "fact": fact, "count": count, "points": points}
            )
        raise ValueError(f"unknown evidence group {group.kind!r}")

    def _group_fact(self, g: int) -> tuple[str, int]:
        if g in self._facts:
            return self._facts[g]
        group = self.groups[g]
        # Which fact to cite about a seat's votes or teams follows what they said about that seat
        # itself: through it they may move the seat asked about the other way.
        looked_like_a_spy = bool(self.effects[g, group.index] > 0)
        if self._counts is None:
            self._counts = choice_counts(self.record, self.arrays)
        if group.kind == VOTES:
            found = _vote_fact(self._counts, group.index, looked_like_a_spy)
        else:
            found = _proposal_fact(self._counts, group.index, looked_like_a_spy)
        self._facts[g] = found
        return found


def choice_counts(record: GameRecord, arrays: RecordArrays) -> dict[str, list[int]]:
    """Per fact, per seat: how the seat's own votes (not the deadline's) went, on every proposal
    ("cast") and on the teams that went on a mission, by vote and result ("approved_failed", ...);
    and the teams it chose as leader (not the deadline's): all of them ("proposed"), and those
    that went on a mission that failed or succeeded ("led_failed", "led_succeeded").

    The missions' votes are added up a mission at a time in plain Python, which costs less than
    setting numpy up for a few dozen small numbers."""
    players = record.players
    nobody = [0] * players
    every_seat = [1] * players
    approved = {"failed": nobody, "succeeded": nobody}
    chose = {"failed": nobody, "succeeded": nobody}  # votes cast by choice on the teams sent
    led = {"failed": [0] * players, "succeeded": [0] * players}
    for m in record.missions:
        if m.fails is None:
            continue
        sent = m.proposals[-1]  # the team that went on the mission
        result = "succeeded" if m.fails < m.fails_required else "failed"
        own, votes = every_seat, sent.votes
        if sent.auto_votes:  # the deadline's votes are nobody's
            own = [int(seat not in sent.auto_votes) for seat in range(players)]
            votes = [vote and chosen for vote, chosen in zip(votes, own, strict=True)]
        approved[result] = list(map(add, approved[result], votes))
        chose[result] = list(map(add, chose[result], own))
        if not sent.auto_team:
            led[result][sent.leader] += 1
    return {
        "cast": arrays.vote_chosen.sum(axis=0).tolist(),
        "approved_failed": approved["failed"],
        "rejected_succeeded": list(map(sub, chose["succeeded"], approved["succeeded"])),
        "rejected_failed": list(map(sub, chose["failed"], approved["failed"])),
        "approved_succeeded": approved["succeeded"],
        "proposed": np.bincount(arrays.leaders[arrays.team_chosen], minlength=players).tolist(),
        "led_failed": led["failed"],
        "led_succeeded": led["succeeded"],
    }


def _vote_fact(counts: dict[str, list[int]], seat: int, looked_like_a_spy: bool) -> tuple[str, int]:
    preferred = (
        ("approved_failed", "rejected_succeeded") if looked_like_a_spy else ("rejected_failed", "approved_succeeded")
    )
    for fact in preferred:
        if counts[fact][seat]:
            return fact, counts[fact][seat]
    return "cast", counts["cast"][seat]


def _proposal_fact(counts: dict[str, list[int]], seat: int, looked_like_a_spy: bool) -> tuple[str, int]:
    fact = "led_failed" if looked_like_a_spy else "led_succeeded"
    return (fact, counts[fact][seat]) if counts[fact][seat] else ("proposed", counts["proposed"][seat])
