"""Opening, joining, starting, cancelling and looking at games: the commands around the play."""

from __future__ import annotations

import json

import pytest

from engine import EndReason, Phase, Side, parse_record
from engine import rules as game_rules
from tests.bot_helpers import (
    AlwaysApprove,
    CleanTeams,
    command_text,
    current_mission,
    last_text,
    lobby_message,
    started,
    texts,
)
from tgbot.app import COMMANDS
from tgbot.offline.simulation import SimulatedGroup, plain_text
from tgbot.table import Stage

pytestmark = pytest.mark.usefixtures("no_handler_errors")

BOT_LINK = "https://t.me/resistance_test_bot?start="


# ---------------------------------------------------------------- opening and joining


async def test_newgame_in_private_explains_groups(make_bot, telegram):
    application = await make_bot()
    group = SimulatedGroup(telegram, application, players=1)
    user = group.user_ids[0]
    reply = await command_text(group, user, "/newgame", chat_id=user)
    assert reply == "Add me to a group and send this command there: games are played in groups."
    assert await group.store.game_of_chat(user) is None


async def test_newgame_twice_says_a_game_is_open(make_bot, telegram):
    application = await make_bot()
    group = SimulatedGroup(telegram, application, players=2)
    await group.send(telegram.command(group.user_ids[0], group.chat_id, "/newgame"))
    game_id = await group.store.game_of_chat(group.chat_id)
    assert game_id is not None
    reply = await command_text(group, group.user_ids[1], "/newgame")
    assert reply == "A game is already open in this group: /join it, or see /status."
    assert await group.store.game_of_chat(group.chat_id) == game_id
    assert sum("a new game is open" in text for text in texts(telegram, group.chat_id)) == 1


async def test_join_needs_the_private_chat_then_join_and_leave_edit_the_lobby(make_bot, telegram):
    application = await make_bot()
    group = SimulatedGroup(telegram, application, players=3)
    host, late, other = group.user_ids
    await group.send(telegram.command(host, group.chat_id, "/newgame"))
    group.game_id = await group.store.game_of_chat(group.chat_id)
    lobby = lobby_message(telegram, group.chat_id)
    assert "0 players of 10" in plain_text(lobby.text)

    # Never opened the private chat: refused, with a deep link to the bot instead.
    await group.send(telegram.command(late, group.chat_id, "/join"))
    refusal = telegram.messages(group.chat_id)[-1]
    assert "Bob, I cannot write to you in private yet" in plain_text(refusal.text)
    [button] = refusal.buttons()
    assert button["url"] == f"{BOT_LINK}join_{group.game_id}"
    assert (await group.table()).players == ()
    assert not telegram.private_chat_open(late)

    # The link opens the private chat and seats them; the lobby is edited in place.
    await group.send(telegram.open_link(late, button["url"]))
    assert [p.user_id for p in (await group.table()).players] == [late]
    assert texts(telegram, late)[-1] == "You joined the game in «Demo group»."
    edited = telegram.message(group.chat_id, lobby.message_id)
    assert edited.edits == 1 and "1 player of 10: Bob" in plain_text(edited.text)
    assert lobby_message(telegram, group.chat_id).message_id == lobby.message_id

    # With the private chat open, /join in the group works directly; twice is refused.
    await group.send(telegram.command(other, other, "/start"))
    assert await command_text(group, other, "/join") == "You joined the game in «Demo group»."
    assert await command_text(group, other, "/join") == "You are already in this game."
    edited = telegram.message(group.chat_id, lobby.message_id)
    assert edited.edits == 2 and "2 players of 10: Bob, Cy" in plain_text(edited.text)

    # /leave takes the seat away and edits the same message again.
    assert await command_text(group, late, "/leave") == "You left the game."
    assert [p.user_id for p in (await group.table()).players] == [other]
    edited = telegram.message(group.chat_id, lobby.message_id)
    assert edited.edits == 3 and "1 player of 10: Cy" in plain_text(edited.text)
    assert await command_text(group, late, "/leave") == "You are not in this game."
    assert await group.store.games_of_user(late) == []
    assert await group.store.games_of_user(other) == [group.game_id]
    # Only one lobby message was ever sent.
    assert sum("a new game is open" in text for text in texts(telegram, group.chat_id)) == 1


