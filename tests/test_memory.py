"""A group's memory through the bot: stats, ratings and history counted once per game, /top,
/history's records, /nextgame, /forgetme and a rebuild from the stored games."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from engine import Side
from memory.ratings import DEFAULT
from memory.stats import PersonStats
from memory.summary import FORGOTTEN_NAME
from tests.bot_helpers import CleanTeams, SpiesAlwaysFail, command_text, forged, started, started_on
from tgbot import keys
from tgbot.offline.simulation import SimulatedGroup, plain_text
from tgbot.store import Store

pytestmark = pytest.mark.usefixtures("no_handler_errors")


async def played(make_bot, telegram, policy, players=5, seed=1):
    group = await started(make_bot, telegram, players, seed)
    table = await group.play(policy)
    return group, table


def memory_of(group: SimulatedGroup):
    return group.store.memory


async def test_a_whole_game_is_counted_once_in_stats_ratings_and_history(make_bot, telegram):
    group, table = await played(make_bot, telegram, CleanTeams())
    assert table.game.winner is Side.RESISTANCE
    memory = memory_of(group)
    spy, member = (
        table.players[table.game.spies[0]],
        next(p for seat, p in enumerate(table.players) if seat not in table.game.spies),
    )
    spy_stats = await memory.stats_in_group(group.chat_id, spy.user_id)
    member_stats = await memory.stats_in_group(group.chat_id, member.user_id)
    assert (spy_stats.spy.games, spy_stats.spy.wins, spy_stats.resistance.games) == (1, 0, 0)
    assert (member_stats.resistance.games, member_stats.resistance.wins, member_stats.spy.games) == (1, 1, 0)
    assert member_stats.variants["standard"].games == 1
    # The winners' ratings rose above the start, the losers' fell below it.
    assert (await memory.rating_in_group(group.chat_id, member.user_id)).mu > DEFAULT.mu
    assert (await memory.rating_in_group(group.chat_id, spy.user_id)).mu < DEFAULT.mu
    [game] = await memory.recent_games(group.chat_id, 10)
    assert game.game_id == table.id and game.resistance_won and game.players == 5

    # Told again (a replay, another worker finding it behind), the game counts nothing twice.
    finished = await group.table()
    await group.store._settle_finished(finished, True)
    assert not await memory.count(game)
    assert (await memory.stats_in_group(group.chat_id, member.user_id)).overall.games == 1
    assert len(await memory.recent_games(group.chat_id, 10)) == 1

    # What the people read.
    text = await command_text(group, member.user_id, "/stats")
    assert f"{member.name}" in text and "All: 1 game, 1 won (100%)" in text and "As spy: 0 games" in text
    text = await command_text(group, member.user_id, "/stats", chat_id=member.user_id)
    assert "in every group" in text and "As Resistance: 1 game, 1 won (100%)" in text
    assert "Nobody here has finished 5 games yet" in await command_text(group, member.user_id, "/top")


async def test_a_game_whose_worker_died_at_its_end_is_counted_once_by_the_next_command(make_bot, telegram, monkeypatch):
    """The game's last write is stored, then the worker dies before counting it: the group's pointer
    still names the finished game, and the next command in the group (here /stats) counts it, once."""
    died = []

    async def dies_before_counting(self, table, recorded=None):
        died.append(table.id)

    monkeypatch.setattr(Store, "_settle_finished", dies_before_counting)
    group, table = await played(make_bot, telegram, SpiesAlwaysFail())
    assert died == [table.id]
    memory = memory_of(group)
    assert await memory.recent_games(group.chat_id, 10) == []
    monkeypatch.undo()

    someone = table.players[0]
    text = await command_text(group, someone.user_id, "/stats")
    assert "All: 1 game" in text
    await command_text(group, someone.user_id, "/history")
    await command_text(group, someone.user_id, "/stats")
    assert len(await memory.recent_games(group.chat_id, 10)) == 1
    assert (await memory.stats_in_group(group.chat_id, someone.user_id)).overall.games == 1


async def test_history_lists_the_games_and_its_buttons_send_only_this_groups_records(make_bot, telegram):
    application = await make_bot(1)
    group = await started_on(application, telegram)
    first = await group.play(CleanTeams())
    other = await started_on(application, telegram, chat_id=-200, title="Other group")
    elsewhere = await other.play(SpiesAlwaysFail())
    host = group.user_ids[0]

    await group.send(telegram.command(host, group.chat_id, "/history"))
    listing = telegram.messages(group.chat_id)[-1]
    text = plain_text(listing.text)
    assert "Last games in «Demo group»" in text
    assert "1. " in text and "5 players" in text and "the Resistance won" in text and "✅✅✅" in text
    spies = ", ".join(first.name(seat) for seat in first.game.spies)
    assert f"spies: {spies}" in text
    [button] = listing.buttons()
    assert button["callback_data"] == f"hr:{first.id}"

    await group.send(telegram.press(host, group.chat_id, listing.message_id, button["callback_data"]))
    document = telegram.messages(group.chat_id)[-1].document
    record = json.loads(document.data)
    assert record["id"] == first.id and record["outcome"]["winner"] == "resistance"

    # A forged press naming the other group's game gets a short refusal, and no file.
    before = len(telegram.messages(group.chat_id))
    answer = await forged(group, host, group.chat_id, listing.message_id, f"hr:{elsewhere.id}")
    assert answer["text"] == "This group remembers no such game."
    assert len(telegram.messages(group.chat_id)) == before


async def test_top_ranks_players_with_enough_games_by_rating(make_bot, telegram):
    application = await make_bot(3)
    group = await started_on(application, telegram)
    for game in range(5):
        table = await group.play(CleanTeams() if game % 2 == 0 else SpiesAlwaysFail())
        if game < 4:
            await group.open_lobby_and_join()
            await group.start()
    text = await command_text(group, group.user_ids[0], "/top")
    lines = text.split("\n")
    assert lines[0] == "🏆 Best players in «Demo group»"
    ranked = [line for line in lines if line[:2] in {f"{n}." for n in range(1, 6)}]
    assert len(ranked) == 5
    standings = await memory_of(group).standings(group.chat_id)
    assert [row.rating.ordinal for row in standings] == sorted((row.rating.ordinal for row in standings), reverse=True)
    assert all(row.stats.overall.games == 5 for row in standings)
    assert table.is_active is False


async def test_next_game_tells_in_private_once_when_a_lobby_opens(make_bot, telegram):
    group, table = await played(make_bot, telegram, CleanTeams())
    waiting = table.players[2].user_id
    text = await command_text(group, waiting, "/nextgame")
    assert "I will tell you in private when the next game opens here." in text
    assert "on the list already" in await command_text(group, waiting, "/nextgame")

    await group.send(telegram.command(group.user_ids[0], group.chat_id, "/newgame"))
    game_id = await group.store.game_of_chat(group.chat_id)
    invites = [m for m in telegram.messages(waiting) if "A new game is open in" in (m.text or "")]
    assert len(invites) == 1
    assert plain_text(invites[0].text).startswith("🔔 A new game is open in «Demo group».")
    [join] = invites[0].buttons()
    assert join["url"].endswith(f"start=join_{game_id}")
    assert await memory_of(group).waiting_for_next_game(group.chat_id) == []


async def test_forget_me_takes_stats_and_name_out_after_a_confirmation(make_bot, telegram):
    group, table = await played(make_bot, telegram, CleanTeams())
    person = table.players[1]
    memory = memory_of(group)

    # A forged confirmation pressed on a message in the group forgets nobody.
    board = telegram.messages(group.chat_id)[-1]
    answer = await forged(group, person.user_id, group.chat_id, board.message_id, "fm:y")
    assert answer["text"] == "Send /forgetme to me in private."
    assert (await memory.stats_in_group(group.chat_id, person.user_id)).overall.games == 1

    await group.send(telegram.command(person.user_id, person.user_id, "/forgetme"))
    question = telegram.messages(person.user_id)[-1]
    assert "Forget you?" in question.text
    assert (await memory.stats_in_group(group.chat_id, person.user_id)).overall.games == 1  # asked, not done

    await group.send(telegram.press(person.user_id, person.user_id, question.message_id, "fm:y"))
    assert "Done: your counts, ratings and name are gone from 1 group's memory." in plain_text(
        telegram.message(person.user_id, question.message_id).text
    )
    assert (await memory.stats_in_group(group.chat_id, person.user_id)).overall.games == 0
    assert await memory.rating_in_group(group.chat_id, person.user_id) is None
    assert await memory.groups_of(person.user_id) == []
    [game] = await memory.recent_games(group.chat_id, 10)
    assert game.seats[1].user_id is None and game.seats[1].name == FORGOTTEN_NAME
    assert person.name not in game.to_json()
    assert all(s.user_id is not None for i, s in enumerate(game.seats) if i != 1)
    # A rebuild from the stored games does not bring them back.
    assert await memory.rebuild_group(group.chat_id) == 1
    assert (await memory.stats_in_group(group.chat_id, person.user_id)).overall.games == 0
    other = table.players[0].user_id
    assert (await memory.stats_in_group(group.chat_id, other)).overall.games == 1


async def test_a_rebuild_gives_back_the_counts_and_ratings_it_started_from(make_bot, telegram, redis, redis_url):
    application = await make_bot(5)
    group = await started_on(application, telegram)
    await group.play(CleanTeams())
    await group.open_lobby_and_join()
    await group.start()
    await group.play(SpiesAlwaysFail())
    memory = memory_of(group)
    stats_key, ratings_key = keys.group_memory(group.chat_id)[2:4]
    counted = (await redis.hgetall(stats_key), await redis.hgetall(ratings_key))
    await redis.delete(stats_key, ratings_key)
    assert await memory.stats_in_group(group.chat_id, group.user_ids[0]) == PersonStats()
    rebuilt = subprocess.run(
        [sys.executable, "-m", "tgbot", "stats", "rebuild"],
        env={**os.environ, "REDIS_URL": redis_url},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert rebuilt.returncode == 0, rebuilt.stderr
    assert rebuilt.stdout.strip() == "rebuilt the stats and ratings of 1 groups from 2 stored games"
    assert (await redis.hgetall(stats_key), await redis.hgetall(ratings_key)) == counted
    assert await memory.rebuild() == (1, 2)  # again: the same
    assert (await redis.hgetall(stats_key), await redis.hgetall(ratings_key)) == counted


async def test_the_memory_follows_the_group_when_it_becomes_a_supergroup(make_bot, telegram):
    group, table = await played(make_bot, telegram, CleanTeams())
    memory = memory_of(group)
    old_chat = group.chat_id
    for update in group.upgrade_to_supergroup(-1009):
        await group.send(update)
    someone = table.players[0].user_id
    assert "All: 1 game" in await command_text(group, someone, "/stats")
    assert [g.game_id for g in await memory.recent_games(-1009, 10)] == [table.id]
    assert await memory.recent_games(old_chat, 10) == []
    assert await memory.groups_of(someone) == [-1009]
    # Told twice (both service messages; any worker): nothing is copied twice or lost.
    await memory.move(old_chat, -1009)
    assert (await memory.stats_in_group(-1009, someone)).overall.games == 1
