"""Pieces every audience's texts share: names, links, the mission track, the setup line."""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable, Iterable
from dataclasses import dataclass, replace
from functools import cache
from html import escape, unescape

from telegram.helpers import create_deep_linked_url

from engine import Proposal, PublicView, SeatView, public_view, seat_view
from engine import rules as game_rules
from tgbot.i18n import supported, t, tn
from tgbot.outgoing import Keyboard
from tgbot.table import Player, Table

TRACK_MARKS = {True: "✅", False: "❌", None: "⬜"}
JOIN_PREFIX = "join_"
# Telegram refuses to show the answer to a button press longer than this (counted here in UTF-16
# code units, as Telegram counts text, which is never more than its characters): nothing at all is shown.
ANSWER_LIMIT = 200
# Telegram refuses a message whose text, once its HTML is read, is longer than this (in UTF-16 code
# units): the message is not sent at all, or an edit leaves the old text standing.
MESSAGE_LIMIT = 4096
# The shortest a long name is cut to, to make a message fit: still enough to tell players apart.
SHORTEST_NAME = 12
_TAG = re.compile(r"<[^>]*>")
ELLIPSIS = "…"
# About as many characters as a phone shows on a button half a row wide: a longer label is cut
# short with an ellipsis, and its end (often the value it shows) is not seen.
HALF_ROW = 18
ZWJ = "\u200d"
# A name or title holding right-to-left letters or direction controls is set apart between these
# (Unicode's first-strong isolate and its pop), so that it neither turns the line it is in right to
# left nor reorders the words and numbers around it (a right-to-left override in a name would
# otherwise reverse the rest of every line naming that player).
FSI, PDI = "\u2068", "\u2069"
_ISOLATE_OPENERS = frozenset("\u2066\u2067\u2068")
_NOT_LEFT_TO_RIGHT = frozenset({"R", "AL", "LRE", "RLE", "LRO", "RLO", "PDF", "LRI", "RLI", "FSI", "PDI"})


@dataclass(frozen=True)
class GroupScene:
    """All a group message may be rendered from: the public view and who sits where."""

    game_id: str
    chat_title: str
    players: tuple[Player, ...]
    lang: str
    view: PublicView
    hints_on: bool


@dataclass(frozen=True)
class SeatScene:
    """All one player's private messages may be rendered from: the group's scene and their own seat."""

    group: GroupScene
    seat: SeatView
    lang: str

    @property
    def game_id(self) -> str:
        return self.group.game_id

    @property
    def view(self) -> PublicView:
        return self.group.view


def player_language(player: Player, group_language: str) -> str:
    """A player's own language if the bot speaks it, else the group's."""
    return supported(player.language) or group_language


def group_scene(table: Table) -> GroupScene:

    assert table.game is not None
    return GroupScene(
        table.id, table.chat_title, table.players, table.language, public_view(table.game), table.settings.hints
    )


def seat_scene(table: Table, seat: int) -> SeatScene:

    assert table.game is not None
    player = table.players[seat]
    return SeatScene(group_scene(table), seat_view(table.game, seat), player_language(player, table.language))


def isolated(text: str) -> str:
    """`text` as shown among other words: as it is when written left to right, else set apart
    between FSI and PDI, with any isolate it opens closed and any PDI that would close ours dropped
    (the closing PDI also ends any embedding or override it holds)."""
    if not any(unicodedata.bidirectional(character) in _NOT_LEFT_TO_RIGHT for character in text):
        return text
    kept, still_open = [], 0
    for character in text:
        if character in _ISOLATE_OPENERS:
            still_open += 1
        elif character == PDI:
            if not still_open:
                continue
            still_open -= 1
        kept.append(character)
    return FSI + "".join(kept) + PDI * (still_open + 1)


def shown(name: str) -> str:
    """A player's name (or a group's title) as an HTML message shows it: set apart, escaped."""
    return escape(isolated(name))


# Characters a reader does not see inside a name (besides format and control characters): a
# combining grapheme joiner, variation selectors, Mongolian variation selectors and vowel separator,
# Khmer inherent vowels, Hangul fillers.
_IGNORABLE = frozenset("\u034f\u115f\u1160\u17b4\u17b5\u3164\uffa0") | frozenset(
    map(chr, [*range(0x180B, 0x1810), *range(0xFE00, 0xFE10), *range(0xE0100, 0xE01F0)])
)


