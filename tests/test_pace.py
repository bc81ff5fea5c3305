"""The group's pace: slow games counted in waking hours, quiet hours, /extend, an idle table paused.

The pure rules of time first (`tgbot.moves.pace`), then whole games through the bot with a fake clock
over days, with workers restarted in between.
"""

from __future__ import annotations

import random
from dataclasses import replace
from datetime import datetime
from zoneinfo import ZoneInfo

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engine import Phase
from tests.bot_helpers import command, command_text, propose
from tests.test_moves import BOT, ballot, playing_table, user
from tests.test_moves import propose as proposed_in_the_move_layer
from tgbot.buttons import VotePress
from tgbot.changes import Change, Refused
from tgbot.moves import clock, pace, play
from tgbot.offline.simulation import Policy, SimulatedGroup, plain_text
from tgbot.settings import CHOICES, GroupSettings
from tgbot.table import Stage
from tgbot.zones import normalized, zone_named

pytestmark = pytest.mark.usefixtures("no_handler_errors")

MADRID = ZoneInfo("Europe/Madrid")
SLOW = {"pace": "slow", "slow_hours": 12, "quiet_hours": "22-08", "timezone": "Europe/Madrid"}
HOUR = 3600


def madrid(day: int, hour: int, minute: int = 0) -> float:
    """A moment of December 2026 on Madrid's clocks (the 7th is a Monday)."""
    return datetime(2026, 12, day, hour, minute, tzinfo=MADRID).timestamp()


# ---------------------------------------------------------------- waking time, pure


def quiet_by_the_clock(moment: float, settings_: GroupSettings) -> bool:
    """Whether the group's clocks show a quiet hour, read off the local time directly."""
    start, end = (int(h) for h in settings_.quiet_hours.split("-"))
    local = datetime.fromtimestamp(moment, zone_named(settings_.timezone))
    hour = local.hour + local.minute / 60 + local.second / 3600
    return start <= hour < end if start < end else hour >= start or hour < end


@settings(max_examples=60, deadline=None)
@given(
    start=st.floats(1.75e9, 1.85e9),
    seconds=st.integers(60, 3 * 86400),
    quiet=st.sampled_from([q for q in CHOICES["quiet_hours"] if q]),
    zone=st.sampled_from(["UTC", "Europe/Madrid", "America/New_York", "Asia/Kolkata", "UTC+05:45", "UTC-03:00"]),
)
def test_a_slow_step_counts_only_waking_time_and_never_ends_in_quiet_hours(start, seconds, quiet, zone):
    group = GroupSettings(pace="slow", quiet_hours=quiet, timezone=zone)
    end = pace.awake_after(start, seconds, group)
    assert end >= start + seconds
    assert not pace.is_quiet(end, group)
    # The waking time between the two, counted minute by minute from the local clock: `seconds`, to a minute.
    minute = 60
    awake = sum(
        minute for moment in range(int(start), int(end), minute) if not quiet_by_the_clock(moment + 30, group)
    )
    assert abs(awake - seconds) <= 2 * minute


def test_a_live_step_ignores_quiet_hours_and_a_slow_one_without_them_is_wall_clock_time():
    night = madrid(7, 23)
    assert pace.awake_after(night, 120, GroupSettings(quiet_hours="22-08", timezone="Europe/Madrid")) == night + 120
    assert pace.awake_after(night, HOUR, GroupSettings(pace="slow", timezone="Europe/Madrid")) == night + HOUR
    slow = GroupSettings(**SLOW)
    assert pace.awake_after(night, HOUR, slow) == madrid(8, 9)  # the night does not count
    assert pace.awake_after(madrid(7, 20), 2 * HOUR, slow) == madrid(7, 22)  # may end as the quiet begins
    assert pace.awake_after(madrid(7, 20), 12 * HOUR, slow) == madrid(8, 18)


def test_a_time_zone_is_read_as_people_type_it_and_stored_as_a_name():
    assert normalized("europe/madrid") == "Europe/Madrid"
    assert normalized("UTC+3") == "UTC+03:00" and normalized("+5:30") == "UTC+05:30"
    assert normalized("gmt-0") == "UTC" and normalized("utc") == "UTC"
    for nonsense in ("Mars/Olympus", "UTC+15", "+3:75", "", "../../etc/passwd"):
        assert normalized(nonsense) is None
    # A stored name no longer known falls back to UTC instead of failing the group's settings.
    stored = GroupSettings(timezone="Europe/Madrid").to_json().replace("Europe/Madrid", "Nowhere/City")
    assert GroupSettings.from_json(stored).timezone == "UTC"


# ---------------------------------------------------------------- /extend and the idle table, in the move layer


