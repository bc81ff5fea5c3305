"""The clock: every step has a deadline and a half-way reminder; what a deadline does is the engine's.
Computer players' turns come on the clock too (`computers`). How long a step lasts, and when the clock
stops (quiet hours, an idle table), is the group's pace (`pace`)."""

from __future__ import annotations

import random
from dataclasses import replace

from engine import PLOT_PHASES, CardsTimedOut, Phase, VotesTimedOut, apply, draw_team, public_view
from engine import rules as game_rules
from engine.actions import ChanceTimedOut
from engine.deadlines import draw_deal, draw_immediate
from tgbot.changes import Change, refuse
from tgbot.moves import absence, announcements, computers, pace, plot_announcements, prompts
from tgbot.moves.lobby import LOBBY_KEY, start_game
from tgbot.moves.play import step
from tgbot.outgoing import Delete, Edit, Send
from tgbot.render import board, private
from tgbot.render import pace as pace_render
from tgbot.render.common import seat_scene
from tgbot.table import MIN_PEOPLE, Stage, Table

# A Plot card holder's chance in a window (use it or pass) is a short question.
PLOT_CHANCE_SECONDS = 45
# A holder who let their last chance lapse unanswered gets less, until they answer one themselves:
# a lapsed chance costs them nothing else, and the whole table waits for each.
HURRIED_CHANCE_SECONDS = 15
# A step whose deadline passed while no worker could reach storage gets back the time it had left then,
# and at least this much: whoever pressed meanwhile was told to try again in a moment.
RESUMED_SECONDS = 20


def step_of(table: Table) -> str:
    """Names the step a deadline belongs to; a new name means a new deadline."""
    if table.stage is Stage.LOBBY:
        # The lobby time (or the pace) changed in /settings while the lobby is open: that much time from the change.
        if pace.is_slow(table.settings):
            return f"lobby:slow:{step_seconds(table)}"
        return f"lobby:{table.settings.lobby_seconds}"
    if table.stage is not Stage.PLAYING or table.game is None or table.paused:
        return ""  # a paused game has no deadline until someone plays again
    game = table.game
    name = f"{game.phase.value}:{public_view(game).ballot}"
    # Opinion Makers vote first: the rest of the table gets a deadline of its own once they have.
    if game.phase is Phase.VOTING and any(
        game.pending_votes[s] is None for s in game.current_round.proposals[-1].open_votes
    ):
        name += ":opinion-makers"
    return name


def step_seconds(table: Table) -> int:
    """The step's time: in a slow game, waking time (`pace.awake_after`)."""
    settings = table.settings
    slow = pace.is_slow(settings)
    if table.stage is Stage.LOBBY:
        # People see a slow group's lobby hours later: it stays open at least a step's time.
        return max(settings.lobby_seconds, settings.slow_hours * 3600) if slow else settings.lobby_seconds
    phase = table.game.phase
    if phase in PLOT_PHASES and phase is not Phase.DEAL:
        asked = public_view(table.game).waiting_for
        hurried = any(absence.hurried(table, s) for s in asked)
        if slow:
            return pace.SLOW_HURRIED_CHANCE_SECONDS if hurried else pace.SLOW_CHANCE_SECONDS
        return HURRIED_CHANCE_SECONDS if hurried else PLOT_CHANCE_SECONDS
    if slow:
        return settings.slow_hours * 3600
    if phase is Phase.PROPOSING:
        return settings.proposal_seconds
    if phase is Phase.VOTING:
        return settings.vote_seconds
    if phase is Phase.DEAL:
        return settings.vote_seconds  # a card or two to give, or one to resolve: quicker than a team
    return settings.mission_seconds


def settled(change: Change, now: float, rng: random.Random) -> Change:
    """What every change needs before it is stored: its step's deadline, when the next
    computer-played seat acts, and no private message for a computer player."""
    new_step = step_of(change.table) != change.table.step
    change = rescheduled(change, now)
    if change.table.is_paused:
        change = replace(change, table=replace(change.table, computer_at=None))  # nobody plays a paused game
    else:
        change = computers.scheduled(change, new_step, now, rng)
    return computers.without_computer_mail(change)


