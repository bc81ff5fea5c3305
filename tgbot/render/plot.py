"""The Plot Thickens as the players read it: card names and texts, the private keyboards of the
windows and the deal, what a card showed one player, and the lines the group's board gives
Plot cards (who holds what, every public use)."""

from __future__ import annotations

from engine import (
    DealCard,
    OpenUp,
    Overhear,
    Pass,
    Phase,
    PlotView,
    Spotlight,
    TakeCard,
    UseNoConfidence,
    UseStrongLeader,
    Watch,
)
from engine.plot import Card, CardSeen, PlotUse, RoleSeen, UseKind
from engine.rules import MAX_PROPOSALS_PER_MISSION
from tgbot.buttons import PlotPress, encode
from tgbot.i18n import N_, t, tn
from tgbot.outgoing import Button, Keyboard
from tgbot.render.common import GroupScene, SeatScene, fitted, isolated, names, shown, title
from tgbot.table import Player

CARD_NAMES = {
    Card.STRONG_LEADER: N_("Strong Leader"),
    Card.NO_CONFIDENCE: N_("No Confidence"),
    Card.KEEPING_A_CLOSE_EYE_ON_YOU: N_("Keeping a Close Eye on You"),
    Card.IN_THE_SPOTLIGHT: N_("In the Spotlight"),
    Card.OPINION_MAKER: N_("Opinion Maker"),
    Card.TAKE_RESPONSIBILITY: N_("Take Responsibility"),
    Card.OVERHEARD_CONVERSATION: N_("Overheard Conversation"),
    Card.OPEN_UP: N_("Open Up"),
    Card.ESTABLISH_CONFIDENCE: N_("Establish Confidence"),
}
# The cards' own texts, in the rulebook's manner: when the card is played, and what it does.
CARD_TEXTS = {
    Card.STRONG_LEADER: N_("Before a team is chosen: take the leader's place for this proposal."),
    Card.NO_CONFIDENCE: N_("Right after a team is approved: throw it out; it counts as a rejected team."),
    Card.KEEPING_A_CLOSE_EYE_ON_YOU: N_("Once the team has played: look at one member's mission card."),
    Card.IN_THE_SPOTLIGHT: N_("Before the team plays: one member must play their mission card face up."),
    Card.OPINION_MAKER: N_("Kept for the whole game: vote first, in the open, on every team."),
    Card.TAKE_RESPONSIBILITY: N_("At once: take a Plot card that another player holds."),
    Card.OVERHEARD_CONVERSATION: N_("At once: look at the role of a player sitting next to you."),
    Card.OPEN_UP: N_("At once: show your role to a player of your choice."),
    Card.ESTABLISH_CONFIDENCE: N_("At once: the leader who gives this card shows their role to its receiver."),
}
CARD_CODES = {
    Card.STRONG_LEADER: "sl",
    Card.NO_CONFIDENCE: "nc",
    Card.KEEPING_A_CLOSE_EYE_ON_YOU: "ke",
    Card.IN_THE_SPOTLIGHT: "is",
    Card.OPINION_MAKER: "om",
    Card.TAKE_RESPONSIBILITY: "tr",
    Card.OVERHEARD_CONVERSATION: "oc",
    Card.OPEN_UP: "ou",
    Card.ESTABLISH_CONFIDENCE: "ec",
}
CARDS_BY_CODE = {code: card for card, code in CARD_CODES.items()}


def card_name(card: Card, lang: str) -> str:
    return t(lang, CARD_NAMES[card])


def card_line(card: Card, lang: str) -> str:
    return f"<b>{card_name(card, lang)}</b>: {t(lang, CARD_TEXTS[card])}"


def plot_key(ballot: int, seat: int) -> str:
    return f"plot:{ballot}:{seat}"


def seen_key(index: int) -> str:
    """The private message of the game's `index`th result a card showed someone."""
    return f"seen:{index}"


# ---------------------------------------------------------------- private keyboards


def _press(scene: SeatScene, choice: str) -> str:
    return encode(PlotPress(scene.game_id, scene.view.ballot, choice))


def _seat_rows(scene: SeatScene, seats, prefix: str) -> list[tuple[Button, ...]]:
    players = scene.group.players
    buttons = [Button(isolated(players[s].name), data=_press(scene, f"{prefix}{s}")) for s in seats]
    return list(fitted(tuple(tuple(buttons[i : i + 2]) for i in range(0, len(buttons), 2))))


