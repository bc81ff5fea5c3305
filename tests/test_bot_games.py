"""Whole games through the real Application, a fake Bot API and real Redis."""

from __future__ import annotations

import json
import random

import pytest

from engine import EndReason, Side, Variants, parse_record
from tests.bot_helpers import CleanTeams, RejectEverything, SpiesAlwaysFail, started
from tgbot.offline.simulation import Policy, SimulatedGroup


async def play(make_bot, telegram, players, policy, variants=None, seed=1):
    group = await started(make_bot, telegram, players, seed, variants=variants)
    table = await group.play(policy)
    return group, table


@pytest.mark.parametrize("players", [5, 10])
async def test_resistance_wins_with_clean_teams(make_bot, telegram, players):
    group, table = await play(make_bot, telegram, players, CleanTeams())
    assert table.game.winner is Side.RESISTANCE
    assert table.game.end_reason is EndReason.THREE_SUCCESSFUL_MISSIONS
    final = group.transcript(group.chat_id)[-1]
    assert "The Resistance wins" in final
    assert all(table.name(s) in final for s in table.game.spies)


@pytest.mark.parametrize("players", [5, 10])
async def test_spies_win_by_three_failures(make_bot, telegram, players):
    group, table = await play(make_bot, telegram, players, SpiesAlwaysFail())
    assert table.game.winner is Side.SPIES
    assert table.game.end_reason is EndReason.THREE_FAILED_MISSIONS
    assert "The spies win: three missions failed" in group.transcript(group.chat_id)[-1]


@pytest.mark.parametrize("players", [5, 10])
async def test_spies_win_by_five_rejections(make_bot, telegram, players):
    group, table = await play(make_bot, telegram, players, RejectEverything())
    assert table.game.end_reason is EndReason.FIVE_REJECTIONS
    assert "five teams in a row were rejected" in group.transcript(group.chat_id)[-1]
    record = json.loads(await group.store.last_record(group.chat_id))
    assert parse_record(record).outcome.reason is EndReason.FIVE_REJECTIONS


async def test_random_games_end_and_keep_a_valid_record(make_bot, telegram):
    for seed, players in enumerate([5, 6, 7, 8, 9, 10]):
        telegram_for_game = telegram
        application = await make_bot(seed)
        group = SimulatedGroup(telegram_for_game, application, chat_id=-(100 + seed), players=players)
        await group.open_lobby_and_join()
        await group.start()
        table = await group.play(Policy(rng=random.Random(seed)))
        assert table.game.is_over
        record = parse_record(json.loads(await group.store.last_record(group.chat_id)))
        assert record.outcome is not None and record.outcome.winner is table.game.winner


async def test_targeting_and_blind_spies_game(make_bot, telegram):
    group, table = await play(
        make_bot, telegram, 7, Policy(rng=random.Random(3)), variants=Variants(targeting=True, blind_spies=True)
    )
    assert table.game.is_over and table.variants == Variants(targeting=True, blind_spies=True)
    for seat in table.game.spies:
        role_text = next(t for t in group.transcript(table.players[seat].user_id) if "you are a spy" in t)
        assert "do not know the other spies" in role_text
        assert not any(table.name(s) in role_text for s in table.game.spies if s != seat)
