"""Command line for the computer players.

python -m agents fit GAMES.jsonl [--roles resistance] [--out FILE]
    fit the spies' sabotage rates on finished games (default out: agents/params/sabotage.json)
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from agents.fit import count, fit
from engine import RecordError, parse_record

PACKAGE_PARAMS = Path(__file__).parent / "params" / "sabotage.json"


def _fit(args: argparse.Namespace) -> int:
    games = []
    with open(args.games, encoding="utf-8") as lines:
        for number, line in enumerate(lines, 1):
            if line.strip():
                try:
                    games.append(parse_record(json.loads(line)))
                except (json.JSONDecodeError, RecordError) as exc:
                    raise SystemExit(f"{args.games}:{number}: {exc}") from None
    roles = tuple(args.roles.split(","))
    params = fit(count(games, roles))
    command = f"python -m agents fit {args.games}" + (f" --roles {args.roles}" if args.roles != "resistance" else "")
    data = {"command": command, "roles": list(roles), **params}
    Path(args.out).write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")
    print(json.dumps(data, indent=2))
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m agents", description="computer players for The Resistance")
    commands = parser.add_subparsers(dest="command", required=True)
    fit_parser = commands.add_parser("fit", help="fit the spies' sabotage rates on finished games")
    fit_parser.add_argument("games", help="JSON Lines of resistance-record/1 games with their outcome")
    fit_parser.add_argument("--roles", default="resistance", help="source roles to use, comma-separated")
    fit_parser.add_argument("--out", default=str(PACKAGE_PARAMS))
    args = parser.parse_args(argv)
    return _fit(args)


if __name__ == "__main__":
    sys.exit(main())
