"""Group settings (/settings, /language), private hints (/hints and the Hints button) and Play again."""

from __future__ import annotations

import json
import re
from dataclasses import replace

import pytest

from deduction import batch
from engine import Phase, Variants, export_record
from tests.bot_helpers import (
    AlwaysApprove,
    button_data,
    command,
    command_text,
    forged,
    last_message,
    lobby_message,
    press,
    start_message,
    started,
    texts,
)
from tgbot import keys
from tgbot.i18n import t
from tgbot.offline.simulation import SimulatedGroup, plain_text
from tgbot.service import GameService
from tgbot.settings import GroupSettings
from tgbot.table import Stage

pytestmark = pytest.mark.usefixtures("no_handler_errors")

T0 = 1_000_000.0
ADMINS_ONLY = "Only a group admin, or whoever opened the lobby, can change the settings."
HINT_LINE = re.compile(r"^([▰▱]{10}) +(\d+)% (.+)$")
REASON_LINE = "   ↳ "


# ---------------------------------------------------------------- helpers


def labels(message) -> dict[str, str]:
    return {b["text"]: b.get("callback_data") or b.get("url") for b in message.buttons()}


def card_prompt_buttons(telegram) -> list[list[str]]:
    """The button data of every card prompt the bot sent, as it was sent."""
    found = []
    for method, params in telegram.calls:
        if method == "sendMessage" and "Play your card." in params["text"]:
            markup = params.get("reply_markup")
            markup = json.loads(markup) if isinstance(markup, str) else markup
            found.append([b.get("callback_data", "") for row in markup["inline_keyboard"] for b in row])
    return found


def setting_data(chat_id: int, code: str, shown: int = 0) -> str:
    """A settings button's data: the setting's code and where its value stood when shown."""
    return f"s:{chat_id}:{code}:{shown}"


def setting(menu, code: str) -> str:
    """The data of the settings button for `code` on the menu as it is now."""
    prefix = f"s:{menu.chat_id}:{code}:"
    return next(b["callback_data"] for b in menu.buttons() if b.get("callback_data", "").startswith(prefix))


class SpyOnEveryTeam(AlwaysApprove):
    """Each team takes the first spy and fills up with the next seats; the spy fails."""

    def choose_team(self, table, seat, size):
        spy = table.game.spies[0]
        return sorted([spy, *[s for s in range(len(table.players)) if s != spy][: size - 1]])

    def fail(self, table, seat):
        return seat in table.game.spies


async def one_failed_mission(group: SimulatedGroup) -> None:
    """Play until the first mission has been played (and failed): the hints have something to go on."""
    policy = SpyOnEveryTeam()
    while not (await group.table()).game.played_rounds:
        assert await group.step(policy)
    assert (await group.table()).game.played_rounds[0].fails == 1


def expected_hints(table, seat: int):
    """What `seat` may be told, from the published contract rather than the bot's own code: the
    batch protocol on the public record, asked for a Resistance viewer at that seat, or for an
    outsider when the seat is a spy (spec: a spy is shown how the table sees everyone).
    Returns (probabilities, ways to seat the spies the viewer can still imagine, spy view)."""
    spy = seat in table.game.spies
    record = {k: v for k, v in export_record(table.game, table.id).items() if k != "outcome"}
    request = {"record": record, "viewer": None if spy else seat}
    answer = batch.answer(json.dumps(request), "behaviour")
    possible = answer["consistent"]
    if not spy:
        # The Resistance viewer also rules out every assignment that makes them a spy.
        possible = sum(1 for spies in _consistent_spy_sets(record) if seat not in spies)
    return tuple(answer["spy_probability"]), possible, spy


def _consistent_spy_sets(record: dict):
    """Every way to seat the spies that the record's Fail cards allow, counted by hand."""
    from itertools import combinations

    for spies in combinations(range(record["players"]), record["spies"]):
        if all(
            len(set(spies) & (set(m["proposals"][-1]["team"]) - set(m.get("auto_cards", [])))) >= m["fails"]
            for m in record["missions"]
            if "fails" in m
        ):
            yield set(spies)


def check_hints(text: str, table, seat: int) -> None:
    """The hints text for `seat` shows exactly the deduction engine's numbers, as its rules say."""
    probabilities, possible, spy = expected_hints(table, seat)
    lines = text.split("\n")
    group = table.chat_title
    if spy:
        assert lines[0] == (
            f"🔎 «{group}»: you are a spy. Each player, you included, as the public record alone shows them, "
            "knowing no role (a Resistance member also knows their own role, so their numbers differ):"
        )
    else:
        assert lines[0] == f"🔎 «{group}»: how likely each other player is to be a spy."
    rows = [HINT_LINE.match(line) for line in lines[1:] if HINT_LINE.match(line)]
    shown, certain = {}, set()
    for index, line in enumerate(lines):
        row = HINT_LINE.match(line)
        if row is None:
            continue
        bar, percent, name = row.group(1), int(row.group(2)), row.group(3)
        shown[name] = (bar, percent)
        if index + 1 < len(lines) and lines[index + 1].startswith(REASON_LINE + "certainly"):
            certain.add(name)
    expected_names = {
        (f"{table.name(s)} (you)" if s == seat else table.name(s))
        for s in range(len(table.players))
        if spy or s != seat
    }
    assert set(shown) == expected_names
    assert len(rows) == len(expected_names)
    assert all(table.name(seat) != name for name in shown) or spy
    for other in range(len(table.players)):
        if other == seat and not spy:
            continue
        name = f"{table.name(other)} (you)" if other == seat else table.name(other)
        bar, percent = shown[name]
        p = probabilities[other]
        filled = bar.count("▰")
        assert bar == "▰" * filled + "▱" * (10 - filled)
        if name in certain:
            assert abs(percent - 100 * p) <= 0.5, (name, percent, p)
            assert abs(filled - 10 * p) <= 0.5, (name, bar, p)
        else:
            # Only a seat known for certain shows 100% or 0%, or a full or an empty bar.
            assert percent == min(max(round(100 * p), 1), 99), (name, percent, p)
            assert filled == min(max(round(10 * p), 1), 9), (name, bar, p)
    percents = [int(row.group(2)) for row in rows]
    assert percents == sorted(percents, reverse=True)
    remaining = "1 way to seat the spies is still possible." if possible == 1 else (
        f"{possible} ways to seat the spies are still possible."
    )
    if spy:
        remaining = "From the public record alone, " + remaining
    assert remaining in lines
    # Under each seat's line at most two of its reasons, each with signed points or an exact fact.
    seat_lines = [i for i, line in enumerate(lines) if HINT_LINE.match(line)]
    for first, following in zip(seat_lines, seat_lines[1:] + [len(lines)], strict=True):
        under = [line for line in lines[first + 1 : following] if line.startswith(REASON_LINE)]
        assert len(under) <= 2, under
        for line in under:
            text = line[len(REASON_LINE) :]
            assert re.match(r"^[+\u2212]\d+ ", text) or text.startswith("certainly"), line
    has_points = any(
        re.match(r"^[+\u2212]\d+ ", line[len(REASON_LINE) :]) for line in lines if line.startswith(REASON_LINE)
    )
    assert ("↳ what moved each number most, in percentage points" in lines) == has_points