def reads_as(name: str) -> str:
    """What a reader can tell a name by: the same letters written another way (composed or not,
    compatibility forms, another kind of space) read the same, characters that show as nothing
    inside it (zero-width, direction marks, soft hyphens) are not seen, and letters of one alphabet
    that look like another's (Cyrillic «а», Greek «ο» for Latin «a», «o») read as those."""
    text = unicodedata.normalize("NFKC", name)
    seen = (c for c in text if c not in _IGNORABLE and unicodedata.category(c) not in ("Cc", "Cf"))
    look_alike = look_alike_prototypes()
    return " ".join("".join(look_alike.get(c, c) for c in seen).split())


@cache
def look_alike_prototypes() -> dict[str, str]:
    """Each character that can pass for another, mapped to one character of its whole group of
    look-alikes (Unicode's list of confusable characters, as `confusable_homoglyphs` ships it): two
    names that differ only by look-alikes read as the same name. The groups follow the list wherever
    it leads, so they also join a few letters a careful reader tells apart (Turkish ı and i, Greek
    ο and σ): a second such name is numbered, which costs a "(2)", where missing I for l would let
    a player pass for another. Built once per process (about 0.2 s), when the bot starts."""
    from confusable_homoglyphs.confusables import confusables_data

    group_of: dict[str, str] = {}

    def prototype(character: str) -> str:
        while (parent := group_of.get(character, character)) != character:
            group_of[character] = group_of.get(parent, parent)  # halve the path for the next look-up
            character = parent
        return character

    for character, alikes in confusables_data.items():
        for alike in alikes:
            # The list wraps right-to-left look-alikes in direction marks, which show as nothing.
            other = "".join(c for c in alike["c"] if unicodedata.category(c) != "Cf")
            if len(character) == 1 and len(other) == 1:
                first, second = sorted((prototype(character), prototype(other)))
                if first != second:
                    group_of[second] = first
    return {character: prototype(character) for character in group_of}


def mention(player: Player) -> str:
    if player.computer:
        return shown(player.name)  # no Telegram user to link to
    return f'<a href="tg://user?id={player.user_id}">{shown(player.name)}</a>'


def names(players: tuple[Player, ...], seats: Iterable[int]) -> str:
    return ", ".join(shown(players[s].name) for s in seats)


def utf16_length(text: str) -> int:
    return len(text.encode("utf-16-le")) // 2


def _extends(character: str) -> bool:
    """Whether `character` belongs to the one before it on screen: a combining mark, a joiner, a
    variation selector, a skin tone, or a tag of a flag."""
    code = ord(character)
    return (
        unicodedata.category(character) in ("Mn", "Mc", "Me")
        or character == ZWJ
        or 0xFE00 <= code <= 0xFE0F
        or 0x1F3FB <= code <= 0x1F3FF
        or 0xE0020 <= code <= 0xE007F
        or 0xE0100 <= code <= 0xE01EF
    )


def clusters(text: str) -> list[str]:
    """`text` in the pieces a reader sees as one character: a letter with its accents, an emoji
    joined of several (👨‍👩‍👧), a flag (two regional indicators), an emoji with its skin tone."""
    pieces: list[str] = []
    indicators = 0  # regional indicators in a row just before
    for character in text:
        indicator = 0x1F1E6 <= ord(character) <= 0x1F1FF
        if pieces and (_extends(character) or pieces[-1][-1] == ZWJ or (indicator and indicators % 2 == 1)):
            pieces[-1] += character
        else:
            pieces.append(character)
        indicators = indicators + 1 if indicator else 0
    return pieces


def cut(text: str, limit: int) -> str:
    """`text` if it fits in `limit` UTF-16 code units, else as much of it as fits before an
    ellipsis, cut between the characters a reader sees (never inside an emoji, a flag or a letter
    with its accents, unless the first alone is too long)."""
    if utf16_length(text) <= limit:
        return text
    pieces = clusters(text)
    if utf16_length(pieces[0]) + utf16_length(ELLIPSIS) > limit:
        pieces = list(text)
    kept, used = [], utf16_length(ELLIPSIS)
    for piece in pieces:
        used += utf16_length(piece)
        if used > limit:
            break
        kept.append(piece)
    return "".join(kept).rstrip() + ELLIPSIS


def shown_length(text: str) -> int:
    """How long an HTML message is as Telegram counts it: its text once the markup is read."""
    return utf16_length(unescape(_TAG.sub("", text)).strip())


def with_names_cut(players: tuple[Player, ...], limit: int) -> tuple[Player, ...]:
    """`players` with every name longer than `limit` UTF-16 code units cut to it."""
    return tuple(replace(player, name=cut(player.name, limit)) for player in players)


