"""The Plot card fields of a `resistance-record/1` record: a mission's `plot` events and the
`private` results of one seat, read, checked against the card rules, and written back.

The checks follow the cards through the record as the table saw them: who holds what after
each deal and take, so that every use is by a holder, on a target the card allows, in its
window (see ../shared/spec/game-record.md and ../shared/rules/plot-thickens.md).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, replace
from itertools import product
from typing import Any

from engine import rules
from engine.errors import RecordError
from engine.plot import (
    IMMEDIATE_CARDS,
    Card,
    CardSeen,
    PlotState,
    PlotUse,
    RoleSeen,
    Seen,
    UseKind,
    cards_per_mission,
    deck_counts,
    neighbours,
    takeable,
)
from engine.state import Proposal

# The fields of each kind of event besides `kind` and `proposal`, in document order.
_EVENT_FIELDS: dict[UseKind, tuple[str, ...]] = {
    UseKind.DEAL: ("card", "to"),
    UseKind.TAKE: ("by", "card", "from"),
    UseKind.OVERHEARD: ("by", "target"),
    UseKind.OPEN_UP: ("by", "to"),
    UseKind.ESTABLISH_CONFIDENCE: ("by", "to"),
    UseKind.SPOTLIGHT: ("by", "target", "fail"),
    UseKind.WATCH: ("by", "target"),
}
# Which immediate card each kind of resolution answers.
_RESOLVES = {
    Card.TAKE_RESPONSIBILITY: UseKind.TAKE,
    Card.OVERHEARD_CONVERSATION: UseKind.OVERHEARD,
    Card.OPEN_UP: UseKind.OPEN_UP,
    Card.ESTABLISH_CONFIDENCE: UseKind.ESTABLISH_CONFIDENCE,
}


def _require(condition: bool, field: str, problem: str) -> None:
    if not condition:
        raise RecordError(field, problem)


def _is_seat(value: Any, players: int) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and 0 <= value < players


class Fields:
    """The fields of one object of the record, checked in the format's document order.

    The caller asks for each field in `order` in turn with `at` before checking its value, so
    that a field is reported missing at its own place, not before an earlier field's fault. A
    field the format does not have is reported at its place in the object as written: just
    before the first field of `order` that comes after the known fields preceding it (a record
    written in the format's order is read in the order it is written)."""

    def __init__(self, obj: Any, order: tuple[str, ...], field: str, what: str = "must be an object") -> None:
        _require(isinstance(obj, dict), field, what)
        self.obj, self.order, self.field = obj, order, field
        self.unknown: list[tuple[int, str]] = []  # (the place in `order` it follows, name), as written
        after = -1
        for key in obj:
            if key in order:
                after = max(after, order.index(key))
            else:
                self.unknown.append((after, key))

    def name(self, key: str) -> str:
        return f"{self.field}.{key}" if self.field else key

    def at(self, key: str, required: bool = True) -> bool:
        """Whether `key` is given; first, any unknown field written before it is refused, and
        a required `key` left out."""
        index = self.order.index(key)
        for after, unknown in self.unknown:
            _require(after >= index, self.name(unknown), "unknown field")
        _require(key in self.obj or not required, self.name(key), "missing")
        return key in self.obj

    def done(self) -> None:
        """Refuse an unknown field written after every known one."""
        for _, unknown in self.unknown:
            raise RecordError(self.name(unknown), "unknown field")


@dataclass(frozen=True)
class PlotTable:
    """The Plot cards as the record has shown them so far: who holds what, how many were dealt."""

    held: PlotState
    dealt: Counter[Card]

    @staticmethod
    def start(players: int) -> PlotTable:
        return PlotTable(held=PlotState(deck=(), hands=((),) * players), dealt=Counter())


# ---------------------------------------------------------------- reading


def parse_events(raw: Any, field: str, players: int) -> list[tuple[PlotUse, str]]:
    """The events of a mission's `plot` list, each with its field name; `by` of a deal is
    filled in later from its proposal's leader. An event's fields are checked in the order the
    format writes them: `kind`, the kind's own fields, `proposal`."""
    _require(isinstance(raw, list), field, "must be a list")
    events = []
    every_name = {name for names in _EVENT_FIELDS.values() for name in names} | {"kind", "proposal"}
    for i, entry in enumerate(raw):
        efield = f"{field}[{i}]"
        _require(isinstance(entry, dict), efield, "must be an object")
        # Until the kind is known, only a name that no kind of event has is surely unknown.
        for key in entry:
            if key == "kind":
                break
            _require(key in every_name, f"{efield}.{key}", "unknown field")
        _require("kind" in entry, f"{efield}.kind", "missing")
        try:
            kind = UseKind(entry["kind"])
        except (ValueError, TypeError):
            raise RecordError(f"{efield}.kind", f"must be one of {[k.value for k in UseKind]}") from None
        names = _EVENT_FIELDS[kind]
        fields = Fields(entry, ("kind", *names, "proposal"), efield)
        fields.at("kind")
        card = None
        for key in names:
            fields.at(key)
            if key == "card":
                try:
                    card = Card(entry["card"])
                except (ValueError, TypeError):
                    raise RecordError(f"{efield}.card", "unknown Plot card") from None
            elif key == "fail":
                _require(isinstance(entry["fail"], bool), f"{efield}.fail", "must be true or false")
            else:
                _require(_is_seat(entry[key], players), f"{efield}.{key}", f"must be a seat from 0 to {players - 1}")
        fields.at("proposal")
        proposal = entry["proposal"]
        _require(_is_seat(proposal, rules.MAX_PROPOSALS_PER_MISSION), f"{efield}.proposal", "must be a proposal index")
        fields.done()
        other = entry.get("to", entry.get("target", entry.get("from")))
        events.append((PlotUse(kind, proposal, entry.get("by", -1), other, card=card, fail=entry.get("fail")), efield))
    return events


def check_mission(
    events: list[tuple[PlotUse, str]],
    field: str,
    proposals: list[Proposal],
    fails: int | None,
    auto_cards: tuple[int, ...],
    table: PlotTable,
    players: int,
) -> tuple[tuple[PlotUse, ...], PlotTable]:
    """Follow one mission's cards: the Strong Leader, deal, open votes, No Confidence,
    spotlight and watches of each proposal, in the order the windows come."""
    queue = list(events)
    for (use, efield), (after, _) in zip(queue, queue[1:], strict=False):
        _require(after.proposal >= use.proposal, f"{efield}.proposal", "out of order")
    for use, efield in queue:
        _require(use.proposal < len(proposals), f"{efield}.proposal", "no such proposal in this mission")
    kept: list[PlotUse] = []
    held, dealt = table.held, table.dealt
    for j, proposal in enumerate(proposals):
        pfield = f"{field}.proposals[{j}]"
        if proposal.strong_leader:
            _require(
                held.holds(proposal.leader, Card.STRONG_LEADER),
                f"{pfield}.strong_leader",
                "the leader held no Strong Leader",
            )
            held = held.discard(proposal.leader, Card.STRONG_LEADER)
        if j == 0:
            held, dealt = _check_deal(queue, kept, field, proposal, held, dealt, players)
        _require(
            proposal.open_votes == held.holders(Card.OPINION_MAKER),
            f"{pfield}.open_votes",
            f"must be the Opinion Makers {list(held.holders(Card.OPINION_MAKER))}",
        )
        if proposal.no_confidence is not None:
            seat = proposal.no_confidence
            _require(held.holds(seat, Card.NO_CONFIDENCE), f"{pfield}.no_confidence", f"seat {seat} holds none")
            held = held.discard(seat, Card.NO_CONFIDENCE)
        if proposal.approved:
            held = _check_mission_cards(queue, kept, j, proposal, fails, auto_cards, held)
        if queue and queue[0][0].proposal == j:
            use, efield = queue[0]
            raise RecordError(f"{efield}.kind", f"no {use.kind.value} at this point of proposal {j}")
    return tuple(kept), PlotTable(held=held, dealt=dealt)


def _check_deal(
    queue: list[tuple[PlotUse, str]],
    kept: list[PlotUse],
    field: str,
    proposal: Proposal,
    held: PlotState,
    dealt: Counter[Card],
    players: int,
) -> tuple[PlotState, Counter[Card]]:
    leader = proposal.leader
    counts = Counter(deck_counts(players))  # a card the table's deck lacks: none of it
    for number in range(cards_per_mission(players)):
        _require(
            bool(queue) and queue[0][0].kind is UseKind.DEAL and queue[0][0].proposal == 0,
            queue[0][1] + ".kind" if queue else f"{field}.plot",
            f"the first proposal deals {cards_per_mission(players)} cards; deal {number + 1} is missing",
        )
        deal, efield = queue.pop(0)
        card, to = deal.card, deal.target
        assert card is not None
        _require(to != leader, f"{efield}.to", "the leader gives each card to another player")
        dealt = dealt + Counter({card: 1})
        _require(counts[card] > 0, f"{efield}.card", f"the deck of a {players}-player game has no {card.value}")
        _require(dealt[card] <= counts[card], f"{efield}.card", f"the deck has {counts[card]} of this card")
        kept.append(replace(deal, by=leader))
        if card not in IMMEDIATE_CARDS:
            held = held.give(to, card)
            continue
        if card is Card.TAKE_RESPONSIBILITY and not takeable(held, to):
            continue  # nothing to take: the card is discarded
        expected = _RESOLVES[card]
        _require(
            bool(queue) and queue[0][0].kind is expected and queue[0][0].proposal == 0,
            queue[0][1] + ".kind" if queue else f"{field}.plot",
            f"a {card.value} is followed by its {expected.value}",
        )
        use, ufield = queue.pop(0)
        if card is Card.ESTABLISH_CONFIDENCE:
            _require(use.by == leader and use.target == to, ufield, "the leader shows their role to the receiver")
        else:
            _require(use.by == to, f"{ufield}.by", "must be the card's receiver")
        if card is Card.TAKE_RESPONSIBILITY:
            _require((use.target, use.card) in takeable(held, to), f"{ufield}.card", "not held by that player")
            assert use.card is not None
            held = held.discard(use.target, use.card).give(to, use.card)
        elif card is Card.OVERHEARD_CONVERSATION:
            _require(use.target in neighbours(to, players), f"{ufield}.target", "must be a neighbour of the receiver")
        elif card is Card.OPEN_UP:
            _require(use.target != to, f"{ufield}.to", "must be another player")
        kept.append(use)
    return held, dealt


def _check_mission_cards(
    queue: list[tuple[PlotUse, str]],
    kept: list[PlotUse],
    j: int,
    proposal: Proposal,
    fails: int | None,
    auto_cards: tuple[int, ...],
    held: PlotState,
) -> PlotState:
    """In the Spotlight before the cards, then the watches after them, on the approved team."""
    spotlighted = None
    if queue and queue[0][0].kind is UseKind.SPOTLIGHT and queue[0][0].proposal == j:
        use, efield = queue.pop(0)
        _require(held.holds(use.by, Card.IN_THE_SPOTLIGHT), f"{efield}.by", "holds no In the Spotlight")
        _require(use.target in proposal.team and use.target != use.by, f"{efield}.target", "another team member")
        _require(not use.fail or use.target not in auto_cards, f"{efield}.fail", "a missed card counts as Success")
        _require(not use.fail or fails is None or fails >= 1, f"{efield}.fail", "a spotlighted Fail is in `fails`")
        # A Success shown is one of the cards: the Fail cards came from the other members who played.
        others = set(proposal.team) - set(auto_cards) - {use.target}
        _require(
            use.fail or fails is None or fails <= len(others),
            f"{efield}.fail",
            f"a Success shown: only {len(others)} other members played a card that could be a Fail",
        )
        held = held.discard(use.by, Card.IN_THE_SPOTLIGHT)
        spotlighted = use.target
        kept.append(use)
    watched: set[int] = set()
    while queue and queue[0][0].kind is UseKind.WATCH and queue[0][0].proposal == j:
        use, efield = queue.pop(0)
        _require(held.holds(use.by, Card.KEEPING_A_CLOSE_EYE_ON_YOU), f"{efield}.by", "holds no watch card left")
        _require(
            use.target in proposal.team and use.target not in (use.by, spotlighted) and use.target not in watched,
            f"{efield}.target",
            "another team member, not spotlighted, watched once",
        )
        held = held.discard(use.by, Card.KEEPING_A_CLOSE_EYE_ON_YOU)
        watched.add(use.target)
        kept.append(use)
    return held


# The cards that show one seat another's role, each in its own way (see `_could_show`).
_ROLE_CARDS = (Card.OVERHEARD_CONVERSATION, Card.OPEN_UP, Card.ESTABLISH_CONFIDENCE)


class ShownTo:
    """What a Plot card showed one seat, so that each result of its `private` entry is one a card
    showed it: a role through an `overheard` by that seat, an `open_up` to it (the holder's role) or
    an `establish_confidence` to it (the leader's role); a mission card through a `watch` by it of
    that member on that mission. Each public event backs one result.

    A role may also come from the deal of the next mission's first proposal, which enters the
    public record only with that proposal's vote: a seat's export taken in between has the result
    and not yet its event. Such results are possible only while the record leaves room for that
    deal (`pending`: the game goes on and no round of it is under way), as many as that deal has
    cards, each from a card the deck still holds, given by a seat that may lead that proposal
    (`leaders`: the leader in turn, or a Strong Leader's holder) to another."""

    def __init__(
        self,
        viewer: int,
        rounds: list[tuple[int, tuple[PlotUse, ...]]],
        table: PlotTable,
        players: int,
        pending: bool,
        leaders: tuple[int, ...],
    ) -> None:
        self.viewer, self.players, self.pending, self.leaders = viewer, players, pending, leaders
        self.roles: Counter[int] = Counter()  # seat: how many public events showed the viewer its role
        self.cards: Counter[tuple[int, int]] = Counter()  # (seat, mission): watches of that card
        for mission, uses in rounds:
            for use in uses:
                if use.kind is UseKind.OVERHEARD and use.by == viewer:
                    self.roles[use.target] += 1
                elif use.kind in (UseKind.OPEN_UP, UseKind.ESTABLISH_CONFIDENCE) and use.target == viewer:
                    self.roles[use.by] += 1
                elif use.kind is UseKind.WATCH and use.by == viewer:
                    self.cards[(use.target, mission)] += 1
        self.left = Counter(deck_counts(players)) - table.dealt  # the cards the deck still holds
        self.per_deal = cards_per_mission(players)
        self.in_deal: list[int] = []  # the seats whose roles the coming deal would have to show

    def check(self, seen: Seen, field: str) -> None:
        viewer = self.viewer
        if isinstance(seen, CardSeen):
            key = (seen.seat, seen.mission)
            _require(
                self.cards[key] > 0,
                field,
                f"seat {viewer} watched no card of seat {seen.seat} on mission {seen.mission}",
            )
            self.cards[key] -= 1
            return
        if self.roles[seen.seat] > 0:
            self.roles[seen.seat] -= 1
            return
        self.in_deal.append(seen.seat)
        _require(
            self._coming_deal_shows(self.in_deal),
            field,
            f"no Plot card showed seat {viewer} the role of seat {seen.seat}"
            + (", nor can the deal still to come into the record" if self.pending else ""),
        )

    def _coming_deal_shows(self, seats: list[int]) -> bool:
        if not self.pending or len(seats) > self.per_deal:
            return False
        for leader in self.leaders:
            for cards in product(_ROLE_CARDS, repeat=len(seats)):
                if any(count > self.left[card] for card, count in Counter(cards).items()):
                    continue
                if all(self._could_show(card, seat, leader) for card, seat in zip(cards, seats, strict=True)):
                    return True
        return False

    def _could_show(self, card: Card, seat: int, leader: int) -> bool:
        """Whether `card`, dealt by `leader`, shows the viewer the role of `seat`."""
        if card is Card.OVERHEARD_CONVERSATION:  # the viewer received it and looked at a neighbour
            return self.viewer != leader and seat in neighbours(self.viewer, self.players)
        if card is Card.OPEN_UP:  # `seat` received it and showed the viewer its role
            return seat != leader
        return self.viewer != leader and seat == leader  # the leader gave the viewer Establish Confidence


def parse_private(raw: Any, players: int) -> dict[int, tuple[Seen, ...]]:
    """`private`: what one seat alone was shown."""
    _require(isinstance(raw, dict) and len(raw) == 1, "private", "must be an object with one seat's entry")
    private: dict[int, tuple[Seen, ...]] = {}
    for key, entries in raw.items():
        field = f"private.{key}"
        # A seat written plainly in ASCII digits: str.isdigit() also takes "²", which int() refuses.
        seats = {str(seat): seat for seat in range(players)}
        _require(key in seats, field, "must be a seat")
        viewer = seats[key]
        _require(isinstance(entries, list), field, "must be a list")
        seen: list[Seen] = []
        for i, entry in enumerate(entries):
            efield = f"{field}[{i}]"
            _require(isinstance(entry, dict), efield, "must be an object")
            # Which of the two an entry is, by the field that names its seat; then its fields are
            # read in the format's order, so an unknown one written last never hides an earlier fault.
            if ("role_of" in entry) == ("card_of" in entry):
                raise RecordError(efield, "must be {role_of, spy} or {card_of, mission, fail}")
            if "role_of" in entry:
                fields = Fields(entry, ("role_of", "spy"), efield)
                fields.at("role_of")
                _require(_is_seat(entry["role_of"], players), f"{efield}.role_of", "must be a seat")
                fields.at("spy")
                _require(isinstance(entry["spy"], bool), f"{efield}.spy", "must be true or false")
                fields.done()
                seen.append(RoleSeen(viewer=viewer, seat=entry["role_of"], spy=entry["spy"]))
            else:
                fields = Fields(entry, ("card_of", "mission", "fail"), efield)
                fields.at("card_of")
                _require(_is_seat(entry["card_of"], players), f"{efield}.card_of", "must be a seat")
                fields.at("mission")
                mission = entry["mission"]
                _require(
                    _is_seat(mission, rules.MISSION_COUNT + 1) and mission >= 1, f"{efield}.mission", "must be 1 to 5"
                )
                fields.at("fail")
                _require(isinstance(entry["fail"], bool), f"{efield}.fail", "must be true or false")
                fields.done()
                seen.append(CardSeen(viewer=viewer, seat=entry["card_of"], mission=mission, fail=entry["fail"]))
            _require(seen[-1].seat != viewer, efield, "nobody is shown their own role or card")
        private[viewer] = tuple(seen)
    return private


# ---------------------------------------------------------------- writing


def event_to_dict(use: PlotUse) -> dict[str, Any]:
    data: dict[str, Any] = {"kind": use.kind.value}
    names = _EVENT_FIELDS[use.kind]
    values = {"by": use.by, "to": use.target, "target": use.target, "from": use.target, "fail": use.fail}
    for name in names:
        data[name] = use.card.value if name == "card" and use.card is not None else values[name]
    data["proposal"] = use.proposal
    return data


def private_to_dict(private: dict[int, tuple[Seen, ...]]) -> dict[str, Any]:
    return {str(viewer): [_seen_to_dict(seen) for seen in entries] for viewer, entries in private.items()}


def _seen_to_dict(seen: Seen) -> dict[str, Any]:
    if isinstance(seen, RoleSeen):
        return {"role_of": seen.seat, "spy": seen.spy}
    return {"card_of": seen.seat, "mission": seen.mission, "fail": seen.fail}
