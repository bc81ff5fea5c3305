"""How soon computer players act: every computer vote of a vote (every computer card of a mission) is in
within 2 s of the game waiting only for them, however many computer players sit at the table; a computer
leader's team within a few seconds. The schedule is checked in the move layer for any game and seed,
then through the bot on the test's clock, then on the real clock with the worker's own wake."""

from __future__ import annotations

import asyncio
import random
import re
import time

import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from agents import act
from engine import Phase, apply, public_view
from tests.bot_helpers import propose, team_size
from tests.strategies import played, tables
from tgbot.app import CLOCK_SECONDS, WAKE_SECONDS
from tgbot.changes import Change
from tgbot.moves import clock, computers, play
from tgbot.offline.simulation import SimulatedGroup, plain_text
from tgbot.settings import GroupSettings
from tgbot.table import Player, Stage, Table

pytestmark = pytest.mark.usefixtures("no_handler_errors")

BOT = "resistance_test_bot"
T0 = 1_000_000.0
WITHIN = 2.0  # seconds: every computer vote in, from the moment the game waits only for computer players
LEADER_WITHIN = 3.0  # seconds: a computer leader's team, from the moment the game waits for it
REVEALED = re.compile(r"(?:Approved|Rejected) (\d+)–(\d+)")


def test_the_schedule_leaves_room_for_the_wake_within_two_seconds():
    """A computer turn due at the latest is fired by the worker's wake before the 2 s are up."""
    assert computers.DECISION_DELAY[1] + WAKE_SECONDS < WITHIN
    assert WAKE_SECONDS < CLOCK_SECONDS


# ---------------------------------------------------------------- the schedule, for any game (pure)


def table_of(game, computer_seats: frozenset[int]) -> Table:
    players = tuple(
        Player(-(seat + 1), f"🤖 B{seat}", computer=True) if seat in computer_seats else Player(100 + seat, f"P{seat}")
        for seat in range(game.players)
    )
    host = next((p.user_id for p in players if not p.computer), 100)
    return Table("a1b2c3d4e5", -100, "G", host, players, Stage.PLAYING, GroupSettings(language="en"), game)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    table=tables,
    steps=st.integers(0, 40),
    computer_seats=st.frozensets(st.integers(0, 9), min_size=1),
    person_delays=st.lists(st.floats(0.0, 10.0), min_size=10, max_size=10),
    seed=st.integers(0, 2**32),
)
def test_every_computer_player_of_a_decision_acts_in_one_turn_soon_after_it_opens(
    table, steps, computer_seats, person_delays, seed
):
    """From any moment of any game the table starts waiting (`t0`), with people acting whenever they
    like: the computer players of a vote or a mission all act in one turn at most `DECISION_DELAY[1]` after
    `t0`, so never later than that after the last person; a computer leader within `LEADER_DELAY[1]`."""
    game = played(table, steps)
    if game.is_over:
        return
    rng = random.Random(seed)
    t0 = T0
    current = clock.settled(Change(table_of(game, computer_seats & set(range(game.players)))), t0, rng).table
    phase, ballot = current.game.phase, public_view(current.game).ballot
    waiting = public_view(current.game).waiting_for
    people = {seat: t0 + person_delays[seat] for seat in waiting if not current.played_by_computer(seat)}
    computer_turns: list[float] = []
    while not current.game.is_over and public_view(current.game).ballot == ballot:
        still = [s for s in people if s in public_view(current.game).waiting_for]
        person = min(still, key=people.__getitem__, default=None)
        if current.computer_at is not None and (person is None or current.computer_at <= people[person]):
            now = current.computer_at
            computer_turns.append(now)
            change = clock.on_clock(current, now, rng, BOT)
        else:
            assert person is not None, "the game waits for computer players that have no turn scheduled"
            now = people.pop(person)
            after, events = apply(current.game, act(current.game, person, rng))
            change = play.step(current, after, events, None, BOT)
        current = clock.settled(change, now, rng).table
    event(f"{phase.value}, computer players waited for: {any(current.played_by_computer(s) for s in waiting)}")
    if not any(current.played_by_computer(seat) for seat in waiting):
        assert computer_turns == []
    elif phase is Phase.PROPOSING:
        assert len(computer_turns) == 1 and computer_turns[0] - t0 <= computers.LEADER_DELAY[1] <= LEADER_WITHIN
    elif phase in (Phase.VOTING, Phase.MISSION):
        # One turn for all of them, however many: not one after another.
        assert len(computer_turns) == 1
        assert t0 + computers.DECISION_DELAY[0] <= computer_turns[0] <= t0 + computers.DECISION_DELAY[1]
        last_person = max((t0 + person_delays[s] for s in waiting if not current.played_by_computer(s)), default=t0)
        assert computer_turns[0] - max(last_person, t0) <= computers.DECISION_DELAY[1]


# ---------------------------------------------------------------- through the bot, on the test's clock


async def seated(make_bot, telegram, computers_count: int, seed: int, people: int = 2) -> SimulatedGroup:
    application = await make_bot(seed)
    group = SimulatedGroup(telegram, application, players=people)
    await group.open_lobby_and_join()
    await group.add_computers(computers_count)
    return group


