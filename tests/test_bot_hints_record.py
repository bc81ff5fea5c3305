"""/hints and `python -m deduction batch` on the game's /record agree exactly, automatic turns included.

A game is played through the bot with every kind of deadline (a leader's, a vote's, a mission's)
among the players' own moves. At every moment a Resistance player could ask, the test keeps
the numbers /hints computes (and checks /hints shows them). Once the game is over, the
record /record sends is cut back to each of those moments and given to the batch protocol
(`deduction.batch.answer`, as `python -m deduction batch` reads it): the probabilities must be
the very same floats, which holds only if the record carries who acted and what a deadline
filled in (`auto_team`, `auto_votes`, `auto_cards`) exactly as the live game knew it.
"""

from __future__ import annotations

import copy
import json
import random
import re

import pytest

from deduction import batch
from engine import Phase, Variants
from engine import rules as game_rules
from tests.bot_helpers import command
from tgbot.hints import hint_deduction
from tgbot.offline.simulation import SimulatedGroup, plain_text
from tgbot.table import Stage

pytestmark = pytest.mark.usefixtures("no_handler_errors")

T0 = 1_000_000.0
SHOWN = re.compile(r"[▰▱]{10}\s+(\d+)% (.+?)$")


def cut(record: dict, shape: list[tuple[int, bool]]) -> dict:
    """The finished game's record as it stood at a moment: per mission, the proposals whose votes
    were revealed by then and whether it had been played; no outcome yet."""
    cut_record = {key: value for key, value in copy.deepcopy(record).items() if key != "outcome"}
    missions = []
    for mission, (proposals, played) in zip(record["missions"], shape, strict=False):
        mission = copy.deepcopy(mission)
        mission["proposals"] = mission["proposals"][:proposals]
        if not played:
            mission.pop("fails", None)
            mission.pop("auto_cards", None)
            # Until a later proposal was voted on, the round's mission was that of its latest one.
            latest = mission["proposals"][-1]
            number = latest.get("mission", mission["mission"])
            if number != mission["mission"]:
                mission["mission"] = number
                mission["team_size"] = len(latest["team"])
                mission["fails_required"] = game_rules.fails_required(record["players"], number)
        missions.append(mission)
    cut_record["missions"] = missions
    return cut_record


async def shown_hints(group: SimulatedGroup, user_id: int) -> dict[str, int]:
    """What /hints shows the player in private: each other player's name -> percent."""
    message = await command(group, user_id, "/hints", chat_id=user_id)
    shown = {}
    for line in plain_text(message.text).splitlines():
        match = SHOWN.search(line)
        if match:
            shown[match.group(2)] = int(match.group(1))
    return shown


async def let_time_run_out(group: SimulatedGroup, service, now: list[float]) -> None:
    table = await group.table()
    now[0] = table.deadline
    assert await service.fire_due() == 1


async def move(group: SimulatedGroup, service, now: list[float], rng: random.Random, forced: set[str]) -> None:
    """One step of the game: the players act, some of them, or none and the deadline decides."""
    table = await group.table()
    game = table.game
    chat = group.chat_id
    phase = game.phase.value
    wait = phase in forced or rng.random() < 0.25
    forced.discard(phase)
    now[0] += 5
    if game.phase is Phase.PROPOSING:
        if wait:
            await let_time_run_out(group, service, now)
            return
        # The leader chooses on the keyboard in their private chat.
        leader = table.players[game.leader].user_id
        if game.variants.targeting and table.draft_mission is None:
            await group.press(leader, leader, "m:", f":{rng.choice(game.open_missions())}")
            table = await group.table()
        mission = table.draft_mission or game.open_missions()[0]
        size = game_rules.team_size(game.players, mission)
        for seat in sorted(rng.sample(range(game.players), size)):
            await group.press(leader, leader, "t:", f":{seat}")
        await group.press(leader, leader, "t:", ":ok")
    elif game.phase is Phase.VOTING:
        # When waiting, someone (the last seat at least) leaves the vote to the deadline.
        for seat in range(game.players):
            if not wait or (seat < game.players - 1 and rng.random() < 0.6):
                user = table.players[seat].user_id
                await group.press(user, chat, "v:", ":a" if rng.random() < 0.55 else ":r")
        if (await group.table()).game.phase is Phase.VOTING:
            await let_time_run_out(group, service, now)
    else:
        team = game.current_round.team
        for seat in team:
            if not wait or (seat != team[-1] and rng.random() < 0.5):
                user = table.players[seat].user_id
                fail = seat in game.spies and rng.random() < 0.6
                await group.press(user, user, "c:", ":f" if fail else ":s")
        table = await group.table()
        if table.is_active and table.game.phase is Phase.MISSION and len(table.game.rounds) == len(game.rounds):
            await let_time_run_out(group, service, now)


@pytest.mark.parametrize(
    ("players", "variants", "seed"),
    [(7, Variants(), 1), (6, Variants(targeting=True), 2), (8, Variants(targeting=True), 3)],
)
async def test_batch_on_the_exported_record_gives_what_hints_showed(make_bot, telegram, players, variants, seed):
    application = await make_bot(seed)
    service = application.bot_data["service"]
    now = [T0]
    service.clock = lambda: now[0]
    group = SimulatedGroup(telegram, application, players=players)
    await group.open_lobby_and_join(variants=variants)
    await group.start()
    table = await group.table()
    viewer = next(s for s in range(players) if s not in table.game.spies)
    viewer_user = table.players[viewer].user_id
    rng = random.Random(seed)

    moments = []  # (the record's shape then, the probabilities /hints computed then)
    forced = {"proposing", "voting", "mission"}  # each deadline at least once, early
    for _ in range(200):
        table = await group.table()
        if not table.is_active:
            break
        record, deduction, spy_view = hint_deduction(table, viewer)
        assert not spy_view
        shape = [(len(m.proposals), m.played) for m in record.missions]
        if not moments or moments[-1][0] != shape:
            shown = await shown_hints(group, viewer_user)
            certain = {*deduction.certain_spies, *deduction.certain_resistance}
            expected = {
                table.name(s): round(p * 100) if s in certain else min(max(round(p * 100), 1), 99)
                for s, p in enumerate(deduction.spy_probability)
                if s != viewer
            }
            assert shown == expected
            moments.append((shape, deduction.spy_probability))
        await move(group, service, now, rng, forced)
    assert table.stage is Stage.OVER, "the game did not end"

    message = await command(group, group.user_ids[0], "/record")
    exported = json.loads(message.document.data)
    proposals = [p for m in exported["missions"] for p in m["proposals"]]
    # Every kind of automatic turn happened and is in the record.
    assert any(p.get("auto_team") for p in proposals)
    assert any(p.get("auto_votes") for p in proposals)
    assert any(m.get("auto_cards") for m in exported["missions"])
    assert len(moments) >= 4

    for shape, probabilities in moments:
        line = json.dumps({"record": cut(exported, shape), "viewer": viewer})
        answer = batch.answer(line, "behaviour")
        assert "error" not in answer, (answer, shape)
        assert answer["spy_probability"] == list(probabilities), shape