async def test_startgame_needs_five_players_and_the_host_or_an_admin(make_bot, telegram):
    application = await make_bot()
    group = SimulatedGroup(telegram, application, players=6)
    admin, host, *others = group.user_ids
    # Ann owns the group; Cy is made an administrator; Bob (no admin) opens the game.
    telegram.add_group(group.chat_id, "Demo group", admins=[admin, others[0]])
    await group.send(telegram.command(host, group.chat_id, "/newgame"))
    group.game_id = await group.store.game_of_chat(group.chat_id)
    link = lobby_message(telegram, group.chat_id).buttons()[0]["url"]
    for user in group.user_ids[1:5]:
        await group.send(telegram.open_link(user, link))

    reply = await command_text(group, host, "/startgame")
    assert reply == "A game needs 5 to 10 players; 4 have joined."
    assert (await group.table()).stage is Stage.LOBBY

    await group.send(telegram.open_link(group.user_ids[5], link))
    reply = await command_text(group, others[1], "/startgame")  # Dan: neither host nor admin
    assert reply == "Only Bob, who opened the game, or a group admin can start it."
    table = await group.table()
    assert table.stage is Stage.LOBBY and table.game is None

    await group.send(telegram.command(others[0], group.chat_id, "/startgame"))  # Cy, an administrator
    table = await group.table()
    assert table.stage is Stage.PLAYING and table.game.players == 5
    assert "the game has started with Bob, Cy, Dan, Eve, Fay" in " ".join(texts(telegram, group.chat_id))
    # Everyone seated got their role in private; Ann, not seated, got nothing.
    for user in group.user_ids[1:]:
        assert any(text.startswith("Your game in «Demo group»") for text in texts(telegram, user))
    assert telegram.messages(admin) == []
    assert await command_text(group, host, "/startgame") == "This game has already started."
    await group.send(telegram.command(admin, admin, "/start"))
    assert await command_text(group, admin, "/join") == "This game has already started."
    assert (await group.table()).seat_of(admin) is None


async def test_group_owner_who_did_not_open_the_game_may_start_it(make_bot, telegram):
    application = await make_bot()
    group = SimulatedGroup(telegram, application, players=6)
    owner = group.user_ids[0]
    await group.send(telegram.command(group.user_ids[1], group.chat_id, "/newgame"))
    group.game_id = await group.store.game_of_chat(group.chat_id)
    link = lobby_message(telegram, group.chat_id).buttons()[0]["url"]
    for user in group.user_ids[1:]:
        await group.send(telegram.open_link(user, link))
    await group.send(telegram.command(owner, group.chat_id, "/startgame"))
    assert (await group.table()).stage is Stage.PLAYING


async def test_cancel_asks_first_and_only_the_host_or_an_admin_may(make_bot, telegram):
    application = await make_bot()
    group = SimulatedGroup(telegram, application, players=6)
    host = group.user_ids[0]
    bystander = group.user_ids[3]
    await group.open_lobby_and_join(joining=group.user_ids[:5])
    await group.start()
    game_id = group.game_id

    reply = await command_text(group, bystander, "/cancel")
    assert reply == "Only Ann, who opened the game, or a group admin can cancel it."

    reply = await command_text(group, host, "/cancel")
    assert reply == "Cancel this game for everyone?"
    prompt = telegram.messages(group.chat_id)[-1]
    labels = {b["text"]: b["callback_data"] for b in prompt.buttons()}
    assert labels == {"Yes, cancel it": f"x:{game_id}:y", "No, keep playing": f"x:{game_id}:n"}

    async def press(user, label):
        update = telegram.press(user, group.chat_id, prompt.message_id, text=label)
        await group.send(update)
        return telegram.callback_answers[update["callback_query"]["id"]]["text"]

    before = (await group.table()).to_json()
    assert await press(host, "No, keep playing") == "The game goes on."
    assert (await group.table()).to_json() == before
    assert await press(bystander, "Yes, cancel it") == "Only Ann, who opened the game, or a group admin can cancel it."
    assert (await group.table()).to_json() == before
    assert (await group.table()).stage is Stage.PLAYING
    # A group member outside the game who is no admin is refused too.
    assert await press(group.user_ids[5], "Yes, cancel it") == (
        "Only Ann, who opened the game, or a group admin can cancel it."
    )

    assert await press(host, "Yes, cancel it") == "Cancelled."
    table = await group.store.load(game_id)
    assert table.stage is Stage.CANCELLED
    assert last_text(telegram, group.chat_id) == "🛑 The game was cancelled."
    # The round message lost its buttons: nobody can keep playing the cancelled game.
    assert not any(
        b.get("callback_data", "").startswith("t:") for m in telegram.messages(group.chat_id) for b in m.buttons()
    )
    assert await press(host, "Yes, cancel it") == "This game is already over."
    assert await group.store.games_of_user(host) == []
    assert await group.store.game_of_chat(group.chat_id) is None
    assert await command_text(group, host, "/cancel") == "There is no game to cancel."

    # The group can open a new game at once.
    await group.send(telegram.command(bystander, group.chat_id, "/newgame"))
    new_id = await group.store.game_of_chat(group.chat_id)
    assert new_id is not None and new_id != game_id
    assert "a new game is open" in last_text(telegram, group.chat_id)
    # A cancelled game leaves no record.
    assert await command_text(group, host, "/record") == "No game has finished in this group yet."