async def until_decided(group: SimulatedGroup, service, now: list[float], ballot: int, limit: float) -> float:
    """Move the test's clock on by the wake's step and fire what is due, as a worker does, until the decision
    `ballot` is made; returns how long that took on the clock (failing past `limit`)."""
    began = now[0]
    while public_view((await group.table()).game).ballot == ballot:
        assert now[0] - began <= limit, f"still undecided {now[0] - began:.2f} s on"
        now[0] += WAKE_SECONDS
        await service.fire_due()
    return now[0] - began


@pytest.mark.parametrize(("computers_count", "seed"), [(3, 4), (8, 7)])
async def test_after_the_last_person_votes_the_computer_votes_are_in_within_two_seconds(
    make_bot, telegram, computers_count, seed
):
    group = await seated(make_bot, telegram, computers_count, seed)
    service = group.application.bot_data["service"]
    now = [T0]
    service.clock = lambda: now[0]
    await group.start()
    votes = 0
    while votes < 4 and not (await group.table()).game.is_over:
        table = await group.table()
        game = table.game
        ballot = public_view(game).ballot
        people = [s for s in public_view(game).waiting_for if not table.played_by_computer(s)]
        if game.phase is Phase.PROPOSING and not people:
            limit = LEADER_WITHIN + WAKE_SECONDS
            assert await until_decided(group, service, now, ballot, limit) <= limit
        elif game.phase is Phase.PROPOSING:
            others = [s for s in range(game.players) if s != game.leader]
            await propose(group, [game.leader, *others[: team_size(table) - 1]])
        elif game.phase is Phase.VOTING:
            # The people vote the moment the vote opens: the computer players have all of their time left.
            for seat in people:
                await group.press(table.players[seat].user_id, group.chat_id, "v:", ":r")
            computer_seats = {seat for seat, player in enumerate(table.players) if player.computer}
            assert set(public_view((await group.table()).game).waiting_for) == computer_seats
            assert await until_decided(group, service, now, ballot, WITHIN) <= WITHIN
            votes += 1
            # Every vote was counted, and the group was told the result.
            approve, reject = map(int, REVEALED.findall(plain_text(board_text(group)))[-1])
            assert approve + reject == game.players
        else:  # the mission: the people on the team play a Success at once, the computer players soon after
            for seat in people:
                user = table.players[seat].user_id
                await group.press(user, user, "c:", ":s")
            assert await until_decided(group, service, now, ballot, WITHIN) <= WITHIN
    assert votes == 4 or (await group.table()).game.is_over


def board_text(group: SimulatedGroup) -> str:
    """The group's newest board that shows a vote's result."""
    return next(
        m.text for m in reversed(group.telegram.messages(group.chat_id)) if REVEALED.search(plain_text(m.text or ""))
    )


# ---------------------------------------------------------------- on the real clock: the worker's wake


async def test_on_the_real_clock_the_worker_wakes_for_the_computer_votes(make_bot, telegram):
    """With the production tick (every `CLOCK_SECONDS`), the worker's wake fires the computer players'
    turn when it is due: every vote is in within 2 s of the people's, three votes running."""
    application = await make_bot(11, clock_seconds=CLOCK_SECONDS)
    group = SimulatedGroup(telegram, application, players=2)
    await group.open_lobby_and_join()
    await group.add_computers(5)
    await application.start()
    try:
        await group.start()
        timings = []
        for _ in range(20):
            table = await group.table()
            game = table.game
            if game.is_over or len(timings) == 3:
                break
            ballot = public_view(game).ballot
            people = [s for s in public_view(game).waiting_for if not table.played_by_computer(s)]
            if game.phase is Phase.PROPOSING and people:
                leader = table.players[game.leader].user_id
                await shown(group, leader, f"t:{group.game_id}:{ballot}:")
                others = [s for s in range(game.players) if s != game.leader]
                await propose(group, [game.leader, *others[: team_size(table) - 1]])
                continue
            for seat in people:
                user = table.players[seat].user_id
                if game.phase is Phase.VOTING:
                    await press_when_shown(group, user, group.chat_id, f"v:{group.game_id}:{ballot}:", ":r")
                else:
                    await press_when_shown(group, user, user, f"c:{group.game_id}:{ballot}:", ":s")
            began = time.monotonic()
            while public_view((await group.table()).game).ballot == ballot:
                assert time.monotonic() - began < 10, "the computer players never acted"
                await asyncio.sleep(0.02)
            if game.phase is Phase.VOTING:
                timings.append(time.monotonic() - began)
        print(f"\ncomputer votes all in {', '.join(f'{t:.2f}' for t in timings)} s after the people's")
        assert len(timings) == 3 and max(timings) <= WITHIN
    finally:
        await application.stop()


async def shown(group: SimulatedGroup, chat_id: int, prefix: str):
    """The newest message with a button starting `prefix`, once it has arrived: the clock's wake delivers what
    a computer player's turn sent in the background, a moment after the turn is stored."""
    began = time.monotonic()
    while True:
        try:
            return group.latest_with_button(chat_id, prefix)
        except LookupError:
            assert time.monotonic() - began < 5, f"no {prefix} button reached chat {chat_id}"
            await asyncio.sleep(0.02)


async def press_when_shown(group: SimulatedGroup, user_id: int, chat_id: int, prefix: str, ending: str) -> None:
    message = await shown(group, chat_id, prefix)
    data = next(b["callback_data"] for b in message.buttons() if b.get("callback_data", "").endswith(ending))
    await group.send(group.telegram.press(user_id, chat_id, message.message_id, data))