# ---------------------------------------------------------------- /settings


async def test_settings_keyboard_is_for_admins_cycles_and_is_stored_per_group(make_bot, telegram):
    application = await make_bot()
    north = SimulatedGroup(telegram, application, chat_id=-100, title="North", players=3)
    south = SimulatedGroup(telegram, application, chat_id=-200, title="South", players=2)
    admin, member = north.user_ids[0], north.user_ids[1]

    # A member who is no admin and opened no lobby is refused, with no keyboard.
    refusal = await command(north, member, "/settings")
    assert plain_text(refusal.text) == ADMINS_ONLY and refusal.buttons() == []

    # The group's owner gets the keyboard.
    menu = await command(north, admin, "/settings")
    assert plain_text(menu.text) == (
        "⚙️ Settings for this group\n"
        "Press a button to change it. Changes apply to the next game, and to a lobby that is open.\n"
        "Time to choose a team: 3 min, to vote: 2 min, to play a card: 2 min. "
        "A missing vote counts as 👍 Approve. Hints: on.\n"
        "Live pace: the times below are each step's. A slow pace gives a step hours instead."
    )
    chat = north.chat_id
    assert labels(menu) == {
        "Targeting: off": setting_data(chat, "tg", 1),
        "Blind Spies: off": setting_data(chat, "bs", 1),
        "Plot cards: off": setting_data(chat, "pc", 1),
        "Hints: on": setting_data(chat, "hi", 1),
        "Missing vote: 👍 Approve": setting_data(chat, "mv", 1),
        "Pace: live": setting_data(chat, "pa", 1),
        "Team time: 3 min": setting_data(chat, "pt", 3),
        "Vote time: 2 min": setting_data(chat, "vt", 2),
        "Card time: 2 min": setting_data(chat, "mt", 2),
        "Lobby time: 15 min": setting_data(chat, "lt", 3),
        "Computer players: normal": setting_data(chat, "cl", 1),
        "Computer takes over: off": setting_data(chat, "co", 1),
        "English": setting_data(chat, "la", 0),
        "Done": setting_data(chat, "ok", 0),
    }

    # A member pressing the admin's keyboard is refused and changes nothing.
    assert await press(north, member, menu, setting(menu, "tg")) == ADMINS_ONLY
    assert (await north.store.settings(chat)).targeting is False
    assert telegram.message(chat, menu.message_id).edits == 0

    # Each press moves one setting to its next value; the same message edits itself.
    assert await press(north, admin, menu, setting(menu, "tg")) is None
    menu = telegram.message(chat, menu.message_id)
    assert menu.edits == 1 and "Targeting: on" in labels(menu)
    assert (await north.store.settings(chat)).targeting is True

    for minutes in ("3", "5", "1"):
        await press(north, admin, menu, setting(menu, "vt"))
        menu = telegram.message(chat, menu.message_id)
        assert f"Vote time: {minutes} min" in labels(menu)
        assert f"to vote: {minutes} min" in plain_text(menu.text)
    await press(north, admin, menu, setting(menu, "mv"))
    await press(north, admin, menu, setting(menu, "hi"))
    await press(north, admin, menu, setting(menu, "lt"))
    menu = telegram.message(chat, menu.message_id)
    assert menu.edits == 7
    assert {"Missing vote: 👎 Reject", "Hints: off", "Lobby time: 30 min"} <= set(labels(menu))
    assert "A missing vote counts as 👎 Reject. Hints: off." in plain_text(menu.text)
    stored = await north.store.settings(chat)
    assert stored == replace(
        GroupSettings(),
        targeting=True,
        vote_seconds=60,
        missing_vote_approves=False,
        hints=False,
        lobby_seconds=1800,
        language=stored.language,
    )
    # An administrator who is not the owner may change them too.
    telegram.add_group(chat, "North", admins=[admin, north.user_ids[2]])
    other_menu = await command(north, north.user_ids[2], "/settings")
    assert "Hints: off" in labels(other_menu)
    assert await press(north, north.user_ids[2], other_menu, setting(other_menu, "hi")) is None
    assert (await north.store.settings(chat)).hints is True
    await press(north, north.user_ids[2], other_menu, setting(other_menu, "hi"))

    # Another group keeps its own (default) settings.
    assert await south.store.settings(south.chat_id) == GroupSettings()

    # A keyboard forged from North's message, pressed on South's own settings message, is refused.
    south_admin = south.user_ids[0]
    south_menu = await command(south, south_admin, "/settings")
    update = telegram.forged_press(south_admin, south.chat_id, south_menu.message_id, setting_data(chat, "bs"))
    await south.send(update)
    assert telegram.callback_answers[update["callback_query"]["id"]]["text"] == "This button is not valid here."
    update = telegram.forged_press(admin, south.chat_id, south_menu.message_id, setting_data(chat, "bs"))
    await south.send(update)
    assert telegram.callback_answers[update["callback_query"]["id"]]["text"] == "This button is not valid here."
    assert await north.store.settings(chat) == stored
    assert await south.store.settings(south.chat_id) == GroupSettings()
    assert telegram.message(south.chat_id, south_menu.message_id).edits == 0

    # Done closes the menu with a summary and no buttons.
    await press(north, admin, menu, setting(menu, "ok"))
    closed = telegram.message(chat, menu.message_id)
    assert closed.buttons() == []
    assert plain_text(closed.text).startswith("⚙️ Settings saved.\nVariants: Targeting.\nTime to choose a team: 3 min")