async def test_cancel_a_lobby(make_bot, telegram):
    application = await make_bot()
    group = SimulatedGroup(telegram, application, players=3)
    await group.open_lobby_and_join()
    lobby = lobby_message(telegram, group.chat_id)
    await command_text(group, group.user_ids[0], "/cancel")
    prompt = telegram.messages(group.chat_id)[-1]
    await group.send(telegram.press(group.user_ids[0], group.chat_id, prompt.message_id, text="Yes, cancel it"))
    assert (await group.table()).stage is Stage.CANCELLED
    assert plain_text(telegram.message(group.chat_id, lobby.message_id).text) == "🕵️ This lobby was cancelled."
    assert telegram.message(group.chat_id, lobby.message_id).buttons() == []
    assert await group.store.games_of_user(group.user_ids[1]) == []


# ---------------------------------------------------------------- looking


async def test_status_shows_the_track_and_the_leader(make_bot, telegram):
    application = await make_bot(4)
    group = SimulatedGroup(telegram, application, players=5)
    assert (
        await command_text(group, group.user_ids[0], "/status") == "No game is running here. Start one with /newgame."
    )
    await group.open_lobby_and_join(joining=group.user_ids[:2])
    lobby_again = await command_text(group, group.user_ids[0], "/status")
    assert "2 players of 10: Ann, Bob" in lobby_again
    assert telegram.messages(group.chat_id)[-1].buttons()[0]["url"].startswith(BOT_LINK)
    for user in group.user_ids[2:]:
        await group.send(telegram.open_link(user, lobby_message(telegram, group.chat_id).buttons()[0]["url"]))
    await group.start()

    table = await group.table()
    status = await command_text(group, group.user_ids[2], "/status")
    assert "Missions: ⬜⬜⬜⬜⬜   Rejected teams: 0/5" in status
    assert f"Next mission · proposal 1 · leader {table.name(table.game.leader)}" in status
    assert f"{table.name(table.game.leader)}, choose 2 players for mission 1." in status
    # The board comes back with the leader's buttons, and later edits go to it.
    reposted = telegram.messages(group.chat_id)[-1]
    assert any(b.get("callback_data", "").startswith("t:") for b in reposted.buttons())

    policy = CleanTeams()
    while (await group.table()).game.successes < 1:
        await group.step(policy)
    table = await group.table()
    status = await command_text(group, group.user_ids[2], "/status")
    assert "Missions: ✅⬜⬜⬜⬜" in status
    assert f"Next mission · proposal 1 · leader {table.name(table.game.leader)}" in status
    assert "choose 3 players for mission 2." in status

    # A failed mission shows ❌.
    class SpyTeam(AlwaysApprove):
        def choose_team(self, table, seat, size):
            spy = table.game.spies[0]
            return sorted([spy, *[s for s in range(5) if s != spy][: size - 1]])

        def fail(self, table, seat):
            return seat in table.game.spies

    while len((await group.table()).game.played_rounds) < 2:
        await group.step(SpyTeam())
    status = await command_text(group, group.user_ids[2], "/status")
    assert "Missions: ✅❌⬜⬜⬜" in status


@pytest.mark.parametrize(
    ("players", "setup"),
    [
        (5, "2 spies · teams 2-3-2-3-3"),
        (7, "3 spies · teams 2-3-3-4*-4 (* needs two Fails)"),
        (10, "4 spies · teams 3-4-4-5*-5 (* needs two Fails)"),
    ],
)
async def test_start_message_and_status_show_the_public_setup(make_bot, telegram, players, setup):
    """How many spies and each mission's team size are public, as the rulebook's chart is; who is a spy is not."""
    group = await started(make_bot, telegram, players=players)
    lobby = next(m for m in telegram.messages(group.chat_id) if m.from_bot)  # edited when the game started
    start = plain_text(lobby.text)
    assert start.startswith("🕵️ The Resistance: the game has started with")
    assert start.endswith(f"Roles were sent in private.\n{setup}")
    board = plain_text(group.latest_with_button(group.chat_id, "t:").text)
    assert setup in board.splitlines()
    status = await command_text(group, group.user_ids[1], "/status")
    assert setup in status.splitlines()
    assert status.splitlines()[0].startswith("Missions: ⬜⬜⬜⬜⬜")


