"""How fast a group plays: when a step's time runs out, and when it stops running.

Live (the default): each step has the minutes set in /settings, counted on the wall clock.

Slow: each step has `slow_hours`, counted only outside the group's quiet hours, in its time zone.
A 12-hour step that opens at 21:00 with quiet hours 23-07 ends at 17:00 the next day: two hours
before the quiet, ten after it. So no deadline ends and no reminder (half the step's time) goes out
while the group sleeps. A live game ignores quiet hours: people playing at night are awake.

An idle table is paused rather than played by its deadlines: when a step's deadline passes with no
person acting in it, for the second step in a row, the game stops where it is (`paused`). Any press of
a seated person, or /resume, starts it again, with the step's whole time.

A seated person may `/extend` the current step by its length once per step, `EXTENSIONS_PER_GAME`
times in a game in all: enough for a player who needs an evening, too few for a staller to hold the
table for long.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from datetime import datetime, timedelta, tzinfo

from tgbot.changes import Change, Refused, refuse
from tgbot.outgoing import Send
from tgbot.render import pace as pace_render
from tgbot.settings import GroupSettings
from tgbot.table import Stage, Table
from tgbot.zones import UTC_NAME, zone_named

LIVE, SLOW = "live", "slow"
EXTENSIONS_PER_GAME = 3
IDLE_PAUSE_AFTER = 2  # deadlines in a row that no person acted in
# A Plot card holder's chance (use it or pass) in a slow game, and once they let one lapse.
SLOW_CHANCE_SECONDS = 2 * 3600
SLOW_HURRIED_CHANCE_SECONDS = 30 * 60


@dataclass(frozen=True)
class QuietHours:
    """From `start` o'clock to `end` o'clock, every day, in the group's time zone (overnight when
    `end` <= `start`)."""

    start: int
    end: int

    @classmethod
    def parse(cls, text: str) -> QuietHours | None:
        """ "22-08" as stored in the settings; None for "" (none)."""
        if not text:
            return None
        start, end = (int(part) for part in text.split("-"))
        return cls(start, end)

    def intervals(self, moment: float, zone: tzinfo):
        """The quiet intervals (start, end) in seconds since the epoch, from the one that ends after
        `moment` on, in order."""
        local = datetime.fromtimestamp(moment, zone)
        day = local.date() - timedelta(days=1)
        while True:
            begins = datetime(day.year, day.month, day.day, self.start, tzinfo=zone)
            ends_on = day if self.end > self.start else day + timedelta(days=1)
            ends = datetime(ends_on.year, ends_on.month, ends_on.day, self.end, tzinfo=zone)
            if ends.timestamp() > moment:
                yield begins.timestamp(), ends.timestamp()
            day += timedelta(days=1)


def is_slow(settings: GroupSettings) -> bool:
    return settings.pace == SLOW


def zone_of(settings: GroupSettings) -> tzinfo:
    return zone_named(settings.timezone) or zone_named(UTC_NAME)


def quiet_hours(settings: GroupSettings) -> QuietHours | None:
    """The quiet hours that hold the clock: a slow group's, if it set any."""
    return QuietHours.parse(settings.quiet_hours) if is_slow(settings) else None


def awake_after(start: float, seconds: float, settings: GroupSettings) -> float:
    """When `seconds` of the group's waking time (outside its quiet hours) have passed since `start`."""
    quiet = quiet_hours(settings)
    if quiet is None or seconds <= 0:
        return start + max(seconds, 0)
    moment, left = start, seconds
    for begins, ends in quiet.intervals(moment, zone_of(settings)):
        if moment >= begins:
            moment = ends  # `moment` falls inside the quiet: nothing counts until it ends
            continue
        awake = begins - moment
        if left <= awake:
            return moment + left
        left -= awake
        moment = ends
    raise AssertionError("unreachable: the quiet intervals never end")


def is_quiet(moment: float, settings: GroupSettings) -> bool:
    """Whether `moment` falls strictly inside the group's quiet hours (their first instant is still awake
    time: a step may end right as the quiet begins)."""
    quiet = quiet_hours(settings)
    if quiet is None:
        return False
    begins, ends = next(quiet.intervals(moment, zone_of(settings)))
    return begins < moment < ends


def timed(table: Table, now: float, seconds: float) -> Table:
    """The table's step given `seconds` from `now`: its deadline, and its reminder half-way."""
    settings = table.settings
    return replace(
        table, deadline=awake_after(now, seconds, settings), reminder_at=awake_after(now, seconds / 2, settings)
    )


def counts_person(table: Table, user_id: int) -> Table:
    """A seated person acted: the table is not idle."""
    seat = table.seat_of(user_id)
    if table.stage is not Stage.PLAYING or seat is None or table.players[seat].computer:
        return table
    if table.person_acted and table.idle_deadlines == 0:
        return table
    return replace(table, person_acted=True, idle_deadlines=0)


def idle_after_deadline(table: Table) -> tuple[Table, bool]:
    """The table once its step's deadline passed, and whether it is idle enough to pause: no person
    acted in this step nor in the one before, whose deadline passed too."""
    idle = 0 if table.person_acted else table.idle_deadlines + 1
    return replace(table, idle_deadlines=idle), idle >= IDLE_PAUSE_AFTER


def extensions_left(table: Table) -> int:
    return EXTENSIONS_PER_GAME - len(table.extensions)


def is_seated_person(table: Table, user_id: int) -> bool:
    seat = table.seat_of(user_id)
    return seat is not None and not table.players[seat].computer


def paused(table: Table) -> Change:
    """The deadline of a second idle step in a row passed: the game stops where it stands, undecided,
    and the group hears how to go on. (`clock.settled` takes its deadline and computer turns away.)"""
    return Change(replace(table, paused=True), [Send(table.chat_id, pace_render.paused(table.language))])


def resumed(table: Table, user_id: int) -> Change:
    """A seated person starts a paused game again: the step it stopped in gets its whole time."""
    name = table.name(table.seat_of(user_id))
    table = replace(table, paused=False, idle_deadlines=0)
    return Change(table, [Send(table.chat_id, pace_render.resumed(name, table.language))])


def pressed(table: Table, user_id: int, move: Callable[[Table], Change]) -> Change:
    """A seated person's press on the game: it starts a paused game again, whatever it was (a refused
    press too: the group is there again), and it counts as a person playing."""
    if not (table.is_paused and is_seated_person(table, user_id)):
        change = move(table)
        return replace(change, table=counts_person(change.table, user_id))
    going = resumed(table, user_id)
    try:
        change = move(going.table)
    except Refused as refused:
        return Change(counts_person(going.table, user_id), going.outgoing, refused.reply)
    return replace(change, table=counts_person(change.table, user_id), outgoing=[*going.outgoing, *change.outgoing])


def resume(table: Table, user_id: int, lang: str) -> Change:
    """/resume in the group."""
    if table.stage is not Stage.PLAYING:
        raise refuse(lang, "No game is running in this group.")
    if not is_seated_person(table, user_id):
        raise refuse(lang, "Only the players of this game can resume it.")
    if not table.is_paused:
        raise refuse(lang, "The game is not paused: it goes on.")
    change = resumed(table, user_id)
    return replace(change, table=counts_person(change.table, user_id))
