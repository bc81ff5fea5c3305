"""What a group remembers, as its messages: /stats, /top, /history, /nextgame and /forgetme."""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING

from babel.dates import format_date
from babel.numbers import format_percent

from memory.stats import STANDARD, PersonStats, Tally
from memory.summary import GameSummary
from tgbot.buttons import ForgetPress, HistoryPress, encode
from tgbot.i18n import N_, t, tn
from tgbot.outgoing import Button, Keyboard
from tgbot.render.common import cut, join_link, open_chat_link, shown, title
from tgbot.settings import GroupSettings
from tgbot.zones import UTC_NAME, zone_named

if TYPE_CHECKING:
    from memory.ratings import Rating

MIN_GAMES_ON_TOP = 5  # a rating from fewer games says little: /top lists only people with this many
TOP_ROWS = 10
HISTORY_ROWS = 10
NAME_ROOM = 24


VARIANT_NAMES = {
    STANDARD: N_("standard"),
    "targeting": N_("Targeting"),
    "blind_spies": N_("Blind Spies"),
    "plot_cards": N_("The Plot Thickens"),
}

ENDINGS = {
    "three_successful_missions": N_("three missions succeeded"),
    "three_failed_missions": N_("three missions failed"),
    "five_rejections": N_("five teams rejected"),
}


def _rate(tally: Tally, lang: str) -> str:
    if not tally.games:
        return "—"
    return format_percent(tally.rate, locale=lang)


def _tally(tally: Tally, lang: str) -> str:
    return tn(
        lang,
        "%(n)s game, %(wins)s won (%(rate)s)",
        "%(n)s games, %(wins)s won (%(rate)s)",
        tally.games,
        wins=tally.wins,
        rate=_rate(tally, lang),
    )


def variant_name(key: str, lang: str) -> str:
    return " + ".join(t(lang, VARIANT_NAMES.get(part, part)) for part in key.split("+"))


def stats_text(
    name: str, stats: PersonStats, lang: str, *, group_title: str | None = None, rating: Rating | None = None
) -> str:
    """A person's counts: in one group (`group_title`, with their rating there) or everywhere."""
    if not stats.overall.games:
        if group_title is None:
            return t(lang, "%(name)s has not finished a game with me yet.", name=shown(name))
        return t(lang, "%(name)s has not finished a game in this group yet.", name=shown(name))
    if group_title is None:
        lines = [t(lang, "📊 <b>%(name)s</b>, in every group", name=shown(name))]
    else:
        lines = [t(lang, "📊 <b>%(name)s</b> in «%(group)s»", name=shown(name), group=title(group_title))]
    lines.append(t(lang, "All: %(tally)s", tally=_tally(stats.overall, lang)))
    lines.append(t(lang, "As Resistance: %(tally)s", tally=_tally(stats.resistance, lang)))
    lines.append(t(lang, "As spy: %(tally)s", tally=_tally(stats.spy, lang)))
    for key, tally in sorted(stats.variants.items(), key=lambda item: (item[0] != STANDARD, item[0])):
        lines.append(f"• {variant_name(key, lang)}: {_tally(tally, lang)}")
    if rating is not None:
        lines.append(t(lang, "Rating here: %(rating)s", rating=f"{rating.ordinal:.1f}"))
    return "\n".join(lines)


def top_text(rows: list, group_title: str, lang: str) -> str:
    """/top: the group's best by rating, among people with `MIN_GAMES_ON_TOP` games or more."""
    ranked = [row for row in rows if row.stats.overall.games >= MIN_GAMES_ON_TOP][:TOP_ROWS]
    if not ranked:
        return tn(
            lang,
            "Nobody here has finished %(n)s game yet: the leaderboard lists players with at least %(n)s.",
            "Nobody here has finished %(n)s games yet: the leaderboard lists players with at least %(n)s.",
            MIN_GAMES_ON_TOP,
        )
    lines = [t(lang, "🏆 <b>Best players in «%(group)s»</b>", group=title(group_title))]
    for place, row in enumerate(ranked, 1):
        overall = row.stats.overall
        lines.append(
            t(
                lang,
                "%(place)s. %(name)s: %(rating)s · %(games)s games, %(rate)s won",
                place=place,
                name=shown(cut(row.name, NAME_ROOM)),
                rating=f"{row.rating.ordinal:.1f}",
                games=overall.games,
                rate=_rate(overall, lang),
            )
        )
    lines.append(
        tn(
            lang,
            "Rating: skill as OpenSkill estimates it, less three times its uncertainty; from %(n)s game on.",
            "Rating: skill as OpenSkill estimates it, less three times its uncertainty; from %(n)s games on.",
            MIN_GAMES_ON_TOP,
        )
    )
    return "\n".join(lines)


