"""Computer players against each other through the engine (no Telegram): win rates, game
length, and how well calibrated the deduction was on those games, read as the computer players
read a table (`agents.beliefs.computer_reading`: the hints' parameters but for the votes
before any mission).

Each game is played twice from the same deal: once by the computer Resistance, once by a
baseline Resistance that proposes, votes and makes its Plot card choices at random among the
legal ones; the spies are the same computer spies both times.
"""

from __future__ import annotations

import json
import random
import time
from dataclasses import dataclass

import numpy as np

from agents.beliefs import Deductions
from agents.difficulty import NORMAL, Difficulty, difficulty_named
from agents.policy import decide, random_choice
from agents.sabotage import default_rates
from agents.view import RECORD_ID, view_of
from deduction.evaluate import CHECKPOINTS, score
from deduction.knowledge import Viewer
from engine import GameState, Phase, Side, Variants, apply, new_game, record_of, waiting_for

PLAIN = Variants()


@dataclass(frozen=True)
class GameResult:
    winner: Side
    end_reason: str
    missions: int  # missions played
    proposals: int  # teams proposed
    # (missions played at the checkpoint, spy probability, truth) for every Resistance viewer and other seat
    predictions: tuple[tuple[int, float, float], ...] = ()


def play_game(
    players: int,
    rng: random.Random,
    variants: Variants = PLAIN,
    *,
    baseline: bool = False,
    difficulty: Difficulty = NORMAL,
    deductions: Deductions | None = None,
    calibration: bool = True,
) -> GameResult:
    """One game from a new deal drawn from `rng`. `baseline`: the Resistance proposes, votes and
    plays its Plot cards at random. `calibration`: collect the Resistance viewers' hints after every played mission."""
    deductions = deductions if deductions is not None else Deductions()
    deductions.clear()
    rates = default_rates()
    state = new_game(players, rng, variants)
    while not state.is_over:
        seat = waiting_for(state)[0]
        view = view_of(state, seat)
        if baseline and not view.is_spy and state.phase is not Phase.MISSION:
            action = random_choice(view, rng)
        else:
            action = decide(view, rng, difficulty, deductions, rates)
        state, _ = apply(state, action)
    return GameResult(
        winner=state.winner,
        end_reason=state.end_reason.value,
        missions=len(state.played_rounds),
        proposals=sum(len(r.proposals) for r in state.rounds),
        predictions=_predictions(state, deductions) if calibration else (),
    )


def _predictions(state: GameState, deductions: Deductions) -> tuple[tuple[int, float, float], ...]:
    record = record_of(state, RECORD_ID)
    rows = []
    for cut in range(1, len(record.played_missions) + 1):
        snapshot = record.cut_after_mission(cut)
        for viewer in range(state.players):
            if viewer in state.spies:
                continue
            belief = deductions.belief(snapshot, Viewer.resistance(viewer))
            for seat in range(state.players):
                if seat != viewer:
                    rows.append((cut, float(belief.spy_probability[seat]), float(seat in state.spies)))
    return tuple(rows)


def _rounded(value: float, digits: int = 4) -> float:
    return round(float(value), digits)


def summarise(results: list[GameResult]) -> dict:
    games = len(results)
    return {
        "resistance_win_rate": _rounded(sum(r.winner is Side.RESISTANCE for r in results) / games),
        "spy_win_rate": _rounded(sum(r.winner is Side.SPIES for r in results) / games),
        "mean_missions": _rounded(np.mean([r.missions for r in results]), 3),
        "mean_proposals": _rounded(np.mean([r.proposals for r in results]), 3),
        "end_reasons": {
            reason: sum(r.end_reason == reason for r in results) for reason in sorted({r.end_reason for r in results})
        },
    }


def calibration(results: list[GameResult]) -> dict:
    """Brier score and expected calibration error of the Resistance viewers' hints, overall and by
    checkpoint (the record just after mission 1..5 was played)."""
    rows = [row for r in results for row in r.predictions]

    def scores(chosen: list[tuple[int, float, float]]) -> dict:
        s = score(np.array([p for _, p, _ in chosen]), np.array([t for _, _, t in chosen]), with_floor=False)
        return {"predictions": s.predictions, "brier": _rounded(s.brier), "ece": _rounded(s.ece)}

    out = {"all": scores(rows), "by_checkpoint": {}}
    for cut in CHECKPOINTS:
        chosen = [row for row in rows if row[0] == cut]
        if chosen:
            out["by_checkpoint"][str(cut)] = scores(chosen)
    return out


