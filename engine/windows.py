"""The Plot actions: using, passing and dealing Plot cards, each in its own window.

Called by `engine.game.apply` for a game with Plot cards; every refusal is an
`IllegalAction` raised before anything is built.
"""

from __future__ import annotations

from dataclasses import replace

from engine.actions import (
    ChanceTimedOut,
    DealCard,
    DealTimedOut,
    ImmediateTimedOut,
    OpenUp,
    Overhear,
    Pass,
    PlotAction,
    Spotlight,
    TakeCard,
    UseNoConfidence,
    UseStrongLeader,
    Watch,
)
from engine.errors import IllegalAction, Reason
from engine.events import (
    CardDealt,
    CardTaken,
    CardWatched,
    ChancePassed,
    ConfidenceEstablished,
    ConversationOverheard,
    Event,
    NoConfidenceUsed,
    OpenedUp,
    SpotlightUsed,
    StrongLeaderUsed,
)
from engine.plot import (
    IMMEDIATE_CARDS,
    Card,
    CardSeen,
    PlotUse,
    RoleSeen,
    UseKind,
    neighbours,
    takeable,
)
from engine.state import GameState, Phase
from engine.steps import (
    WINDOW_CARDS,
    Steps,
    after_rejection,
    ask_next,
    close_window,
    plot_of,
    proposal_index,
    round_index,
    spotlight_targets,
    watch_targets,
)


def apply_plot(state: GameState, action: PlotAction) -> Steps:
    if state.plot is None:
        raise IllegalAction(Reason.PLOT_CARDS_NOT_IN_PLAY)
    if isinstance(action, Pass):
        return _pass(state, action.seat, timed_out=False)
    if isinstance(action, ChanceTimedOut):
        _require_window(state, None)
        return _pass(state, plot_of(state).asked[0], timed_out=True)
    if isinstance(action, UseStrongLeader):
        return _strong_leader(state, action)
    if isinstance(action, UseNoConfidence):
        return _no_confidence(state, action)
    if isinstance(action, Spotlight):
        return _spotlight(state, action)
    if isinstance(action, Watch):
        return _watch(state, action)
    if isinstance(action, DealCard):
        return _deal(state, action)
    if isinstance(action, DealTimedOut):
        return _deal_drawn(state, action)
    return _resolve(state, action)


# ---------------------------------------------------------------- windows of held cards


def _require_window(state: GameState, phase: Phase | None) -> None:
    """The game is in a window (`phase`, or any when None) and someone is asked."""
    in_window = state.phase in WINDOW_CARDS if phase is None else state.phase is phase
    if not in_window:
        raise IllegalAction(Reason.WRONG_WINDOW, f"the game is in the {state.phase.value} step")


def _require_asked(state: GameState, seat: int, card: Card) -> None:
    if not plot_of(state).holds(seat, card):
        raise IllegalAction(Reason.NOT_THE_HOLDER, f"seat {seat} holds no {card.value}")
    asked = plot_of(state).asked
    if not asked or asked[0] != seat:
        raise IllegalAction(Reason.NOT_ASKED, "another holder is asked now" if asked else "nobody is asked")


def _pass(state: GameState, seat: int, timed_out: bool) -> Steps:
    _require_window(state, None)
    _require_asked(state, seat, WINDOW_CARDS[state.phase])
    plot = plot_of(state)
    state = replace(state, plot=replace(plot, asked=plot.asked[1:]))
    return ask_next(state, [ChancePassed(seat=seat, timed_out=timed_out)])


def _strong_leader(state: GameState, action: UseStrongLeader) -> Steps:
    _require_window(state, Phase.LEAD)
    _require_asked(state, action.seat, Card.STRONG_LEADER)
    # One Strong Leader closes the window: nobody else may take the lead from this one.
    plot = replace(plot_of(state).discard(action.seat, Card.STRONG_LEADER), took_lead=True)
    state = replace(state, leader=action.seat, plot=plot)
    return close_window(state, [StrongLeaderUsed(seat=action.seat)])


def _no_confidence(state: GameState, action: UseNoConfidence) -> Steps:
    _require_window(state, Phase.OVERTURN)
    _require_asked(state, action.seat, Card.NO_CONFIDENCE)
    current = state.current_round
    assert current is not None
    proposal = replace(current.proposals[-1], no_confidence=action.seat)
    current = replace(current, proposals=current.proposals[:-1] + (proposal,))
    plot = replace(plot_of(state).discard(action.seat, Card.NO_CONFIDENCE), asked=())
    state = replace(state, rounds=state.rounds[:-1] + (current,), plot=plot)
    return after_rejection(state, current, [NoConfidenceUsed(seat=action.seat)])


