"""What one player sees in private, rendered from their own seat's view and the public view.

Role, mission card and the leader's team choice come here, each protected from forwarding
(a player cannot paste them into the group as proof).
"""

from __future__ import annotations

from engine import Phase, Role
from engine import rules as game_rules
from engine.plot import Card
from tgbot.buttons import CardPress, HintsPress, MissionPress, TeamPress, encode
from tgbot.i18n import t, tn
from tgbot.outgoing import Button, Keyboard
from tgbot.render.common import SeatScene, fitted, isolated, mission_button_label, names, shown, title, vote_lines
from tgbot.render.plot import card_name


def role_message(scene: SeatScene) -> str:
    lang, seat = scene.lang, scene.seat
    group = title(scene.group.chat_title)
    if seat.role is Role.RESISTANCE:
        lines = [
            t(lang, "Your game in «%(group)s»: you are in the <b>Resistance</b>.", group=group),
            t(
                lang,
                "To win, make three missions succeed: vote on each team in the group, and on a mission always "
                "play ✅ Success.",
            ),
        ]
        if scene.group.hints_on:
            lines.append(t(lang, "🔎 Hints: who could be a spy, from the votes and missions so far."))
        return "\n".join(lines)
    if scene.view.variants.blind_spies:
        lines = [
            t(
                lang,
                "Your game in «%(group)s»: you are a <b>spy</b>. Under Blind Spies you do not know the other spies.",
                group=group,
            )
        ]
    else:
        others = [s for s in seat.known_spies if s != seat.seat]
        lines = [
            tn(
                lang,
                "Your game in «%(group)s»: you are a <b>spy</b>. The other spy: %(names)s.",
                "Your game in «%(group)s»: you are a <b>spy</b>. The other spies: %(names)s.",
                len(others),
                group=group,
                names=names(scene.group.players, others),
            )
        ]
    lines.append(
        t(
            lang,
            "To win, make three missions fail or get five teams in a row rejected: vote on each team in the "
            "group, and on a mission you may play ❌ Fail. Keep your role secret.",
        )
    )
    if scene.group.hints_on:
        lines.append(t(lang, "🔎 Hints: each player as the public record alone shows them, you included."))
    return "\n".join(lines)


def role_key(seat: int) -> str:
    return f"role:{seat}"


def hints_row(scene: SeatScene) -> tuple[Button, ...]:
    if not scene.group.hints_on:
        return ()
    return (Button(t(scene.lang, "🔎 Hints"), data=encode(HintsPress(scene.game_id))),)


def role_buttons(scene: SeatScene) -> Keyboard:
    row = hints_row(scene)
    return (row,) if row else ()


# ---------------------------------------------------------------- the leader's turn


def in_pairs(buttons: list[Button]) -> Keyboard:
    """Buttons two to a row (five in one row showed each label cut to its first letters on a
    phone), each alone where a label (a long name) is too long for half a row."""
    return fitted(tuple(tuple(buttons[i : i + 2]) for i in range(0, len(buttons), 2)))


def leader_key(ballot: int) -> str:
    return f"lead:{ballot}"


