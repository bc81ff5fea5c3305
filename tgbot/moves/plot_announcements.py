"""The private side of Plot cards: the keyboard of whoever the game asks next, and what a card
showed one player alone. Kept apart from the presses (`tgbot.moves.plot`) so that every step,
a press or the clock's, can call it."""

from __future__ import annotations

from engine import (
    PLOT_PHASES,
    DealCard,
    GameState,
    OpenUp,
    Overhear,
    Phase,
    Spotlight,
    TakeCard,
    Watch,
    legal_actions,
    public_view,
)
from engine.actions import DealTimedOut, ImmediateTimedOut
from engine.plot import Card
from tgbot.moves import absence, announcements
from tgbot.outgoing import Edit, Outgoing, Send
from tgbot.render import plot as plot_render
from tgbot.render.common import seat_scene
from tgbot.table import Table


def prompt_for(table: Table, seat: int, bot_username: str) -> Send | None:
    """The private keyboard of a Plot decision the game waits for `seat` to make, if any."""
    game = table.game
    if game is None or game.phase not in PLOT_PHASES or seat not in public_view(game).waiting_for:
        return None
    scene = seat_scene(table, seat)
    plot = game.plot
    assert plot is not None
    if game.phase is Phase.DEAL and plot.receiving is None:
        chosen = Card(table.draft_card) if table.draft_card is not None else None
        text, buttons = plot_render.deal_prompt(scene, plot.drawn, chosen if chosen in plot.drawn else None)
    elif game.phase is Phase.DEAL:
        options = tuple(_immediate_options(game, seat))
        text, buttons = plot_render.immediate_prompt(scene, plot.receiving_card, options)
    else:
        targets, pairs = _targets(game, seat)
        text, buttons = plot_render.chance_prompt(scene, targets, pairs, hurried=absence.hurried(table, seat))
    key = plot_render.plot_key(scene.view.ballot, seat)
    return announcements.to_player(table, seat, text, buttons, key, bot_username)


def _targets(game: GameState, seat: int) -> tuple[tuple[int, ...], tuple[tuple[int, int], ...]]:
    """The seats the asked holder's card may name (and pairs, for two watch cards)."""
    singles, pairs = [], []
    for action in legal_actions(game, seat):
        if isinstance(action, Spotlight):
            singles.append(action.target)
        elif isinstance(action, Watch):
            (singles if len(action.targets) == 1 else pairs).append(
                action.targets[0] if len(action.targets) == 1 else action.targets
            )
    return tuple(singles), tuple(pairs)


def _immediate_options(game: GameState, seat: int):
    for action in legal_actions(game, seat):
        if isinstance(action, TakeCard):
            yield action.holder, action.card
        elif isinstance(action, Overhear):
            yield action.target, None
        elif isinstance(action, OpenUp):
            yield action.to, None


def after_step(before: Table, after: Table, bot_username: str) -> list[Outgoing]:
    """The private side of a Plot step: the keyboard of whoever is asked next, and what a card
    showed one player alone (each to that player)."""
    out: list[Outgoing] = []
    if before.game is None or after.game is None or before.game.plot is None:
        return out
    if public_view(after.game).ballot != public_view(before.game).ballot:
        for seat in public_view(after.game).waiting_for:
            prompt = prompt_for(after, seat, bot_username)
            if prompt is not None:
                out.append(prompt)
    seen = after.game.plot.seen if after.game.plot is not None else ()
    out += [seen_message(after, index, bot_username) for index in range(len(before.game.plot.seen), len(seen))]
    return out


def seen_message(table: Table, index: int, bot_username: str) -> Send:
    """What a card showed one player (the game's `index`th such result), to that player alone: keyed,
    so that a player who could not be reached when it was sent gets it when they open the chat again
    (`play.pending_private`), and the group hears that they cannot be reached."""
    seen = table.game.plot.seen[index]
    text = plot_render.seen_message(seat_scene(table, seen.viewer), seen)
    key = plot_render.seen_key(index)
    return announcements.to_player(table, seen.viewer, text, (), key, bot_username, waits=False)


def seen_messages(table: Table, seat: int, bot_username: str) -> list[Send]:
    """Every result a card showed `seat` so far in this game."""
    plot = table.game.plot if table.game is not None else None
    if plot is None:
        return []
    return [seen_message(table, index, bot_username) for index, seen in enumerate(plot.seen) if seen.viewer == seat]


def closed_by_the_clock(before: Table, after: Table, action) -> list[Outgoing]:
    """A Plot decision the deadline made (`action`, the engine's timeout action): its keyboard keeps
    no live buttons and says what was decided: a chance passed, or what was drawn at random in the
    player's name (the cards dealt, the card's target)."""
    if before.game is None or before.game.phase not in PLOT_PHASES:
        return []
    ballot = public_view(before.game).ballot
    out: list[Outgoing] = []
    for seat in public_view(before.game).waiting_for:
        scene = seat_scene(after, seat)
        drawn = _drawn_actions(before.game, seat, action)
        text = plot_render.prompt_drawn_for_you(scene, drawn) if drawn else plot_render.prompt_timed_out(scene)
        out.append(Edit(after.players[seat].user_id, plot_render.plot_key(ballot, seat), text, protected=True))
    return out


def _drawn_actions(game: GameState, seat: int, action) -> tuple:
    """The choices a deal or immediate card drawn at random made for `seat`, as the engine actions
    they stand for; none for a chance that lapsed (a pass)."""
    if isinstance(action, DealTimedOut):
        return tuple(DealCard(seat, card, to) for card, to in action.deals)
    if isinstance(action, ImmediateTimedOut):
        card = game.plot.receiving_card
        if card is Card.TAKE_RESPONSIBILITY:
            return (TakeCard(seat, action.card, action.target),)
        if card is Card.OVERHEARD_CONVERSATION:
            return (Overhear(seat, action.target),)
        return (OpenUp(seat, action.target),)
    return ()