def _spotlight(state: GameState, action: Spotlight) -> Steps:
    _require_window(state, Phase.SPOTLIGHT)
    _require_asked(state, action.seat, Card.IN_THE_SPOTLIGHT)
    if not _is_seat(action.target, state.players) or action.target not in spotlight_targets(state, action.seat):
        raise IllegalAction(Reason.BAD_TARGET, "the spotlight falls on another team member")
    plot = plot_of(state).discard(action.seat, Card.IN_THE_SPOTLIGHT)
    state = replace(state, plot=replace(plot, spotlight=(action.seat, action.target)))
    # The use goes into the record once the card is played face up (see engine.game).
    return close_window(state, [SpotlightUsed(by=action.seat, target=action.target)])


def _watch(state: GameState, action: Watch) -> Steps:
    _require_window(state, Phase.WATCH)
    _require_asked(state, action.seat, Card.KEEPING_A_CLOSE_EYE_ON_YOU)
    targets = tuple(action.targets) if isinstance(action.targets, tuple | list) else ()
    allowed = watch_targets(state, action.seat)
    if not targets or len(set(targets)) != len(targets) or any(not _is_seat(t, state.players) for t in targets):
        raise IllegalAction(Reason.BAD_TARGET, f"watch one or more of {list(allowed)}, each once")
    if any(t not in allowed for t in targets):
        raise IllegalAction(Reason.BAD_TARGET, f"watch one or more of {list(allowed)}, each once")
    plot = plot_of(state)
    if len(targets) > plot.count(action.seat, Card.KEEPING_A_CLOSE_EYE_ON_YOU):
        raise IllegalAction(Reason.TOO_MANY_TARGETS, "one watch card for each member watched")
    current = state.current_round
    assert current is not None
    cards = dict(state.pending_cards)
    events: list[Event] = []
    for target in targets:
        plot = plot.discard(action.seat, Card.KEEPING_A_CLOSE_EYE_ON_YOU)
        use = PlotUse(UseKind.WATCH, proposal_index(state), by=action.seat, target=target)
        seen = CardSeen(viewer=action.seat, seat=target, mission=current.mission, fail=cards[target])
        plot = replace(plot.log(round_index(state), use), seen=plot.seen + (seen,))
        events.append(CardWatched(by=action.seat, target=target))
    state = replace(state, plot=replace(plot, asked=plot.asked[1:]))
    return ask_next(state, events)


# ---------------------------------------------------------------- the deal and the immediate cards


def _deal(state: GameState, action: DealCard) -> Steps:
    if state.phase is not Phase.DEAL:
        raise IllegalAction(Reason.WRONG_WINDOW, "cards are dealt on a mission's first proposal, before the team")
    if action.seat != state.leader:
        raise IllegalAction(Reason.NOT_THE_LEADER, f"seat {state.leader} deals")
    plot = plot_of(state)
    if plot.receiving is not None:
        raise IllegalAction(Reason.CARD_TO_RESOLVE, f"seat {plot.receiving} resolves its card first")
    _check_deal(state, action.card, action.to)
    return _deal_on(*_give(state, action.card, action.to, [], drawn=False))


def _deal_drawn(state: GameState, action: DealTimedOut) -> Steps:
    if state.phase is not Phase.DEAL:
        raise IllegalAction(Reason.WRONG_WINDOW, "no deal is open")
    plot = plot_of(state)
    deals = tuple(action.deals) if isinstance(action.deals, tuple | list) else ()
    if not all(isinstance(deal, tuple | list) and len(deal) == 2 for deal in deals):
        raise IllegalAction(Reason.NOT_DRAWN, "each deal is a card and a seat")
    deals = tuple((card, to) for card, to in deals)
    if plot.receiving is not None or plot.deal_queue:
        raise IllegalAction(Reason.CARD_TO_RESOLVE, "the deal is no longer the leader's")
    for card, to in deals:
        _check_deal(state, card, to)
    if sorted(card for card, _ in deals) != sorted(plot.drawn):
        raise IllegalAction(Reason.NOT_DRAWN, "deal every drawn card, once each")
    return _deal_on(replace(state, plot=replace(plot, deal_queue=deals)), [])


def _check_deal(state: GameState, card: object, to: object) -> None:
    if not isinstance(card, Card) or card not in plot_of(state).drawn:
        raise IllegalAction(Reason.NOT_DRAWN, f"{card!r} is not among the drawn cards")
    if not _is_seat(to, state.players) or to == state.leader:
        raise IllegalAction(Reason.BAD_TARGET, "the leader gives each card to another player")


def _is_seat(value: object, players: int) -> bool:
    """A seat number, exactly: true is not seat 1, nor "2" seat 2."""
    return isinstance(value, int) and not isinstance(value, bool) and 0 <= value < players


def _deal_on(state: GameState, events: list[Event]) -> Steps:
    """Give the cards a missed deadline dealt, until one waits for its receiver; then the team."""
    while plot_of(state).receiving is None and plot_of(state).deal_queue:
        plot = plot_of(state)
        (card, to), queue = plot.deal_queue[0], plot.deal_queue[1:]
        state, events = _give(replace(state, plot=replace(plot, deal_queue=queue)), card, to, events, drawn=True)
    plot = plot_of(state)
    if plot.receiving is None and not plot.drawn:
        state = replace(state, phase=Phase.PROPOSING)
    return state, tuple(events)


