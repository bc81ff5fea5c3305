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
    TurnTimedOut,
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
        new_state, events = _skip_turn(state, action)
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


def _choose_mission(state: GameState, requested: int | None) -> int:
    current = state.current_round
    if current is not None:
        # Later proposals of a round attempt the mission its first proposal chose.
        if requested is not None and requested != current.mission:
            raise IllegalAction(Reason.MISSION_NOT_ALLOWED, f"this round attempts mission {current.mission}")
        return current.mission
    if not state.variants.targeting:
        if requested is not None and requested != state.open_missions()[0]:
            raise IllegalAction(Reason.MISSION_NOT_ALLOWED, "missions are played in order without Targeting")
        return state.open_missions()[0]
    if requested is None:
        raise IllegalAction(Reason.MISSION_REQUIRED, "under Targeting the leader chooses the mission")
    if not isinstance(requested, int) or isinstance(requested, bool) or not 1 <= requested <= rules.MISSION_COUNT:
        raise IllegalAction(Reason.UNKNOWN_MISSION, f"no mission {requested}")
    if requested in state.attempted_missions:
        raise IllegalAction(Reason.MISSION_ALREADY_ATTEMPTED, f"mission {requested} was attempted already")
    if requested not in state.open_missions():
        raise IllegalAction(Reason.MISSION_5_LOCKED, "mission 5 opens after two successful missions")
    return requested


def _propose(state: GameState, action: ProposeTeam) -> tuple[GameState, tuple[Event, ...]]:
    _require_phase(state, Phase.PROPOSING)
    if action.seat != state.leader:
        raise IllegalAction(Reason.NOT_THE_LEADER, f"seat {state.leader} is the leader")
    mission = _choose_mission(state, action.mission)
    size = rules.team_size(state.players, mission)
    team = tuple(action.team) if isinstance(action.team, tuple | list) else ()
    if any(not _is_seat(s, state.players) for s in team):
        raise IllegalAction(Reason.UNKNOWN_TEAM_MEMBER, "every team member must be a seated player")
    if len(set(team)) != len(team):
        raise IllegalAction(Reason.DUPLICATE_TEAM_MEMBER, "a player holds at most one team card")
    if len(team) != size:
        raise IllegalAction(Reason.WRONG_TEAM_SIZE, f"mission {mission} needs a team of {size}")
    team = tuple(sorted(team))

    current = state.current_round
    if current is None:
        current = MissionRound(
            mission=mission,
            team_size=size,
            fails_required=rules.fails_required(state.players, mission),
        )
        rounds = state.rounds + (current,)
    else:
        rounds = state.rounds
    proposal = Proposal(leader=state.leader, team=team)
    rounds = rounds[:-1] + (replace(rounds[-1], proposals=rounds[-1].proposals + (proposal,)),)
    new_state = replace(
        state,
        rounds=rounds,
        phase=Phase.VOTING,
        pending_votes=(None,) * state.players,
    )
    event = TeamProposed(
        mission=mission,
        proposal_number=len(rounds[-1].proposals),
        leader=state.leader,
        team=team,
    )
    return new_state, (event,)


def _vote(state: GameState, action: CastVote) -> tuple[GameState, tuple[Event, ...]]:
    _require_phase(state, Phase.VOTING)
    if state.pending_votes[action.seat] is not None:
        raise IllegalAction(Reason.ALREADY_VOTED)
    votes = list(state.pending_votes)
    votes[action.seat] = bool(action.approve)
    events: list[Event] = [VoteCast(seat=action.seat)]
    if any(v is None for v in votes):
        return replace(state, pending_votes=tuple(votes)), tuple(events)
    return _reveal_votes(state, tuple(bool(v) for v in votes), events)


def _fill_votes(state: GameState, action: VotesTimedOut) -> tuple[GameState, tuple[Event, ...]]:
    _require_phase(state, Phase.VOTING)
    missing = tuple(seat for seat, vote in enumerate(state.pending_votes) if vote is None)
    votes = tuple(bool(action.approve) if vote is None else vote for vote in state.pending_votes)
    return _reveal_votes(state, votes, [VotesFilled(seats=missing, approve=bool(action.approve))])


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


def _skip_turn(state: GameState, action: LeaderTimedOut) -> tuple[GameState, tuple[Event, ...]]:
    """The leader let the time run out: the turn counts as a rejected proposal.

    The game record has no other way to count it toward the five rejections, so it is kept
    as a proposal of the leader and the next seats clockwise that everyone rejected, marked
    `timed_out` so that nobody's votes or choice are read into it.
    """
    _require_phase(state, Phase.PROPOSING)
    current = state.current_round
    if current is not None:
        mission = current.mission
    elif action.mission is not None and action.mission in state.open_missions():
        mission = action.mission
    else:
        mission = state.open_missions()[0]
    size = rules.team_size(state.players, mission)
    team = tuple(sorted((state.leader + i) % state.players for i in range(size)))
    proposal = Proposal(leader=state.leader, team=team, votes=(False,) * state.players, timed_out=True)
    if current is None:
        current = MissionRound(mission, size, rules.fails_required(state.players, mission), (proposal,))
        rounds = state.rounds + (current,)
    else:
        current = replace(current, proposals=current.proposals + (proposal,))
        rounds = state.rounds[:-1] + (current,)
    state = replace(state, rounds=rounds)
    events: list[Event] = [
        TurnTimedOut(
            mission=mission,
            proposal_number=len(current.proposals),
            leader=proposal.leader,
            rejections=current.rejections,
        )
    ]
    return _after_rejection(state, current, events)


def _play_card(state: GameState, action: PlayCard) -> tuple[GameState, tuple[Event, ...]]:
    _require_phase(state, Phase.MISSION)
    current = state.current_round
    assert current is not None and current.team is not None
    if action.seat not in current.team:
        raise IllegalAction(Reason.NOT_ON_TEAM)
    if action.seat in state.played_seats:
        raise IllegalAction(Reason.ALREADY_PLAYED)
    if action.fail and state.role_of(action.seat) is not Role.SPY:
        raise IllegalAction(Reason.RESISTANCE_CANNOT_FAIL, "Resistance members must play Success")
    cards = state.pending_cards + ((action.seat, bool(action.fail)),)
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
    return _complete_mission(state, cards, [CardsFilled(seats=missing)])


def _complete_mission(
    state: GameState, cards: tuple[tuple[int, bool], ...], events: list[Event]
) -> tuple[GameState, tuple[Event, ...]]:
    current = state.current_round
    assert current is not None and current.team is not None
    fails = sum(1 for _, is_fail in cards if is_fail)
    current = replace(current, fails=fails)
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