async def test_settings_cannot_change_while_a_game_runs(make_bot, telegram):
    application = await make_bot()
    group = SimulatedGroup(telegram, application, players=5)
    admin, host = group.user_ids[0], group.user_ids[1]
    # Bob, no admin, opens the lobby: he may change the settings while it is open.
    await group.send(telegram.command(host, group.chat_id, "/newgame"))
    group.game_id = await group.store.game_of_chat(group.chat_id)
    menu = await command(group, host, "/settings")
    assert await press(group, host, menu, setting(menu, "bs")) is None
    assert (await group.table()).settings.blind_spies is True
    admin_menu = await command(group, admin, "/settings")
    link = lobby_message(telegram, group.chat_id).buttons()[0]["url"]
    for user in group.user_ids:
        await group.send(telegram.open_link(user, link))
    await group.send(telegram.command(host, group.chat_id, "/startgame"))
    table = await group.table()
    assert table.stage is Stage.PLAYING

    # Once the game runs, neither Bob nor even an admin can change the rules: the keyboards shown
    # before refuse every press, and say why (Bob, who opened the game, used to read that only an
    # admin or whoever opened the lobby could change them). Someone else is told they may not.
    between_games = "Settings can be changed between games."
    assert plain_text((await command(group, host, "/settings")).text) == between_games
    assert await press(group, host, menu, setting(menu, "tg")) == between_games
    assert plain_text((await command(group, group.user_ids[2], "/settings")).text) == ADMINS_ONLY
    assert await press(group, group.user_ids[2], menu, setting(menu, "tg")) == ADMINS_ONLY
    before = await group.store.settings(group.chat_id)
    assert await press(group, admin, admin_menu, setting(admin_menu, "tg")) == (
        "Settings can be changed between games."
    )
    assert await press(group, admin, admin_menu, setting(admin_menu, "vt")) == (
        "Settings can be changed between games."
    )
    assert await group.store.settings(group.chat_id) == before
    assert (await group.table()).settings == table.settings
    assert telegram.message(group.chat_id, admin_menu.message_id).edits == 0
    # Bob may still close the keyboard he was shown in the lobby: it then shows his game's settings.
    assert await press(group, group.user_ids[2], menu, setting(menu, "ok")) == ADMINS_ONLY
    assert await press(group, host, menu, setting(menu, "ok")) is None
    assert telegram.message(group.chat_id, menu.message_id).buttons() == []
    assert "Blind Spies" in plain_text(telegram.message(group.chat_id, menu.message_id).text)


async def test_settings_and_language_asked_for_while_a_game_runs_say_when_they_can_change(make_bot, telegram):
    """An admin who sent /settings (or /language) while a game ran got the whole keyboard, headed
    "Changes apply to the next game", and every press on it answered "Settings can be changed between
    games.". They are told so at once, and given nothing to press."""
    group = await started(make_bot, telegram, players=5)
    admin = group.user_ids[0]
    for asked in ("/settings", "/language"):
        answer = await command(group, admin, asked)
        assert plain_text(answer.text) == "Settings can be changed between games."
        assert answer.buttons() == []
    # In the lobby of the next game they may again.
    question = await command(group, admin, "/cancel")
    await press(group, admin, question, button_data(question, ":y"))
    await group.send(telegram.command(admin, group.chat_id, "/newgame"))
    assert plain_text((await command(group, admin, "/settings")).text).startswith("⚙️ Settings for this group\n")


async def test_whoever_opened_a_lobby_sets_its_game_not_the_groups_settings(make_bot, telegram):
    """Bob, no admin, opened a lobby and switched Blind Spies on and the language to Bulgarian. The
    lobby took them, and so did the group's own settings: after he cancelled it, every later game of
    the group was played with Blind Spies, in Bulgarian, until an admin found out. The lobby's game
    takes them; the group's settings stay the admins' to set."""
    application = await make_bot()
    group = SimulatedGroup(telegram, application, players=6)
    admin, host, chat = group.user_ids[0], group.user_ids[1], group.chat_id
    await group.send(telegram.command(host, chat, "/newgame"))
    group.game_id = await group.store.game_of_chat(chat)
    before = await group.store.settings(chat)

    menu = await command(group, host, "/settings")
    assert plain_text(menu.text).startswith("⚙️ Settings for the open lobby\n")
    assert await press(group, host, menu, setting(menu, "bs")) is None
    assert "Blind Spies: on" in [b["text"] for b in telegram.message(chat, menu.message_id).buttons()]
    choice = await command(group, host, "/language")
    assert plain_text(choice.text) == "Which language should I speak in the open lobby's game?"
    await press(group, host, choice, next(b["callback_data"] for b in choice.buttons() if b["text"] == "Български"))
    assert plain_text(telegram.message(chat, choice.message_id).text) == t(
        "bg", "I will speak %(language)s in the open lobby's game.", language="Български"
    )
    table = await group.table()
    assert table.settings.blind_spies and table.language == "bg"
    assert t("bg", "Blind Spies") in plain_text(lobby_message(telegram, chat).text)
    assert await group.store.settings(chat) == before

    question = await command(group, host, "/cancel")
    await press(group, host, question, button_data(question, ":y"))
    await group.send(telegram.command(admin, chat, "/newgame"))
    group.game_id = await group.store.game_of_chat(chat)
    table = await group.table()
    assert not table.settings.blind_spies and table.language == "en"
    assert "Rules: standard, no variants." in plain_text(lobby_message(telegram, chat).text)

    # An admin's changes are the group's, and the open lobby follows them.
    menu = await command(group, admin, "/settings")
    assert plain_text(menu.text).startswith("⚙️ Settings for this group\n")
    await press(group, admin, menu, setting(menu, "bs"))
    assert (await group.store.settings(chat)).blind_spies and (await group.table()).settings.blind_spies