def rescheduled(change: Change, now: float) -> Change:
    """Give the table's step a fresh deadline (and half-way reminder) if the step is new."""
    table = change.table
    name = step_of(table)
    if name == table.step:
        return change
    ended = _reminders_taken_back(table)
    table = replace(table, step=name, person_acted=False, reminded=())
    if not name:
        table = replace(table, deadline=None, reminder_at=None)
    else:
        table = pace.timed(table, now, step_seconds(table))
    return replace(change, table=table, outgoing=[*change.outgoing, *ended])


def _reminders_taken_back(table: Table) -> list[Delete]:
    """The reminders of the step that ended: nothing to remind of any more, and the newest message of
    a private chat should not be one that asks for what is done."""
    return [
        Delete(
            table.players[seat].user_id,
            reminder_key(table.step, seat),
            private.reminder_over(seat_scene(table, seat)) if table.game is not None else "",
        )
        for seat in table.reminded
    ]


def reminder_key(step_name: str, seat: int) -> str:
    return f"reminder:{seat}:{step_name}"


def on_clock(
    table: Table, now: float, rng: random.Random, bot_username: str, unreachable_since: float | None = None
) -> Change:
    """What the clock does to the table at `now`: nothing, a reminder, or the deadline's rule.
    `unreachable_since`: storage answered again after an outage that began then (as far as the worker
    knows): a deadline that passed since is not the players' doing (`resumed`)."""
    if not table.is_active or table.deadline is None:
        return Change(table)
    if now >= table.deadline:
        if unreachable_since is not None and table.deadline > unreachable_since:
            return Change(resumed(table, now, unreachable_since))
        return _deadline(table, rng, bot_username)
    if table.computer_at is not None and now >= table.computer_at:
        return computers.take_turn(table, now, rng, bot_username)
    if table.reminder_at is not None and now >= table.reminder_at:
        reminders = _reminders(table, bot_username)
        reminded = tuple(seat for seat, _ in reminders if seat is not None)
        return Change(replace(table, reminder_at=None, reminded=reminded), [send for _, send in reminders])
    return Change(table)


def resumed(table: Table, now: float, unreachable_since: float) -> Table:
    """The step's deadline passed while no worker could reach storage: nobody could act then (a press
    was answered that the game was unavailable), so the deadline's rule would play their turns for them
    (a team drawn, votes filled, a spy's Fail counted as a Success). The step gets back the time it had
    left when storage stopped answering, and at least `RESUMED_SECONDS`, from `now`."""
    left = min(table.deadline - unreachable_since, step_seconds(table))
    return replace(table, deadline=now + max(left, min(RESUMED_SECONDS, step_seconds(table))))


def _reminders(table: Table, bot_username: str) -> list[tuple[int | None, Send]]:
    """A lobby reminds its group; a game reminds, in private, only the players it waits for (with the
    seat each reminder is for)."""
    if table.game is None:
        text = board.lobby_reminder(table.players, table.language, table.rematch)
        return [(None, Send(table.chat_id, text))]
    return [
        (seat, _reminder(table, seat, bot_username))
        for seat in public_view(table.game).waiting_for
        if not table.played_by_computer(seat)
    ]


def _reminder(table: Table, seat: int, bot_username: str) -> Send:
    """A player's private reminder: what the game waits for from them, until when, and a way to the
    message to answer (their private keyboard, or the board they vote on). Once per step: its key is
    the step's. If it cannot reach them, the group hears so only when the decision is one they make in
    private (and it repeats what the group heard when its keyboard did not reach them): a vote is cast
    on the group's board, and nothing in private would help them cast it."""
    scene = seat_scene(table, seat)
    key = reminder_key(table.step, seat)
    keyboards = prompts.decision_prompts(table, seat, bot_username)
    until = pace_render.moment(table.deadline, table.settings, scene.lang)
    reminder = announcements.to_player(table, seat, private.reminder(scene, until), (), key, bot_username)
    if keyboards:
        return replace(reminder, link_key=keyboards[0].key)
    return replace(
        reminder,
        notice_chat_id=None,
        notice_text="",
        notice_buttons=(),
        link_key=board.board_key(scene.group),
        link_text=private.to_the_vote(scene),
    )


