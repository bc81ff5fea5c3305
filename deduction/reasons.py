"""Short, true statements that explain a deduction, as data (a code and its arguments).

Exact facts come first; behavioural evidence follows, ranked by how far the behaviour
model moved that seat away from the plain count. The bot words each code in the
player's language; `deduction.__main__` words them in English.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from deduction.analysis import Deduction
from engine import GameRecord, MissionRound

MAX_REASONS = 5
FEW_ASSIGNMENTS = 12  # below this, the count itself is worth saying


@dataclass(frozen=True)
class Reason:
    code: str
    args: dict = field(default_factory=dict)


def explain(record: GameRecord, deduction: Deduction, limit: int = MAX_REASONS) -> tuple[Reason, ...]:
    exact = _exact_reasons(deduction)
    behavioural = _behavioural_reasons(record, deduction) if deduction.model != "uniform" else []
    return tuple((exact + behavioural)[:limit])


def _exact_reasons(d: Deduction) -> list[Reason]:
    reasons = [Reason("certain_spy", {"seat": s}) for s in d.certain_spies]
    if d.possible <= FEW_ASSIGNMENTS and not d.viewer.is_spy:
        reasons.append(Reason("assignments_remaining", {"count": d.possible}))
    certain = set(d.certain_spies) | set(d.certain_resistance)
    for group in reversed(d.spy_groups):
        if set(group.seats) <= certain:
            continue  # already said seat by seat
        reasons.append(
            Reason("mission_fails", {"mission": group.mission, "seats": list(group.seats), "at_least": group.at_least})
        )
    reasons += [Reason("certain_resistance", {"seat": s}) for s in d.certain_resistance]
    return reasons


def _behavioural_reasons(record: GameRecord, d: Deduction) -> list[Reason]:
    rows = d.facts.assignments[d.facts.possible]
    plain_count = rows.mean(axis=0)
    shift = np.array(d.spy_probability) - plain_count
    failed = [m for m in record.played_missions if not m.succeeded]
    succeeded = [m for m in record.played_missions if m.succeeded]
    candidates: list[tuple[float, Reason]] = []
    for seat in range(record.players):
        if seat == d.viewer.seat or seat in d.certain_spies or seat in d.certain_resistance:
            continue
        strength = float(abs(shift[seat]))
        if strength < 0.05:
            continue
        if shift[seat] > 0:
            approved = [m for m in failed if seat not in m.proposals[-1].team and _chose(m, seat, True)]
            if approved:
                candidates.append(
                    (
                        strength,
                        Reason("approved_failed_teams", {"seat": seat, "count": len(approved), "of": len(failed)}),
                    )
                )
            led = [m.mission for m in failed if m.proposals[-1].leader == seat and not m.proposals[-1].auto_team]
            if led:
                candidates.append((strength, Reason("led_failed_team", {"seat": seat, "missions": led})))
            rejected = [m for m in succeeded if _chose(m, seat, False)]
            if rejected:
                candidates.append(
                    (strength * 0.9, Reason("rejected_successful_teams", {"seat": seat, "count": len(rejected)}))
                )
            if not (approved or led or rejected):
                candidates.append((strength * 0.8, Reason("behaviour_suspicious", {"seat": seat})))
        else:
            candidates.append((strength * 0.8, Reason("behaviour_trusted", {"seat": seat})))
    candidates.sort(key=lambda item: -item[0])
    return [reason for _, reason in candidates]


def _chose(mission: MissionRound, seat: int, approve: bool) -> bool:
    """Whether `seat` itself voted `approve` on the mission's team (not the deadline for it)."""
    proposal = mission.proposals[-1]
    return seat not in proposal.auto_votes and proposal.votes is not None and proposal.votes[seat] is approve