async def test_settings_changed_in_an_open_lobby_show_there_and_rule_the_next_game(make_bot, telegram):
    application = await make_bot(3)
    service = application.bot_data["service"]
    now = [T0]
    service.clock = lambda: now[0]
    group = SimulatedGroup(telegram, application, players=6)
    admin, chat = group.user_ids[0], group.chat_id
    await group.open_lobby_and_join(joining=group.user_ids[:5])
    lobby = lobby_message(telegram, chat)
    assert "Rules: standard, no variants." in plain_text(lobby.text)

    menu = await command(group, admin, "/settings")
    for code in ("tg", "bs", "vt", "vt", "vt"):
        await press(group, admin, menu, setting(menu, code))
    lobby = telegram.message(chat, lobby.message_id)
    shown = plain_text(lobby.text)
    assert "Variants: Targeting, Blind Spies." in shown
    assert "to vote: 1 min" in shown
    assert "5 players of 10: Ann, Bob, Cy, Dan, Eve" in shown
    table = await group.table()
    assert table.variants.targeting and table.variants.blind_spies and table.settings.vote_seconds == 60
    # The lobby keeps its Join button.
    assert lobby.buttons()[0]["url"].endswith(f"join_{group.game_id}")

    await group.start()
    table = await group.table()
    game = table.game
    assert game.variants.targeting and game.variants.blind_spies
    # Targeting: the leader is asked for a mission first, in private; the group is told so.
    leader = table.players[game.leader]
    keyboard = group.latest_with_button(leader.user_id, f"m:{group.game_id}:")
    assert plain_text(keyboard.text) == "«Demo group»: you are the leader. Choose which mission the team attempts."
    assert not any(b["callback_data"].startswith("t:") for b in keyboard.buttons())
    start = plain_text(start_message(telegram, chat).text)
    assert start.endswith(f"➡️ {leader.name} leads: choosing a mission and a team in private.")
    assert "\n2 spies · teams 2-3-2-3-3\n" in start
    # Blind Spies: the spies are told they do not know the other spies.
    for seat in game.spies:
        role = next(text for text in texts(telegram, table.players[seat].user_id) if "you are a spy" in text)
        assert "Under Blind Spies you do not know the other spies." in role
        assert not any(table.name(s) in role for s in game.spies if s != seat)

    # A shorter vote time: the stored deadline of the vote matches it.
    now[0] = T0 + 30
    await group.press(leader.user_id, leader.user_id, "m:", ":1")
    assert (await group.table()).draft_mission == 1
    for seat in (game.leader, game.next_seat(game.leader)):
        await group.press(leader.user_id, leader.user_id, "t:", f":{seat}")
    await group.press(leader.user_id, leader.user_id, "t:", ":ok")
    table = await group.table()
    assert table.game.phase is Phase.VOTING
    assert table.deadline == T0 + 30 + 60 and table.reminder_at == T0 + 30 + 30


async def test_language_button_in_settings_sets_the_group_language(make_bot, telegram):
    application = await make_bot()
    group = SimulatedGroup(telegram, application, players=2)
    admin, chat = group.user_ids[0], group.chat_id
    menu = await command(group, admin, "/settings")
    # No language yet: the first press settles on English, the next one on Spanish.
    await press(group, admin, menu, setting(menu, "la"))
    assert (await group.store.settings(chat)).language == "en"
    await press(group, admin, menu, setting(menu, "la"))
    assert (await group.store.settings(chat)).language == "es"
    menu = telegram.message(chat, menu.message_id)
    assert "Español" in labels(menu)
    spanish_title = plain_text(t("es", "⚙️ <b>Settings for this group</b>"))
    assert spanish_title != "⚙️ Settings for this group"
    assert plain_text(menu.text).startswith(spanish_title)
    # A lobby opened by an English-speaking user now speaks Spanish.
    await group.send(telegram.command(group.user_ids[1], chat, "/newgame"))
    opened = plain_text(t("es", "🕵️ <b>The Resistance</b>: a new game is open."))
    assert opened != "🕵️ The Resistance: a new game is open."
    assert plain_text(lobby_message(telegram, chat).text).startswith(opened)


# ---------------------------------------------------------------- /language


async def test_language_menu_is_for_admins(make_bot, telegram):
    # An admin's press on a language button is not tested: it fails inside the bot (handlers.py passes
    # `language=` to t(), whose first parameter is also called `language`: TypeError).
    application = await make_bot()
    group = SimulatedGroup(telegram, application, players=3)
    admin, member, chat = group.user_ids[0], group.user_ids[1], group.chat_id

    refusal = await command(group, member, "/language")
    assert plain_text(refusal.text) == ADMINS_ONLY and refusal.buttons() == []

    menu = await command(group, admin, "/language")
    assert plain_text(menu.text) == "Which language should I speak in this group?"
    assert labels(menu) == {
        "English": f"l:{chat}:en",
        "Español": f"l:{chat}:es",
        "Русский": f"l:{chat}:ru",
        "Български": f"l:{chat}:bg",
        "Esperanto": f"l:{chat}:eo",
    }
    assert await press(group, member, menu, f"l:{chat}:ru") == ADMINS_ONLY
    assert (await group.store.settings(chat)).language is None
    assert telegram.message(chat, menu.message_id).edits == 0
    # A language button forged onto another group's message is refused.
    other = SimulatedGroup(telegram, application, chat_id=-200, title="Other", players=1)
    other_menu = await command(other, other.user_ids[0], "/language")
    update = telegram.forged_press(other.user_ids[0], other.chat_id, other_menu.message_id, f"l:{chat}:ru")
    await other.send(update)
    assert telegram.callback_answers[update["callback_query"]["id"]]["text"] == "This button is not valid here."
    assert (await group.store.settings(chat)).language is None


# ---------------------------------------------------------------- hints


async def test_hints_in_private_show_the_deduction_for_each_role(make_bot, telegram):
    group = await started(make_bot, telegram, players=5, seed=11)
    await one_failed_mission(group)
    table = await group.table()
    honest = next(s for s in range(5) if s not in table.game.spies)
    spy = table.game.spies[0]

    # A Resistance player: every other player, with the numbers of their own deduction.
    user = table.players[honest].user_id
    reply = plain_text((await command(group, user, "/hints", chat_id=user)).text)
    check_hints(reply, table, honest)

    # A spy: told so, and shown the public view of every player, themself included.
    spy_user = table.players[spy].user_id
    spy_reply = plain_text((await command(group, spy_user, "/hints", chat_id=spy_user)).text)
    assert "you are a spy" in spy_reply
    assert f"{table.name(spy)} (you)" in spy_reply
    check_hints(spy_reply, table, spy)

    # The Hints button under the role message sends the same in private.
    role = next(m for m in telegram.messages(user) if plain_text(m.text or "").startswith("Your game in"))
    assert labels(role) == {"🔎 Hints": f"h:{group.game_id}"}
    count = len(telegram.messages(user))
    assert await press(group, user, role, f"h:{group.game_id}") is None
    assert len(telegram.messages(user)) == count + 1
    assert plain_text(telegram.messages(user)[-1].text) == reply

    # The spy's button answers with the spy's hints.
    spy_role = next(m for m in telegram.messages(spy_user) if plain_text(m.text or "").startswith("Your game in"))
    await press(group, spy_user, spy_role, f"h:{group.game_id}")
    assert plain_text(telegram.messages(spy_user)[-1].text) == spy_reply

    # Card prompts carry the Hints button too.
    prompts = card_prompt_buttons(telegram)
    assert len(prompts) == 2 and all(f"h:{group.game_id}" in buttons for buttons in prompts)

    # Someone not playing is told so.
    outsider = SimulatedGroup(telegram, group.application, chat_id=-300, players=1).user_ids[0]
    assert plain_text((await command(group, outsider, "/hints", chat_id=outsider)).text) == (
        "You are not in a running game. Hints come once a game has started."
    )
    # Asked in the group, the answer is the same, there: nothing went to their private chat.
    private_before = len(telegram.messages(outsider))
    assert plain_text((await command(group, outsider, "/hints")).text) == (
        "You are not in a running game. Hints come once a game has started."
    )
    assert len(telegram.messages(outsider)) == private_before


