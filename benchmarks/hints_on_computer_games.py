"""How well calibrated the hints are on games among the computer players: the deduction with the
hints' parameters, for every Resistance viewer after every played mission, scored as
`python -m deduction evaluate` scores people's games (calibration slope and clustered test).

    .venv/bin/python benchmarks/hints_on_computer_games.py [--players 5] [--games 200]

The games: every seat a `normal` computer player, deal i from `random.Random(f"botcal:{i}")`.
"""

from __future__ import annotations

import argparse
import random

from agents.beliefs import Deductions
from agents.difficulty import NORMAL
from agents.policy import decide
from agents.sabotage import default_rates
from agents.view import view_of
from deduction.evaluate import predictions, report
from engine import GameRecord, apply, export_record, new_game, parse_record, waiting_for


def computer_games(players: int, games: int) -> list[GameRecord]:
    deductions, rates, records = Deductions(), default_rates(), []
    for i in range(games):
        rng = random.Random(f"botcal:{i}")
        deductions.clear()
        state = new_game(players, rng)
        while not state.is_over:
            seat = waiting_for(state)[0]
            state, _ = apply(state, decide(view_of(state, seat), rng, NORMAL, deductions, rates))
        records.append(parse_record(export_record(state, f"computer-{i}")))
    return records


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--players", type=int, default=5)
    parser.add_argument("--games", type=int, default=200)
    args = parser.parse_args()
    result = report(predictions(computer_games(args.players, args.games), "behaviour", lambda i: None))
    print(f"{args.games} games at {args.players} players: Brier {result['all']['brier']:.4f}")
    print(f"{'':>12} {'slope':>6} {'SE':>6} {'test p':>7}")
    for name, row in result["calibration_goal"]["selections"].items():
        if row["slope"] is not None:
            p = f"{row['p']:.4f}" if row["p"] is not None else "-"
            print(f"{name:>12} {row['slope']:>6.3f} {row['slope_se']:>6.3f} {p:>7}")


if __name__ == "__main__":
    main()
