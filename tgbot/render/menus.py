"""The group's menus (settings, language) and the help and rules texts: no game state at all."""

from __future__ import annotations

from engine import rules as game_rules
from tgbot.buttons import LanguagePress, SettingsPress, encode
from tgbot.i18n import N_, t, tn
from tgbot.moves.pace import EXTENSIONS_PER_GAME
from tgbot.outgoing import Button, Keyboard
from tgbot.render import pace as pace_render
from tgbot.render import plot as plot_render
from tgbot.render.board import settings_line, variants_line
from tgbot.render.common import fitted, minutes, team_sizes
from tgbot.settings import GroupSettings

LANGUAGE_NAMES = {"en": "English", "es": "Español", "ru": "Русский", "bg": "Български", "eo": "Esperanto"}


def _switch(lang: str, on: bool, when_on: str, when_off: str) -> str:
    return t(lang, when_on) if on else t(lang, when_off)


def settings_menu(chat_id: int, settings: GroupSettings, lang: str, lobby_only: bool = False) -> tuple[str, Keyboard]:
    """The keyboard of the group's settings; `lobby_only`: of the open lobby's, for whoever opened it
    (not an admin), whose changes are that lobby's game's alone."""

    def press(name: str) -> str:
        return encode(SettingsPress(chat_id, name, 0 if name == "done" else settings.position(name)))

    if lobby_only:
        heading = [
            t(lang, "⚙️ <b>Settings for the open lobby</b>"),
            t(
                lang,
                "Press a button to change it. Changes apply to this lobby's game only; a group admin sets the "
                "group's.",
            ),
        ]
    else:
        heading = [
            t(lang, "⚙️ <b>Settings for this group</b>"),
            t(lang, "Press a button to change it. Changes apply to the next game, and to a lobby that is open."),
        ]
    text = "\n".join([*heading, settings_line(settings, lang), pace_render.pace_line(settings, lang)])
    missing = (
        t(lang, "Missing vote: 👍 Approve") if settings.missing_vote_approves else t(lang, "Missing vote: 👎 Reject")
    )
    buttons = (
        (
            Button(
                _switch(lang, settings.targeting, N_("Targeting: on"), N_("Targeting: off")), data=press("targeting")
            ),
            Button(
                _switch(lang, settings.blind_spies, N_("Blind Spies: on"), N_("Blind Spies: off")),
                data=press("blind_spies"),
            ),
        ),
        (
            Button(
                _switch(lang, settings.plot_cards, N_("Plot cards: on"), N_("Plot cards: off")),
                data=press("plot_cards"),
            ),
        ),
        (
            Button(_switch(lang, settings.hints, N_("Hints: on"), N_("Hints: off")), data=press("hints")),
            Button(missing, data=press("missing_vote_approves")),
        ),
        (Button(pace_render.pace_button(settings, lang), data=press("pace")),),
        *(
            (
                (
                    Button(t(lang, "%(hours)s h a step", hours=settings.slow_hours), data=press("slow_hours")),
                    Button(pace_render.quiet_button(settings, lang), data=press("quiet_hours")),
                ),
            )
            if settings.pace == "slow"
            else ()
        ),
        (
            Button(
                t(lang, "Team time: %(minutes)s min", minutes=minutes(settings.proposal_seconds)),
                data=press("proposal_seconds"),
            ),
            Button(
                t(lang, "Vote time: %(minutes)s min", minutes=minutes(settings.vote_seconds)),
                data=press("vote_seconds"),
            ),
        ),
        (
            Button(
                t(lang, "Card time: %(minutes)s min", minutes=minutes(settings.mission_seconds)),
                data=press("mission_seconds"),
            ),
            Button(
                t(lang, "Lobby time: %(minutes)s min", minutes=minutes(settings.lobby_seconds)),
                data=press("lobby_seconds"),
            ),
        ),
        (
            Button(
                _switch(
                    lang,
                    settings.computer_level == "easy",
                    N_("Computer players: easy"),
                    N_("Computer players: normal"),
                ),
                data=press("computer_level"),
            ),
            Button(
                _switch(
                    lang, settings.computer_takeover, N_("Computer takes over: on"), N_("Computer takes over: off")
                ),
                data=press("computer_takeover"),
            ),
        ),
        (
            Button(LANGUAGE_NAMES[settings.language or lang], data=press("language")),
            Button(t(lang, "Done"), data=press("done")),
        ),
    )
    return text, fitted(buttons)


def greeting(lang: str) -> str:
    """What the bot says in a group it was just added to: what it does and how to start."""
    return t(
        lang,
        "👋 Hello! I run games of <b>The Resistance</b> here: 5 to 10 players, some of them secret spies.\n"
        "To play: send /newgame, and everyone who plays presses <b>Join</b> (I write to each of you in "
        "private, so press Start there once). When all are in, /startgame.\n"
        "/rules explains the game; an admin sets variants, deadlines, a slow pace for games over days, "
        "and my language with /settings.",
    )


def timezone_text(settings: GroupSettings, lang: str) -> str:
    """What /timezone says: the group's zone and its time now, and how to change it."""
    return t(
        lang,
        "🕰 This group's time zone: %(zone)s. A slow game's quiet hours and the times I name follow it. "
        "An admin changes it with /timezone and a zone, like /timezone Europe/Madrid or /timezone UTC+3.",
        zone=settings.timezone,
    )


def settings_closed(settings: GroupSettings, lang: str) -> str:
    return "\n".join([t(lang, "⚙️ Settings saved."), variants_line(settings, lang), settings_line(settings, lang)])