def _give(state: GameState, card: Card, to: int, events: list[Event], drawn: bool) -> tuple[GameState, list[Event]]:
    plot = plot_of(state)
    remaining = list(plot.drawn)
    remaining.remove(card)
    plot = replace(plot, drawn=tuple(remaining))
    deal = PlotUse(UseKind.DEAL, proposal_index(state), state.leader, to, card=card, drawn=drawn)
    plot = plot.log(round_index(state), deal)
    events = [*events, CardDealt(card=card, to=to, drawn=drawn)]
    if card not in IMMEDIATE_CARDS:
        return replace(state, plot=plot.give(to, card)), events
    if card is Card.ESTABLISH_CONFIDENCE:
        # The leader chose the receiver, and so who sees the leader's role.
        use = PlotUse(UseKind.ESTABLISH_CONFIDENCE, proposal_index(state), state.leader, to, drawn=drawn)
        seen = RoleSeen(viewer=to, seat=state.leader, spy=state.leader in state.spies)
        plot = replace(plot.log(round_index(state), use), seen=plot.seen + (seen,))
        return replace(state, plot=plot), [*events, ConfidenceEstablished(by=state.leader, to=to)]
    if card is Card.TAKE_RESPONSIBILITY and not takeable(plot, to):
        return replace(state, plot=plot), events  # nothing to take: the card is simply discarded
    return replace(state, plot=replace(plot, receiving=to, receiving_card=card)), events


def immediate_options(state: GameState) -> tuple[tuple[int, Card | None], ...]:
    """The choices of the receiver resolving an immediate card: (seat, card taken or None)."""
    plot = plot_of(state)
    receiver = plot.receiving
    assert receiver is not None
    if plot.receiving_card is Card.TAKE_RESPONSIBILITY:
        return takeable(plot, receiver)
    if plot.receiving_card is Card.OVERHEARD_CONVERSATION:
        return tuple((seat, None) for seat in neighbours(receiver, state.players))
    return tuple((seat, None) for seat in range(state.players) if seat != receiver)


def _resolve(state: GameState, action: TakeCard | Overhear | OpenUp | ImmediateTimedOut) -> Steps:
    plot = plot_of(state)
    if state.phase is not Phase.DEAL or plot.receiving is None:
        raise IllegalAction(Reason.WRONG_WINDOW, "no immediate card waits to be resolved")
    receiver, card = plot.receiving, plot.receiving_card
    forced = isinstance(action, ImmediateTimedOut)
    if forced:
        target, taken = action.target, action.card
    else:
        expected = {TakeCard: Card.TAKE_RESPONSIBILITY, Overhear: Card.OVERHEARD_CONVERSATION, OpenUp: Card.OPEN_UP}
        if action.seat != receiver:
            raise IllegalAction(Reason.NOT_THE_RECEIVER, f"seat {receiver} resolves its card")
        if expected[type(action)] is not card:
            raise IllegalAction(Reason.WRONG_CARD, f"seat {receiver} resolves {card}")
        if isinstance(action, TakeCard):
            target, taken = action.holder, action.card
        elif isinstance(action, Overhear):
            target, taken = action.target, None
        else:
            target, taken = action.to, None
    if not _is_seat(target, state.players) or not (taken is None or isinstance(taken, Card)):
        raise IllegalAction(Reason.BAD_TARGET, f"not a choice {card} allows")
    if (target, taken) not in immediate_options(state):
        raise IllegalAction(Reason.BAD_TARGET, f"not a choice {card} allows")
    plot = replace(plot, receiving=None, receiving_card=None)
    index, proposal = round_index(state), proposal_index(state)
    spy = (receiver if card is Card.OPEN_UP else target) in state.spies
    event: Event
    if card is Card.TAKE_RESPONSIBILITY:
        assert taken is not None
        plot = plot.discard(target, taken).give(receiver, taken)
        plot = plot.log(index, PlotUse(UseKind.TAKE, proposal, receiver, target, card=taken, drawn=forced))
        event = CardTaken(by=receiver, card=taken, holder=target, forced=forced)
    elif card is Card.OVERHEARD_CONVERSATION:
        plot = plot.log(index, PlotUse(UseKind.OVERHEARD, proposal, receiver, target, drawn=forced))
        plot = replace(plot, seen=plot.seen + (RoleSeen(viewer=receiver, seat=target, spy=spy),))
        event = ConversationOverheard(by=receiver, target=target, forced=forced)
    else:
        plot = plot.log(index, PlotUse(UseKind.OPEN_UP, proposal, receiver, target, drawn=forced))
        plot = replace(plot, seen=plot.seen + (RoleSeen(viewer=target, seat=receiver, spy=spy),))
        event = OpenedUp(by=receiver, to=target, forced=forced)
    return _deal_on(replace(state, plot=plot), [event])
