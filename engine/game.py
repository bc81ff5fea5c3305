"""The rules as one pure function: `apply(state, action) -> (new_state, events)`.

An illegal action raises `IllegalAction` before anything is built, so the caller's
state is never touched. Every accepted action stamps `version + 1`.
"""

from __future__ import annotations

import random
from dataclasses import replace

from engine import rules
from engine.actions import (
    DEADLINE_ACTIONS,
    PLAYER_ACTIONS,
    PLOT_DEADLINE_ACTIONS,
    PLOT_PLAYER_ACTIONS,
    Action,
    CardsTimedOut,
    CastVote,
    LeaderTimedOut,
    PlayCard,
    ProposeTeam,
    VotesTimedOut,
)
from engine.errors import IllegalAction, Reason
from engine.events import (
    CardPlayed,
    CardsFilled,
    Event,
    OpenVotesShown,
    SpotlightCardShown,
    TeamProposed,
    VoteCast,
    VotesFilled,
    VotesRevealed,
)
from engine.plot import Card, PlotState, PlotUse, UseKind, full_deck
from engine.state import GameState, MissionRound, Phase, Proposal, Role, Variants
from engine.steps import (
    after_approval,
    after_cards,
    after_rejection,
    begin_proposal,
    proposal_index,
    round_index,
    voters_now,
)
from engine.windows import apply_plot


def new_game(
    players: int,
    rng: random.Random | None = None,
    variants: Variants | None = None,
    *,
    spies: tuple[int, ...] | None = None,
    first_leader: int | None = None,
    deck: tuple[Card, ...] | None = None,
) -> GameState:
    """Deal roles, pick the first leader and, with Plot cards, shuffle the deck at random
    (from `rng`), unless they are given. A game with Plot cards starts at its first window."""
    rng = rng if rng is not None else random.Random()
    variants = variants if variants is not None else Variants()
    count = rules.spy_count(players)
    if spies is None:
        spies = tuple(rng.sample(range(players), count))
    if len(set(spies)) != count or not all(0 <= s < players for s in spies):
        raise ValueError(f"{players} players need {count} distinct spy seats, got {spies}")
    if first_leader is None:
        first_leader = rng.randrange(players)
    if not 0 <= first_leader < players:
        raise ValueError(f"no seat {first_leader} at a table of {players}")
    state = GameState(
        players=players,
        spies=tuple(sorted(spies)),
        variants=variants,
        leader=first_leader,
        phase=Phase.PROPOSING,
    )
    if not variants.plot_cards:
        return state
    if deck is None:
        deck = full_deck(players)
        deck = tuple(rng.sample(deck, len(deck)))
    if sorted(deck) != sorted(full_deck(players)):
        raise ValueError(f"a deck of {players} players holds {sorted(full_deck(players))}, not {sorted(deck)}")
    state = replace(state, plot=PlotState(deck=tuple(deck), hands=((),) * players))
    return begin_proposal(state, [])[0]


def apply(state: GameState, action: Action) -> tuple[GameState, tuple[Event, ...]]:
    if not isinstance(action, PLAYER_ACTIONS + DEADLINE_ACTIONS):
        raise IllegalAction(Reason.UNKNOWN_ACTION, type(action).__name__)
    if state.is_over:
        raise IllegalAction(Reason.GAME_OVER)
    if isinstance(action, PLAYER_ACTIONS) and not _is_seat(action.seat, state.players):
        raise IllegalAction(Reason.NOT_A_PLAYER, f"no seat {action.seat!r}")
    if isinstance(action, PLOT_PLAYER_ACTIONS + PLOT_DEADLINE_ACTIONS):
        new_state, events = apply_plot(state, action)
    elif isinstance(action, ProposeTeam):
        new_state, events = _propose(state, action)
    elif isinstance(action, CastVote):
        new_state, events = _vote(state, action)
    elif isinstance(action, PlayCard):
        new_state, events = _play_card(state, action)
    elif isinstance(action, LeaderTimedOut):
        new_state, events = _put_team_drawn(state, action)
    elif isinstance(action, VotesTimedOut):
        new_state, events = _fill_votes(state, action)
    else:
        new_state, events = _fill_cards(state, action)
    if new_state.plot is not None and _moved_on(state, new_state):
        new_state = replace(new_state, plot=replace(new_state.plot, decisions=new_state.plot.decisions + 1))
    return replace(new_state, version=state.version + 1), events


def _moved_on(before: GameState, after: GameState) -> bool:
    """Whether an action opened a new decision: anything but one more vote or mission card
    (the Opinion Makers' open votes and the rest are one vote)."""
    return not (before.phase is after.phase and before.phase in (Phase.VOTING, Phase.MISSION))


def _is_seat(value: object, players: int) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and 0 <= value < players


def _require_phase(state: GameState, phase: Phase) -> None:
    if state.phase is not phase:
        raise IllegalAction(Reason.WRONG_PHASE, f"the game is in the {state.phase.value} phase")


