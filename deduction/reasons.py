"""Short, true statements that explain a deduction, as data (a code and its arguments).

Exact facts come first. The behavioural reasons for a seat are the evidence groups that moved
its probability most, as the model itself measures them (`deduction.attribution`): each
names the group, a true fact about it, and `points`, the signed change in percentage points
that removing that evidence would undo (+ raised the seat's spy chance). The bot words each
code in the player's language; `deduction.__main__` words them in English.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from deduction.analysis import Deduction
from deduction.attribution import MISSION_RESULT, PROPOSALS, VOTES, Attribution, attribute
from deduction.features import RecordArrays
from engine import GameRecord

MAX_REASONS_PER_SEAT = 3
MIN_POINTS = 3  # a smaller effect is noise to a player reading a phone
FEW_ASSIGNMENTS = 12  # below this, the count itself is worth saying
EXACT_SEAT_CODES = frozenset({"certain_spy", "certain_resistance"})
EXACT_TABLE_CODES = frozenset({"assignments_remaining", "mission_fails"})


@dataclass(frozen=True)
class Reason:
    code: str
    args: dict = field(default_factory=dict)


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
    rows = deduction.facts.assignments[deduction.facts.possible]
    attribution = attribute(rows, deduction.evidence)
    facts = _Facts(record, deduction.arrays, attribution)
    points = np.rint(attribution.effects * 100).astype(int).tolist()  # (groups, players)
    # Per seat, the groups by the size of their effect on it, largest first; no more than can be shown.
    # Rounded first so that effects equal but for floating-point noise (two voters who voted alike)
    # keep the groups' own order, whichever way the arithmetic went.
    size = np.abs(attribution.effects).round(6)
    order = (-size).argsort(axis=0, kind="stable")[:per_seat].T.tolist()
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
        seats.append(tuple(reasons))
    return Explanation(table=tuple(_table_reasons(deduction)), seats=tuple(seats))


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
        self.arrays = arrays
        self.played = record.played_missions
        self.groups = attribution.groups
        self.effects = attribution.effects
        self._facts: dict[int, tuple[str, int]] = {}  # per vote or proposal group: the fact cited
        self._votes: dict[str, list[int]] | None = None
        self._proposals: dict[str, list[int]] | None = None

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
        if group.kind == VOTES:
            if self._votes is None:
                self._votes = vote_counts(self.arrays)
            found = _vote_fact(self._votes, group.index, looked_like_a_spy)
        else:
            if self._proposals is None:
                self._proposals = proposal_counts(self.arrays)
            found = _proposal_fact(self._proposals, group.index, looked_like_a_spy)
        self._facts[g] = found
        return found


def vote_counts(arrays: RecordArrays) -> dict[str, list[int]]:
    """Per fact, per seat: how the seat's own votes (not the deadline's) went, on every proposal
    ("cast") and on the teams that went on a mission, by vote and result ("approved_failed", ...)."""
    played = arrays.played_index
    succeeded = arrays.played_fails < arrays.played_fails_required
    chosen = arrays.vote_chosen[played]
    approved = arrays.votes[played] & chosen
    # (result failed, succeeded) x (approved, rejected) x seats, all four counts in one product.
    by_result = np.array([~succeeded, succeeded], dtype=float)
    counts = (by_result @ np.concatenate([approved, chosen & ~approved], axis=1)).astype(int)
    players = arrays.players
    return {
        "cast": arrays.vote_chosen.sum(axis=0).tolist(),
        "approved_failed": counts[0, :players].tolist(),
        "rejected_succeeded": counts[1, players:].tolist(),
        "rejected_failed": counts[0, players:].tolist(),
        "approved_succeeded": counts[1, :players].tolist(),
    }


def proposal_counts(arrays: RecordArrays) -> dict[str, list[int]]:
    """Per fact, per seat: the teams the seat chose as leader (not the deadline): all of them
    ("proposed"), and those that went on a mission that failed or succeeded."""
    played = arrays.played_index
    succeeded = arrays.played_fails < arrays.played_fails_required
    chosen = arrays.team_chosen[played]
    leaders = arrays.leaders[played]

    def per_seat(seats: np.ndarray) -> list[int]:
        return np.bincount(seats, minlength=arrays.players).tolist()

    return {
        "proposed": per_seat(arrays.leaders[arrays.team_chosen]),
        "led_failed": per_seat(leaders[chosen & ~succeeded]),
        "led_succeeded": per_seat(leaders[chosen & succeeded]),
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
