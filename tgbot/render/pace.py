"""How the group's pace reads: moments in its time zone, extensions, a paused game, the settings' lines."""

from __future__ import annotations

from datetime import datetime

from babel.dates import format_datetime

from tgbot.i18n import t, tn
from tgbot.render.common import shown
from tgbot.settings import GroupSettings
from tgbot.zones import UTC_NAME, zone_named


def moment(when: float, settings: GroupSettings, lang: str) -> str:
    """A deadline as the group's clocks show it: the weekday too in a slow game, whose steps take hours."""
    zone = zone_named(settings.timezone) or zone_named(UTC_NAME)
    pattern = "EEE HH:mm" if settings.pace == "slow" else "HH:mm"
    return f"{format_datetime(datetime.fromtimestamp(when, zone), pattern, locale=lang)} ({settings.timezone})"


def extended(name: str, until: float, left: int, settings: GroupSettings, lang: str) -> str:
    return tn(
        lang,
        "⏳ %(name)s added time: this step now ends %(until)s. %(n)s extension is left in this game.",
        "⏳ %(name)s added time: this step now ends %(until)s. %(n)s extensions are left in this game.",
        left,
        name=shown(name),
        until=moment(until, settings, lang),
    )


def paused(lang: str) -> str:
    return t(
        lang,
        "⏸ Nobody has played for two deadlines in a row, so the game is paused: no deadline runs and the clock "
        "decides nothing. Press any button of the game, or send /resume, to go on.",
    )


def resumed(name: str, lang: str) -> str:
    return t(lang, "▶️ %(name)s is back: the game goes on, and this step has its whole time again.", name=shown(name))


def pace_button(settings: GroupSettings, lang: str) -> str:
    if settings.pace == "slow":
        return t(lang, "Pace: slow, %(hours)s h a step", hours=settings.slow_hours)
    return t(lang, "Pace: live")


def quiet_button(settings: GroupSettings, lang: str) -> str:
    if not settings.quiet_hours:
        return t(lang, "Quiet hours: none")
    start, end = settings.quiet_hours.split("-")
    return t(lang, "Quiet hours: %(start)s:00-%(end)s:00", start=start, end=end)


def pace_line(settings: GroupSettings, lang: str) -> str:
    """What the settings' text says of the pace (the buttons show the values)."""
    if settings.pace != "slow":
        return t(lang, "Live pace: the times below are each step's. A slow pace gives a step hours instead.")
    return t(
        lang,
        "Slow pace: each step has %(hours)s hours, counted outside the quiet hours; time zone %(zone)s "
        "(change it with /timezone, e.g. /timezone Europe/Madrid or /timezone UTC+3).",
        hours=settings.slow_hours,
        zone=settings.timezone,
    )