def _pass_row(scene: SeatScene) -> tuple[Button, ...]:
    return (Button(t(scene.lang, "Pass"), data=_press(scene, "pass")),)


def chance_prompt(
    scene: SeatScene, targets: tuple[int, ...], pairs: tuple[tuple[int, int], ...], hurried: bool = False
) -> tuple[str, Keyboard]:
    """The holder asked in a window: use the card (on a target, where it takes one) or pass.
    `hurried`: they let their last chance lapse unanswered, and are given less time for this one."""
    lang, view = scene.lang, scene.view
    group = title(scene.group.chat_title)
    players = scene.group.players
    rows: list[tuple[Button, ...]] = []
    if view.phase is Phase.LEAD:
        text = t(lang, "«%(group)s»: you hold Strong Leader. Lead this proposal yourself?", group=group)
        rows.append((Button(t(lang, "⚡ Take the lead"), data=_press(scene, "sl")),))
    elif view.phase is Phase.OVERTURN:
        text = t(
            lang,
            "«%(group)s»: the team %(names)s was approved. You hold No Confidence: throw the team out?",
            group=group,
            names=names(players, view.team or ()),
        )
        if view.proposal_number >= MAX_PROPOSALS_PER_MISSION:
            # Thrown out, it is the fifth rejected team: the game ends there.
            text += "\n" + t(lang, "This is the fifth team: throwing it out ends the game, and the spies win.")
        rows.append((Button(t(lang, "✋ No Confidence"), data=_press(scene, "nc")),))
    elif view.phase is Phase.SPOTLIGHT:
        text = t(
            lang,
            "«%(group)s»: you hold In the Spotlight. Make one team member play their card face up?",
            group=group,
        )
        rows += _seat_rows(scene, targets, "sp")
    else:
        text = t(
            lang,
            "«%(group)s»: every card of the mission is played. You hold Keeping a Close Eye on You: "
            "look at a team member's card?",
            group=group,
        )
        missed = view.rounds[-1].auto_cards if view.rounds else ()
        if missed:
            # Counted as Success, as the result will show everyone: watching one tells nothing.
            template = N_("⏰ Time ran out for these cards, which count as ✅ Success: %(names)s")
            text += "\n" + t(lang, template, names=names(players, missed))
        rows += _seat_rows(scene, targets, "wa")
        rows += [
            (Button(f"{isolated(players[a].name)} + {isolated(players[b].name)}", data=_press(scene, f"wa{a}-{b}")),)
            for a, b in pairs
        ]
    if hurried:
        # They let the last one lapse unanswered: the clock gives them less time (`moves.clock.step_seconds`).
        template = N_(
            "⏱ You let your last chance pass without answering, so you have less time for this one. "
            "Answering it gives you the full time again."
        )
        text += "\n" + t(lang, template)
    rows.append(_pass_row(scene))
    return text, tuple(rows)


def deal_prompt(scene: SeatScene, drawn: tuple[Card, ...], chosen: Card | None) -> tuple[str, Keyboard]:
    """The leader deals the drawn cards, one at a time: which card next, then to whom."""
    lang = scene.lang
    group = title(scene.group.chat_title)
    cards = ", ".join(card_name(card, lang) for card in drawn)
    if chosen is None:
        text = "\n".join(
            [
                t(lang, "«%(group)s»: you are the leader. Give each Plot card drawn to another player.", group=group),
                t(lang, "Still to give: %(cards)s", cards=cards),
                *(card_line(card, lang) for card in dict.fromkeys(drawn)),
            ]
        )
        rows = [
            (
                Button(
                    t(lang, "Give %(card)s…", card=card_name(card, lang)), data=_press(scene, f"dc{CARD_CODES[card]}")
                ),
            )
            for card in dict.fromkeys(drawn)
        ]
        return text, tuple(rows)
    text = "\n".join(
        [
            t(lang, "«%(group)s»: give %(card)s to whom?", group=group, card=card_name(chosen, lang)),
            card_line(chosen, lang),
        ]
    )
    others = [s for s in range(len(scene.group.players)) if s != scene.seat.seat]
    rows = _seat_rows(scene, others, "dt")
    rows.append((Button(t(lang, "« Another card"), data=_press(scene, "db")),))
    return text, tuple(rows)


