"""Whole games in every language: nothing the bot sends may be an untranslated English message.

The English messages are the msgids of `tgbot/locales/messages.pot`. Each is cut into its fixed
fragments (between placeholders, HTML tags and line breaks); a fragment of 12 or more characters
and at least two words found verbatim in a text the bot sent means an English message got through.
The same check on an English game must find such fragments, so the check can fail.
"""

from __future__ import annotations

import json
import random
import re
from dataclasses import replace
from html import unescape

import pytest
from babel.messages.pofile import read_po

from engine import Phase, seat_view
from engine import rules as game_rules
from tests.bot_helpers import button_data, command, forged, last_message, lobby_message, press
from tgbot.app import COMMANDS
from tgbot.i18n import LOCALE_DIR, supported, t
from tgbot.offline.simulation import Policy, SimulatedGroup, plain_text
from tgbot.render import private as render_private
from tgbot.render.common import SeatScene, group_scene
from tgbot.settings import GroupSettings
from tgbot.table import Stage

pytestmark = pytest.mark.usefixtures("no_handler_errors")

T0 = 1_000_000.0
DEFAULTS = GroupSettings()
TRANSLATED = ("es", "ru", "bg", "eo")
# Names the translations may keep as they are: the game's title and the record format's name.
KEPT_AS_IS = ("<b>The Resistance</b>", "resistance-record/1")
SPLIT = re.compile(r"%\(\w+\)[sd]|%%|<[^>]*>|\n|\x00")
WORD = re.compile(r"[A-Za-z]{2,}")
MIN_FRAGMENT = 12


# ---------------------------------------------------------------- helpers


def button_data_starting(message, prefix: str) -> str:
    return next(b["callback_data"] for b in message.buttons() if b.get("callback_data", "").startswith(prefix))


def english_fragments() -> dict[str, str]:
    """Fixed English fragments of every msgid (singular and plural) -> the msgid they come from."""
    with (LOCALE_DIR / "messages.pot").open("rb") as pot:
        catalog = read_po(pot)
    fragments: dict[str, str] = {}
    for message in catalog:
        if not message.id:
            continue
        for msgid in message.id if isinstance(message.id, tuple) else (message.id,):
            text = msgid
            for kept in KEPT_AS_IS:
                text = text.replace(kept, "\x00")
            for piece in SPLIT.split(text):
                fragment = unescape(piece).strip()
                if len(fragment) >= MIN_FRAGMENT and len(WORD.findall(fragment)) >= 2:
                    fragments.setdefault(fragment, msgid)
    return fragments


def button_texts(markup) -> list[str]:
    if isinstance(markup, str):
        markup = json.loads(markup)
    if not markup:
        return []
    return [button["text"] for row in markup.get("inline_keyboard", []) for button in row]


def sent_texts(telegram) -> list[str]:
    """Every text the bot sent: messages, edits, captions, callback answers and button labels."""
    found = []
    for method, params in telegram.calls:
        if method in ("sendMessage", "editMessageText") and params.get("text"):
            found.append(plain_text(str(params["text"])))
        elif method == "sendDocument" and params.get("caption"):
            found.append(plain_text(str(params["caption"])))
        elif method == "answerCallbackQuery" and params.get("text"):
            found.append(str(params["text"]))
        if method in ("sendMessage", "editMessageText", "sendDocument"):
            found.extend(button_texts(params.get("reply_markup")))
    return found


def english_in(texts: list[str]) -> list[tuple[str, str, str]]:
    """(fragment, its msgid, the sent text) for every English fragment found in a sent text."""
    fragments = english_fragments()
    return [(fragment, msgid, text) for text in texts for fragment, msgid in fragments.items() if fragment in text]


