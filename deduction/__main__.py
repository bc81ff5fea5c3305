"""Command line for the deduction engine.

python -m deduction batch [--model NAME]                 JSON Lines requests on stdin, answers on stdout
python -m deduction explain RECORD.json --viewer SEAT    a readable table of probabilities and reasons
python -m deduction evaluate GAMES.jsonl [--model M] [--folds K]
python -m deduction fit GAMES.jsonl [--out FILE]

A file named - is standard input. A file that cannot be read, or a record that breaks the format,
ends explain, evaluate and fit with one line naming the file (and line) and why; batch answers a
broken request line with {"error": ...} and goes on.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np

from deduction import batch
from deduction.analysis import deduce
from deduction.behaviour import BehaviourParams
from deduction.evaluate import CHECKPOINTS, fitted_on_for, predictions, report, split_of
from deduction.exact import ImpossibleRecord
from deduction.fit import FitSettings, Observations, fit
from deduction.floating_point import spurious_flags_ignored
from deduction.heap import keep_freed_heap
from deduction.knowledge import Viewer
from deduction.models import DEFAULT_MODEL, MODELS
from deduction.reasons import Reason, explain
from deduction.role_sets import is_plain
from engine import GameRecord, RecordError, parse_record
from engine.cli import STDIN, Unreadable, numbered_lines, quiet_when_output_closes, read_bytes, shown_name
from engine.record import NotJSON, read_json

PACKAGE_PARAMS = Path(__file__).parent / "params" / "behaviour.json"


def read_games(path: str) -> list[GameRecord]:
    """The records of a JSON Lines file (`-`: standard input); the first line that is no record, or a
    file that cannot be read, ends the command with one line naming it."""
    games = []
    name = shown_name(path)
    try:
        for number, line in numbered_lines(path):
            if line.strip():
                try:
                    # Read as strictly as a batch request: a name given twice, or NaN, is no record.
                    games.append(parse_record(read_json(line)))
                except (json.JSONDecodeError, RecordError, NotJSON) as exc:
                    raise SystemExit(f"{name}:{number}: {exc}") from None
    except Unreadable as exc:
        raise SystemExit(str(exc)) from None
    return games


def _batch(args: argparse.Namespace) -> int:
    # Bytes, split at line feeds only: each line is decoded on its own, so one that is not UTF-8
    # is answered with an error like any other broken line.
    try:
        for out in batch.run((line for _, line in numbered_lines(STDIN)), args.model):
            sys.stdout.write(out + "\n")
            sys.stdout.flush()
    except Unreadable as exc:  # no standard input at all, or one that fails to read
        print(f"error: {exc}", file=sys.stderr)
        return 1
    return 0


def english(reason: Reason) -> str:
    a = reason.args

    def seats(values: list[int]) -> str:
        return ", ".join(f"seat {s}" for s in values)

    def signed(points: int) -> str:
        return f"{points:+d} points"

    def vote_fact() -> str:
        facts = {
            "approved_failed": "approved {n} team(s) that then failed",
            "rejected_succeeded": "rejected {n} team(s) that then succeeded",
            "rejected_failed": "rejected {n} team(s) that then failed",
            "approved_succeeded": "approved {n} team(s) that then succeeded",
            "cast": "cast {n} vote(s)",
        }
        if a["fact"] == "vote_on":
            side = "for" if a["approved"] else "against"
            return f"voted most tellingly {side} proposal {a['proposal']} of mission {a['mission']}"
        return facts[a["fact"]].format(n=a["count"])

    def proposal_fact() -> str:
        facts = {
            "led_failed": "led {n} team(s) that then failed",
            "led_succeeded": "led {n} team(s) that then succeeded",
            "proposed": "proposed {n} team(s)",
        }
        return facts[a["fact"]].format(n=a["count"])

    texts = {
        "certain_spy": lambda: f"Seat {a.get('seat')} is certainly a spy.",
        "certain_resistance": lambda: f"Seat {a.get('seat')} is certainly in the Resistance.",
        "assignments_remaining": lambda: f"Only {a.get('count')} ways to seat the spies remain.",
        "mission_fails": lambda: (
            f"Mission {a.get('mission')} ({seats(a.get('seats', []))}) had "
            f"{a.get('at_least')} Fail card(s): at least {a.get('at_least')} of them "
            f"{'is a spy' if a.get('at_least') == 1 else 'are spies'}."
        ),
        "mission_result": lambda: (
            f"{signed(a['points'])}: mission {a['mission']} {'succeeded' if a['succeeded'] else 'failed'} "
            f"({a['fails']} Fail card(s)) with seat {a['seat']} {'on' if a['on_team'] else 'off'} the team."
        ),
        "votes": lambda: f"{signed(a['points'])}: the votes of seat {a['voter']}, who {vote_fact()}.",
        "proposals": lambda: f"{signed(a['points'])}: the teams of seat {a['leader']}, who {proposal_fact()}.",
        "off_failed_teams": lambda: (
            f"{signed(a['points'])}: seat {a['seat']} was on none of the teams of missions "
            f"{', '.join(map(str, a['missions']))}, whose Fail cards point at those on them."
        ),
        "small_effects": lambda: (
            f"{signed(a['points'])}: {a['count']} votes, teams and missions, each moving seat {a['seat']} "
            "by under 3 points."
        ),
    }
    return texts[reason.code]()


def _read_record(path: str) -> GameRecord:
    """The one record a file (`-`: standard input) holds, read as strictly as a batch request."""
    try:
        return parse_record(read_json(read_bytes(path), what="file"))
    except json.JSONDecodeError as exc:
        raise Unreadable(f"{shown_name(path)}: not JSON: {exc}") from None
    except (NotJSON, RecordError) as exc:
        raise Unreadable(f"{shown_name(path)}: {exc}") from None


def _explain(args: argparse.Namespace) -> int:
    try:
        record = _read_record(args.record)
        if args.viewer is None:
            viewer = Viewer.outsider()
        elif args.known_spies:
            viewer = Viewer.spy(args.viewer, tuple(int(s) for s in args.known_spies.split(",")))
        else:
            viewer = Viewer.resistance(args.viewer)
        result = deduce(record, viewer, args.model)
    except (Unreadable, ImpossibleRecord, ValueError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    who = "an outsider" if viewer.seat is None else f"seat {viewer.seat}" + (" (a spy)" if viewer.is_spy else "")
    print(f"{record.players} players, {record.spies} spies; seen by {who}; model: {args.model}")
    print(f"{result.consistent} spy assignments fit the record; {result.possible} fit what this viewer knows.\n")
    # Each seat's reasons under it: its exact fact, then the evidence that moved it most (signed
    # points: what removing that evidence alone would take back).
    explanation = explain(record, result)
    order = sorted(range(record.players), key=lambda s: -result.spy_probability[s])
    for seat in order:
        if seat == viewer.seat:
            continue
        p = result.spy_probability[seat]
        bar = "▰" * round(p * 10) + "▱" * (10 - round(p * 10))
        print(f"  seat {seat:>2}  {bar} {p:6.1%}")
        for reason in explanation.seats[seat]:
            print(f"            - {english(reason)}")
    if explanation.table:
        print("\nAlso:")
        for reason in explanation.table:
            print(f"  - {english(reason)}")
    return 0


def _fit_settings(args: argparse.Namespace) -> FitSettings:
    return FitSettings(
        vote_exponent=args.vote_exponent,
        opening_vote_exponent=args.opening_vote_exponent,
        proposal_exponent=args.proposal_exponent,
        avalon_vote_exponent=args.avalon_vote_exponent,
        avalon_opening_vote_exponent=args.avalon_opening_vote_exponent,
        avalon_proposal_exponent=args.avalon_proposal_exponent,
    )


def _given_params(path: str) -> BehaviourParams:
    try:
        return BehaviourParams.load(Path(path))
    except (OSError, ValueError, KeyError, TypeError) as error:
        raise SystemExit(f"--params {path}: {error}") from None


def _evaluate(args: argparse.Namespace) -> int:
    games = read_games(args.games)
    if args.folds and args.holdout:
        raise SystemExit("choose --folds or --holdout, not both")
    scored = [
        i
        for i, g in enumerate(games)
        if g.outcome is not None
        and (args.roles == "any" or is_plain(g))
        and (not args.holdout or split_of(g.id) == args.holdout)
    ]
    if not scored:
        raise SystemExit("no finished games to score")
    started = time.perf_counter()
    if args.holdout:
        fitted_on = fitted_on_for(args.holdout)
        training = [g for g in games if g.outcome is not None and split_of(g.id) in fitted_on]
        held_out_params = fit(Observations.from_games(training), _fit_settings(args))
        params_by_game = [held_out_params] * len(scored)
    elif args.folds:
        finished = [i for i, g in enumerate(games) if g.outcome is not None]
        observations = Observations.from_games([games[i] for i in finished])
        fold_of = {game: j % args.folds for j, game in enumerate(scored)}
        fold_params = [
            fit(
                observations,
                _fit_settings(args),
                np.array([row for row, game in enumerate(finished) if fold_of.get(game) != k]),
            )
            for k in range(args.folds)
        ]
        params_by_game = [fold_params[fold_of[game]] for game in scored]
    else:
        shipped_or_given = _given_params(args.params) if args.params else None
        params_by_game = [shipped_or_given] * len(scored)
    collected = predictions([games[i] for i in scored], args.model, params_by_game.__getitem__)
    result = report(collected)
    result["games"] = len(scored)
    result["model"] = args.model
    result["folds"] = args.folds
    result["holdout"] = args.holdout
    result["seconds"] = round(time.perf_counter() - started, 1)
    if args.json:
        print(json.dumps(result))
        return 0
    if args.holdout:
        fitted = " + ".join(fitted_on_for(args.holdout))
        print(f"model {args.model}, {len(scored)} {args.holdout} games, fitted on the {fitted} part of the fixed split")
    else:
        print(f"model {args.model}, {len(scored)} games, folds: {args.folds or 'none (fitted parameters as shipped)'}")
    goal = result["goal"]
    print(
        f"{'':>12} {'predictions':>11} {'Brier':>7} {'log loss':>8} {'ECE':>6} {'calibrated model ECE':>20}"
        f" {'... at most ' + str(goal['ece']):>16}"
    )
    rows = [("all", result["all"]), ("end of game", result["end"])]
    rows += [(f"after {c}", result["by_checkpoint"][str(c)]) for c in CHECKPOINTS if str(c) in result["by_checkpoint"]]
    for players, both in result["by_players"].items():
        rows += [(f"{players}p all", both["all"]), (f"{players}p end", both["end"])]
    for name, s in rows:
        print(
            f"{name:>12} {s['predictions']:>11} {s['brier']:>7.4f} {s['log_loss']:>8.4f} {s['ece']:>6.4f}"
            f" {s['ece_floor']:>20.4f} {s['calibrated_meets_goal']:>16.1%}"
        )
    print(
        "\nby player count and checkpoint (after mission 1..5, end of game): Brier / log loss / ECE"
        " / a perfectly calibrated model's ECE on the same predictions (predictions)"
    )
    columns = [*(str(c) for c in CHECKPOINTS), "end"]
    print(f"{'':>6} " + " ".join(f"{('after ' + c) if c != 'end' else 'end':>33}" for c in columns))
    tables = [("all", result["by_checkpoint"])]
    tables += [(f"{n}p", both["by_checkpoint"]) for n, both in result["by_players"].items()]
    for name, table in tables:
        cells = []
        for c in columns:
            s = table.get(c)
            if s and s["predictions"]:
                cells.append(
                    f"{s['brier']:.4f} {s['log_loss']:.4f} {s['ece']:.4f} {s['ece_floor']:.4f} ({s['predictions']:>4})"
                )
            else:
                cells.append("")
        print(f"{name:>6} " + " ".join(f"{cell:>33}" for cell in cells))
    print("\ncalibration tested with the games as clusters (bins, largest bin |z|, chi-squared, p):")
    for name, test in result["calibration_test"].items():
        if test["bins"]:
            print(f"{name:>12} {test['bins']:>4} {test['largest_z']:>5.1f} {test['chi2']:>6.1f} {test['p']:>6.3f}")
    target = result["calibration_goal"]
    print(
        f"\ncalibration goal: the test finds nothing at p >= {target['alpha']} and the slope is within 3 SE of 1"
        f" (and within {target['slope_band'][0]}-{target['slope_band'][1]} overall and at the end):"
        f" {'met' if target['met'] else 'not met'}"
    )
    print(f"{'':>12} {'bins':>4} {'p':>7} {'slope':>6} {'SE':>6} {'games':>6}")
    for name, row in target["selections"].items():
        p_shown = f"{row['p']:.4f}" if row["p"] is not None else "-"
        slope, se = (f"{row[k]:.3f}" if row[k] is not None else "-" for k in ("slope", "slope_se"))
        print(
            f"{name:>12} {row['bins']:>4} {p_shown:>7} {slope:>6} {se:>6}"
            f" {row['games']:>6} {'ok' if row['meets'] else 'MISSED'}"
        )
    counted = ", ".join(map(str, goal["player_counts"])) or "none"
    print(
        f"\na perfectly calibrated model shows an ECE of at most {goal['ece']} after every mission and at the end"
        f" in {goal['calibrated_meets_every_checkpoint']:.1%} of draws, and at every player count with enough"
        f" games ({counted}) as well in {goal['calibrated_meets_everywhere']:.1%}"
    )
    print(f"({result['seconds']} s)")
    return 0


def _fit(args: argparse.Namespace) -> int:
    games = [g for g in read_games(args.games) if g.outcome is not None]
    params = fit(Observations.from_games(games), _fit_settings(args))
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    params.save(out)
    print(f"fitted on {len(games)} games ({sum(map(is_plain, games))} plain); wrote {out}")
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m deduction", description="Who could the spies be?")
    commands = parser.add_subparsers(dest="command", required=True)

    b = commands.add_parser("batch", help="answer JSON Lines requests from standard input")
    b.add_argument("--model", choices=MODELS, default=DEFAULT_MODEL)
    b.set_defaults(run=_batch)

    e = commands.add_parser("explain", help="a readable table of probabilities and reasons")
    e.add_argument("record", help="a file holding one resistance-record/1 JSON object (- for standard input)")
    e.add_argument("--viewer", type=int, default=None, help="the asking seat (omit for an outsider)")
    e.add_argument("--known-spies", default=None, help="for a spy viewer: every spy seat, comma-separated")
    e.add_argument("--model", choices=MODELS, default=DEFAULT_MODEL)
    e.set_defaults(run=_explain)

    defaults = FitSettings()
    for name, help_text, run in (
        ("evaluate", "score a model on finished games", _evaluate),
        ("fit", "fit the behaviour model's parameters", _fit),
    ):
        c = commands.add_parser(name, help=help_text)
        c.add_argument("games", help="resistance-record/1 JSON Lines with outcomes (- for standard input)")
        c.add_argument("--vote-exponent", type=float, default=defaults.vote_exponent)
        c.add_argument(
            "--opening-vote-exponent",
            type=float,
            default=defaults.opening_vote_exponent,
            help="for the votes before any mission was played",
        )
        c.add_argument("--proposal-exponent", type=float, default=defaults.proposal_exponent)
        for flag, default in (
            ("--avalon-vote-exponent", defaults.avalon_vote_exponent),
            ("--avalon-opening-vote-exponent", defaults.avalon_opening_vote_exponent),
            ("--avalon-proposal-exponent", defaults.avalon_proposal_exponent),
        ):
            c.add_argument(flag, type=float, default=default, help="the same, for games played with Avalon's roles")
        c.set_defaults(run=run)
        if name == "evaluate":
            c.add_argument("--model", choices=MODELS, default=DEFAULT_MODEL)
            c.add_argument("--folds", type=int, default=0, help="fit on all but each fold, score that fold")
            c.add_argument(
                "--holdout",
                choices=("validation", "test"),
                default=None,
                help="score one part of the fixed split by game id (a fifth each), fitted on the training"
                " part (and the validation part, for test): choose models on validation, report test once",
            )
            c.add_argument(
                "--roles",
                choices=("resistance", "any"),
                default="resistance",
                help="score plain Resistance games only (default) or every game",
            )
            c.add_argument("--params", default=None, help="a parameter file (default: the one shipped)")
            c.add_argument("--json", action="store_true", help="print the report as JSON")
        else:
            c.add_argument("--out", default=str(PACKAGE_PARAMS))
    args = parser.parse_args(argv)
    keep_freed_heap()
    with spurious_flags_ignored():
        return quiet_when_output_closes(lambda: args.run(args))


if __name__ == "__main__":
    sys.exit(main())