def _deadline(table: Table, rng: random.Random, bot_username: str) -> Change:
    if table.stage is Stage.LOBBY:
        enough = len(table.players) >= game_rules.MIN_PLAYERS and len(table.people) >= MIN_PEOPLE
        if enough and not table.rematch:
            return start_game(table, table.creator_id, True, table.language, rng, bot_username)
        closed = replace(table, stage=Stage.CANCELLED)
        text = board.lobby_timed_out(table.players, table.language, unstarted=enough)
        return Change(closed, [Edit(table.chat_id, LOBBY_KEY, text)])
    game = table.game
    # A Plot card holder's chance that lapses is a pass the rules allow: it says nothing of whether
    # anyone is there, and the table's idle count stands.
    if game.phase not in PLOT_PHASES or game.phase is Phase.DEAL:
        table, idle = pace.idle_after_deadline(table)
        if idle:
            return pace.paused(table)  # nobody is there: the deadline's rule would play the game by itself
    if game.phase is Phase.PROPOSING:
        # The engine draws the team with the clock's random source; a mission the leader had
        # already picked under Targeting is kept.
        action = draw_team(game, rng, preferred_mission=table.draft_mission)
    elif game.phase is Phase.VOTING:
        action = VotesTimedOut(table.settings.missing_vote_approves)
    elif game.phase is Phase.DEAL:
        # The cards must be dealt and resolved: the time running out draws the choice at random.
        action = draw_deal(game, rng) if game.plot.receiving is None else draw_immediate(game, rng)
    elif game.phase in PLOT_PHASES:
        action = ChanceTimedOut()  # a holder who lets the time run out passes
    else:
        action = CardsTimedOut()
    after, events = apply(game, action)
    # A chance to use a held card that lapses is a pass the rules allow, not a missed turn.
    # It does make the holder's next chances shorter, until they answer one.
    chance = game.phase in PLOT_PHASES and game.phase is not Phase.DEAL
    table, takeovers = absence.missed_deadline(table, () if chance else public_view(game).waiting_for)
    for seat in public_view(game).waiting_for if chance else ():
        table = absence.chance_lapsed(table, seat)
    before = table
    change = step(replace(table, draft_team=(), draft_mission=None, draft_card=None), after, events, None, bot_username)
    closed = plot_announcements.closed_by_the_clock(before, change.table, action)
    return replace(change, outgoing=closed + change.outgoing + takeovers)


def extend(table: Table, user_id: int, lang: str, now: float) -> Change:
    """/extend: a seated person gives the current step its time once more, from its deadline (waking
    time in a slow game), once per step and `pace.EXTENSIONS_PER_GAME` times a game; the group hears
    who did and until when."""
    seat = table.seat_of(user_id)
    if table.stage is not Stage.PLAYING:
        raise refuse(lang, "No game is running in this group.")
    if not pace.is_seated_person(table, user_id):
        raise refuse(lang, "Only the players of this game can extend its steps.")
    if table.is_paused:
        raise refuse(lang, "The game is paused: /resume (or any of its buttons) goes on, with the step's whole time.")
    if table.deadline is None or not table.step:
        raise refuse(lang, "Nothing waits for a deadline now.")
    if table.extended_step == table.step:
        raise refuse(lang, "This step has been extended already: each step once.")
    if pace.extensions_left(table) <= 0:
        raise refuse(lang, "This game's extensions are used up (%(n)s a game).", n=pace.EXTENSIONS_PER_GAME)
    deadline = pace.awake_after(max(table.deadline, now), step_seconds(table), table.settings)
    extended = replace(
        table,
        deadline=deadline,
        extensions=(*table.extensions, seat),
        extended_step=table.step,
        person_acted=True,
        idle_deadlines=0,
    )
    text = pace_render.extended(
        table.name(seat), deadline, pace.extensions_left(extended), table.settings, table.language
    )
    return Change(extended, [Send(table.chat_id, text)])
