"""The end-of-game picture: what it shows (read back from the PNG's Description), its size, that only a
finished game can be drawn, and that a whole game through the bot ends with exactly one picture in the
group, after its result."""

from __future__ import annotations

import random
from io import BytesIO

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from PIL import Image

from engine import CastVote, PlayCard, Variants, apply, export_record, new_game
from engine.simulate import random_action
from engine.state import Phase
from memory.summary import GameSummary, Seat
from tests.bot_helpers import CleanTeams, SpiesAlwaysFail, last_message, pictures, started
from tgbot import outgoing
from tgbot.offline.simulation import plain_text
from tgbot.outgoing import Photo
from tgbot.render import picture
from tgbot.render.picture import description, game_picture, layout

NAMES = ("Ann", "Bob", "Cy", "Dan", "Eve", "Fay", "Gus", "Hal", "Ivy", "Jon")
MISSION_RESULTS = ("Succeeded", "Failed", "Not played")


def finished(players: int, seed: int, names=NAMES, longest: bool = False, **variants) -> GameSummary:
    """A random finished game; `longest`: every team rejected four times before one is approved."""
    rng = random.Random(seed)
    state = new_game(players, rng, Variants(**variants))
    while not state.is_over:
        action = random_action(state, rng)
        if longest and state.phase is Phase.VOTING:
            action = CastVote(action.seat, len(state.current_round.proposals) == 5)
        if longest and state.phase is Phase.MISSION and isinstance(action, PlayCard):
            action = PlayCard(action.seat, action.seat in state.spies and len(state.rounds) % 2 == 1)
        state, _ = apply(state, action)
    seats = tuple(Seat(100 + s, names[s]) for s in range(players))
    return GameSummary("0123456789", -100, 0.0, seats, export_record(state, "0123456789"))


def opened(png: bytes) -> Image.Image:
    image = Image.open(BytesIO(png))
    image.load()
    return image


# ---------------------------------------------------------------- what it shows


@pytest.mark.parametrize("players", [5, 10])
def test_the_picture_names_every_player_their_role_and_each_mission(players):
    summary = finished(players, seed=players)
    png = game_picture(summary, "en")
    image = opened(png)
    assert image.format == "PNG"
    shown = description(png).split("\n")
    assert all(name in shown for name in NAMES[:players])
    assert {"Resistance", "spy"} <= set(shown)
    winner = "the Resistance won" if summary.resistance_won else "the spies won"
    assert shown[0] == f"The Resistance: {winner}"
    assert shown[1] in (
        "Three missions succeeded",
        "Three missions failed",
        "Five teams in a row were rejected for one mission",
    )
    # Each of the five missions: its number, its team's size, its result.
    results = [text for text in shown if text in MISSION_RESULTS]
    assert len(results) == 5
    played = summary.mission_results
    assert results.count("Succeeded") == sum(played) and results.count("Failed") == len(played) - sum(played)
    fails = [m["fails"] for m in summary.record["missions"] if m.get("fails") is not None]
    assert sorted(text for text in shown if text.startswith("Fail cards: ")) == sorted(
        f"Fail cards: {n}" for n in fails
    )
    assert [text for text in shown if text.startswith("Mission ")][:5] == [f"Mission {n}" for n in range(1, 6)]


def test_the_layout_puts_every_role_and_vote_where_it_belongs():
    """The grid's rows are the seats: each name on its role's colour, a cell per proposal per seat."""
    summary = finished(7, seed=3)
    drawn = layout(summary, "en")
    proposals = sum(len(r["proposals"]) for r in summary.record["missions"])
    cells = [s for s in drawn.shapes if isinstance(s, picture.Box) and s.fill in (picture.CELL, picture.TEAM_CELL)]
    legend = 3  # the legend's approve, reject and leader samples are cells too, and its team sample
    assert len(cells) == 7 * proposals + legend + 1
    leaders = [c for c in cells if c.outline == picture.LEADER]
    assert len(leaders) == proposals + 1
    on_team = sum(len(p["team"]) for r in summary.record["missions"] for p in r["proposals"])
    assert sum(c.fill == picture.TEAM_CELL for c in cells) == on_team + 1
    dots = [s for s in drawn.shapes if isinstance(s, picture.Dot) and s.fill in (picture.SPY, picture.RESISTANCE)]
    assert [d.fill == picture.SPY for d in dots[:7]] == [summary.is_spy(s) for s in range(7)]


def test_a_long_name_is_cut_to_fit_and_esperanto_and_cyrillic_letters_are_drawn():
    names = ("Ĉiuĝaŭ Ŝĵĥ", "Дмитрий Иванович Менделеев-Длинный-Очень", *NAMES[2:])
    summary = finished(5, seed=1, names=names)
    drawn = layout(summary, "en")
    assert "Ĉiuĝaŭ Ŝĵĥ" in drawn.texts
    [cut] = [text for text in drawn.texts if text.startswith("Дмитрий")]
    assert cut.endswith("…") and len(cut) < len(names[1])
    assert picture.text_width(cut, 24) <= picture.NAME_WIDTH - 52
    opened(game_picture(summary, "en"))


