"""Time and stalling, seen as an adversary: what the clock does when people change the lobby's time,
stall on purpose, or press just as a deadline fires.

The clock is driven by the test, through `GameService.clock` and `fire_due`, as in
tests/test_bot_deadlines.py.
"""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
from pathlib import Path

import pytest

from engine import (
    ChanceTimedOut,
    DealCard,
    Phase,
    StateFormatError,
    Variants,
    apply,
    new_game,
    state_from_dict,
    state_to_dict,
)
from engine.deadlines import draw_deal, draw_immediate
from tests.bot_helpers import command, deadline_played, lobby_message, next_on_the_clock, press
from tests.bot_helpers import texts as chat_texts
from tests.test_bot_deadlines import LOBBY, T0, clocked_group
from tests.test_bot_settings_hints import setting
from tgbot import keys
from tgbot.offline.simulation import plain_text
from tgbot.render.plot import CARD_CODES, card_name
from tgbot.table import Stage

pytestmark = pytest.mark.usefixtures("no_handler_errors")


# ---------------------------------------------------------------- the lobby's own time


async def test_a_lobby_whose_time_is_changed_gets_the_new_time_from_the_change(make_bot, telegram):
    """The host of an open lobby sets a longer lobby time to wait for friends: the lobby stays open
    that long from the change, instead of closing at the time it was opened with."""
    group, service, now = await clocked_group(make_bot, telegram, players=6, joined=3)
    chat, host = group.chat_id, group.user_ids[0]
    lobby = lobby_message(telegram, chat)
    assert (await group.table()).deadline == T0 + LOBBY  # 15 minutes

    now[0] = T0 + 600
    menu = await command(group, host, "/settings")
    await press(group, host, menu, setting(menu, "lt"))  # 15 -> 30 minutes
    table = await group.table()
    assert table.settings.lobby_seconds == 1800
    assert table.deadline == now[0] + 1800 and table.reminder_at == now[0] + 900
    assert await group.store.redis.zscore(keys.deadlines_of(group.game_id), group.game_id) == table.reminder_at

    # The time the lobby opened with passes: it stays open, and nobody is told anything.
    texts_before = chat_texts(telegram, chat)
    assert await service.fire_due(T0 + LOBBY) == 0
    assert (await group.table()).stage is Stage.LOBBY
    assert chat_texts(telegram, chat) == texts_before

    # Half the new time: the group is reminded once; at its end the lobby closes.
    now[0] = T0 + 600 + 900
    assert await service.fire_due() == 1
    assert chat_texts(telegram, chat)[-1] == "⏰ Half the lobby time is gone: 2 more players needed."
    now[0] = T0 + 600 + 1800
    assert await service.fire_due() == 1
    assert (await group.table()).stage is Stage.CANCELLED
    closed = telegram.message(chat, lobby.message_id)
    assert plain_text(closed.text) == "🕵️ This lobby closed: fewer than 5 players joined in time."


async def test_a_lobby_whose_other_settings_change_keeps_its_time(make_bot, telegram):
    """Changing anything but the lobby time (the variants, a game's deadlines) leaves the lobby's clock alone."""
    group, service, now = await clocked_group(make_bot, telegram, players=6, joined=3)
    host = group.user_ids[0]
    now[0] = T0 + 600
    menu = await command(group, host, "/settings")
    for code in ("tg", "vt"):
        await press(group, host, menu, setting(menu, code))
    table = await group.table()
    assert table.settings.targeting and table.settings.vote_seconds == 180
    assert (table.deadline, table.reminder_at) == (T0 + LOBBY, T0 + LOBBY / 2)


# ---------------------------------------------------------------- Plot cards the clock dealt


async def plot_game_at_the_deal(make_bot, telegram, seed: int):
    """A 7-player Plot game whose clock has run until its first leader has the drawn cards to deal."""
    group, service, now = await clocked_group(make_bot, telegram, players=7, seed=seed, plot_cards=True)
    await group.start()
    table = await group.table()
    while table.game.phase is not Phase.DEAL:
        await next_on_the_clock(group, service, now)
        table = await group.table()
    return group, service, now, table


async def run_to_the_vote(group, service, now):
    table = await group.table()
    while table.game.phase is not Phase.VOTING:
        await next_on_the_clock(group, service, now)
        table = await group.table()
    return table