async def play_a_whole_game(make_bot, telegram, language: str) -> SimulatedGroup:
    """One group's life in `language`: menus, a lobby, every kind of deadline and reminder,
    refusals, hints, a whole game, its record, Play again and a cancelled lobby."""
    application = await make_bot(21)
    service = application.bot_data["service"]
    now = [T0]
    service.clock = lambda: now[0]
    group = SimulatedGroup(telegram, application, players=6, language=language)
    users, chat = group.user_ids, group.chat_id
    admin, outsider = users[0], users[5]

    # Menus and help before any game.
    await command(group, admin, "/help")
    await command(group, admin, "/rules")
    await command(group, admin, "/status")
    await command(group, admin, "/record")
    await command(group, users[1], "/settings")  # refused: no admin
    menu = await command(group, admin, "/settings")
    for code in ("tg", "tg", "mv", "mv", "ok"):
        await press(group, admin, menu, button_data_starting(menu, f"s:{chat}:{code}:"))
    await command(group, admin, "/language")
    await command(group, admin, "/newgame", chat_id=admin)  # in private: games are played in groups
    update = telegram.forged_press(admin, chat, menu.message_id, "v:nonsense")
    await group.send(update)
    assert telegram.callback_answers[update["callback_query"]["id"]]["text"]

    # A lobby: too few to start, a reminder, then enough.
    await group.open_lobby_and_join(joining=users[:3])
    assert (await group.table()).language == language
    await command(group, users[0], "/join")  # already in
    await command(group, users[1], "/startgame")  # not the host
    await command(group, admin, "/startgame")  # too few
    now[0] = T0 + DEFAULTS.lobby_seconds / 2
    assert await service.fire_due() == 1
    link = lobby_message(telegram, chat).buttons()[0]["url"]
    for user in users[3:5]:
        await group.send(telegram.open_link(user, link))
    await command(group, users[4], "/leave")
    await group.send(telegram.open_link(users[4], link))
    now[0] += 10
    await group.start()
    table = await group.table()
    assert table.stage is Stage.PLAYING
    start = now[0]

    # The leader's reminder and deadline.
    now[0] = start + DEFAULTS.proposal_seconds / 2
    assert await service.fire_due() == 1
    now[0] = start + DEFAULTS.proposal_seconds
    assert await service.fire_due() == 1
    table = await group.table()
    assert table.game.rounds[0].proposals[0].auto_team
    await command(group, admin, "/status")

    # The team drawn for the leader is voted on, and rejected.
    now[0] += 10
    for user in users[:5]:
        await group.press(user, chat, "v:", ":r")
    table = await group.table()
    assert table.game.phase is Phase.PROPOSING and table.game.rounds[0].rejections == 1

    # A team is proposed (after a refusal of a wrong size); two vote, a reminder, the vote deadline.
    now[0] += 10
    game = table.game
    leader = table.players[game.leader].user_id
    not_leader = next(u for u in users[:5] if u != leader)
    keyboard = group.latest_with_button(leader, "t:")  # in the leader's private chat
    propose_data = button_data(keyboard, ":ok")
    elsewhere = next(m for m in telegram.messages(not_leader) if m.from_bot)
    assert (await forged(group, not_leader, not_leader, elsewhere.message_id, propose_data))["text"]  # only the leader
    group_message = next(m for m in telegram.messages(chat) if m.from_bot)
    assert (await forged(group, leader, chat, group_message.message_id, propose_data))["text"]  # not valid here
    assert await press(group, leader, keyboard, propose_data)  # wrong size
    team = sorted([game.leader, game.next_seat(game.leader)])
    for seat in team:
        await group.press(leader, leader, "t:", f":{seat}")
    await group.press(leader, leader, "t:", ":ok")
    vote_start = now[0]
    ballot = group.latest_with_button(chat, "v:")
    stale_vote = button_data(ballot, ":r")
    assert await press(group, users[3], ballot, button_data(ballot, group.game_id))  # ⏳ Waiting for…
    await press(group, users[0], ballot, button_data(ballot, ":a"))
    await press(group, users[1], ballot, button_data(ballot, ":r"))
    assert await press(group, users[1], ballot, button_data(ballot, ":a"))  # already voted
    assert await press(group, outsider, ballot, button_data(ballot, ":a"))  # not playing
    now[0] = vote_start + DEFAULTS.vote_seconds / 2
    assert await service.fire_due() == 1
    now[0] = vote_start + DEFAULTS.vote_seconds
    assert await service.fire_due() == 1
    table = await group.table()
    assert table.game.phase is Phase.MISSION
    # A client still showing the old ballot: the vote is closed.
    update = telegram.forged_press(users[2], chat, ballot.message_id, stale_vote)
    await group.send(update)
    assert telegram.callback_answers[update["callback_query"]["id"]]["text"]

    # The mission: a refused Fail, one card, a reminder, the mission deadline.
    mission_start = now[0]
    honest = next((s for s in team if s not in table.game.spies), None)
    if honest is not None:
        user = table.players[honest].user_id
        prompt = group.latest_with_button(user, "c:")
        assert await press(group, user, prompt, button_data(prompt, ":f"))  # the Resistance must succeed
        assert await press(group, user, prompt, button_data(prompt, ":s"))
    now[0] = mission_start + DEFAULTS.mission_seconds / 2
    assert await service.fire_due() == 1
    now[0] = mission_start + DEFAULTS.mission_seconds
    assert await service.fire_due() == 1
    table = await group.table()
    assert table.game.played_rounds

    # Hints: in private, with the button, and asked in the group.
    hinted = table.players[0].user_id
    await command(group, hinted, "/hints", chat_id=hinted)
    role = next(m for m in telegram.messages(hinted) if m.buttons() and m.buttons()[0]["callback_data"][:2] == "h:")
    await press(group, hinted, role, role.buttons()[0]["callback_data"])
    await command(group, users[1], "/hints")
    await command(group, outsider, "/hints", chat_id=outsider)

    # The rest of the game, its end and its record.
    finished = await group.play(Policy(rng=random.Random(5)))
    assert finished.stage is Stage.OVER
    over = last_message(telegram, chat)
    await command(group, users[3], "/record")
    assert over.buttons() and over.buttons()[0]["callback_data"].startswith("r:")
    again = over.buttons()[0]["callback_data"]

    # Play again: refused to an outsider, opened by a player, refused while that lobby is open.
    assert await press(group, outsider, over, again)
    assert await press(group, users[2], over, again)
    assert (await group.store.table_of_chat(chat)).stage is Stage.LOBBY
    assert await press(group, users[3], over, again)

    # The new lobby is cancelled after a change of mind.
    prompt = await command(group, users[2], "/cancel")
    await press(group, users[2], prompt, button_data(prompt, ":n"))
    prompt = await command(group, users[2], "/cancel")
    await press(group, users[2], prompt, button_data(prompt, ":y"))
    await command(group, users[2], "/cancel")
    await command(group, users[2], "/leave")
    return group