async def test_rules_help_and_command_menu(make_bot, telegram):
    application = await make_bot()
    group = SimulatedGroup(telegram, application, players=1)
    user = group.user_ids[0]
    rules = await command_text(group, user, "/rules")
    assert rules.startswith("The Resistance in short") and "Three successful missions win" in rules
    help_text = await command_text(group, user, "/help")
    assert help_text.startswith("The Resistance: commands")
    for name, _ in COMMANDS:
        assert f"/{name}" in help_text or name == "help"
    # In private too.
    assert (await command_text(group, user, "/help", chat_id=user)).startswith("The Resistance: commands")
    assert (await command_text(group, user, "/start", chat_id=user)).startswith("Hello! Add me to a group")

    menu = telegram.commands[None]
    assert [c["command"] for c in menu] == [name for name, _ in COMMANDS]
    assert {"newgame", "join", "startgame", "cancel", "status", "record", "rules", "help"} <= {
        c["command"] for c in menu
    }
    assert all(c["description"] for c in menu)


async def test_record_before_and_after_a_finished_game(make_bot, telegram):
    application = await make_bot(2)
    group = SimulatedGroup(telegram, application, players=5)
    assert await command_text(group, group.user_ids[0], "/record") == "No game has finished in this group yet."
    await group.open_lobby_and_join()
    await group.start()
    table = await group.play(CleanTeams())
    assert table.game.winner is Side.RESISTANCE

    await group.send(telegram.command(group.user_ids[3], group.chat_id, "/record"))
    message = telegram.messages(group.chat_id)[-1]
    assert message.document is not None
    assert message.document.filename == f"resistance-{group.game_id}.json"
    assert message.text == f"The record of game {group.game_id} (resistance-record/1)."
    record = parse_record(json.loads(message.document.data))
    assert record.id == group.game_id and record.players == 5
    assert record.outcome is not None
    assert record.outcome.winner is Side.RESISTANCE
    assert record.outcome.reason is EndReason.THREE_SUCCESSFUL_MISSIONS
    assert record.outcome.spies == table.game.spies
    assert len(record.played_missions) == 3


# ---------------------------------------------------------------- one player, two groups


async def test_a_player_in_two_groups(make_bot, telegram):
    application = await make_bot(7)
    north = SimulatedGroup(telegram, application, chat_id=-100, title="North", players=5)
    south = SimulatedGroup(telegram, application, chat_id=-200, title="South", players=4)
    shared = north.user_ids[1]  # Bob sits at both tables

    await north.open_lobby_and_join()
    await south.open_lobby_and_join()
    await south.send(telegram.open_link(shared, lobby_message(telegram, south.chat_id).buttons()[0]["url"]))
    assert texts(telegram, shared)[-1] == "You joined the game in «South»."
    await north.start()
    await south.start()
    assert await north.store.games_of_user(shared) == sorted([north.game_id, south.game_id])

    north_table, south_table = await north.table(), await south.table()
    assert south_table.players[-1].user_id == shared and south_table.players[-1].name == "Bob (2)"
    roles = [text for text in texts(telegram, shared) if text.startswith("Your game in")]
    assert len(roles) == 2
    assert roles[0].startswith("Your game in «North»") and roles[1].startswith("Your game in «South»")
    for text, table in ((roles[0], north_table), (roles[1], south_table)):
        seat = table.seat_of(shared)
        assert ("you are a spy" in text) == (seat in table.game.spies)

    # Every team includes the shared player, so both card prompts wait in the same private chat.
    class WithShared(AlwaysApprove):
        def choose_team(self, table, seat, size):
            mine = table.seat_of(shared)
            return sorted([mine, *[s for s in range(len(table.players)) if s != mine][: size - 1]])

        def fail(self, table, seat):
            return False

    policy = WithShared()
    while True:
        moved = [await north.step(policy), await south.step(policy)]
        if not any(moved):
            break
    north_table, south_table = await north.table(), await south.table()
    assert north_table.game.winner is Side.RESISTANCE and south_table.game.winner is Side.RESISTANCE
    assert north_table.id != south_table.id

    prompts = [text for text in texts(telegram, shared) if "mission" in text and "«" in text]
    north_cards = [text for text in prompts if text.startswith("«North»")]
    south_cards = [text for text in prompts if text.startswith("«South»")]
    assert len(north_cards) == len(north_table.game.played_rounds)
    assert len(south_cards) == len(south_table.game.played_rounds)
    assert all("you played ✅ Success" in text for text in north_cards + south_cards)
    for group, table in ((north, north_table), (south, south_table)):
        record = parse_record(json.loads(await group.store.last_record(group.chat_id)))
        assert record.id == table.id and record.outcome.winner is table.game.winner
        assert last_text(telegram, group.chat_id).startswith("🏁")
    assert await north.store.games_of_user(shared) == []