def test_extend_gives_the_step_its_time_again_once_per_step_and_three_times_a_game():
    table = clock.settled(Change(playing_table()), 0.0, random.Random(0)).table
    assert table.deadline == 180
    extended = clock.extend(table, user(2), "en", 10.0)
    assert extended.table.deadline == 360 and extended.table.extensions == (2,)
    [notice] = extended.outgoing
    assert "Cy added time: this step now ends" in plain_text(notice.text) and "2 extensions are left" in notice.text
    with pytest.raises(Refused, match="each step once"):
        clock.extend(extended.table, user(3), "en", 10.0)
    with pytest.raises(Refused, match="Only the players"):
        clock.extend(table, 999, "en", 10.0)
    # Two more steps extended, by anyone seated; a fourth is refused.
    table = extended.table
    for step in ("voting:2", "mission:3"):
        table = clock.extend(replace(table, step=step), user(0), "en", 10.0).table
    assert pace.extensions_left(table) == 0
    with pytest.raises(Refused, match="used up"):
        clock.extend(replace(table, step="proposing:4"), user(1), "en", 10.0)


def test_an_extension_counts_as_someone_playing():
    table = clock.settled(Change(playing_table()), 0.0, random.Random(0)).table
    table = clock.extend(replace(table, idle_deadlines=1), user(1), "en", 0.0).table
    assert table.person_acted and table.idle_deadlines == 0


def test_a_press_of_a_seated_person_resumes_a_paused_game_and_is_applied():
    table = proposed_in_the_move_layer(playing_table(), (0, 2)).table
    table = clock.settled(Change(replace(table, paused=True)), 50.0, random.Random(0)).table
    assert table.deadline is None and table.step == "" and table.computer_at is None
    press = VotePress(table.id, ballot(table), True)
    change = pace.pressed(table, user(3), lambda current: play.vote(current, user(3), press, "en", BOT))
    change = clock.settled(change, 60.0, random.Random(0))
    assert not change.table.paused and change.table.game.pending_votes[3] is True
    assert change.table.deadline == 60.0 + 120  # the step's whole time from the press
    assert any("Dan is back" in plain_text(item.text) for item in change.outgoing if item.chat_id < 0)


# ---------------------------------------------------------------- through the bot


def set_clock(application, now: list[float]):
    service = application.bot_data["service"]
    service.clock = lambda: now[0]
    return service


async def restarted(group: SimulatedGroup, make_bot, now: list[float], seed: int):
    """The worker stops and another starts on the same Redis: all it knows is what is stored."""
    await group.application.shutdown()
    group.application = await make_bot(seed)
    return set_clock(group.application, now)


def newest_from_bot(telegram, chat_id: int) -> str:
    return plain_text([m for m in telegram.messages(chat_id) if m.from_bot][-1].text or "")


async def test_an_idle_table_is_paused_not_decided(make_bot, telegram):
    """Nobody plays a live game: the leader's deadline draws a team, and at the vote's deadline (the
    second in a row nobody acted in) the game pauses instead of filling the votes. Days later nothing
    has happened; a press of someone who does not sit at the table changes nothing; a seated player's
    vote starts it again, and counts."""
    application = await make_bot(1)
    now = [madrid(7, 20)]
    service = set_clock(application, now)
    group = SimulatedGroup(telegram, application, players=5)
    await group.open_lobby_and_join()
    await group.start()
    table = await group.table()

    now[0] = table.deadline
    assert await service.fire_due() == 1
    table = await group.table()
    assert table.game.phase is Phase.VOTING and table.idle_deadlines == 1

    now[0] = table.deadline
    assert await service.fire_due() == 1
    paused = await group.table()
    assert paused.is_paused and paused.game == table.game  # nothing decided: no vote filled
    assert paused.deadline is None and paused.next_wake is None
    assert newest_from_bot(telegram, group.chat_id).startswith("⏸ Nobody has played for two deadlines in a row")

    now[0] += 5 * 86400
    assert await service.fire_due() == 0
    assert (await group.table()).to_json() == paused.to_json()

    stranger = 999_001
    telegram.add_user(stranger, "Zed")
    board = group.latest_with_button(group.chat_id, "v:")
    vote_data = next(b["callback_data"] for b in board.buttons() if b["callback_data"].endswith(":a"))
    await group.send(telegram.press(stranger, group.chat_id, board.message_id, vote_data))
    assert (await group.table()).is_paused
    assert "Only the players" in await command_text(group, stranger, "/resume")

    voter = table.players[3].user_id
    await group.press(voter, group.chat_id, "v:", ":a")
    going = await group.table()
    assert not going.is_paused and going.game.pending_votes[3] is True
    assert going.deadline == now[0] + going.settings.vote_seconds
    assert any(text.startswith("▶️ Dan is back") for text in map(plain_text, group_texts(telegram, group.chat_id)))


def group_texts(telegram, chat_id: int) -> list[str]:
    return [m.text or "" for m in telegram.messages(chat_id) if m.from_bot]