async def test_hints_asked_in_the_group_go_to_private(make_bot, telegram):
    group = await started(make_bot, telegram, players=5, seed=11)
    await one_failed_mission(group)
    table = await group.table()
    honest = next(s for s in range(5) if s not in table.game.spies)
    user = table.players[honest].user_id

    private_before = len(telegram.messages(user))
    group_before = len(telegram.messages(group.chat_id))
    pointer = await command(group, user, "/hints")
    assert plain_text(pointer.text) == "I sent your hints in private."
    # The group got the command and the pointer, nothing else; the hints went to the private chat.
    new_in_group = texts(telegram, group.chat_id)[group_before:]
    assert new_in_group == ["/hints", "I sent your hints in private."]
    assert not any("▰" in text or "▱" in text or "seat the spies" in text for text in texts(telegram, group.chat_id))
    assert len(telegram.messages(user)) == private_before + 1
    check_hints(plain_text(telegram.messages(user)[-1].text), table, honest)


async def test_hints_asked_in_the_group_as_the_game_is_cancelled_never_reach_the_group(make_bot, telegram, monkeypatch):
    """/hints in the group worked out the player's hints, then asked again whether they play: a game
    cancelled (or ended) in between answered no, and the hints were posted in the group, a spy's
    saying "you are a spy". Hints worked out for a game go to private, whatever happens meanwhile."""
    group = await started(make_bot, telegram, players=5, seed=11)
    table = await group.table()
    host = group.user_ids[0]
    spy = table.players[table.game.spies[0]].user_id
    question = await command(group, host, "/cancel")
    yes = next(b["callback_data"] for b in question.buttons() if b["callback_data"].endswith(":y"))
    worked_out = GameService.hints_asked_in

    async def then_cancelled(self, *args, **kwargs):
        answer = await worked_out(self, *args, **kwargs)
        await press(group, host, question, yes)  # the host's Yes lands just then
        return answer

    monkeypatch.setattr(GameService, "hints_asked_in", then_cancelled)
    group_before = len(telegram.messages(group.chat_id))
    await group.send(telegram.command(spy, group.chat_id, "/hints"))
    assert (await group.table()).stage is Stage.CANCELLED
    new_in_group = texts(telegram, group.chat_id)[group_before:]
    assert not any("spy" in text or "▰" in text or "▱" in text for text in new_in_group), new_in_group
    assert "you are a spy" in plain_text(telegram.messages(spy)[-1].text)


async def test_hints_switched_off(make_bot, telegram):
    application = await make_bot(11)
    group = SimulatedGroup(telegram, application, players=5)
    admin = group.user_ids[0]
    menu = await command(group, admin, "/settings")
    await press(group, admin, menu, setting(menu, "hi"))
    assert (await group.store.settings(group.chat_id)).hints is False
    await group.open_lobby_and_join()
    await group.start()
    table = await group.table()
    assert table.settings.hints is False

    for player in table.players:
        role = next(m for m in telegram.messages(player.user_id) if plain_text(m.text or "").startswith("Your game"))
        assert role.buttons() == []
    reply = await command(group, admin, "/hints", chat_id=admin)
    assert plain_text(reply.text) == "Hints are switched off in «Demo group»."
    assert "▰" not in reply.text and "▱" not in reply.text

    # Card prompts carry no Hints button either.
    await one_failed_mission(group)
    prompts = card_prompt_buttons(telegram)
    assert len(prompts) == 2
    assert all(not data.startswith("h:") for buttons in prompts for data in buttons)


async def two_games_sharing_a_player(application, telegram, north_title: str, south_title: str):
    """Two running games in two groups, one player (the north game's second) seated in both."""
    north = SimulatedGroup(telegram, application, chat_id=-100, title=north_title, players=5)
    south = SimulatedGroup(telegram, application, chat_id=-200, title=south_title, players=4)
    shared = north.user_ids[1]
    await north.open_lobby_and_join()
    await south.open_lobby_and_join()
    await south.send(telegram.open_link(shared, lobby_message(telegram, south.chat_id).buttons()[0]["url"]))
    await north.start()
    await south.start()
    return north, south, shared


async def test_a_player_in_two_games_chooses_which_hints(make_bot, telegram):
    application = await make_bot(7)
    north, south, shared = await two_games_sharing_a_player(application, telegram, "North", "South")
    await one_failed_mission(south)

    choice = await command(north, shared, "/hints", chat_id=shared)
    assert plain_text(choice.text) == "You play in several groups. Hints for which game?"
    assert labels(choice) == {"North": f"h:{north.game_id}", "South": f"h:{south.game_id}"}

    await press(south, shared, choice, f"h:{south.game_id}")
    south_table = await south.table()
    south_hints = plain_text(telegram.messages(shared)[-1].text)
    assert south_hints.startswith("🔎 «South»")
    check_hints(south_hints, south_table, south_table.seat_of(shared))

    await press(north, shared, choice, f"h:{north.game_id}")
    north_table = await north.table()
    north_hints = plain_text(telegram.messages(shared)[-1].text)
    assert north_hints.startswith("🔎 «North»")
    check_hints(north_hints, north_table, north_table.seat_of(shared))


async def test_hints_asked_in_a_group_are_that_groups_games(make_bot, telegram):
    """A player of two games who sent /hints in one game's group got "Hints for which game?", and had to
    tell two groups apart by their titles alone (which may be the same): they get that game's hints."""
    application = await make_bot(7)
    north, south, shared = await two_games_sharing_a_player(application, telegram, "Games", "Games")
    await one_failed_mission(south)

    for group in (south, north):
        answer = await command(group, shared, "/hints")
        assert plain_text(answer.text) == "I sent your hints in private."
        table = await group.table()
        hints = plain_text(telegram.messages(shared)[-1].text)
        check_hints(hints, table, table.seat_of(shared))
    # Asked in a group whose game they do not play, they choose, as in private.
    elsewhere = SimulatedGroup(telegram, application, chat_id=-300, title="Elsewhere", players=1)
    await command(elsewhere, shared, "/hints")
    assert plain_text(telegram.messages(shared)[-1].text) == "You play in several groups. Hints for which game?"