def immediate_prompt(
    scene: SeatScene, card: Card, options: tuple[tuple[int, Card | None], ...]
) -> tuple[str, Keyboard]:
    """The receiver of an immediate card resolves it now: it cannot be passed."""
    lang, players = scene.lang, scene.group.players
    group = title(scene.group.chat_title)
    head = t(lang, "«%(group)s»: you received %(card)s.", group=group, card=card_name(card, lang))
    if card is Card.TAKE_RESPONSIBILITY:
        ask = t(lang, "Take one Plot card another player holds:")
        rows = [
            (
                Button(
                    t(lang, "%(card)s from %(name)s", card=card_name(taken, lang), name=isolated(players[holder].name)),
                    data=_press(scene, f"tk{CARD_CODES[taken]}-{holder}"),
                ),
            )
            for holder, taken in options
            if taken is not None
        ]
        return "\n".join([head, ask]), tuple(rows)
    if card is Card.OVERHEARD_CONVERSATION:
        ask = t(lang, "Look at the role of a player next to you:")
        return "\n".join([head, ask]), tuple(_seat_rows(scene, [s for s, _ in options], "oh"))
    ask = t(lang, "Show your role to a player of your choice:")
    return "\n".join([head, ask]), tuple(_seat_rows(scene, [s for s, _ in options], "ou"))


def prompt_closed(scene: SeatScene, action=None) -> str:
    """A Plot keyboard once its decision is made: what this player chose (`action`, an engine
    action), or only that it is done."""
    lang, players = scene.lang, scene.group.players
    group = title(scene.group.chat_title)

    def name(seat: int) -> str:
        return shown(players[seat].name)

    if isinstance(action, Pass):
        return t(lang, "«%(group)s»: you passed; a held card stays in front of you.", group=group)
    if isinstance(action, UseStrongLeader):
        return t(lang, "«%(group)s»: you took the lead with Strong Leader.", group=group)
    if isinstance(action, UseNoConfidence):
        return t(lang, "«%(group)s»: you threw the team out with No Confidence.", group=group)
    if isinstance(action, Spotlight):
        return t(lang, "«%(group)s»: you put %(name)s in the spotlight.", group=group, name=name(action.target))
    if isinstance(action, Watch):
        watched = ", ".join(name(seat) for seat in action.targets)
        return t(lang, "«%(group)s»: you watched the card of %(names)s.", group=group, names=watched)
    if isinstance(action, DealCard):
        card = card_name(action.card, lang)
        return t(lang, "«%(group)s»: you gave %(card)s to %(name)s.", group=group, card=card, name=name(action.to))
    if isinstance(action, TakeCard):
        card = card_name(action.card, lang)
        return t(
            lang, "«%(group)s»: you took %(card)s from %(name)s.", group=group, card=card, name=name(action.holder)
        )
    if isinstance(action, Overhear):
        return t(lang, "«%(group)s»: you looked at the role of %(name)s.", group=group, name=name(action.target))
    if isinstance(action, OpenUp):
        return t(lang, "«%(group)s»: you showed your role to %(name)s.", group=group, name=name(action.to))
    return t(lang, "«%(group)s»: done.", group=group)


def prompt_closed_for_you(scene: SeatScene, action) -> str:
    """A Plot keyboard whose decision a computer player made for a person whose turns it takes:
    what it chose in their name (a card used or passed, a card dealt, a target), told to them alone."""
    return "\n".join([t(scene.lang, "🤖 A computer player chose for you:"), prompt_closed(scene, action)])


def prompt_drawn_for_you(scene: SeatScene, actions) -> str:
    """A deal or an immediate card whose time ran out: what was drawn at random in this player's name
    (`actions`, the engine actions it stands for: each card given, or the card's target), told to them
    alone, since a card that must be resolved is never simply passed."""
    lines = [t(scene.lang, "⏰ Time ran out, so this was drawn at random for you:")]
    return "\n".join(lines + [prompt_closed(scene, action) for action in actions])


def prompt_timed_out(scene: SeatScene) -> str:
    return t(
        scene.lang,
        "«%(group)s»: time ran out, so this was decided for you (a held card is kept).",
        group=title(scene.group.chat_title),
    )