def fitting(render: Callable[[GroupScene], tuple[str, Keyboard]], scene: GroupScene, room: int = MESSAGE_LIMIT):
    """`render(scene)`, or, when its text is longer than `room` (ten long names, each written out
    several times over a long mission with Plot cards), rendered again with the long names cut a
    little shorter each time until it fits: everything is still told, each player by the first
    part of their name."""
    text, buttons = render(scene)
    longest = max((utf16_length(player.name) for player in scene.players), default=0)
    limit = longest
    while shown_length(text) > room and limit > SHORTEST_NAME:
        limit = max(SHORTEST_NAME, limit - 4)
        text, buttons = render(replace(scene, players=with_names_cut(scene.players, limit)))
    return text, buttons


def names_within(players: tuple[Player, ...], seats: Iterable[int], room: int) -> str:
    """`names` that fit in `room` UTF-16 code units once shown (unescaped): when they do not all fit
    whole, each long name is cut to an equal share, so every player is still named."""
    plain = [players[s].name for s in seats]
    separators = utf16_length(", ") * max(0, len(plain) - 1)
    if utf16_length(", ".join(isolated(name) for name in plain)) > room and plain:
        share = max(2, (room - separators) // len(plain))
        # A name set apart takes its marks out of its share.
        plain = [cut(name, max(2, share - utf16_length(isolated(name)) + utf16_length(name))) for name in plain]
    return ", ".join(shown(name) for name in plain)


def fitted(rows: Keyboard) -> Keyboard:
    """`rows` as a phone can show them: a row of two whose labels do not both fit half a row
    becomes two rows, one button each."""
    laid_out: list[tuple] = []
    for row in rows:
        if len(row) > 1 and any(utf16_length(button.text) > HALF_ROW for button in row):
            laid_out += [(button,) for button in row]
        else:
            laid_out.append(row)
    return tuple(laid_out)


def title(chat_title: str) -> str:
    return shown(chat_title)


def join_link(bot_username: str, game_id: str) -> str:
    return create_deep_linked_url(bot_username, f"{JOIN_PREFIX}{game_id}")


def open_chat_link(bot_username: str) -> str:
    return create_deep_linked_url(bot_username, "hello")


def track(view: PublicView) -> str:
    return "".join(TRACK_MARKS[result] for result in view.mission_track)


def minutes(seconds: int) -> str:
    return f"{seconds / 60:g}"


def team_sizes(players: int) -> str:
    """Each mission's team size in order, a mission that needs two Fail cards marked *: "2-3-3-4*-4"."""
    return "-".join(
        f"{game_rules.team_size(players, m)}{'*' if game_rules.fails_required(players, m) > 1 else ''}"
        for m in range(1, game_rules.MISSION_COUNT + 1)
    )


def setup_line(players: int, lang: str) -> str:
    """The table's setup, which every player may know: how many spies, each mission's team size,
    and which mission needs two Fail cards. The numbers are the engine's."""
    spies = game_rules.spy_count(players)
    teams = team_sizes(players)
    if "*" in teams:
        return tn(
            lang,
            "%(n)d spy · teams %(teams)s (* needs two Fails)",
            "%(n)d spies · teams %(teams)s (* needs two Fails)",
            spies,
            teams=teams,
        )
    return tn(lang, "%(n)d spy · teams %(teams)s", "%(n)d spies · teams %(teams)s", spies, teams=teams)


def mission_button_label(lang: str, players: int, mission: int) -> str:
    return t(lang, "Mission %(mission)d (%(size)d)", mission=mission, size=game_rules.team_size(players, mission))


def vote_lines(scene: GroupScene, proposal: Proposal) -> list[str]:
    """Who approved and who rejected a proposal, and which votes the clock cast."""
    lang, players = scene.lang, scene.players
    votes = proposal.votes or ()
    approvers = [s for s, v in enumerate(votes) if v]
    rejecters = [s for s, v in enumerate(votes) if not v]
    lines = [
        t(lang, "👍 %(approvers)s", approvers=names(players, approvers) or "—"),
        t(lang, "👎 %(rejecters)s", rejecters=names(players, rejecters) or "—"),
    ]
    if proposal.auto_votes:
        lines.append(filled_votes_line(scene, proposal.auto_votes, bool(votes[proposal.auto_votes[0]])))
    return lines


def filled_votes_line(scene: GroupScene, seats: tuple[int, ...], approve: bool) -> str:
    """The votes the clock cast for `seats`, as the group's setting counts them."""
    filled = names(scene.players, seats)
    if approve:
        return t(scene.lang, "⏰ Time is up. These votes were counted as 👍 Approve: %(names)s", names=filled)
    return t(scene.lang, "⏰ Time is up. These votes were counted as 👎 Reject: %(names)s", names=filled)
