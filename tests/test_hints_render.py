"""The /hints text itself: a bar per seat, most suspect first, and under each at most two short
reasons whose signed points are the measured ones, in every language, for both views."""

from __future__ import annotations

import re
from dataclasses import replace
from types import SimpleNamespace

import pytest

from benchmarks.deduction_speed import full_ten_player_record
from deduction.analysis import deduce
from deduction.knowledge import Viewer
from deduction.reasons import Explanation, Reason, explain
from tgbot.hints import counted_up_to
from tgbot.i18n import LANGUAGES
from tgbot.offline.simulation import plain_text
from tgbot.render import hints as render
from tgbot.table import Player

NAMES = ("Ana", "Bob", "Cleo", "Dan", "Eve", "Finn", "Gus", "Hana", "Ivo", "Jo")
SEAT_LINE = re.compile(r"^([▰▱]{10}) +(\d+)% (.+)$")
REASON_LINE = "   ↳ "
PHONE_WIDTH = 70  # characters a reason line may take: it must read on a phone without wrapping much


@pytest.mark.parametrize("lang", LANGUAGES)
@pytest.mark.parametrize("spy_view", [False, True])
def test_hints_show_sorted_bars_and_the_measured_points(lang: str, spy_view: bool) -> None:
    record = full_ten_player_record()
    asker = 1 if spy_view else 0  # seat 1 is a spy in this record; a spy sees what the table sees
    deduction = deduce(record, Viewer.outsider() if spy_view else Viewer.resistance(asker))
    explanation = explain(record, deduction, per_seat=render.REASONS_PER_SEAT)
    players = tuple(Player(seat, name) for seat, name in enumerate(NAMES))
    scene = SimpleNamespace(
        lang=lang, seat=SimpleNamespace(seat=asker), group=SimpleNamespace(players=players, chat_title="T")
    )
    lines = plain_text(render.hints(scene, deduction.spy_probability, deduction.possible, explanation, spy_view)).split(
        "\n"
    )

    seat_rows = [(i, SEAT_LINE.match(line)) for i, line in enumerate(lines) if SEAT_LINE.match(line)]
    assert len(seat_rows) == (10 if spy_view else 9)
    percents = [int(match.group(2)) for _, match in seat_rows]
    assert percents == sorted(percents, reverse=True)
    shown_points = []
    for (first, match), following in zip(seat_rows, [i for i, _ in seat_rows[1:]] + [len(lines)], strict=True):
        name = match.group(3).split(" (")[0]
        seat = NAMES.index(name)
        under = [line[len(REASON_LINE) :] for line in lines[first + 1 : following] if line.startswith(REASON_LINE)]
        expected = explanation.seats[seat][: render.REASONS_PER_SEAT]
        assert len(under) == len(expected) <= 2
        for text, reason in zip(under, expected, strict=True):
            assert len(REASON_LINE + text) <= PHONE_WIDTH, text
            if "points" not in reason.args:  # an exact fact ("certainly a spy")
                continue
            points = reason.args["points"]
            assert text.startswith(f"+{points} · " if points > 0 else f"\u2212{-points} · "), (text, reason)
            shown_points.append(points)
    assert shown_points, "this record moves several seats by more than 3 points"


def test_a_number_shows_100_or_0_percent_only_for_a_seat_known_for_certain() -> None:
    """Almost sure is not sure: a seat at 99.7% that the record does not prove a spy read "100%"
    under a full bar, as if it were certain (a blind spy took it for a fellow spy's identity)."""
    players = tuple(Player(seat, name) for seat, name in enumerate(NAMES[:5]))
    scene = SimpleNamespace(
        lang="en", seat=SimpleNamespace(seat=0), group=SimpleNamespace(players=players, chat_title="T")
    )
    probabilities = (0.5, 0.997, 1.0, 0.003, 0.0)
    reasons = ((), (), (Reason("certain_spy", {"seat": 2}),), (), (Reason("certain_resistance", {"seat": 4}),))
    explanation = Explanation(table=(), seats=reasons)
    lines = plain_text(render.hints(scene, probabilities, 3, explanation, spy_view=True)).split("\n")
    shown = {m.group(3): (m.group(1), int(m.group(2))) for m in map(SEAT_LINE.match, lines) if m}
    assert shown["Bob"] == ("▰" * 9 + "▱", 99)
    assert shown["Cleo"] == ("▰" * 10, 100)
    assert shown["Dan"] == ("▰" + "▱" * 9, 1)
    assert shown["Eve"] == ("▱" * 10, 0)