def seen_message(scene: SeatScene, seen: RoleSeen | CardSeen) -> str:
    """What a card showed this player alone."""
    lang, players = scene.lang, scene.group.players
    group = title(scene.group.chat_title)
    name = shown(players[seen.seat].name)
    if isinstance(seen, RoleSeen):
        if seen.spy:
            return t(lang, "«%(group)s»: you saw %(name)s's role: a <b>spy</b>.", group=group, name=name)
        return t(lang, "«%(group)s»: you saw %(name)s's role: the <b>Resistance</b>.", group=group, name=name)
    if seen.fail:
        return t(
            lang,
            "«%(group)s», mission %(mission)d: you watched %(name)s's card: ❌ Fail.",
            group=group,
            mission=seen.mission,
            name=name,
        )
    return t(
        lang,
        "«%(group)s», mission %(mission)d: you watched %(name)s's card: ✅ Success.",
        group=group,
        mission=seen.mission,
        name=name,
    )


# ---------------------------------------------------------------- the group's board


def holders_line(scene: GroupScene) -> str | None:
    """Who holds which Plot card, face up for all."""
    plot = scene.view.plot
    if plot is None:
        return None
    held = [
        t(scene.lang, "%(name)s: %(cards)s", name=shown(scene.players[seat].name), cards=_cards(hand, scene.lang))
        for seat, hand in enumerate(plot.hands)
        if hand
    ]
    return t(scene.lang, "🃏 Plot cards held: %(held)s", held="; ".join(held) if held else "—")


def _cards(hand: tuple[Card, ...], lang: str) -> str:
    return ", ".join(card_name(card, lang) for card in hand)


def use_line(use: PlotUse, players: tuple[Player, ...], lang: str) -> str:
    """One public use of a Plot card, in one line; one the clock drew at random says whose time ran out."""
    line = _use_line(use, players, lang)
    if not use.drawn:
        return line
    late = t(lang, "⏰ %(name)s did not choose in time: this was drawn at random.", name=shown(players[use.by].name))
    return f"{line} {late}"


def _use_line(use: PlotUse, players: tuple[Player, ...], lang: str) -> str:
    by, target = shown(players[use.by].name), shown(players[use.target].name)
    if use.kind is UseKind.DEAL:
        return t(lang, "🃏 %(by)s gave %(card)s to %(to)s.", by=by, card=card_name(use.card, lang), to=target)
    if use.kind is UseKind.TAKE:
        return t(lang, "🃏 %(by)s took %(card)s from %(holder)s.", by=by, card=card_name(use.card, lang), holder=target)
    if use.kind is UseKind.OVERHEARD:
        return t(lang, "👂 %(by)s looked at %(target)s's role.", by=by, target=target)
    if use.kind is UseKind.OPEN_UP:
        return t(lang, "🤝 %(by)s showed their role to %(to)s.", by=by, to=target)
    if use.kind is UseKind.ESTABLISH_CONFIDENCE:
        return t(lang, "🤝 %(by)s, the leader, showed their role to %(to)s.", by=by, to=target)
    if use.kind is UseKind.SPOTLIGHT:
        if use.fail:
            return t(
                lang, "🔦 %(by)s put %(target)s in the spotlight: %(target)s played ❌ Fail.", by=by, target=target
            )
        return t(lang, "🔦 %(by)s put %(target)s in the spotlight: %(target)s played ✅ Success.", by=by, target=target)
    return t(lang, "👁 %(by)s watched %(target)s's card.", by=by, target=target)


def upcoming_uses(scene: GroupScene) -> list[str]:
    """While a mission's first team is being prepared (the leader dealing, then choosing): what was
    done with Plot cards so far, each card as it was given and what an immediate card did. A Plot
    card is public from the moment it is dealt; the proposal's own message shows these again."""
    view = scene.view
    if view.plot is None or view.phase not in (Phase.DEAL, Phase.PROPOSING):
        return []
    # The uses of a proposal not made yet belong to a round the view does not hold yet.
    return proposal_uses(scene, len(view.rounds), 0)