def test_the_size_reads_on_a_phone_for_5_and_10_players_and_the_longest_game():
    small = opened(game_picture(finished(5, seed=1), "en"))
    longest = finished(10, seed=0, longest=True)
    assert sum(len(r["proposals"]) for r in longest.record["missions"]) == 25
    large = opened(game_picture(longest, "en"))
    for image in (small, large):
        assert 800 <= image.width <= 1600 and 600 <= image.height <= 1400
    assert small.height < large.height
    # The longest game's cells are still big enough to tell a dot from a cross.
    cells = [s for s in layout(longest, "en").shapes if isinstance(s, picture.Box) and s.fill == picture.CELL]
    assert min(c.x1 - c.x0 for c in cells) >= 28


def test_the_group_s_language_is_used_and_unknown_texts_fall_back_to_english():
    summary = finished(5, seed=1)
    assert summary.reason == "three_successful_missions"
    shown = description(game_picture(summary, "ru")).split("\n")
    assert "Три миссии выполнены" in shown  # a message the catalogs translate already
    assert all(name in shown for name in NAMES[:5])
    # A message not translated yet reads in English rather than not at all.
    english = description(game_picture(summary, "en")).split("\n")
    for text in ("leader", "on the team", "Team vote"):
        assert text in english
    assert len(shown) == len(english)


def test_only_a_finished_game_can_be_drawn():
    summary = finished(5, seed=1)
    record = dict(summary.record)
    unfinished = {**record, "missions": record["missions"][:2]}
    with pytest.raises(ValueError, match="only a finished game"):
        layout(GameSummary("g", -1, 0.0, summary.seats, unfinished), "en")
    without = {k: v for k, v in record.items() if k != "outcome"}
    with pytest.raises(ValueError):
        GameSummary("g", -1, 0.0, summary.seats, without)
    with pytest.raises(ValueError, match="only a finished game"):
        picture.check_finished(without)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.integers(5, 10),
    st.integers(0, 2**32),
    st.booleans(),
    st.booleans(),
    st.booleans(),
    st.lists(st.text(alphabet="abcĉĝĥĵŝŭжщЮ Ж-", min_size=1, max_size=40), min_size=10, max_size=10),
)
def test_any_finished_game_is_drawn_with_every_player_named(players, seed, targeting, blind, plot, names):
    names = [f"{n}{i}" for i, n in enumerate(names)]
    summary = finished(players, seed, names, targeting=targeting, blind_spies=blind, plot_cards=plot)
    png = game_picture(summary, random.Random(seed).choice(("en", "es", "ru", "bg", "eo")))
    image = opened(png)
    assert image.width == picture.WIDTH and image.height <= 1400
    shown = description(png).split("\n")
    for name in names[:players]:
        assert name in shown or any(t.endswith("…") and name.startswith(t[:-1].rstrip()) for t in shown)


# ---------------------------------------------------------------- as an outgoing item


def test_a_photo_waits_in_the_outbox_as_text_and_reads_back_the_same():
    png = game_picture(finished(5, seed=1), "en")
    item = Photo.of_png(-100, "resistance-0123456789.png", png)
    assert outgoing.loads(outgoing.dumps(item)) == item and item.content == png
    moved = outgoing.in_topic(item, -100, 7)
    assert moved.topic == 7 and outgoing.loads(outgoing.dumps(moved)) == moved
    assert outgoing.in_topic(item, -200, 7) == item


# ---------------------------------------------------------------- a whole game through the bot


@pytest.mark.usefixtures("no_handler_errors")
@pytest.mark.parametrize("policy", [CleanTeams, SpiesAlwaysFail])
async def test_a_whole_game_ends_with_one_picture_after_its_result(make_bot, telegram, policy):
    group = await started(make_bot, telegram, players=6)
    table = await group.play(policy())
    assert table.game.is_over
    [photo] = pictures(telegram, group.chat_id)
    result = last_message(telegram, group.chat_id)
    assert "🏁" in plain_text(result.text)
    # The last thing the group saw: the result edited into the last board, then the picture.
    group_history = [(mid, kind, text) for chat, mid, kind, text in telegram.history if chat == group.chat_id]
    ended = next(i for i, (mid, kind, text) in enumerate(group_history) if "🏁" in plain_text(text or ""))
    posted = group_history.index((photo.message_id, "sent", None))
    assert posted == len(group_history) - 1 and posted > ended
    assert photo.photo.filename == f"resistance-{table.id}.png"
    shown = description(photo.photo.data).split("\n")
    assert all(p.name in shown for p in table.players)
    # No photo was sent before the end.
    assert [m for m, _ in telegram.calls].count("sendPhoto") == 1


@pytest.mark.usefixtures("no_handler_errors")
async def test_a_picture_telegram_refuses_is_left_out_and_holds_nothing_up(make_bot, telegram, caplog):
    group = await started(make_bot, telegram, players=5)
    telegram.fail_next("sendPhoto", status=400, description="Bad Request: IMAGE_PROCESS_FAILED")
    table = await group.play(CleanTeams())
    assert table.game.is_over and pictures(telegram, group.chat_id) == []
    assert "🏁" in plain_text(last_message(telegram, group.chat_id).text)
    warned = [r.getMessage() for r in caplog.records if r.levelname == "WARNING" and "Photo" in r.getMessage()]
    assert len(warned) == 1 and warned[0].startswith(f"game {table.id}: Telegram refused a Photo: ")
    # What comes after it goes out.
    await group.send(telegram.command(group.user_ids[1], group.chat_id, "/record"))
    assert last_message(telegram, group.chat_id).document is not None