async def test_games_in_groups_of_the_same_title_are_told_apart_when_choosing_hints(make_bot, telegram):
    """Two groups may have the same title: the choice of game offered two buttons reading "Games".
    Each names the other players of its game too."""
    application = await make_bot(7)
    north, south, shared = await two_games_sharing_a_player(application, telegram, "Games", "Games")
    choice = await command(north, shared, "/hints", chat_id=shared)
    assert labels(choice) == {
        "Games · Ann, Cy, Dan, Eve": f"h:{north.game_id}",
        "Games · Ann, Bob, Cy, Dan": f"h:{south.game_id}",
    }


async def test_the_hints_button_of_a_finished_game_says_it_is_over(make_bot, telegram):
    """A role message's 🔎 Hints stays in the private chat after its game ends; pressed while the
    same player plays the next game, it is not "You are not in a running game"."""
    group = await started(make_bot, telegram)
    user = group.user_ids[1]
    old_role = group.latest_with_button(user, f"h:{group.game_id}")
    finished = await group.play(SpyOnEveryTeam())
    over = last_message(telegram, group.chat_id)
    await press(group, user, over, f"r:{finished.id}")
    group.game_id = await group.store.game_of_chat(group.chat_id)
    await group.start()
    assert (await group.table()).stage is Stage.PLAYING

    await press(group, user, old_role, f"h:{finished.id}")
    assert plain_text(telegram.messages(user)[-1].text) == "This game is over."
    # The running game's own button shows its hints.
    await press(group, user, group.latest_with_button(user, f"h:{group.game_id}"), f"h:{group.game_id}")
    assert plain_text(telegram.messages(user)[-1].text).startswith("🔎 «Demo group»")


# ---------------------------------------------------------------- play again


async def test_play_again_opens_a_lobby_with_the_same_players_and_settings(make_bot, telegram):
    application = await make_bot(5)
    group = SimulatedGroup(telegram, application, players=6)
    admin, chat = group.user_ids[0], group.chat_id
    menu = await command(group, admin, "/settings")
    for code in ("mv", "pt"):
        await press(group, admin, menu, setting(menu, code))
    settings = await group.store.settings(chat)
    assert settings.missing_vote_approves is False and settings.proposal_seconds == 300

    players = group.user_ids[1:]  # Ann, the owner, does not play
    await group.open_lobby_and_join(joining=players)
    await group.start()
    finished = await group.play(SpyOnEveryTeam())
    assert finished.stage is Stage.OVER
    # The end is edited into the last proposal's message, which carries Play again.
    over = last_message(telegram, chat)
    assert "\n\n🏁 The spies win: three missions failed." in plain_text(over.text)
    assert labels(over) == {"🔁 Play again": f"r:{finished.id}"}

    # Someone who did not play is refused.
    assert await press(group, admin, over, f"r:{finished.id}") == "Only the players of that game can start a rematch."
    assert await group.store.game_of_chat(chat) is None

    # A player presses: a new lobby, the same players already seated, the group's settings.
    presser = finished.players[2].user_id
    assert await press(group, presser, over, f"r:{finished.id}") == "A new game is open with the same players."
    new_id = await group.store.game_of_chat(chat)
    assert new_id is not None and new_id != finished.id
    rematch = await group.store.load(new_id)
    assert rematch.stage is Stage.LOBBY and rematch.creator_id == presser
    assert [p.user_id for p in rematch.players] == [p.user_id for p in finished.players]
    assert rematch.settings == finished.settings == await group.store.settings(chat)
    assert rematch.settings == replace(settings, language="en")
    lobby = lobby_message(telegram, chat)
    shown = plain_text(lobby.text)
    assert shown.startswith("🕵️ The Resistance: a new game is open.")
    assert f"5 players of 10: {', '.join(p.name for p in finished.players)}" in shown
    assert "A missing vote counts as 👎 Reject." in shown and "Time to choose a team: 5 min" in shown
    for user in players:
        assert new_id in await group.store.games_of_user(user)

    # Pressing again while that lobby is open opens no other; a player seated in it is told so (not
    # to /join it), someone else that a game is open.
    other = finished.players[0].user_id
    assert await press(group, other, over, f"r:{finished.id}") == "You are already in this game."
    await group.send(telegram.command(other, chat, "/leave"))
    assert await press(group, other, over, f"r:{finished.id}") == (
        "A game is already open in this group: /join it, or see /status."
    )
    await group.send(telegram.command(other, chat, "/join"))
    assert await group.store.game_of_chat(chat) == new_id
    lobbies = [p for method, p in telegram.calls if method == "sendMessage" and "a new game is open" in p["text"]]
    assert len(lobbies) == 2  # the first game's and the rematch's

    # The rematch starts like any lobby.
    group.game_id = new_id
    await group.send(telegram.command(presser, chat, "/startgame"))
    assert (await group.table()).stage is Stage.PLAYING


async def test_play_again_on_a_game_no_longer_kept_says_so(make_bot, telegram):
    """A finished game is kept a week; its Play again button stays in the group for good."""
    group = await started(make_bot, telegram)
    finished = await group.play(SpyOnEveryTeam())
    over = last_message(telegram, group.chat_id)
    await group.store.redis.delete(keys.game(finished.id))  # what its week's expiry does
    player = finished.players[0].user_id
    assert await press(group, player, over, f"r:{finished.id}") == (
        "This game is no longer kept: start a new one with /newgame."
    )
    assert await group.store.game_of_chat(group.chat_id) is None


async def test_play_again_forged_for_a_cancelled_game_is_not_valid(make_bot, telegram):
    group = await started(make_bot, telegram)
    host = group.user_ids[0]
    question = await command(group, host, "/cancel")
    await press(group, host, question, f"x:{group.game_id}:y")
    answer = await forged(group, host, group.chat_id, question.message_id, f"r:{group.game_id}")
    assert answer["text"] == "This button is not valid."
    assert await group.store.game_of_chat(group.chat_id) is None