# ---------------------------------------------------------------- the checks


def test_the_fragment_check_knows_the_messages():
    fragments = english_fragments()
    assert any("a new game is open." in fragment for fragment in fragments)
    assert "The Resistance" not in fragments
    assert len(fragments) > 100


async def test_a_player_who_switches_language_mid_game_gets_what_comes_next_in_it(make_bot, telegram):
    """Bob joined with Telegram in English and switches it to Russian mid-game: the answer to his
    vote came in Russian, but his card prompt right after it, and every prompt to the end of the
    game, in English. What comes to him after he acts in Russian is Russian."""
    application = await make_bot(4)
    group = SimulatedGroup(telegram, application, players=5)
    users, chat = group.user_ids, group.chat_id
    bob = users[1]
    await group.open_lobby_and_join()
    await group.start()
    table = await group.table()
    game = table.game
    bob_seat = table.seat_of(bob)
    leader = table.players[game.leader].user_id
    team = sorted({bob_seat, *[s for s in range(5) if s != bob_seat][: game_rules.team_size(5, 1) - 1]})
    for seat in team:
        await group.press(leader, leader, "t:", f":{seat}")
    await group.press(leader, leader, "t:", ":ok")
    telegram.add_user(bob, "Bob", language_code="ru")
    board = group.latest_with_button(chat, "v:")
    assert await press(group, bob, board, button_data(board, ":a")) == plain_text(
        t("ru", "You voted 👍 Approve (mission %(mission)d, «%(group)s»).", mission=1, group="Demo group")
    )
    for user in users:
        if user != bob:
            await group.press(user, chat, "v:", ":a")
    prompt = group.latest_with_button(bob, "c:")
    assert plain_text(prompt.text).splitlines()[0] == plain_text(
        t(
            "ru",
            "«%(group)s», mission %(mission)d: you are on the team. Play your card.",
            group="Demo group",
            mission=1,
        )
    )
    assert [b["text"] for b in prompt.buttons()][:2] == [t("ru", "✅ Success"), t("ru", "❌ Fail")]
    # The others, who changed nothing, still read English.
    other = next(table.players[s].user_id for s in team if s != bob_seat)
    assert plain_text(group.latest_with_button(other, "c:").text).startswith("«Demo group», mission 1: you are on")


@pytest.mark.parametrize("language", TRANSLATED)
async def test_a_whole_game_sends_no_english(make_bot, telegram, language):
    await play_a_whole_game(make_bot, telegram, language)
    texts = sent_texts(telegram)
    assert len(texts) > 100
    found = english_in(texts)
    report = "\n".join(sorted({f"{fragment!r}  (from {msgid!r})" for fragment, msgid, _ in found}))
    assert not found, f"{len({f for f, _, _ in found})} untranslated English fragments in {language}:\n{report}"