def _require_choice(value: object, what: str) -> bool:
    """Votes and cards are exactly true or false: "no" or 0 is not a choice the engine guesses at."""
    if not isinstance(value, bool):
        raise IllegalAction(Reason.NOT_A_CHOICE, f"{what} must be true or false, not {value!r}")
    return value


def _choose_mission(state: GameState, requested: object) -> int:
    """The mission a proposal attempts: the next in order, or under Targeting the leader's choice
    among the missions not yet played. A mission is named by its number exactly: true is not
    mission 1, nor 1.0 (both equal 1 in Python)."""
    if requested is not None and (not isinstance(requested, int) or isinstance(requested, bool)):
        raise IllegalAction(Reason.UNKNOWN_MISSION, f"no mission {requested!r}")
    if not state.variants.targeting:
        expected = state.open_missions()[0]
        if requested is not None and requested != expected:
            raise IllegalAction(Reason.MISSION_NOT_ALLOWED, "missions are played in order without Targeting")
        return expected
    if requested is None:
        raise IllegalAction(Reason.MISSION_REQUIRED, "under Targeting the leader chooses the mission")
    if not 1 <= requested <= rules.MISSION_COUNT:
        raise IllegalAction(Reason.UNKNOWN_MISSION, f"no mission {requested!r}")
    if requested in state.attempted_missions:
        raise IllegalAction(Reason.MISSION_ALREADY_ATTEMPTED, f"mission {requested} was attempted already")
    if requested not in state.open_missions():
        raise IllegalAction(Reason.MISSION_5_LOCKED, "mission 5 opens after two successful missions")
    return requested


def _propose(state: GameState, action: ProposeTeam) -> tuple[GameState, tuple[Event, ...]]:
    _require_phase(state, Phase.PROPOSING)
    if action.seat != state.leader:
        raise IllegalAction(Reason.NOT_THE_LEADER, f"seat {state.leader} is the leader")
    return _put_forward(state, action.team, action.mission, drawn=False)


def _put_team_drawn(state: GameState, action: LeaderTimedOut) -> tuple[GameState, tuple[Event, ...]]:
    """The leader let the time run out: the team drawn for them goes to the vote like any other."""
    _require_phase(state, Phase.PROPOSING)
    return _put_forward(state, action.team, action.mission, drawn=True)


def _put_forward(
    state: GameState, requested_team: object, requested_mission: object, drawn: bool
) -> tuple[GameState, tuple[Event, ...]]:
    mission = _choose_mission(state, requested_mission)
    size = rules.team_size(state.players, mission)
    team = tuple(requested_team) if isinstance(requested_team, tuple | list) else ()
    if any(not _is_seat(s, state.players) for s in team):
        raise IllegalAction(Reason.UNKNOWN_TEAM_MEMBER, "every team member must be a seated player")
    if len(set(team)) != len(team):
        raise IllegalAction(Reason.DUPLICATE_TEAM_MEMBER, "a player holds at most one team card")
    if len(team) != size:
        raise IllegalAction(Reason.WRONG_TEAM_SIZE, f"mission {mission} needs a team of {size}")
    team = tuple(sorted(team))

    proposal = Proposal(leader=state.leader, team=team, mission=mission, auto_team=drawn)
    if state.plot is not None:
        proposal = replace(
            proposal,
            strong_leader=state.plot.took_lead,
            open_votes=state.plot.holders(Card.OPINION_MAKER),
        )
        state = replace(state, plot=replace(state.plot, took_lead=False))
    # The round takes the mission of its latest proposal: under Targeting a later leader may name another.
    current = state.current_round or MissionRound(mission, size, rules.fails_required(state.players, mission))
    current = replace(
        current,
        mission=mission,
        team_size=size,
        fails_required=rules.fails_required(state.players, mission),
        proposals=current.proposals + (proposal,),
    )
    rounds = (state.rounds[:-1] if state.current_round is not None else state.rounds) + (current,)
    new_state = replace(state, rounds=rounds, phase=Phase.VOTING, pending_votes=(None,) * state.players)
    event = TeamProposed(
        mission=mission,
        proposal_number=len(current.proposals),
        leader=state.leader,
        team=team,
        drawn=drawn,
    )
    return new_state, (event,)


def _vote(state: GameState, action: CastVote) -> tuple[GameState, tuple[Event, ...]]:
    _require_phase(state, Phase.VOTING)
    if state.pending_votes[action.seat] is not None:
        raise IllegalAction(Reason.ALREADY_VOTED)
    if action.seat not in voters_now(state):
        raise IllegalAction(Reason.OPINION_MAKERS_FIRST, "the Opinion Makers vote first, in the open")
    votes = list(state.pending_votes)
    votes[action.seat] = _require_choice(action.approve, "a vote")
    events: list[Event] = [VoteCast(seat=action.seat)]
    return _count_votes(state, tuple(votes), events)