async def test_a_slow_game_over_days(make_bot, telegram):
    """A slow group (12 waking hours a step, quiet 22-08 in Madrid) plays a game over a week, with the
    worker restarted three times: deadlines and reminders fall in waking hours only, /extend adds a
    step's time, the table pauses when nobody comes and goes on when someone does, and /mygames says
    what each game waits for."""
    application = await make_bot(1)
    now = [madrid(7, 20)]  # Monday evening
    service = set_clock(application, now)
    group = SimulatedGroup(telegram, application, players=5)
    await group.store.update_settings(group.chat_id, lambda current: replace(current, **SLOW))
    await group.open_lobby_and_join()
    lobby = await group.table()
    assert lobby.deadline == madrid(8, 18)  # two hours tonight, ten tomorrow
    now[0] = madrid(7, 20, 30)
    await group.start()
    table = await group.table()
    leader = table.players[table.game.leader]
    assert (table.deadline, table.reminder_at) == (madrid(8, 18, 30), madrid(8, 12, 30))

    # Overnight nothing is due.
    now[0] = madrid(8, 7, 59)
    assert await service.fire_due() == 0

    # A restart; the reminder at half the waking time, answering the leader's keyboard.
    service = await restarted(group, make_bot, now, 2)
    now[0] = madrid(8, 12, 30)
    assert await service.fire_due() == 1
    reminder = telegram.messages(leader.user_id)[-1]
    assert plain_text(reminder.text) == (
        "⏰ «Demo group» waits for you to choose the next team, until Tue 18:30 (Europe/Madrid)."
    )
    keyboard = next(m for m in telegram.messages(leader.user_id) if "you are the leader" in (m.text or ""))
    assert reminder.reply_to == keyboard.message_id

    # Another player asks for more time: a step's time more, from the deadline, outside the night.
    other = next(p for p in table.players if p.user_id != leader.user_id)
    now[0] = madrid(8, 13)
    await command(group, other.user_id, "/extend")
    assert (await group.table()).deadline == madrid(9, 16, 30)
    assert newest_from_bot(telegram, group.chat_id) == (
        f"⏳ {other.name} added time: this step now ends Wed 16:30 (Europe/Madrid). "
        "2 extensions are left in this game."
    )
    assert "each step once" in await command_text(group, leader.user_id, "/extend")

    # /mygames, in private: the leader's team is awaited.
    mine = await command_text(group, leader.user_id, "/mygames", chat_id=leader.user_id)
    assert "«Demo group»: waits for you to choose the next team, until Wed 16:30 (Europe/Madrid)." in mine
    theirs = await command_text(group, other.user_id, "/mygames", chat_id=other.user_id)
    assert "«Demo group»: nothing from you now." in theirs

    # Wednesday morning the leader proposes: the reminder is taken back, and the vote has 12 hours.
    now[0] = madrid(9, 9)
    game = (await group.table()).game
    await propose_as_leader(group, game)
    assert reminder.message_id not in [m.message_id for m in telegram.messages(leader.user_id)]
    assert (await group.table()).deadline == madrid(9, 21)
    now[0] = madrid(9, 10)
    for player in table.players:
        await group.press(player.user_id, group.chat_id, "v:", ":a")
    table = await group.table()
    assert table.game.phase is Phase.MISSION and table.deadline == madrid(9, 22)  # ends as the quiet begins

    # Nobody plays a card. A restart; the mission's deadline plays them, and the next step's time starts
    # counting in the morning.
    service = await restarted(group, make_bot, now, 3)
    now[0] = madrid(9, 22)
    assert await service.fire_due() == 1
    table = await group.table()
    assert table.game.mission_track()[0] is True and table.game.phase is Phase.PROPOSING
    assert (table.deadline, table.reminder_at) == (madrid(10, 20), madrid(10, 14))

    # Nobody comes on Thursday either: the second idle deadline pauses the game, undecided.
    now[0] = madrid(10, 20)
    assert await service.fire_due() == 1
    paused = await group.table()
    assert paused.is_paused and paused.game == table.game and paused.next_wake is None
    now[0] = madrid(12, 10)  # Saturday: still nothing decided
    assert await service.fire_due() == 0
    mine = await command_text(group, other.user_id, "/mygames", chat_id=other.user_id)
    assert "«Demo group»: paused, because nobody played: /resume in the group goes on." in mine

    # A restart, and on Saturday morning a player sends /resume: the step has its whole time again.
    service = await restarted(group, make_bot, now, 4)
    await command(group, other.user_id, "/resume")
    table = await group.table()
    assert not table.is_paused and table.deadline == madrid(12, 22)
    assert newest_from_bot(telegram, group.chat_id).startswith(f"▶️ {other.name} is back")

    # The rest of the game is played at once.
    finished = await group.play(Policy(rng=random.Random(5)))
    assert finished.stage is Stage.OVER


async def propose_as_leader(group: SimulatedGroup, game) -> None:
    """Mission 1 with five players takes two: the leader and the next seat clockwise."""
    await propose(group, sorted([game.leader, game.next_seat(game.leader)]))