async def test_the_check_finds_english_in_an_english_game(make_bot, telegram):
    await play_a_whole_game(make_bot, telegram, "en")
    found = {fragment for fragment, _, _ in english_in(sent_texts(telegram))}
    assert len(found) > 50
    for expected in (
        ": a new game is open.",
        " waits for your vote on the team for mission ",
        "time ran out, so a team was drawn at random:",
        "did not propose in time: this team was drawn at random.",
        "spies · teams",
        "choosing a team of",
        ": you are the leader. Choose",
        ": you proposed",
        "Waiting for:",
        "⏰ Time is up. These votes were counted as 👍 Approve:",
        "⏰ Cards not played in time count as ✅ Success:",
        "ways to seat the spies are still possible.",
        "A new game is open with the same players.",
        "🔁 Play again",
    ):
        assert any(expected in fragment or fragment in expected for fragment in found), expected


async def test_a_player_whose_language_the_bot_does_not_speak_gets_the_groups(make_bot, telegram):
    """Kurt's Telegram is in German, which the bot does not speak; his group plays in Spanish, so
    everything he is told, in private or as a button's answer, is in Spanish."""
    application = await make_bot(4)
    group = SimulatedGroup(telegram, application, players=5, language="es")
    users, chat = group.user_ids, group.chat_id
    kurt = users[1]
    telegram.add_user(kurt, "Kurt", language_code="de")
    await group.open_lobby_and_join()
    table = await group.table()
    assert table.language == "es" and table.players[1].language == "de"
    kurt_seat = table.seat_of(kurt)

    def spanish(message: str, **values) -> str:
        translated = t("es", message, **values)
        assert translated != t("en", message, **values), f"missing translation: {message!r}"
        return plain_text(translated)

    def private(user) -> list[str]:
        return [plain_text(m.text or "") for m in telegram.messages(user) if m.from_bot]

    # The answer to his Join link.
    joined = spanish("You joined the game in «%(group)s».", group="Demo group")
    assert private(kurt) == [joined + "\n" + spanish("When the game starts, your role comes in our private chat.")]

    await group.start()
    table = await group.table()
    game = table.game
    # His role, as a Spanish speaker in his seat reads it.
    spanish_seat = SeatScene(group_scene(table), seat_view(game, kurt_seat), "es")
    role = plain_text(render_private.role_message(spanish_seat))
    assert role != plain_text(render_private.role_message(replace(spanish_seat, lang="en")))
    assert private(kurt).count(role) == 1

    # He is on the team; his vote's answer, his card prompt and his card's answer are Spanish.
    leader = table.players[game.leader].user_id
    size = game_rules.team_size(5, 1)
    team = sorted({kurt_seat, *[s for s in range(5) if s != kurt_seat][: size - 1]})
    for seat in sorted(team):
        await group.press(leader, leader, "t:", f":{seat}")
    await group.press(leader, leader, "t:", ":ok")
    board = group.latest_with_button(chat, "v:")
    assert await press(group, kurt, board, button_data(board, ":a")) == spanish(
        "You voted 👍 Approve (mission %(mission)d, «%(group)s»).", mission=1, group="Demo group"
    )
    assert await press(group, kurt, board, button_data(board, group.game_id)) == spanish(
        "Waiting for: %(names)s", names=", ".join(p.name for s, p in enumerate(table.players) if s != kurt_seat)
    )
    for user in users:
        if user != kurt:
            await group.press(user, chat, "v:", ":a")
    prompt = group.latest_with_button(kurt, "c:")
    # The votes, all approving, under its first line.
    everyone = ", ".join(p.name for p in table.players)
    assert plain_text(prompt.text).splitlines() == [
        spanish(
            "«%(group)s», mission %(mission)d: you are on the team. Play your card.", group="Demo group", mission=1
        ),
        f"👍 {everyone}",
        "👎 —",
    ]
    assert [b["text"] for b in prompt.buttons()] == [spanish("✅ Success"), spanish("❌ Fail"), spanish("🔎 Hints")]
    answer = await press(group, kurt, prompt, button_data(prompt, ":s"))
    assert answer == spanish("You played ✅ Success.")
    assert plain_text(telegram.message(kurt, prompt.message_id).text) == spanish(
        "«%(group)s», mission %(mission)d: you played ✅ Success.", group="Demo group", mission=1
    )
    # /start and /hints in private, where no group says which language: his game's.
    await group.send(telegram.command(kurt, kurt, "/start"))
    greeting = "Hello! While you play, your role, your cards and your /hints come to this chat."
    assert private(kurt)[-1] == spanish(greeting)
    hints = await command(group, kurt, "/hints", chat_id=kurt)
    if kurt_seat in game.spies:
        header = spanish(
            "🔎 «%(group)s»: you are a spy. Each player, you included, as the public record alone "
            "shows them, knowing no role (a Resistance member also knows their own role, so their "
            "numbers differ):",
            group="Demo group",
        )
    else:
        header = spanish("🔎 «%(group)s»: how likely each other player is to be a spy.", group="Demo group")
    assert plain_text(hints.text).splitlines()[0] == header
    # Nothing he was sent, and no answer he got, is English.
    answers = [p.get("text") or "" for m, p in telegram.calls if m == "answerCallbackQuery"]
    found = english_in(private(kurt) + answers)
    assert not found, found