def _day(when: float, settings: GroupSettings, lang: str) -> str:
    zone = zone_named(settings.timezone) or zone_named(UTC_NAME)
    return format_date(datetime.fromtimestamp(when, zone), "d MMM", locale=lang)


def history_line(number: int, game: GameSummary, settings: GroupSettings, lang: str) -> str:
    winners = t(lang, "the Resistance won") if game.resistance_won else t(lang, "the spies won")
    track = "".join("✅" if passed else "❌" for passed in game.mission_results)
    spies = ", ".join(shown(cut(game.seats[seat].name, NAME_ROOM)) for seat in game.spies)
    variants = "+".join(game.variants) or STANDARD
    return t(
        lang,
        "%(number)s. %(day)s · %(players)s players · %(variant)s · %(track)s %(winners)s (%(ending)s) · "
        "spies: %(spies)s",
        number=number,
        day=_day(game.ended_at, settings, lang),
        players=game.players,
        variant=variant_name(variants, lang),
        track=track,
        winners=winners,
        ending=t(lang, ENDINGS.get(game.reason, game.reason)),
        spies=spies,
    )


def history(games: list[GameSummary], group_title: str, settings: GroupSettings, lang: str) -> tuple[str, Keyboard]:
    """/history: the group's last games, the newest first, each with a button for its record."""
    if not games:
        return t(lang, "No game has finished in this group yet."), ()
    lines = [t(lang, "📜 <b>Last games in «%(group)s»</b>", group=title(group_title))]
    lines += [history_line(number, game, settings, lang) for number, game in enumerate(games, 1)]
    lines.append(t(lang, "A button below sends that game's record (resistance-record/1)."))
    buttons = [Button(f"📄 {number}", encode(HistoryPress(game.game_id))) for number, game in enumerate(games, 1)]
    return "\n".join(lines), tuple(tuple(buttons[i : i + 5]) for i in range(0, len(buttons), 5))


def next_game_noted(name: str, lang: str, bot_username: str, can_write: bool) -> tuple[str, Keyboard]:
    if can_write:
        return t(lang, "🔔 %(name)s, I will tell you in private when the next game opens here.", name=shown(name)), ()
    text = t(
        lang,
        "🔔 %(name)s, I will tell you in private when the next game opens here, once you open a chat with me: "
        "press the button and then Start.",
        name=shown(name),
    )
    return text, ((Button(t(lang, "Open the private chat"), url=open_chat_link(bot_username)),),)


def next_game_already(name: str, lang: str) -> str:
    return t(
        lang,
        "🔔 %(name)s, you are on the list already: I will tell you when the next game opens here.",
        name=shown(name),
    )


def next_game_open(group_title: str, game_id: str, bot_username: str, lang: str) -> tuple[str, Keyboard]:
    """The private message to someone who asked with /nextgame, when the group's lobby opens."""
    text = t(
        lang,
        "🔔 A new game is open in «%(group)s». Join it here or with the button in the group.",
        group=title(group_title),
    )
    return text, ((Button(t(lang, "Join"), url=join_link(bot_username, game_id)),),)


def forget_question(lang: str) -> tuple[str, Keyboard]:
    text = t(
        lang,
        "Forget you? Your counts and ratings in every group go, and your name is taken out of the games "
        "groups remember (their seats stay, nameless). This cannot be undone.",
    )
    buttons = (
        (
            Button(t(lang, "Forget me"), encode(ForgetPress(True))),
            Button(t(lang, "Keep my stats"), encode(ForgetPress(False))),
        ),
    )
    return text, buttons


def forgotten(groups: int, lang: str) -> str:
    return tn(
        lang,
        "Done: your counts, ratings and name are gone from %(n)s group's memory.",
        "Done: your counts, ratings and name are gone from %(n)s groups' memory.",
        groups,
    )


def kept(lang: str) -> str:
    return t(lang, "Nothing was forgotten.")