def _fill_votes(state: GameState, action: VotesTimedOut) -> tuple[GameState, tuple[Event, ...]]:
    """The votes the game waits for count as the group's setting (the Opinion Makers' first,
    when theirs are still missing: the others then vote as usual)."""
    _require_phase(state, Phase.VOTING)
    approve = _require_choice(action.approve, "the missing votes' setting")
    current = state.current_round
    assert current is not None
    proposal = current.proposals[-1]
    if any(state.pending_votes[seat] is not approve for seat in proposal.auto_votes):
        raise IllegalAction(Reason.SETTING_CHANGED, "the missing votes of this vote were filled otherwise")
    missing = voters_now(state)
    votes = tuple(approve if seat in missing else vote for seat, vote in enumerate(state.pending_votes))
    proposal = replace(proposal, auto_votes=tuple(sorted(proposal.auto_votes + missing)))
    current = replace(current, proposals=current.proposals[:-1] + (proposal,))
    state = replace(state, rounds=state.rounds[:-1] + (current,))
    return _count_votes(state, votes, [VotesFilled(seats=missing, approve=approve)])


def _count_votes(
    state: GameState, votes: tuple[bool | None, ...], events: list[Event]
) -> tuple[GameState, tuple[Event, ...]]:
    """Reveal the votes once all are in; show the Opinion Makers' once theirs are."""
    if all(v is not None for v in votes):
        return _reveal_votes(state, tuple(bool(v) for v in votes), events)
    before = voters_now(state)
    state = replace(state, pending_votes=votes)
    current = state.current_round
    assert current is not None
    open_seats = current.proposals[-1].open_votes
    opinion_makers_voting = bool(open_seats) and set(before) <= set(open_seats)
    if opinion_makers_voting and all(votes[seat] is not None for seat in open_seats):
        events.append(OpenVotesShown(votes=tuple((seat, bool(votes[seat])) for seat in open_seats)))
    return state, tuple(events)


def _reveal_votes(
    state: GameState, revealed: tuple[bool, ...], events: list[Event]
) -> tuple[GameState, tuple[Event, ...]]:
    current = state.current_round
    assert current is not None
    proposal = replace(current.proposals[-1], votes=revealed)
    current = replace(current, proposals=current.proposals[:-1] + (proposal,))
    state = replace(state, rounds=state.rounds[:-1] + (current,), pending_votes=())
    events.append(
        VotesRevealed(
            mission=current.mission,
            proposal_number=len(current.proposals),
            votes=revealed,
            approved=proposal.approved,
            rejections=current.rejections,
        )
    )
    if proposal.approved:
        return after_approval(state, events)
    return after_rejection(state, current, events)


def _play_card(state: GameState, action: PlayCard) -> tuple[GameState, tuple[Event, ...]]:
    _require_phase(state, Phase.MISSION)
    current = state.current_round
    assert current is not None and current.team is not None
    if action.seat not in current.team:
        raise IllegalAction(Reason.NOT_ON_TEAM)
    if action.seat in state.played_seats:
        raise IllegalAction(Reason.ALREADY_PLAYED)
    fail = _require_choice(action.fail, "a card")
    if fail and state.role_of(action.seat) is not Role.SPY:
        raise IllegalAction(Reason.RESISTANCE_CANNOT_FAIL, "Resistance members must play Success")
    cards = state.pending_cards + ((action.seat, fail),)
    events: list[Event] = [CardPlayed(seat=action.seat)]
    state = _show_spotlighted(state, action.seat, fail, events)
    if len(cards) < len(current.team):
        return replace(state, pending_cards=cards), tuple(events)
    return after_cards(state, cards, events)


def _fill_cards(state: GameState, action: CardsTimedOut) -> tuple[GameState, tuple[Event, ...]]:
    """Cards not played in time count as Success."""
    _require_phase(state, Phase.MISSION)
    current = state.current_round
    assert current is not None and current.team is not None
    missing = tuple(seat for seat in current.team if seat not in state.played_seats)
    cards = state.pending_cards + tuple((seat, False) for seat in missing)
    events: list[Event] = [CardsFilled(seats=missing)]
    for seat in missing:
        state = _show_spotlighted(state, seat, False, events)
    return after_cards(state, cards, events, filled=missing)


def _show_spotlighted(state: GameState, seat: int, fail: bool, events: list[Event]) -> GameState:
    """The spotlighted member's card is played face up: everyone sees it, and the record has it."""
    plot = state.plot
    if plot is None or plot.spotlight is None or plot.spotlight[1] != seat:
        return state
    by, target = plot.spotlight
    use = PlotUse(UseKind.SPOTLIGHT, proposal_index(state), by=by, target=target, fail=fail)
    events.append(SpotlightCardShown(seat=seat, fail=fail))
    return replace(state, plot=plot.log(round_index(state), use))