async def test_plot_cards_the_clock_dealt_are_shown_as_drawn_at_random_naming_whose_time_ran_out(make_bot, telegram):
    """The leader lets the deal's deadline pass: the group's board does not present the random deal
    as the leader's choice of receivers, it says whose time ran out."""
    group, service, now, table = await plot_game_at_the_deal(make_bot, telegram, seed=4)
    leader = table.name(table.game.leader)
    drawn = table.game.plot.drawn
    assert len(drawn) == 2

    table = await run_to_the_vote(group, service, now)
    board = plain_text(group.latest_with_button(group.chat_id, f"v:{group.game_id}:").text)
    dealt = [line for line in board.splitlines() if line.startswith(f"🃏 {leader} gave ")]
    assert len(dealt) == 2, board
    for line in dealt:
        assert line.endswith(f"⏰ {leader} did not choose in time: this was drawn at random."), line
    # Whatever else the clock chose (an immediate card's resolution) names its receiver the same way.
    for use in table.game.plot.uses[0]:
        assert use.drawn
    # The stored game keeps it: the board drawn again by /status says the same.
    await group.send(telegram.command(group.user_ids[0], group.chat_id, "/status"))
    again = plain_text(group.latest_with_button(group.chat_id, f"v:{group.game_id}:").text)
    assert [line for line in again.splitlines() if "did not choose in time" in line] == [
        line for line in board.splitlines() if "did not choose in time" in line
    ]


async def test_plot_cards_the_leader_dealt_are_not_marked(make_bot, telegram):
    """A leader who deals a card by hand, then lets the time run out on the rest: only the rest is marked."""
    group, service, now, table = await plot_game_at_the_deal(make_bot, telegram, seed=4)
    leader_seat = table.game.leader
    leader, user = table.name(leader_seat), table.players[leader_seat].user_id
    receiver = (leader_seat + 1) % 7
    await group.press(user, user, "p:", f":dc{CARD_CODES[table.game.plot.drawn[0]]}")
    await group.press(user, user, "p:", f":dt{receiver}")
    table = await group.table()
    [by_hand] = table.game.plot.uses[0][:1]
    assert (by_hand.target, by_hand.drawn) == (receiver, False)

    table = await run_to_the_vote(group, service, now)
    board = plain_text(group.latest_with_button(group.chat_id, f"v:{group.game_id}:").text)
    dealt = [line for line in board.splitlines() if line.startswith(f"🃏 {leader} gave ")]
    assert len(dealt) == 2, board
    assert dealt[0] == f"🃏 {leader} gave {card_name(by_hand.card, 'en')} to {table.name(receiver)}."
    assert dealt[1].endswith(f"⏰ {leader} did not choose in time: this was drawn at random.")


def test_the_engine_marks_a_deal_the_clock_drew_and_a_stored_game_keeps_the_mark():
    rng = random.Random(4)
    state = new_game(7, rng, Variants(plot_cards=True))
    while state.phase is Phase.LEAD:
        state, _ = apply(state, ChanceTimedOut())
    assert state.phase is Phase.DEAL
    by_hand = DealCard(state.leader, state.plot.drawn[0], (state.leader + 1) % 7)
    state, _ = apply(state, by_hand)
    while state.phase is Phase.DEAL:
        state, _ = apply(state, draw_deal(state, rng) if state.plot.receiving is None else draw_immediate(state, rng))
    uses = state.plot.uses[0]
    assert [use.drawn for use in uses] == [False] + [True] * (len(uses) - 1)
    data = json.loads(json.dumps(state_to_dict(state)))
    assert state_from_dict(data) == state
    # Only a deal or an immediate card is ever drawn: a stored state saying otherwise is refused.
    data["plot"]["uses"][0][1]["kind"] = "watch"
    with pytest.raises(StateFormatError, match="drawn at random"):
        state_from_dict(data)


# ---------------------------------------------------------------- a computer player taking a person's turns


async def test_a_leader_whose_turn_a_computer_player_took_is_not_told_they_proposed(make_bot, telegram):
    """A person taken over leads: the computer player proposes for them, and their keyboard says so
    (it used to say "you proposed …", a team they never chose)."""
    group, service, now = await clocked_group(make_bot, telegram, computer_takeover=True)
    await group.start()
    table = await group.table()
    while not (table.game.phase is Phase.PROPOSING and table.game.leader in table.autopilot):
        await next_on_the_clock(group, service, now)
        table = await group.table()
    seat = table.game.leader
    user = table.players[seat].user_id
    keyboard = group.latest_with_button(user, f"t:{group.game_id}:")
    mission = table.game.open_missions()[0]

    now[0] = table.computer_at
    assert await service.fire_due() == 1
    table = await group.table()
    proposal = table.game.rounds[-1].proposals[-1]
    assert proposal.leader == seat and not proposal.auto_team
    names = ", ".join(table.name(s) for s in proposal.team)
    closed = telegram.message(user, keyboard.message_id)
    expected = f"«Demo group», mission {mission}: a computer player proposed a team for you: {names}."
    assert plain_text(closed.text) == expected
    assert closed.buttons() == []


# ---------------------------------------------------------------- the tests' own guard


