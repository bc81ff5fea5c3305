"""A Plot card holder who lets a chance lapse unanswered is asked more briefly at their next chances
(the whole table waits for each), until they answer one themselves: the clock is the test's, driven
through `GameService.clock` and `fire_due`."""

from __future__ import annotations

import json
import random
from dataclasses import replace

import pytest

from engine import PLOT_PHASES, Phase, Variants, public_view, waiting_for
from tgbot.moves import absence, clock
from tgbot.offline.simulation import Policy, SimulatedGroup, plain_text
from tgbot.table import Table, TableFormatError

pytestmark = pytest.mark.usefixtures("no_handler_errors")

T0 = 1_000_000.0
FULL, HURRIED = 45, 15  # a chance's seconds: a holder's full time, and a holder's who let the last one lapse
CHANCES = PLOT_PHASES - {Phase.DEAL}
NOTES = {
    "en": "⏱ You let your last chance pass without answering, so you have less time for this one.",
    "es": "⏱ Dejaste pasar tu última oportunidad sin responder, así que esta vez tienes menos tiempo.",
}


def passing(seed: int) -> Policy:
    """Everyone passes every chance; teams are approved now and then."""
    return Policy(rng=random.Random(seed), plot_use_rate=0.0, approve_rate=0.5)


async def clocked_plot_game(make_bot, telegram, seed: int, language: str = "en"):
    """A 7-player Plot game whose bot reads the test's clock, which stands still at `now[0]`."""
    application = await make_bot(seed)
    now = [T0]
    service = application.bot_data["service"]
    service.clock = lambda: now[0]
    group = SimulatedGroup(telegram, application, chat_id=-100 - seed, players=7, language=language)
    await group.open_lobby_and_join(variants=Variants(plot_cards=True))
    await group.start()
    return group, service, now


def asked_at_chance(table: Table) -> int | None:
    """The holder asked now whether to use a held card, if the game is at such a chance."""
    game = table.game
    if game.is_over or game.phase not in CHANCES:
        return None
    return public_view(game).waiting_for[0]


async def next_chance(group: SimulatedGroup, policy: Policy, seat: int | None = None):
    """Play on until `seat` (anyone, if None) is asked at a chance; that table, and whether `seat`
    was asked to vote on the way. None for the table if the game ended first."""
    voted = False
    for _ in range(400):
        table = await group.table()
        if table.game.is_over:
            return None, voted
        asked = asked_at_chance(table)
        if asked is not None and (seat is None or asked == seat):
            return table, voted
        voted |= table.game.phase is Phase.VOTING and seat in waiting_for(table.game)
        assert await group.step(policy)
    raise AssertionError("never reached")


def prompt_text(group: SimulatedGroup, table: Table, seat: int) -> str:
    user = table.players[seat].user_id
    return plain_text(group.latest_with_button(user, f"p:{table.id}:").text)


async def lapse_and_ask_again(make_bot, telegram, seed: int, language: str = "en"):
    """A holder lets a chance lapse, and is asked at a chance again: the group, the service, the clock,
    the holder's seat, the table at their next chance, and whether they voted in between. None if the
    game ends first."""
    group, service, now = await clocked_plot_game(make_bot, telegram, seed, language)
    policy = passing(seed)
    table, _ = await next_chance(group, policy)
    if table is None:
        return None
    seat = asked_at_chance(table)
    assert table.deadline == now[0] + FULL
    assert NOTES[language] not in prompt_text(group, table, seat)
    now[0] = table.deadline
    await service.fire_due()
    lapsed = await group.table()
    assert public_view(lapsed.game).ballot != public_view(table.game).ballot
    again, voted = await next_chance(group, policy, seat)
    return None if again is None else (group, service, now, seat, again, voted)


async def lapsed_then_asked_again(make_bot, telegram, language: str = "en"):
    for seed in range(1, 20):
        found = await lapse_and_ask_again(make_bot, telegram, seed, language)
        if found is not None:
            return found
    pytest.fail("no holder was asked twice")


async def test_a_holder_who_let_a_chance_lapse_gets_less_time_at_the_next(make_bot, telegram):
    group, service, now, seat, table, _ = await lapsed_then_asked_again(make_bot, telegram)
    assert table.deadline == now[0] + HURRIED
    # The clock fires at that time: the chance lapses again, and the next one is as short.
    ballot = public_view(table.game).ballot
    await service.fire_due(now[0] + HURRIED - 1)
    assert public_view((await group.table()).game).ballot == ballot
    now[0] += HURRIED
    await service.fire_due()
    after = await group.table()
    assert public_view(after.game).ballot != ballot
    assert seat in after.hurried


async def test_a_vote_does_not_give_a_holder_who_let_a_chance_lapse_their_time_back(make_bot, telegram):
    group, service, now, seat, table, voted = await lapsed_then_asked_again(make_bot, telegram)
    assert voted, "the holder voted between their two chances"
    assert table.deadline == now[0] + HURRIED


async def test_answering_a_chance_gives_a_holder_their_full_time_again(make_bot, telegram):
    for seed in range(1, 20):
        found = await lapse_and_ask_again(make_bot, telegram, seed)
        if found is None:
            continue
        group, _, now, seat, table, _ = found
        assert table.deadline == now[0] + HURRIED
        policy = passing(seed)
        assert await group.step(policy)  # they pass, on their own keyboard
        after, _ = await next_chance(group, policy, seat)
        if after is None:
            continue
        assert after.deadline == now[0] + FULL
        assert NOTES["en"] not in prompt_text(group, after, seat)
        return
    pytest.fail("no holder was asked a third time")


@pytest.mark.parametrize("language", ["en", "es"])
async def test_the_prompt_of_a_hurried_holder_says_why_they_have_less_time(make_bot, telegram, language):
    group, _, _, seat, table, _ = await lapsed_then_asked_again(make_bot, telegram, language)
    assert NOTES[language] in prompt_text(group, table, seat)


async def test_a_seat_a_computer_player_plays_is_never_hurried(make_bot, telegram):
    group, _, _, seat, table, _ = await lapsed_then_asked_again(make_bot, telegram)
    assert clock.step_seconds(table) == HURRIED
    taken = replace(table, autopilot=(seat,))
    assert clock.step_seconds(taken) == FULL
    assert absence.chance_lapsed(replace(taken, hurried=()), seat).hurried == ()


async def test_a_table_stored_before_holders_were_hurried_loads_with_nobody_hurried(make_bot, telegram):
    group, _, _, seat, table, _ = await lapsed_then_asked_again(make_bot, telegram)
    stored = json.loads(table.to_json())
    assert stored["hurried"] == [seat]
    del stored["hurried"]
    old = Table.from_json(json.dumps(stored))
    assert old.hurried == () and clock.step_seconds(old) == FULL
    for damaged in ([7], [seat, seat], ["0"], [True], 3):
        with pytest.raises(TableFormatError):
            Table.from_json(json.dumps({**stored, "hurried": damaged}))
