"""The Plot Thickens: the Plot cards, the deck per table size, who holds what, and what was seen.

Rules: ../shared/rules/plot-thickens.md. Everything here is data and small pure functions;
`engine.windows` plays the cards through the steps of a proposal.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, replace
from enum import StrEnum

from engine import rules


class Card(StrEnum):
    """A Plot card; the value is its name in game records."""

    STRONG_LEADER = "strong_leader"
    NO_CONFIDENCE = "no_confidence"
    KEEPING_A_CLOSE_EYE_ON_YOU = "keeping_a_close_eye_on_you"
    IN_THE_SPOTLIGHT = "in_the_spotlight"
    OPINION_MAKER = "opinion_maker"
    TAKE_RESPONSIBILITY = "take_responsibility"
    OVERHEARD_CONVERSATION = "overheard_conversation"
    OPEN_UP = "open_up"
    ESTABLISH_CONFIDENCE = "establish_confidence"


# Immediate cards act when they are received and are gone; every other card stays face up
# before its holder (Opinion Maker for the whole game, the rest until used once).
IMMEDIATE_CARDS = frozenset(
    {Card.TAKE_RESPONSIBILITY, Card.OVERHEARD_CONVERSATION, Card.OPEN_UP, Card.ESTABLISH_CONFIDENCE}
)

# How many of each card the deck has: 5-6 players, then 7-10 players (Decision D1).
_SMALL_DECK = {
    Card.STRONG_LEADER: 2,
    Card.NO_CONFIDENCE: 1,
    Card.KEEPING_A_CLOSE_EYE_ON_YOU: 2,
    Card.OPINION_MAKER: 1,
    Card.TAKE_RESPONSIBILITY: 1,
}
_LARGE_DECK = {
    Card.STRONG_LEADER: 2,
    Card.NO_CONFIDENCE: 3,
    Card.KEEPING_A_CLOSE_EYE_ON_YOU: 2,
    Card.IN_THE_SPOTLIGHT: 1,
    Card.OPINION_MAKER: 2,
    Card.TAKE_RESPONSIBILITY: 1,
    Card.OVERHEARD_CONVERSATION: 2,
    Card.OPEN_UP: 1,
    Card.ESTABLISH_CONFIDENCE: 1,
}
_LARGE_TABLE = 7


def deck_counts(players: int) -> dict[Card, int]:
    rules.check_player_count(players)
    return dict(_LARGE_DECK if players >= _LARGE_TABLE else _SMALL_DECK)


def full_deck(players: int) -> tuple[Card, ...]:
    """The deck before shuffling, in a fixed order."""
    return tuple(card for card, count in deck_counts(players).items() for _ in range(count))


def cards_per_mission(players: int) -> int:
    """1 at 5-6 players, 2 at 7-8, 3 at 9-10 (Decision D2): five deals never empty the deck."""
    rules.check_player_count(players)
    return (players - 3) // 2


class UseKind(StrEnum):
    """A public Plot event; the value is its `kind` in game records."""

    DEAL = "deal"
    TAKE = "take"
    OVERHEARD = "overheard"
    OPEN_UP = "open_up"
    ESTABLISH_CONFIDENCE = "establish_confidence"
    SPOTLIGHT = "spotlight"
    WATCH = "watch"


@dataclass(frozen=True)
class PlotUse:
    """One public Plot event of a mission, as the record's `plot` list has it.

    `by` is who acted (the leader for a deal), `target` the other seat involved: who received
    (deal, open_up, establish_confidence), was looked at (overheard), put in the spotlight or
    watched, or lost a card (take). `card` names the card dealt or taken; `fail` is the
    spotlighted card. `proposal` is the index of the proposal in its mission's list.
    `drawn`: `by` let the time run out and the choice was drawn at random (a deal, or an
    immediate card's resolution); public, kept in the state but not in the record's format.
    """

    kind: UseKind
    proposal: int
    by: int
    target: int
    card: Card | None = None
    fail: bool | None = None
    drawn: bool = False


@dataclass(frozen=True)
class RoleSeen:
    """`viewer` saw the role of `seat` (Overheard Conversation, Open Up, Establish Confidence)."""

    viewer: int
    seat: int
    spy: bool


@dataclass(frozen=True)
class CardSeen:
    """`viewer` saw the mission card `seat` played on `mission` (Keeping a Close Eye on You)."""

    viewer: int
    seat: int
    mission: int
    fail: bool


Seen = RoleSeen | CardSeen


@dataclass(frozen=True)
class PlotState:
    """The Plot cards of one game. Public except `deck` (the order of undrawn cards) and
    `seen` (each entry is known to its viewer only)."""

    deck: tuple[Card, ...]  # undrawn cards, next one first; secret
    hands: tuple[tuple[Card, ...], ...]  # the cards each seat holds face up, in the order received
    drawn: tuple[Card, ...] = ()  # during a deal: cards the leader has still to give
    receiving: int | None = None  # during a deal: the seat that must resolve the immediate card it got
    receiving_card: Card | None = None
    deal_queue: tuple[tuple[Card, int], ...] = ()  # the leader missed the deal: the rest, dealt in this order
    asked: tuple[int, ...] = ()  # during a window: the holders still to be asked, the one asked now first
    took_lead: bool = False  # the leader of the coming proposal took the lead with Strong Leader
    spotlight: tuple[int, int] | None = None  # during a mission: (who used In the Spotlight, on whom)
    uses: tuple[tuple[PlotUse, ...], ...] = ()  # the public Plot events, one tuple per round
    seen: tuple[Seen, ...] = ()  # private results; secret, each to its viewer
    decisions: int = 0  # the ballot of a Plot game (see engine.turns.ballot)

    def holders(self, card: Card) -> tuple[int, ...]:
        return tuple(seat for seat, hand in enumerate(self.hands) if card in hand)

    def holds(self, seat: int, card: Card) -> bool:
        return card in self.hands[seat]

    def count(self, seat: int, card: Card) -> int:
        return self.hands[seat].count(card)

    def give(self, seat: int, card: Card) -> PlotState:
        return replace(self, hands=_with_hand(self.hands, seat, self.hands[seat] + (card,)))

    def discard(self, seat: int, card: Card) -> PlotState:
        hand = list(self.hands[seat])
        hand.remove(card)
        return replace(self, hands=_with_hand(self.hands, seat, tuple(hand)))

    def log(self, round_index: int, use: PlotUse) -> PlotState:
        uses = self.uses + ((),) * (round_index + 1 - len(self.uses))
        return replace(self, uses=uses[:round_index] + (uses[round_index] + (use,),) + uses[round_index + 1 :])

    def cards_in_play(self) -> Counter[Card]:
        """Every card not yet discarded: in the deck, drawn, held or being resolved."""
        counted = Counter(self.deck) + Counter(self.drawn) + Counter(c for hand in self.hands for c in hand)
        if self.receiving_card is not None:
            counted[self.receiving_card] += 1
        return counted


def _with_hand(hands: tuple[tuple[Card, ...], ...], seat: int, hand: tuple[Card, ...]) -> tuple[tuple[Card, ...], ...]:
    return hands[:seat] + (hand,) + hands[seat + 1 :]


def clockwise_from(start: int, players: int) -> tuple[int, ...]:
    """Every seat, starting with `start` and going clockwise (Decision D7)."""
    return tuple((start + step) % players for step in range(players))


def neighbours(seat: int, players: int) -> tuple[int, int]:
    return ((seat - 1) % players, (seat + 1) % players)


def takeable(plot: PlotState, receiver: int) -> tuple[tuple[int, Card], ...]:
    """What Take Responsibility may take: (holder, card) for every card another player holds."""
    return tuple(
        (seat, card)
        for seat, hand in enumerate(plot.hands)
        if seat != receiver
        for card in dict.fromkeys(hand)  # one entry per kind of card: two alike are one choice
    )