def simulate(
    games: int,
    players: int,
    seed: int,
    variants: Variants = PLAIN,
    difficulty: Difficulty = NORMAL,
    baseline: bool = True,
) -> dict:
    """Play `games` games at `players` (and as many baseline games from the same deals) and report."""
    started = time.perf_counter()
    deductions = Deductions()
    ai = [
        play_game(players, random.Random(f"{seed}:{i}"), variants, difficulty=difficulty, deductions=deductions)
        for i in range(games)
    ]
    ai_seconds = time.perf_counter() - started
    report = {
        "games": games,
        "players": players,
        "seed": seed,
        "variants": {
            "targeting": variants.targeting,
            "blind_spies": variants.blind_spies,
            "plot_cards": variants.plot_cards,
        },
        "difficulty": difficulty.name,
        **summarise(ai),
        "calibration": calibration(ai),
        "seconds": _rounded(ai_seconds, 2),
    }
    if baseline:
        base = [
            play_game(
                players,
                random.Random(f"{seed}:{i}"),
                variants,
                baseline=True,
                difficulty=difficulty,
                deductions=deductions,
                calibration=False,
            )
            for i in range(games)
        ]
        summary = summarise(base)
        report["baseline_resistance_win_rate"] = summary["resistance_win_rate"]
        report["baseline_spy_win_rate"] = summary["spy_win_rate"]
        report["baseline_mean_missions"] = summary["mean_missions"]
        report["baseline_mean_proposals"] = summary["mean_proposals"]
        report["advantage"] = _rounded(report["resistance_win_rate"] - summary["resistance_win_rate"])
        report["seconds"] = _rounded(time.perf_counter() - started, 2)
    return report


def table(report: dict) -> str:
    """The report as a few readable lines."""
    lines = [
        f"{report['games']} games at {report['players']} players (seed {report['seed']}, {report['difficulty']}, "
        f"variants {', '.join(k for k, v in report['variants'].items() if v) or 'none'})",
        f"  resistance wins {report['resistance_win_rate']:.1%}, spies win {report['spy_win_rate']:.1%}",
    ]
    if "baseline_resistance_win_rate" in report:
        lines.append(
            f"  baseline (random Resistance) wins {report['baseline_resistance_win_rate']:.1%} "
            f"(advantage {report['advantage'] * 100:+.1f} points)"
        )
    lines.append(f"  mean missions {report['mean_missions']:.2f}, mean proposals {report['mean_proposals']:.2f}")
    lines.append(f"  end reasons: {', '.join(f'{k} {v}' for k, v in report['end_reasons'].items())}")
    cal = report["calibration"]
    lines.append(
        f"  deduction as the computer players read it: Brier {cal['all']['brier']:.3f}, "
        f"ECE {cal['all']['ece']:.3f} ({cal['all']['predictions']})"
    )
    for cut, s in cal["by_checkpoint"].items():
        lines.append(f"    after mission {cut}: Brier {s['brier']:.3f}, ECE {s['ece']:.3f} ({s['predictions']})")
    lines.append(f"  {report['seconds']:.1f} s")
    return "\n".join(lines)


def main(args) -> int:
    """The `resistance-bot simulate` command: `args` has games, players, seed, difficulty,
    targeting, blind_spies, plot and json."""
    if args.games < 1:
        raise SystemExit("resistance-bot simulate: --games must be at least 1")
    variants = Variants(targeting=args.targeting, blind_spies=args.blind_spies, plot_cards=args.plot)
    if getattr(args, "mixed", None):
        from agents import mixed

        report = mixed.mixed_table(args.games, args.players, args.seed, args.mixed, variants)
        print(mixed.table(report))
        if args.json:
            print(json.dumps(report, sort_keys=True))
        return 0
    report = simulate(args.games, args.players, args.seed, variants, difficulty_named(args.difficulty))
    print(table(report))
    if args.json:
        print(json.dumps(report, sort_keys=True))
    return 0