def test_an_error_logged_while_a_test_runs_fails_it(tmp_path):
    """`no_handler_errors` must see what the test logged: it once read only its own teardown's records,
    so a clock that failed on every tick (logged, then tried again) let end-to-end tests pass."""
    (tmp_path / "conftest.py").write_text("from tests.conftest import no_handler_errors, redis, redis_url  # noqa\n")
    (tmp_path / "test_logs.py").write_text(
        "import logging\n"
        "import pytest\n"
        'pytestmark = pytest.mark.usefixtures("no_handler_errors")\n'
        "def test_quiet():\n"
        '    logging.getLogger("tgbot.service").info("fine")\n'
        "def test_failing_clock():\n"
        '    logging.getLogger("tgbot.service").error("game x: the clock failed on it")\n'
    )
    root = Path(__file__).resolve().parent.parent
    run = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-o", "asyncio_mode=auto"]
        + ["-o", "asyncio_default_fixture_loop_scope=function", "--rootdir", str(tmp_path), str(tmp_path)],
        cwd=root,
        env={**os.environ, "PYTHONPATH": str(root)},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert "2 passed, 1 error" in run.stdout, run.stdout
    assert "ERROR at teardown of test_failing_clock" in run.stdout
    assert "game x: the clock failed on it" in run.stdout


@pytest.mark.parametrize("seed", [1, 3, 4])
async def test_a_person_whose_card_a_computer_player_played_is_told_which_card(make_bot, telegram, seed):
    """Everyone is taken over; on each mission the computer players play the team's cards. Each
    person's card prompt then says which card went in under their name (a spy must know whether it
    was a Fail), in private and protected, and the group is told nothing of it."""
    group, service, now = await clocked_group(make_bot, telegram, seed=seed, computer_takeover=True)
    await group.start()
    table = await group.table()
    told = {}
    while table.is_active:
        before = table
        resumed = await next_on_the_clock(group, service, now)
        table = await group.table()
        if (
            resumed
            or before.game.phase is not Phase.MISSION
            or not set(before.autopilot) & set(before.game.current_round.team)
        ):
            continue
        # Several computer players may play in one turn. A Resistance member's card is a Success; a spy's
        # is still pending, or, once the mission is played, follows from its Fail count when that leaves
        # one answer (no Fail among them, or every one of them failed). Otherwise only the count is checked.
        already = dict(before.game.pending_cards)
        if table.game.phase is Phase.MISSION and table.game.current_round == before.game.current_round:
            newly = {seat: fail for seat, fail in table.game.pending_cards if seat not in already}
            fails_left = None
        else:
            newly = {seat: None for seat in before.game.current_round.team if seat not in already}
            mission = table.game.rounds[len(before.game.rounds) - 1]
            fails_left = mission.fails - sum(already.values())
        spies = [seat for seat in newly if seat in before.game.spies]
        for seat in newly:
            if seat not in before.game.spies:
                newly[seat] = False
            elif fails_left == 0 or fails_left == len(spies):
                newly[seat] = fails_left > 0
        said_fail = 0
        for seat in newly:
            if seat not in before.autopilot:
                continue
            user = table.players[seat].user_id
            [prompt] = [m for m in telegram.messages(user) if "a computer player played" in (m.text or "")][-1:]
            number = before.game.current_round.mission
            text = plain_text(prompt.text)
            assert prompt.buttons() == []
            assert text.startswith(f"«Demo group», mission {number}: a computer player played ")
            said = text.endswith("❌ Fail for you.")
            assert said or text.endswith("✅ Success for you."), text
            said_fail += said
            if newly[seat] is not None:
                assert said == newly[seat], (seat, text)
                told[seat] = said
        if fails_left is not None:
            assert said_fail == fails_left  # every seat here was taken over: all the new Fail cards are theirs
    assert True in told.values() and False in told.values()  # a spy's Fail and a Success were each told
    group_text = "\n".join(chat_texts(telegram, group.chat_id))
    assert "for you" not in group_text


# ---------------------------------------------------------------- Opinion Makers who let the time run out


@pytest.mark.parametrize("seed", [4])
async def test_opinion_makers_votes_the_clock_filled_are_shown_as_filled_while_the_rest_vote(make_bot, telegram, seed):
    """The Opinion Makers let their time run out: their votes are filled and shown in the open before
    the rest of the table votes. The board says the clock cast them, so nobody reads a stalling
    Opinion Maker's filled 👍 as their choice while deciding their own vote."""
    group, service, now = await clocked_group(make_bot, telegram, players=10, seed=seed, plot_cards=True)
    await group.start()
    table = await group.table()
    while not table.step.endswith(":opinion-makers"):
        await next_on_the_clock(group, service, now)
        table = await group.table()
        assert table.is_active
    makers = table.game.current_round.proposals[-1].open_votes
    named = ", ".join(table.name(s) for s in makers)

    await deadline_played(group, service)  # resumed first if this deadline paused an idle table
    table = await group.table()
    assert table.game.phase is Phase.VOTING and not table.step.endswith(":opinion-makers")
    board = plain_text(group.latest_with_button(group.chat_id, f"v:{group.game_id}:").text)
    assert "Opinion Makers voted first, in the open: " in board
    assert f"⏰ Time is up. These votes were counted as 👍 Approve: {named}" in board, board