# ---------------------------------------------------------------- the two-fail fourth mission


class Planned(AlwaysApprove):
    """Missions 1 and 3 clean, mission 2 failed by one spy, mission 4 with two spies failing `fails` times."""

    def __init__(self, fails_on_four: int) -> None:
        super().__init__()
        self.fails_on_four = fails_on_four

    @staticmethod
    def mission(table) -> int:
        return current_mission(table)

    def choose_team(self, table, seat, size):
        spies = list(table.game.spies)
        honest = [s for s in range(len(table.players)) if s not in spies]
        spies_on_team = {1: 0, 2: 1, 3: 0, 4: 2, 5: 0}[self.mission(table)]
        return sorted(spies[:spies_on_team] + honest[: size - spies_on_team])

    def fail(self, table, seat):
        if seat not in table.game.spies:
            return False
        mission = self.mission(table)
        on_team = [s for s in table.game.current_round.team if s in table.game.spies]
        if mission == 2:
            return True
        if mission == 4:
            return seat in on_team[: self.fails_on_four]
        return False


@pytest.mark.parametrize("fails", [1, 2])
async def test_fourth_mission_with_seven_players_needs_two_fails(make_bot, telegram, fails):
    group = await started(make_bot, telegram, players=7, seed=5)
    policy = Planned(fails)
    while len((await group.table()).game.played_rounds) < 4:
        assert await group.step(policy)

    game = (await group.table()).game
    fourth = game.played_rounds[3]
    assert (fourth.mission, fourth.team_size, fourth.fails_required, fourth.fails) == (4, 4, 2, fails)
    assert game.mission_track()[:3] == (True, False, True)
    shown = "\n".join(texts(telegram, group.chat_id))
    if fails == 1:
        assert "Mission 4 succeeded ✅ with 1 Fail card." in shown
        assert "Mission 4 failed" not in shown
        assert game.is_over and game.winner is Side.RESISTANCE
        assert last_text(telegram, group.chat_id).startswith("🏁 The Resistance wins: three missions succeeded.")
        assert "Missions: ✅❌✅✅⬜" in last_text(telegram, group.chat_id)
    else:
        assert "Mission 4 failed ❌ with 2 Fail cards." in shown
        assert "Mission 4 succeeded" not in shown
        assert not game.is_over and game.phase is Phase.PROPOSING
        assert game.mission_track() == (True, False, True, False, None)
        assert "Missions: ✅❌✅❌⬜" in await command_text(group, group.user_ids[0], "/status")
    # One Fail card on mission 2 sank it, as any mission but the 7-player fourth.
    assert "Mission 2 failed ❌ with 1 Fail card." in shown
    assert game_rules.fails_required(7, 2) == 1


async def test_names_with_html_characters_are_escaped_in_html_replies(make_bot, telegram):
    """Telegram refuses HTML it cannot parse: a host called "Tom & <Jerry>" must not break a refusal."""
    application = await make_bot(3)
    group = SimulatedGroup(telegram, application, players=6)
    telegram.add_user(group.user_ids[0], "Tom & <Jerry>")
    await group.open_lobby_and_join()
    await group.send(telegram.command(group.user_ids[1], group.chat_id, "/startgame"))
    method, params = next((m, p) for m, p in reversed(telegram.calls) if m == "sendMessage")
    assert params["parse_mode"] == "HTML"
    assert params["text"] == "Only Tom &amp; &lt;Jerry&gt;, who opened the game, or a group admin can start it."
    # The same refusal as a callback answer is plain text.
    await group.send(telegram.command(group.user_ids[0], group.chat_id, "/cancel"))
    confirm = telegram.messages(group.chat_id)[-1]
    update = telegram.press(group.user_ids[1], group.chat_id, confirm.message_id, text="Yes, cancel it")
    await group.send(update)
    answer = telegram.callback_answers[update["callback_query"]["id"]]["text"]
    assert answer == "Only Tom & <Jerry>, who opened the game, or a group admin can cancel it."