async def test_language_menu_sets_the_group_language(make_bot, telegram):
    application = await make_bot(5)
    group = SimulatedGroup(telegram, application, players=5)
    admin = group.user_ids[0]
    await group.send(telegram.command(admin, group.chat_id, "/language"))
    menu = telegram.messages(group.chat_id)[-1]
    await group.send(telegram.press(admin, group.chat_id, menu.message_id, text="Español"))
    assert plain_text(telegram.message(group.chat_id, menu.message_id).text) == "Aquí hablaré Español."
    assert not telegram.message(group.chat_id, menu.message_id).buttons()
    assert (await group.store.settings(group.chat_id)).language == "es"
    await group.open_lobby_and_join(joining=group.user_ids[:2])
    lobby = next(m for m in telegram.messages(group.chat_id) if any("url" in b for b in m.buttons()))
    assert "Resistance" in lobby.text and "jugador" in plain_text(lobby.text)


async def test_variants_named_with_newgame_come_on_top_of_the_groups_settings(make_bot, telegram):
    application = await make_bot(8)
    group = SimulatedGroup(telegram, application, players=5)
    await group.store.update_settings(group.chat_id, lambda current: replace(current, targeting=True))
    await group.send(telegram.command(group.user_ids[0], group.chat_id, "/newgame blind"))
    table = await group.store.table_of_chat(group.chat_id)
    assert table.variants.targeting and table.variants.blind_spies


async def test_newgame_with_a_word_it_does_not_know_opens_nothing_and_says_so(make_bot, telegram):
    """"/newgame blnd" opened a game without Blind Spies, and "/newgame targeting, blind" one without
    Targeting ("targeting," was no variant): a typo silently changed the game."""
    application = await make_bot(8)
    group = SimulatedGroup(telegram, application, players=5)
    host = group.user_ids[0]
    for text, word in (("/newgame blnd", "blnd"), ("/newgame plot <b>" + "x" * 60, "<b>" + "x" * 36 + "…")):
        assert await command_text(group, host, text) == (
            f"I do not know the variant «{word}». Add targeting, blind and/or plot, or nothing: "
            "/newgame targeting blind"
        )
        assert await group.store.game_of_chat(group.chat_id) is None
    await group.send(telegram.command(host, group.chat_id, "/newgame targeting, blind"))
    table = await group.store.table_of_chat(group.chat_id)
    assert table.variants.targeting and table.variants.blind_spies and not table.variants.plot_cards


async def test_a_settings_press_made_on_what_is_no_longer_shown_changes_nothing(make_bot, telegram):
    """Two admins press "Targeting: off" on their own keyboards at once, or Telegram delivers one
    press twice: targeting ends on, not switched back off by the second press."""
    application = await make_bot()
    group = SimulatedGroup(telegram, application, chat_id=-100, title="North", players=3)
    admin, other_admin = group.user_ids[0], group.user_ids[2]
    telegram.add_group(group.chat_id, "North", admins=[admin, other_admin])
    menu = await command(group, admin, "/settings")
    other_menu = await command(group, other_admin, "/settings")
    pressed = setting(menu, "tg")
    assert pressed == setting(other_menu, "tg") == setting_data(group.chat_id, "tg", 1)

    update = telegram.press(admin, menu.chat_id, menu.message_id, pressed)
    await group.send(update)
    assert (await group.store.settings(group.chat_id)).targeting is True
    await group.send(update)  # delivered again
    assert (await group.store.settings(group.chat_id)).targeting is True
    # The other keyboard was pressed before its message showed the change.
    await group.send(telegram.forged_press(other_admin, group.chat_id, other_menu.message_id, pressed))
    assert (await group.store.settings(group.chat_id)).targeting is True
    # The keyboards now show it as it is, and a press on what they show switches it off.
    assert "Targeting: on" in labels(telegram.message(group.chat_id, other_menu.message_id))
    await press(group, admin, menu, setting(menu, "tg"))
    assert (await group.store.settings(group.chat_id)).targeting is False


# A phone shows about this many characters on a button a whole row wide (half as many on each of
# two); a longer label is cut short with an ellipsis, the value it shows at its end unseen.
ROW = 36


def cut_on_a_phone(message) -> list[str]:
    """The labels of a message's buttons that share their row and are too long for their share of it."""
    return [
        button["text"]
        for row in message.reply_markup or []
        for button in row
        if len(row) > 1 and len(button["text"].encode("utf-16-le")) // 2 > ROW // len(row)
    ]


@pytest.mark.parametrize("language", ["en", "es", "ru", "bg", "eo"])
async def test_settings_and_mission_buttons_show_their_whole_label_on_a_phone(make_bot, telegram, language):
    """/settings put two buttons in a row whatever their labels: "Tiempo para elegir equipo: 3 min"
    showed on a phone as "Tiempo para elegir eq…", the value unseen. Under Targeting the leader's
    missions were all in one row, each cut to its first letters ("Mis…"). Long labels get a row of
    their own, and missions come two to a row."""
    application = await make_bot(1)
    group = SimulatedGroup(telegram, application, players=5, language=language)
    admin = group.user_ids[0]
    menu = await command(group, admin, "/settings")
    assert len(menu.buttons()) == 14
    assert cut_on_a_phone(menu) == []
    await press(group, admin, menu, setting(menu, "pa"))  # slow: its hours and quiet hours too
    menu = telegram.message(group.chat_id, menu.message_id)
    assert len(menu.buttons()) == 16
    assert cut_on_a_phone(menu) == []
    await group.open_lobby_and_join(variants=Variants(targeting=True))
    await group.start()
    table = await group.table()
    leader = table.players[table.game.leader].user_id
    keyboard = group.latest_with_button(leader, f"m:{group.game_id}:")
    assert len(keyboard.buttons()) == 4 and max(len(row) for row in keyboard.reply_markup) == 2
    assert cut_on_a_phone(keyboard) == []
    await press(group, leader, keyboard, keyboard.buttons()[0]["callback_data"])
    keyboard = telegram.message(leader, keyboard.message_id)
    missions = [row for row in keyboard.reply_markup if row[0]["callback_data"].startswith("m:")]
    assert sum(len(row) for row in missions) == 3 and max(len(row) for row in missions) == 2