async def test_a_player_whose_language_the_bot_does_not_speak_is_answered_in_the_open_lobbys(make_bot, telegram):
    """Bob, no admin, opened a lobby and had it speak Bulgarian: its message, the Join link's answer
    and later the game spoke Bulgarian. Kurt, whose Telegram is in German, sent /join and /leave in
    the group and was answered in the group's own English."""
    application = await make_bot()
    group = SimulatedGroup(telegram, application, players=6)
    host, kurt, chat = group.user_ids[1], group.user_ids[2], group.chat_id
    telegram.add_user(kurt, "Kurt", language_code="de")
    await group.send(telegram.command(host, chat, "/newgame"))
    group.game_id = await group.store.game_of_chat(chat)
    choice = await command(group, host, "/language")
    await press(group, host, choice, next(b["callback_data"] for b in choice.buttons() if b["text"] == "Български"))
    assert (await group.table()).language == "bg" and (await group.store.settings(chat)).language == "en"

    asked = await command(group, kurt, "/join")  # his private chat with the bot is not open yet
    assert plain_text(asked.text).endswith(
        t("bg", "%(player)s, I cannot write to you in private yet, and roles and cards come there. Press "
          "the button and then Start: you will be seated.", player="")
    )
    await group.send(telegram.command(kurt, kurt, "/start"))
    joined = t("bg", "You joined the game in «%(group)s».", group="Demo group")
    assert plain_text((await command(group, kurt, "/join")).text).startswith(plain_text(joined))
    assert plain_text((await command(group, kurt, "/leave")).text) == t("bg", "You left the game.")


async def test_a_group_whose_first_game_is_opened_by_a_player_the_bot_does_not_speak_to_speaks_english(
    make_bot, telegram
):
    """Kurt's Telegram is in German, which the bot does not speak, and he plays in a Spanish group. He
    opened the first game of his chess club's group, and the club's group was set to speak Spanish for
    good: the language of a game he plays elsewhere. A group takes its first opener's language only
    when the bot speaks it, else English."""
    application = await make_bot(4)
    spanish = SimulatedGroup(telegram, application, players=5, language="es")
    kurt = spanish.user_ids[1]
    telegram.add_user(kurt, "Kurt", language_code="de")
    await spanish.open_lobby_and_join()
    await spanish.start()

    club = SimulatedGroup(telegram, application, chat_id=-200, title="Chess club", players=5)
    await club.send(telegram.command(kurt, club.chat_id, "/newgame"))
    assert (await club.store.settings(club.chat_id)).language == "en"
    assert plain_text(lobby_message(telegram, club.chat_id).text).startswith("🕵️ The Resistance: a new game is open.")


@pytest.mark.parametrize(
    ("code", "language"),
    [
        ("es-419", "es"),  # Latin American Spanish, as Telegram names it
        ("es-AR", "es"),
        ("ru-RU", "ru"),
        ("RU", "ru"),
        ("bg", "bg"),
        ("eo", "eo"),
        ("en-GB", "en"),
        ("de", None),  # none of the five: the group's language (the test above)
        ("pt-br", None),
        ("zh-hans", None),
        ("uk", None),
        ("", None),
        (None, None),
    ],
)
def test_a_telegram_language_code_and_its_regional_variants_map_to_the_language_spoken(code, language):
    assert supported(code) == language


@pytest.mark.parametrize("language", TRANSLATED)
async def test_the_command_menu_is_registered_in_every_language(make_bot, telegram, language):
    await make_bot()
    assert {None, *TRANSLATED} <= set(telegram.commands)
    english = {c["command"]: c["description"] for c in telegram.commands[None]}
    assert list(english) == [name for name, _ in COMMANDS]
    assert english == dict(COMMANDS)
    translated = {c["command"]: c["description"] for c in telegram.commands[language]}
    assert list(translated) == list(english)
    same = {name: description for name, description in translated.items() if description == english[name]}
    assert not same, f"descriptions left in English for {language}: {same}"
    assert all(translated.values())