def leader_prompt(scene: SeatScene, draft_team: tuple[int, ...], draft_mission: int | None) -> tuple[str, Keyboard]:
    """The leader's own keyboard: which mission (under Targeting), which players, then propose."""
    lang, view = scene.lang, scene.view
    players = scene.group.players
    group = title(scene.group.chat_title)
    ballot = view.ballot
    if view.variants.targeting and draft_mission not in view.open_missions:
        text = t(lang, "«%(group)s»: you are the leader. Choose which mission the team attempts.", group=group)
        missions = [
            Button(mission_button_label(lang, view.players, m), data=encode(MissionPress(scene.game_id, ballot, m)))
            for m in view.open_missions
        ]
        return text, in_pairs(missions)
    mission = draft_mission if view.variants.targeting else view.open_missions[0]
    size = game_rules.team_size(view.players, mission)
    ticked = set(draft_team)
    lines = [
        tn(
            lang,
            "«%(group)s»: you are the leader. Choose %(n)d player for mission %(mission)d.",
            "«%(group)s»: you are the leader. Choose %(n)d players for mission %(mission)d.",
            size,
            group=group,
            mission=mission,
        ),
        t(lang, "Chosen: %(names)s", names=names(players, sorted(ticked)) or "—"),
    ]
    if game_rules.fails_required(view.players, mission) > 1:
        lines.insert(1, two_fails_line(lang))
    seat_buttons = [
        Button(
            ("✔ " if seat in ticked else "") + isolated(player.name),
            data=encode(TeamPress(scene.game_id, ballot, seat)),
        )
        for seat, player in enumerate(players)
    ]
    # Laid out as if every name were ticked, so that the keyboard keeps its shape as the leader ticks.
    widest = in_pairs([Button("✔ " + isolated(player.name), data=str(seat)) for seat, player in enumerate(players)])
    rows = [tuple(seat_buttons[int(button.data)] for button in row) for row in widest]
    if view.variants.targeting:
        others = [
            Button(mission_button_label(lang, view.players, m), data=encode(MissionPress(scene.game_id, ballot, m)))
            for m in view.open_missions
            if m != mission
        ]
        rows += in_pairs(others)
    rows.append(
        (
            Button(
                t(lang, "Propose this team (%(chosen)d/%(size)d)", chosen=len(ticked), size=size),
                data=encode(TeamPress(scene.game_id, ballot, None)),
            ),
        )
    )
    return "\n".join(lines), tuple(rows)


def leader_done(scene: SeatScene, team: tuple[int, ...], mission: int, drawn: bool, by_computer: bool = False) -> str:
    """The leader's keyboard once the team is proposed: by them, by the clock, or by the computer
    player taking their turns."""
    lang = scene.lang
    group = title(scene.group.chat_title)
    chosen = names(scene.group.players, team)
    if by_computer:
        return t(
            lang,
            "«%(group)s», mission %(mission)d: a computer player proposed a team for you: %(names)s.",
            group=group,
            mission=mission,
            names=chosen,
        )
    if drawn:
        return t(
            lang,
            "«%(group)s», mission %(mission)d: time ran out, so a team was drawn at random: %(names)s.",
            group=group,
            mission=mission,
            names=chosen,
        )
    return t(
        lang, "«%(group)s», mission %(mission)d: you proposed %(names)s.", group=group, mission=mission, names=chosen
    )


# ---------------------------------------------------------------- the mission


def two_fails_line(lang: str) -> str:
    return t(lang, "This mission fails only with two Fail cards: a single Fail will not fail it.")


def card_key(ballot: int, seat: int) -> str:
    return f"card:{ballot}:{seat}"


def card_prompt(scene: SeatScene) -> tuple[str, Keyboard]:
    lang, view = scene.lang, scene.view
    text = t(
        lang,
        "«%(group)s», mission %(mission)d: you are on the team. Play your card.",
        group=title(scene.group.chat_title),
        mission=view.current_mission,
    )
    # The group sees these votes only with the mission's result; the team plays knowing them,
    # as it would at a table.
    text += "\n" + "\n".join(vote_lines(scene.group, view.rounds[-1].proposals[-1]))
    if game_rules.fails_required(view.players, view.current_mission) > 1:
        # Said to the whole team alike: which seats are spies is no part of it.
        text += "\n" + two_fails_line(lang)
    spotlighted = view.plot.spotlight[1] if view.plot is not None and view.plot.spotlight is not None else None
    if spotlighted == scene.seat.seat:
        text += "\n" + t(lang, "🔦 You are in the spotlight: everyone will see the card you play.")
    elif spotlighted is not None:
        text += "\n" + t(
            lang,
            "🔦 %(name)s is in the spotlight: everyone will see the card they play.",
            name=shown(scene.group.players[spotlighted].name),
        )
    watchers = [
        holder
        for holder, hand in enumerate(view.plot.hands if view.plot is not None else ())
        if Card.KEEPING_A_CLOSE_EYE_ON_YOU in hand and holder != scene.seat.seat
    ]
    if watchers and spotlighted != scene.seat.seat:  # a card played face up is not watched
        text += "\n" + t(
            lang,
            "👁 %(names)s: %(card)s. Once every card is played, your card may be looked at.",
            names=names(scene.group.players, watchers),
            card=card_name(Card.KEEPING_A_CLOSE_EYE_ON_YOU, lang),
        )
    buttons: Keyboard = (
        (
            Button(t(lang, "✅ Success"), data=encode(CardPress(scene.game_id, view.ballot, False))),
            Button(t(lang, "❌ Fail"), data=encode(CardPress(scene.game_id, view.ballot, True))),
        ),
    )
    row = hints_row(scene)
    return text, buttons + ((row,) if row else ())