def language_menu(chat_id: int, lang: str, lobby_only: bool = False) -> tuple[str, Keyboard]:
    buttons = tuple((Button(name, data=encode(LanguagePress(chat_id, code))),) for code, name in LANGUAGE_NAMES.items())
    if lobby_only:
        return t(lang, "Which language should I speak in the open lobby's game?"), buttons
    return t(lang, "Which language should I speak in this group?"), buttons


def help_text(lang: str) -> str:
    # Who may use /settings and /language is `moves.lobby.settings_refusal`: a group admin, or
    # whoever opened the lobby while it is open.
    return (
        t(
            lang,
            "▶️ To play: send /newgame in a group; each player presses Join, then /startgame with 5 to 10 "
            "players. New to the game? /rules",
        )
        + "\n\n"
        + t(
            lang,
            "<b>The Resistance</b>: commands\n"
            "/newgame — open a game in this group; add targeting, blind and/or plot for those variants "
            "(/newgame targeting blind)\n"
            "/join — join the open game (or press Join)\n"
            "/leave — leave the game before it starts\n"
            "/startgame — start with 5 to 10 players (whoever opened the game, or an admin)\n"
            "/status — the missions, the leader, whose turn it is\n"
            "/cancel — end the lobby or the game (whoever opened it, or an admin)\n"
            "/record — the last finished game's record as a file\n"
            "/hints — in private: who could the spies be, and why\n"
            "/settings — variants, deadlines, hints, language (a group admin, or whoever opened the lobby "
            "while it is open)\n"
            "/language — the language I speak in this group (the same people as /settings)\n"
            "/rules — how to play",
        )
        + "\n"
        + t(lang, "/newgame plot — play with the Plot cards of The Plot Thickens (see /rules)")
        + "\n"
        + t(
            lang,
            "/addbot, /removebot — seat a computer player in the lobby, or let the last one go (whoever "
            "opened the game, or an admin); a game needs at least two people",
        )
        + "\n"
        + t(
            lang,
            "/extend — more time for the step the game is in; /resume — go on with a paused game; /mygames — "
            "in private: your games and what each waits for; /timezone — the group's time zone",
        )
        + "\n"
        + t(
            lang,
            "/stats — your games and wins here (in private: everywhere; as a reply: that person's); /top — the "
            "group's best by rating; /history — its last games and their records; /nextgame — be told in private "
            "when the next game opens here; /forgetme — in private: take your stats and name out of every group's "
            "memory",
        )
    )


def setup_table(lang: str) -> str:
    """Spies and team sizes for every table size, from the engine's rule tables."""
    rows = [t(lang, "Spies and team sizes for missions 1 to 5 (* the mission needs two Fail cards):")]
    for players in range(game_rules.MIN_PLAYERS, game_rules.MAX_PLAYERS + 1):
        rows.append(
            tn(
                lang,
                "%(players)d players: %(n)d spy · teams %(teams)s",
                "%(players)d players: %(n)d spies · teams %(teams)s",
                game_rules.spy_count(players),
                players=players,
                teams=team_sizes(players),
            )
        )
    return "\n".join(rows)


def rules_text(lang: str) -> str:
    return (
        t(
            lang,
            "<b>The Resistance</b> in short\n"
            "Most players are the Resistance; a few are spies, who know each other. Nobody else knows who is who.\n"
            "%(setup)s\n"
            "Seats follow the order in which players joined. The first leader is drawn at random; after every "
            "proposal the leader's role passes clockwise, to the next seat.\n"
            "The leader proposes a team for the next mission. Everyone votes: the team goes only if more than half "
            "approve; a tied vote rejects it. If five teams in a row are rejected for one mission, the spies win.\n"
            "On a mission each member secretly plays Success or Fail; the Resistance must play Success. One Fail "
            "card sinks a mission; the one marked * needs two. Only the number of Fail cards is shown.\n"
            "Three successful missions win for the Resistance, three failed ones for the spies.\n"
            "Targeting (/newgame targeting): every leader chooses both the mission and the team. Each mission is "
            "attempted only once (a rejected team does not use it up), and the fifth only after two successes; "
            "five teams rejected in a row win for the spies even when they were for different missions.\n"
            "Blind Spies (/newgame blind): the spies do not learn who the other spies are.\n"
            "Deadlines (see /settings): if the leader does not propose in time, a team is drawn at random and "
            "everyone votes on it as usual; missing votes count as the group's setting says (Approve unless "
            "changed), and the group is told whose; a card not played in time counts as Success. A lobby that has "
            "not reached 5 players, 2 of them people, in time closes; one that has starts by itself, unless Play "
            "again opened it: whoever pressed Play again, or an admin, starts that one with /startgame.",
            setup=setup_table(lang),
        )
        + "\n"
        + t(
            lang,
            "Here: roles, the leader's team choice and mission cards come in your private chat with me; "
            "everyone votes with 👍 Approve or 👎 Reject under the team in the group.",
        )
        + "\n\n"
        + plot_render.rules_text(lang)
        + "\n\n"
        + t(lang, PACE_RULES, n=EXTENSIONS_PER_GAME)
    )


PACE_RULES = N_(
    "<b>Time</b>\n"
    "Each step has a deadline (set in /settings; a slow pace gives each step hours, counted outside the "
    "group's quiet hours). A seated player may /extend the step the game is in by its own length: each step "
    "once, %(n)s times a game in all. When nobody plays for two deadlines in a row, the game pauses instead "
    "of being decided by them; any press of a player, or /resume, goes on."
)