async def test_the_leaders_keyboard_shows_long_names_whole_on_a_phone(make_bot, telegram):
    """Two players to a row whatever their names: "Alexandra Konstantinopolskaya" and
    "Alexandra Konstantinova" both read "Alexandra Konstant…" on the leader's phone."""
    application = await make_bot(1)
    group = SimulatedGroup(telegram, application, players=6)
    names = ["Alexandra Konstantinopolskaya", "Alexandra Konstantinova", "Bo", "Cy", "Di", "Ed"]
    for user, name in zip(group.user_ids, names, strict=True):
        telegram.add_user(user, name, language_code="en")
    await group.open_lobby_and_join()
    await group.start()
    table = await group.table()
    leader = table.players[table.game.leader].user_id
    keyboard = group.latest_with_button(leader, f"t:{group.game_id}:")
    assert cut_on_a_phone(keyboard) == []
    labels = [b["text"] for b in keyboard.buttons()]
    assert all(name in labels for name in names)
    assert any(len(row) == 2 for row in keyboard.reply_markup)  # short names still share a row
    # Ticking a name keeps the keyboard's shape.
    shape = [len(row) for row in keyboard.reply_markup]
    await press(group, leader, keyboard, keyboard.buttons()[2]["callback_data"])
    ticked = telegram.message(leader, keyboard.message_id)
    assert "✔ Bo" in [b["text"] for b in ticked.buttons()]
    assert [len(row) for row in ticked.reply_markup] == shape


async def test_a_settings_change_in_the_lobby_keeps_the_variants_named_with_newgame(make_bot, telegram):
    """"/newgame plot", then the host sets a longer vote time in /settings: the lobby took the group's
    settings whole and the game started without the Plot cards it was opened for."""
    application = await make_bot(5)
    group = SimulatedGroup(telegram, application, players=5)
    host = group.user_ids[0]
    await group.open_lobby_and_join(variants=Variants(plot_cards=True, blind_spies=True))
    assert (await group.table()).variants == Variants(plot_cards=True, blind_spies=True)
    menu = await command(group, host, "/settings")
    await press(group, host, menu, setting(menu, "vt"))
    table = await group.table()
    assert table.settings.vote_seconds == 180
    assert table.variants == Variants(plot_cards=True, blind_spies=True)
    assert "Variants: Blind Spies, Plot cards." in plain_text(lobby_message(telegram, group.chat_id).text)
    # A variant switched on in /settings comes on top of them.
    await press(group, host, menu, setting(menu, "tg"))
    assert (await group.table()).variants == Variants(targeting=True, plot_cards=True, blind_spies=True)
    await group.start()
    assert (await group.table()).game.variants == Variants(targeting=True, plot_cards=True, blind_spies=True)


async def test_play_again_keeps_the_variants_named_with_newgame(make_bot, telegram):
    """A game opened with "/newgame targeting" (the group's settings have none): Play again opened a
    lobby without Targeting, and the players found themselves in another game than the one they played."""
    application = await make_bot(5)
    group = SimulatedGroup(telegram, application, players=5)
    await group.open_lobby_and_join(variants=Variants(targeting=True))
    await group.start()
    finished = await group.play(SpyOnEveryTeam())
    assert finished.stage is Stage.OVER and finished.variants == Variants(targeting=True)
    over = last_message(telegram, group.chat_id)
    presser = finished.players[1].user_id
    assert await press(group, presser, over, f"r:{finished.id}") == "A new game is open with the same players."
    rematch = await group.store.load(await group.store.game_of_chat(group.chat_id))
    assert rematch.stage is Stage.LOBBY and rematch.variants == Variants(targeting=True)
    assert "Variants: Targeting." in plain_text(lobby_message(telegram, group.chat_id).text)


async def test_an_admins_change_keeps_what_the_lobbys_opener_chose_for_it(make_bot, telegram):
    """Bob, no admin, opened a lobby and switched Blind Spies on and the language to Bulgarian for its
    game; an admin then set a shorter vote time for the group. The lobby took the group's settings
    whole: Blind Spies went off and the lobby spoke English again, unless Bob noticed. The lobby takes
    the admin's change, and keeps what Bob chose."""
    application = await make_bot()
    group = SimulatedGroup(telegram, application, players=6)
    admin, host, chat = group.user_ids[0], group.user_ids[1], group.chat_id
    await group.send(telegram.command(host, chat, "/newgame"))
    group.game_id = await group.store.game_of_chat(chat)
    menu = await command(group, host, "/settings")
    await press(group, host, menu, setting(menu, "bs"))
    choice = await command(group, host, "/language")
    await press(group, host, choice, next(b["callback_data"] for b in choice.buttons() if b["text"] == "Български"))
    assert (await group.table()).settings.blind_spies and (await group.table()).language == "bg"

    admin_menu = await command(group, admin, "/settings")
    await press(group, admin, admin_menu, setting(admin_menu, "vt"))
    assert (await group.store.settings(chat)).vote_seconds == 180
    table = await group.table()
    assert table.settings.vote_seconds == 180
    assert table.settings.blind_spies and table.language == "bg"
    assert t("bg", "Blind Spies") in plain_text(lobby_message(telegram, chat).text)
    # The group's own settings stay as the admins set them.
    assert not (await group.store.settings(chat)).blind_spies
    # An admin who chooses the group's language, English as it already is, has the lobby speak it too.
    choice = await command(group, admin, "/language")
    await press(group, admin, choice, next(b["callback_data"] for b in choice.buttons() if b["text"] == "English"))
    table = await group.table()
    assert table.language == "en" and table.settings.blind_spies


async def test_a_variant_named_with_newgame_switched_off_in_settings_says_it_stays_on(make_bot, telegram):
    """A lobby opened with "/newgame plot": its opener pressed "Plot cards: on" in /settings and nothing
    happened, no word why; an admin's press switched them off for the group, the keyboard read "Plot cards:
    off" and the game started with them all the same. Both are told the lobby keeps them."""
    application = await make_bot()
    group = SimulatedGroup(telegram, application, players=6)
    admin, host, chat = group.user_ids[0], group.user_ids[1], group.chat_id
    await group.send(telegram.command(host, chat, "/newgame plot"))
    group.game_id = await group.store.game_of_chat(chat)
    kept = "The open lobby keeps this variant on, since /newgame named it: Plot cards."

    menu = await command(group, host, "/settings")
    assert await press(group, host, menu, setting(menu, "pc")) == kept
    assert (await group.table()).variants.plot_cards
    admin_menu = await command(group, admin, "/settings")
    assert await press(group, admin, admin_menu, setting(admin_menu, "pc")) is None  # the group's: on
    assert await press(group, admin, admin_menu, setting(admin_menu, "pc")) == kept  # and off again
    assert not (await group.store.settings(chat)).plot_cards
    assert (await group.table()).variants.plot_cards
    # Any other change says nothing.
    assert await press(group, admin, admin_menu, setting(admin_menu, "bs")) is None
    assert await press(group, host, menu, setting(menu, "tg")) is None