def card_played(scene: SeatScene, mission: int, fail: bool) -> str:
    lang, group = scene.lang, title(scene.group.chat_title)
    if fail:
        return t(lang, "«%(group)s», mission %(mission)d: you played ❌ Fail.", group=group, mission=mission)
    return t(lang, "«%(group)s», mission %(mission)d: you played ✅ Success.", group=group, mission=mission)


def card_played_for_you(scene: SeatScene, mission: int, fail: bool) -> str:
    """Which card a computer player played for a person whose turns it takes: theirs to know (a spy
    must know whether a Fail went in under their name), told to them alone."""
    lang, group = scene.lang, title(scene.group.chat_title)
    if fail:
        return t(
            lang,
            "«%(group)s», mission %(mission)d: a computer player played ❌ Fail for you.",
            group=group,
            mission=mission,
        )
    return t(
        lang,
        "«%(group)s», mission %(mission)d: a computer player played ✅ Success for you.",
        group=group,
        mission=mission,
    )


def card_timed_out(scene: SeatScene, mission: int) -> str:
    return t(
        scene.lang,
        "«%(group)s», mission %(mission)d: time ran out, so your card counted as ✅ Success.",
        group=title(scene.group.chat_title),
        mission=mission,
    )


def reminder(scene: SeatScene, until: str) -> str:
    """Half the step's time is gone and the game waits for this player: for what, and until when
    (`until`, as the group's clocks show it)."""
    view = scene.group.view
    group, mission, lang = title(scene.group.chat_title), view.current_mission, scene.lang
    if view.phase is Phase.VOTING:
        return t(
            lang,
            "⏰ «%(group)s» waits for your vote on the team for mission %(mission)s, until %(until)s.",
            group=group,
            mission=mission,
            until=until,
        )
    if view.phase is Phase.PROPOSING:
        return t(
            lang,
            "⏰ «%(group)s» waits for you to choose the next team, until %(until)s.",
            group=group,
            until=until,
        )
    if view.phase is Phase.MISSION:
        return t(
            lang,
            "⏰ «%(group)s» waits for your card on mission %(mission)s, until %(until)s.",
            group=group,
            mission=mission,
            until=until,
        )
    return t(lang, "⏰ «%(group)s» waits for your Plot card choice, until %(until)s.", group=group, until=until)


def reminder_over(scene: SeatScene) -> str:
    """A reminder of a step that ended, where Telegram no longer lets the bot delete it."""
    return t(scene.lang, "✓ «%(group)s»: that step is over.", group=title(scene.group.chat_title))


def to_the_vote(scene: SeatScene) -> str:
    return t(scene.lang, "Go to the vote")


def computer_took_over(scene: SeatScene) -> str:
    return t(
        scene.lang,
        "You missed two deadlines in a row in «%(group)s», so a computer player takes your turns for now. "
        "Make any choice of your own in this game (a vote, a team, a card) to play yourself again.",
        group=title(scene.group.chat_title),
    )