# What /rules must say in every language, in the rulebook's own words: the setup table (a row
# checked literally), the first leader and the seat order, a tied vote, Targeting and deadlines.
RULES_SAY = {
    "en": (
        "7 players: 3 spies · teams 2-3-3-4*-4",
        "The first leader is drawn at random",
        "passes clockwise",
        "a tied vote rejects it",
        "every leader chooses both the mission and the team",
        "the fifth only after two successes",
        "a team is drawn at random and everyone votes on it",
        "counts as Success",
    ),
    "es": (
        "7 jugadores: 3 espías · equipos 2-3-3-4*-4",
        "El primer líder se elige al azar",
        "en el sentido de las agujas del reloj",
        "un empate es también un rechazo",
        "cada líder elige la misión y también el equipo",
        "la quinta solo después de dos éxitos",
        "se sortea un equipo al azar y se vota",
        "cuenta como Éxito",
    ),
    "ru": (
        "7 игроков: 3 шпиона · команды 2-3-3-4*-4",
        "Первый лидер выбирается случайно",
        "по часовой стрелке",
        "при равенстве голосов команда отклонена",
        "каждый лидер выбирает и миссию, и команду",
        "пятую — только после двух успехов",
        "команда выбирается случайно и, как обычно, ставится на голосование",
        "считается «Успехом»",
    ),
    "bg": (
        "7 играчи: 3 шпиони · екипи 2-3-3-4*-4",
        "Първият лидер се избира на случаен принцип",
        "по часовниковата стрелка",
        "при равенство екипът се отхвърля",
        "всеки лидер избира и мисията, и екипа",
        "петата — само след два успеха",
        "се изтегля случаен екип, който се гласува",
        "се брои за Успех",
    ),
    "eo": (
        "7 ludantoj: 3 spionoj · taĉmentoj 2-3-3-4*-4",
        "La unua gvidanto estas hazarde elektita",
        "dekstrumen",
        "egala rezulto signifas malakcepton",
        "ĉiu gvidanto elektas kaj la mision kaj la taĉmenton",
        "la kvina nur post du sukcesoj",
        "taĉmento estas hazarde elektita kaj ĉiuj voĉdonas pri ĝi",
        "kalkuliĝas kiel Sukceso",
    ),
}


@pytest.mark.parametrize("language", list(RULES_SAY))
async def test_rules_and_help_in_every_language(make_bot, telegram, language):
    application = await make_bot()
    group = SimulatedGroup(telegram, application, players=1, language=language)
    user = group.user_ids[0]
    rules_text = plain_text((await command(group, user, "/rules")).text)
    for phrase in RULES_SAY[language]:
        assert phrase in rules_text, phrase
    # Every table size's row carries the engine's numbers.
    lines = rules_text.splitlines()
    for players in range(game_rules.MIN_PLAYERS, game_rules.MAX_PLAYERS + 1):
        teams = "-".join(
            f"{game_rules.team_size(players, m)}{'*' if game_rules.fails_required(players, m) == 2 else ''}"
            for m in range(1, game_rules.MISSION_COUNT + 1)
        )
        [row] = [line for line in lines if line.startswith(f"{players} ")]
        assert f": {game_rules.spy_count(players)} " in row and row.endswith(f" {teams}"), row

    help_text = plain_text((await command(group, user, "/help")).text)
    newgame = next(line for line in help_text.splitlines() if line.startswith("/newgame"))
    # The three variant words go together: "or both" of two would hide that plot joins them.
    assert "targeting" in newgame and "blind" in newgame and "plot" in newgame
    settings = next(line for line in help_text.splitlines() if line.startswith("/settings"))
    # Who may use /settings: a group admin, or whoever opened the lobby (tgbot.moves.lobby.settings_refusal).
    for words in SETTINGS_ARE_FOR[language]:
        assert words in settings, words


SETTINGS_ARE_FOR = {
    "en": ("a group admin", "whoever opened the lobby"),
    "es": ("un administrador del grupo", "quien abrió la sala"),
    "ru": ("администратор группы", "тот, кто открыл набор"),
    "bg": ("администратор на групата", "който е отворил лобито"),
    "eo": ("grupa administranto", "tiu, kiu malfermis la atendejon"),
}