def test_a_spys_hints_do_not_claim_to_be_the_resistances_view() -> None:
    """A spy's numbers are the public record read with no role known: no Resistance member sees
    those (each knows their own role). The spy read "This is how the Resistance ... sees each
    player" and a count of seatings "still possible" they knew to be wrong."""
    record = full_ten_player_record()
    deduction = deduce(record, Viewer.outsider())
    explanation = explain(record, deduction, per_seat=render.REASONS_PER_SEAT)
    players = tuple(Player(seat, name) for seat, name in enumerate(NAMES))
    scene = SimpleNamespace(
        lang="en", seat=SimpleNamespace(seat=1), group=SimpleNamespace(players=players, chat_title="T")
    )
    lines = plain_text(render.hints(scene, deduction.spy_probability, deduction.possible, explanation, True)).split(
        "\n"
    )
    assert lines[0] == (
        "🔎 «T»: you are a spy. Each player, you included, as the public record alone shows them, knowing no "
        "role (a Resistance member also knows their own role, so their numbers differ):"
    )
    assert "Resistance" not in lines[0].split("(")[0]
    count = f"{deduction.possible} ways" if deduction.possible != 1 else "1 way"
    assert any(line.startswith(f"From the public record alone, {count} to seat the spies") for line in lines)


@pytest.mark.parametrize("lang", LANGUAGES)
def test_hints_say_how_far_the_record_behind_them_goes(lang: str) -> None:
    """Each /hints is a new private message: one read later, further up the chat, must say what it
    counted (the latest vote, and that mission's result once it was played)."""
    record = full_ten_player_record().without_outcome()
    after_two = record.cut_after_mission(2)
    third = record.missions[2]
    voting_on_third = replace(third, proposals=third.proposals[:2], fails=None)
    voting_third = replace(record, missions=(*record.missions[:2], voting_on_third))
    assert counted_up_to(after_two) == render.Counted(mission=2, proposal=5, result=True)
    assert counted_up_to(voting_third) == render.Counted(mission=3, proposal=2, result=False)
    assert counted_up_to(replace(record, missions=())) is None

    players = tuple(Player(seat, name) for seat, name in enumerate(NAMES))
    scene = SimpleNamespace(
        lang=lang, seat=SimpleNamespace(seat=0), group=SimpleNamespace(players=players, chat_title="T")
    )
    said = []
    for cut in (after_two, voting_third):
        deduction = deduce(cut, Viewer.resistance(0))
        explanation = explain(cut, deduction, per_seat=render.REASONS_PER_SEAT)
        probabilities = deduction.spy_probability
        text = render.hints(scene, probabilities, deduction.possible, explanation, False, counted_up_to(cut))
        lines = plain_text(text).split("\n")
        last_seat = max(i for i, line in enumerate(lines) if SEAT_LINE.match(line))
        said.append(next(line for line in lines[last_seat + 1 :] if line and not line.startswith(("↳", " "))))
    assert said[0] == plain_text(render.counted_line(render.Counted(2, 5, True), lang))
    assert said[1] == plain_text(render.counted_line(render.Counted(3, 2, False), lang))
    assert "2" in said[0] and "3" in said[1] and "2" in said[1]
    if lang == "en":
        assert said == ["Counted up to the result of mission 2.", "Counted up to the vote on proposal 2 of mission 3."]
    else:  # worded in the player's language, not left in English
        assert said[0] != "Counted up to the result of mission 2."
