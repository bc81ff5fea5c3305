"""A player's private hints, worded: probabilities as bars, and the reasons in the player's language."""

from __future__ import annotations

from html import escape

from tgbot.buttons import HintsPress, encode
from tgbot.i18n import t, tn
from tgbot.outgoing import Button, Keyboard
from tgbot.render.common import SeatScene, names, title
from tgbot.table import Table


def probability_bar(p: float) -> str:
    filled = round(p * 5)
    return "▓" * filled + "░" * (5 - filled)


def hints(scene: SeatScene, probabilities, possible: int, reasons, spy_view: bool) -> str:
    lang, seat, players = scene.lang, scene.seat.seat, scene.group.players
    group = title(scene.group.chat_title)
    if spy_view:
        lines = [
            t(
                lang,
                "🔎 «%(group)s»: you are a spy. This is how the Resistance, seeing only the public "
                "record, sees each player, you included:",
                group=group,
            )
        ]
    else:
        lines = [t(lang, "🔎 «%(group)s»: how likely each other player is to be a spy.", group=group)]
    shown = [s for s in range(len(players)) if spy_view or s != seat]
    for other in sorted(shown, key=lambda s: -probabilities[s]):
        name = escape(players[other].name)
        if other == seat:
            name = t(lang, "%(name)s (you)", name=name)
        lines.append(
            f"<code>{probability_bar(probabilities[other])} {round(probabilities[other] * 100):3d}%</code> {name}"
        )
    lines.append("")
    lines.append(
        tn(
            lang,
            "%(n)d way to seat the spies is still possible.",
            "%(n)d ways to seat the spies are still possible.",
            possible,
        )
    )
    if reasons:
        lines.append(t(lang, "Why:"))
        lines.extend("• " + reason_text(players, reason, lang) for reason in reasons)
    return "\n".join(lines)


def reason_text(players, reason, lang: str) -> str:
    a = reason.args
    name = escape(players[a["seat"]].name) if "seat" in a else ""
    code = reason.code
    if code == "certain_spy":
        return t(lang, "%(name)s is certainly a spy.", name=name)
    if code == "certain_resistance":
        return t(lang, "%(name)s is certainly in the Resistance.", name=name)
    if code == "assignments_remaining":
        return tn(
            lang, "Only %(n)d way to seat the spies remains.", "Only %(n)d ways to seat the spies remain.", a["count"]
        )
    if code == "mission_fails":
        if a["at_least"] == 1:
            return t(
                lang,
                "Mission %(mission)d had a Fail card: at least one of %(names)s is a spy.",
                mission=a["mission"],
                names=names(players, a["seats"]),
            )
        return tn(
            lang,
            "Mission %(mission)d had %(n)d Fail card: at least %(n)d of %(names)s is a spy.",
            "Mission %(mission)d had %(n)d Fail cards: at least %(n)d of %(names)s are spies.",
            a["at_least"],
            mission=a["mission"],
            names=names(players, a["seats"]),
        )
    if code == "approved_failed_teams":
        return tn(
            lang,
            "%(name)s approved %(n)d team that then failed, without being on it.",
            "%(name)s approved %(n)d teams that then failed, without being on them.",
            a["count"],
            name=name,
        )
    if code == "led_failed_team":
        return tn(
            lang,
            "%(name)s led a team that then failed (mission %(missions)s).",
            "%(name)s led teams that then failed (missions %(missions)s).",
            len(a["missions"]),
            name=name,
            missions=", ".join(str(m) for m in a["missions"]),
        )
    if code == "rejected_successful_teams":
        return tn(
            lang,
            "%(name)s voted against %(n)d team that then succeeded.",
            "%(name)s voted against %(n)d teams that then succeeded.",
            a["count"],
            name=name,
        )
    if code == "behaviour_suspicious":
        return t(lang, "%(name)s's votes and choices look more like a spy's.", name=name)
    return t(lang, "%(name)s's votes and choices look more like the Resistance's.", name=name)


def hints_off(table: Table, lang: str) -> str:
    return t(lang, "Hints are switched off in «%(group)s».", group=title(table.chat_title))


def choose_game(tables: list[Table], lang: str) -> tuple[str, Keyboard]:
    buttons = tuple((Button(table.chat_title, data=encode(HintsPress(table.id))),) for table in tables)
    return t(lang, "You play in several groups. Hints for which game?"), buttons
