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
    GameOver,
    LeaderChanged,
    MissionCompleted,
    TeamProposed,
    VoteCast,
    VotesFilled,
    VotesRevealed,
)
from engine.state import EndReason, GameState, MissionRound, Phase, Proposal, Role, Side, Variants


def new_game(
    players: int,
    rng: random.Random | None = None,
    variants: Variants | None = None,
    *,
    spies: tuple[int, ...] | None = None,
    first_leader: int | None = None,
) -> GameState:
    """Deal roles and pick the first leader at random (from `rng`), unless they are given."""
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
    return GameState(
        players=players,
        spies=tuple(sorted(spies)),
        variants=variants,
        leader=first_leader,
        phase=Phase.PROPOSING,
    )


def apply(state: GameState, action: Action) -> tuple[GameState, tuple[Event, ...]]:
    if not isinstance(action, PLAYER_ACTIONS + DEADLINE_ACTIONS):
        raise IllegalAction(Reason.UNKNOWN_ACTION, type(action).__name__)
    if state.is_over:
        raise IllegalAction(Reason.GAME_OVER)
    if isinstance(action, PLAYER_ACTIONS) and not _is_seat(action.seat, state.players):
        raise IllegalAction(Reason.NOT_A_PLAYER, f"no seat {action.seat!r}")
    if isinstance(action, ProposeTeam):
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
    return replace(new_state, version=state.version + 1), events


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
    among the missions not yet played."""
    if not state.variants.targeting:
        expected = state.open_missions()[0]
        if requested is not None and requested != expected:
            raise IllegalAction(Reason.MISSION_NOT_ALLOWED, "missions are played in order without Targeting")
        return expected
    if requested is None:
        raise IllegalAction(Reason.MISSION_REQUIRED, "under Targeting the leader chooses the mission")
    if not isinstance(requested, int) or isinstance(requested, bool) or not 1 <= requested <= rules.MISSION_COUNT:
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
    votes = list(state.pending_votes)
    votes[action.seat] = _require_choice(action.approve, "a vote")
    events: list[Event] = [VoteCast(seat=action.seat)]
    if any(v is None for v in votes):
        return replace(state, pending_votes=tuple(votes)), tuple(events)
    return _reveal_votes(state, tuple(bool(v) for v in votes), events)


def _fill_votes(state: GameState, action: VotesTimedOut) -> tuple[GameState, tuple[Event, ...]]:
    _require_phase(state, Phase.VOTING)
    approve = _require_choice(action.approve, "the missing votes' setting")
    missing = tuple(seat for seat, vote in enumerate(state.pending_votes) if vote is None)
    votes = tuple(approve if vote is None else vote for vote in state.pending_votes)
    return _reveal_votes(state, votes, [VotesFilled(seats=missing, approve=approve)], filled=missing)


def _reveal_votes(
    state: GameState, revealed: tuple[bool, ...], events: list[Event], filled: tuple[int, ...] = ()
) -> tuple[GameState, tuple[Event, ...]]:
    current = state.current_round
    assert current is not None
    proposal = replace(current.proposals[-1], votes=revealed, auto_votes=filled)
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
        return replace(state, phase=Phase.MISSION, pending_cards=()), tuple(events)
    return _after_rejection(state, current, events)


def _after_rejection(
    state: GameState, current: MissionRound, events: list[Event]
) -> tuple[GameState, tuple[Event, ...]]:
    if current.rejections >= rules.MAX_PROPOSALS_PER_MISSION:
        return _end(state, Side.SPIES, EndReason.FIVE_REJECTIONS, events)
    leader = state.next_seat(state.leader)
    events.append(LeaderChanged(leader=leader))
    return replace(state, phase=Phase.PROPOSING, leader=leader), tuple(events)


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
    if len(cards) < len(current.team):
        return replace(state, pending_cards=cards), tuple(events)
    return _complete_mission(state, cards, events)


def _fill_cards(state: GameState, action: CardsTimedOut) -> tuple[GameState, tuple[Event, ...]]:
    """Cards not played in time count as Success."""
    _require_phase(state, Phase.MISSION)
    current = state.current_round
    assert current is not None and current.team is not None
    missing = tuple(seat for seat in current.team if seat not in state.played_seats)
    cards = state.pending_cards + tuple((seat, False) for seat in missing)
    return _complete_mission(state, cards, [CardsFilled(seats=missing)], filled=missing)


def _complete_mission(
    state: GameState, cards: tuple[tuple[int, bool], ...], events: list[Event], filled: tuple[int, ...] = ()
) -> tuple[GameState, tuple[Event, ...]]:
    current = state.current_round
    assert current is not None and current.team is not None
    fails = sum(1 for _, is_fail in cards if is_fail)
    current = replace(current, fails=fails, auto_cards=filled)
    state = replace(state, rounds=state.rounds[:-1] + (current,), pending_cards=())
    events.append(
        MissionCompleted(
            mission=current.mission,
            team=current.team,
            fails=fails,
            fails_required=current.fails_required,
            succeeded=bool(current.succeeded),
        )
    )
    if state.successes >= rules.MISSIONS_TO_WIN:
        return _end(state, Side.RESISTANCE, EndReason.THREE_SUCCESSFUL_MISSIONS, events)
    if state.failures >= rules.MISSIONS_TO_WIN:
        return _end(state, Side.SPIES, EndReason.THREE_FAILED_MISSIONS, events)
    leader = state.next_seat(state.leader)
    events.append(LeaderChanged(leader=leader))
    return replace(state, phase=Phase.PROPOSING, leader=leader), tuple(events)


def _end(state: GameState, winner: Side, reason: EndReason, events: list[Event]) -> tuple[GameState, tuple[Event, ...]]:
    events.append(GameOver(winner=winner, reason=reason, spies=state.spies))
    return replace(state, phase=Phase.OVER, winner=winner, end_reason=reason), tuple(events)
