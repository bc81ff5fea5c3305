"""The numbers of The Resistance: how many spies, how big each team, how many Fail cards sink a mission.

Everything here is a table from the rulebook or a one-line function over one.
"""

from __future__ import annotations

MIN_PLAYERS = 5
MAX_PLAYERS = 10
MISSION_COUNT = 5
MISSIONS_TO_WIN = 3
MAX_PROPOSALS_PER_MISSION = 5

SPIES_BY_PLAYER_COUNT: dict[int, int] = {5: 2, 6: 2, 7: 3, 8: 3, 9: 3, 10: 4}

# Team size for missions 1..5, by player count.
TEAM_SIZES: dict[int, tuple[int, int, int, int, int]] = {
    5: (2, 3, 2, 3, 3),
    6: (2, 3, 4, 3, 4),
    7: (2, 3, 3, 4, 4),
    8: (3, 4, 4, 5, 5),
    9: (3, 4, 4, 5, 5),
    10: (3, 4, 4, 5, 5),
}

# With 7 or more players the fourth mission only fails with two Fail cards.
TWO_FAIL_MISSION = 4
TWO_FAIL_MIN_PLAYERS = 7

# Under Targeting the fifth mission opens only after this many successes.
TARGETING_MISSION_5_SUCCESSES = 2


def check_player_count(players: int) -> None:
    if not MIN_PLAYERS <= players <= MAX_PLAYERS:
        raise ValueError(f"The Resistance is played by {MIN_PLAYERS} to {MAX_PLAYERS} players, not {players}")


def spy_count(players: int) -> int:
    check_player_count(players)
    return SPIES_BY_PLAYER_COUNT[players]


def team_size(players: int, mission: int) -> int:
    check_player_count(players)
    if not 1 <= mission <= MISSION_COUNT:
        raise ValueError(f"missions are numbered 1 to {MISSION_COUNT}, not {mission}")
    return TEAM_SIZES[players][mission - 1]


def fails_required(players: int, mission: int) -> int:
    check_player_count(players)
    if mission == TWO_FAIL_MISSION and players >= TWO_FAIL_MIN_PLAYERS:
        return 2
    return 1


def is_approved(votes: tuple[bool, ...] | list[bool]) -> bool:
    """A strict majority of Approve votes approves the team; a tie rejects it."""
    return 2 * sum(votes) > len(votes)