def proposal_uses(scene: GroupScene, round_index: int, proposal_index: int) -> list[str]:
    """The public uses that belong to one proposal."""
    plot = scene.view.plot
    if plot is None or round_index >= len(plot.uses):
        return []
    uses = plot.uses[round_index]
    lines = []
    for index, use in enumerate(uses):
        if use.proposal != proposal_index:
            continue
        line = use_line(use, scene.players, scene.lang)
        if _took_nothing(plot, uses, index):
            line += " " + t(scene.lang, "Nobody else held a Plot card: it was discarded.")
        lines.append(line)
    return lines


def _took_nothing(plot: PlotView, uses: tuple[PlotUse, ...], index: int) -> bool:
    """Whether the use at `index` dealt Take Responsibility to a player who found no card to take
    (the card then does nothing): a card taken is logged right after the deal, before the next one."""
    use = uses[index]
    if use.kind is not UseKind.DEAL or use.card is not Card.TAKE_RESPONSIBILITY:
        return False
    if index + 1 < len(uses):
        following = uses[index + 1]
        return not (following.kind is UseKind.TAKE and following.by == use.target)
    # The last use: its receiver may be choosing what to take right now.
    return not (plot.receiving == use.target and plot.receiving_card is Card.TAKE_RESPONSIBILITY)


def open_votes_line(scene: GroupScene, revealed: tuple[tuple[int, bool], ...] | None = None) -> str | None:
    """The Opinion Makers' open votes: those of the vote going on, or `revealed` ones of a proposal."""
    plot = scene.view.plot
    votes = revealed if revealed is not None else (plot.open_votes if plot is not None else ())
    if not votes:
        return None
    cast = ", ".join(f"{shown(scene.players[seat].name)} {'👍' if vote else '👎'}" for seat, vote in votes)
    return t(scene.lang, "Opinion Makers voted first, in the open: %(votes)s", votes=cast)


def spotlight_line(scene: GroupScene) -> str | None:
    """Who was put in the spotlight, while the team plays and the card is not face up yet (once it
    is, the use's own line says which card it was)."""
    view = scene.view
    plot = view.plot
    if plot is None or plot.spotlight is None or view.phase is not Phase.MISSION:
        return None
    proposal = len(view.rounds[-1].proposals) - 1
    uses = plot.uses[len(view.rounds) - 1] if len(view.rounds) <= len(plot.uses) else ()
    if any(use.kind is UseKind.SPOTLIGHT and use.proposal == proposal for use in uses):
        return None
    by, target = (shown(scene.players[seat].name) for seat in plot.spotlight)
    template = N_("🔦 %(by)s put %(target)s in the spotlight: %(target)s plays their card face up.")
    return t(scene.lang, template, by=by, target=target)


def window_line(scene: GroupScene) -> str | None:
    """What comes in a window of Plot cards (holders asked one at a time), said as the order of
    play: the board is not edited when a window closes with nobody using a card, so it must
    still read true afterwards (⏳ Waiting for… tells exactly who is asked now)."""
    view, lang = scene.view, scene.lang
    if view.phase is Phase.LEAD:
        return t(lang, "⚡ First, Strong Leader holders are asked whether to take the lead.")
    if view.phase is Phase.DEAL:
        drawn = view.plot.drawn if view.plot is not None else ()
        if drawn:
            return tn(
                lang,
                "🃏 The leader drew %(cards)s and deals it, then chooses the team.",
                "🃏 The leader drew %(cards)s and deals them, then chooses the team.",
                len(drawn),
                cards=", ".join(card_name(card, lang) for card in drawn),
            )
        return t(lang, "🃏 The leader deals the Plot cards drawn, then chooses the team.")
    if view.phase is Phase.OVERTURN:
        return t(lang, "✋ Before the team plays, No Confidence holders are asked whether to throw it out.")
    if view.phase is Phase.SPOTLIGHT:
        return t(lang, "🔦 Before the team plays, the holder of In the Spotlight is asked whether to use it.")
    if view.phase is Phase.WATCH:
        return t(lang, "👁 Every card is played; Keeping a Close Eye on You may look at one.")
    return None


def rules_text(lang: str) -> str:
    lines = [
        t(
            lang,
            "<b>The Plot Thickens</b> (with /newgame plot, or in /settings): on each mission's first proposal the "
            "leader draws Plot cards (one at 5-6 players, two at 7-8, three at 9-10) and gives each to another "
            "player, face up. Everyone always sees who holds what and every use. The cards:",
        )
    ]
    lines += [card_line(card, lang) for card in Card]
    return "\n".join(lines)
