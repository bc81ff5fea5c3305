"""Run the bot, or watch a whole game offline.

resistance-bot                       run the bot: long polling, or a webhook with BOT_MODE=webhook
                                     (TELEGRAM_BOT_TOKEN, REDIS_URL, ...)
resistance-bot demo --players 7 --seed 1 [--people 2] [--targeting] [--blind-spies] [--plot]
                                     a game of simulated people and computer players through
                                     the same stack, with no token and no network
resistance-bot simulate --games 300 --players 7 --seed 1 [--json] [--plot]
                                     computer players against each other (no Telegram)
resistance-bot stats rebuild         work every group's stats and ratings out again from its
                                     stored games (REDIS_URL; no token needed)
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import random
import sys

from redis.asyncio import Redis
from telegram.error import InvalidToken, NetworkError

from deduction.floating_point import spurious_flags_ignored
from deduction.heap import keep_freed_heap
from engine.cli import quiet_when_output_closes
from tgbot.app import ALLOWED_UPDATES, build_application
from tgbot.config import ConfigError, Settings, load_settings
from tgbot.redis_client import connect

log = logging.getLogger("tgbot")


def connect_redis(settings: Settings) -> Redis:
    if settings.redis_url:
        return connect(settings.redis_url)
    import fakeredis

    log.warning("REDIS_URL is not set: using an in-process Redis; games will not survive a restart")
    return fakeredis.FakeAsyncRedis(decode_responses=True)


class OneLineFormatter(logging.Formatter):
    """One event, one line: a traceback is folded onto its log line so log collectors keep it whole.
    The bot token and the webhook's secret never reach the log, not even in a library's message
    (python-telegram-bot quotes a rejected token in full, and at DEBUG every request's parameters)."""

    def __init__(self, fmt: str, secrets: dict[str, str] | None = None) -> None:
        super().__init__(fmt)
        self.secrets = secrets or {}

    def format(self, record: logging.LogRecord) -> str:
        return masked(super().format(record), self.secrets).replace("\n", " | ")


def secrets_of(settings: Settings) -> dict[str, str]:
    """Each secret setting's value, by the name that stands in for it where it would be shown."""
    secrets = {"TELEGRAM_BOT_TOKEN": settings.token}
    if settings.webhook is not None:
        secrets["WEBHOOK_SECRET"] = settings.webhook.secret
    return secrets


def masked(text: str, secrets: dict[str, str]) -> str:
    for name, value in secrets.items():
        if value:
            text = text.replace(value, f"<{name}>")
    return text


def configure_logging(level: str, secrets: dict[str, str] | None = None) -> None:
    handler = logging.StreamHandler()
    handler.setFormatter(OneLineFormatter("%(asctime)s %(levelname)s %(name)s: %(message)s", secrets))
    logging.basicConfig(level=level, handlers=[handler])
    # Request URLs carry the bot token; keep the HTTP client's own lines out of INFO.
    logging.getLogger("httpx").setLevel(logging.WARNING)
    # python-telegram-bot's debug lines show every request's parameters and every update: roles, card
    # prompts, card presses. Even at DEBUG, its lines below INFO stay out.
    logging.getLogger("telegram").setLevel(max(logging.INFO, logging.getLevelNamesMapping()[level]))
    logging.getLogger("apscheduler").setLevel(logging.WARNING)


def run() -> int:
    try:
        settings = load_settings()
    except ConfigError as error:
        print(f"resistance-bot: {error}", file=sys.stderr)
        return 2
    configure_logging(settings.log_level, secrets_of(settings))
    redis = connect_redis(settings)
    application = build_application(settings, redis)
    try:
        if settings.webhook is not None:
            from tgbot import webhook

            asyncio.run(webhook.serve(application, settings.webhook, redis))
        else:
            application.run_polling(allowed_updates=ALLOWED_UPDATES)
    except InvalidToken:
        print(
            "resistance-bot: Telegram refused TELEGRAM_BOT_TOKEN: copy it again from @BotFather (/mybots, API Token)",
            file=sys.stderr,
        )
        return 2
    except NetworkError as error:
        # Only at start: once running, python-telegram-bot retries lost connections itself.
        reason = masked(str(error), secrets_of(settings))
        print(f"resistance-bot: could not reach Telegram ({reason}): check the network", file=sys.stderr)
        return 1
    return 0


async def demo(players: int, people: int, seed: int | None, targeting: bool, blind_spies: bool, plot: bool) -> int:
    """`people` simulated people (who decide as computer players do) and computer players in the
    other seats play a whole game; one person (a Resistance member if any of them is one) asks for /hints
    after every mission but the last.
    With `plot`, the simulated people choose at random among what their Plot keyboards offer."""
    import fakeredis

    from engine import Role, Variants, seat_view
    from tgbot.offline.fake_telegram import FakeTelegram
    from tgbot.offline.harness import start_offline_bot
    from tgbot.offline.simulation import ComputerPolicy, SimulatedGroup, plain_text

    rng = random.Random(seed)
    telegram = FakeTelegram()
    application = await start_offline_bot(
        telegram, fakeredis.FakeAsyncRedis(decode_responses=True), rng.getrandbits(64)
    )
    hints: list[tuple[int, str]] = []  # (missions played, the hints as the asker read them)
    try:
        group = SimulatedGroup(telegram, application, players=people)
        await group.open_lobby_and_join(
            variants=Variants(targeting=targeting, blind_spies=blind_spies, plot_cards=plot)
        )
        await group.add_computers(players - people)
        await group.start()
        table = await group.table()
        # The person who asks: a Resistance member if there is one (a spy sees how the table sees them).
        asker = next(
            (u for u in group.user_ids if seat_view(table.game, table.seat_of(u)).role is Role.RESISTANCE),
            group.user_ids[0],
        )
        policy = ComputerPolicy(rng=rng)
        played = 0
        while await group.step(policy):
            table = await group.table()
            now_played = len(table.game.played_rounds)
            if now_played > played and not table.game.is_over:
                played = now_played
                await group.send(telegram.command(asker, asker, "/hints"))
                hints.append((played, plain_text(telegram.messages(asker)[-1].text or "")))
    finally:
        await application.shutdown()

    print("=" * 30, "the group", "=" * 30)
    for text in group.timeline(group.chat_id):
        print(text, end="\n\n")
    for played, text in hints:
        print("=" * 30, f"{group.name_of(asker)}'s /hints after mission {played}", "=" * 30)
        print(text, end="\n\n")
    for user_id in group.user_ids:
        print("=" * 30, f"{group.name_of(user_id)}'s private chat", "=" * 30)
        for text in group.timeline(user_id):
            print(text, end="\n\n")
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="resistance-bot", description="The Resistance for Telegram groups")
    commands = parser.add_subparsers(dest="command")
    commands.add_parser("run", help="run the bot (the default): long polling, or a webhook with BOT_MODE=webhook")
    demo_parser = commands.add_parser("demo", help="play a game offline with computer players and print it")
    demo_parser.add_argument("--players", type=int, default=7, choices=range(5, 11), metavar="5-10")
    demo_parser.add_argument(
        "--people", type=int, default=2, choices=range(2, 11), metavar="2-10", help="simulated people among them"
    )
    demo_parser.add_argument("--seed", type=int, default=None)
    demo_parser.add_argument("--targeting", action="store_true")
    demo_parser.add_argument("--blind-spies", action="store_true")
    demo_parser.add_argument("--plot", action="store_true", help="with the Plot cards of The Plot Thickens")
    simulate_parser = commands.add_parser("simulate", help="computer players against each other, win rates")
    simulate_parser.add_argument("--games", type=int, default=300)
    simulate_parser.add_argument("--players", type=int, default=7, choices=range(5, 11), metavar="5-10")
    simulate_parser.add_argument("--seed", type=int, default=0)
    simulate_parser.add_argument("--difficulty", choices=("easy", "normal"), default="normal")
    simulate_parser.add_argument("--targeting", action="store_true")
    simulate_parser.add_argument("--blind-spies", action="store_true")
    simulate_parser.add_argument("--plot", action="store_true", help="with the Plot cards of The Plot Thickens")
    simulate_parser.add_argument("--json", action="store_true", help="end with the report as one JSON line")
    simulate_parser.add_argument(
        "--mixed",
        choices=("easy", "random"),
        help="one computer player (normal) at a seat, this policy at every other: its win rates beside them",
    )
    stats_parser = commands.add_parser("stats", help="the groups' stats and ratings")
    stats_commands = stats_parser.add_subparsers(dest="stats_command", required=True)
    stats_commands.add_parser("rebuild", help="work every group's stats and ratings out again from its stored games")
    args = parser.parse_args(argv)
    keep_freed_heap()  # hints and computer players build and free numpy arrays all the time
    with spurious_flags_ignored():
        return _command(args, parser)


def _command(args: argparse.Namespace, parser: argparse.ArgumentParser) -> int:
    if args.command == "simulate":
        from agents.simulate import main as simulate

        return quiet_when_output_closes(lambda: simulate(args))
    if args.command == "demo":
        if args.people > args.players:
            parser.error("--people cannot exceed --players")
        return quiet_when_output_closes(
            lambda: asyncio.run(demo(args.players, args.people, args.seed, args.targeting, args.blind_spies, args.plot))
        )
    if args.command == "stats":
        return asyncio.run(rebuild_stats())
    return run()


async def rebuild_stats() -> int:
    """`resistance-bot stats rebuild`: every group's counts and ratings, from its stored games."""
    import os

    from tgbot.config import check_redis_url
    from tgbot.memory_store import GroupMemory

    url = os.environ.get("REDIS_URL", "").strip()
    if not url:
        print("resistance-bot: set REDIS_URL to the Redis the bot keeps its games in", file=sys.stderr)
        return 2
    try:
        check_redis_url(url)
    except ConfigError as error:
        print(f"resistance-bot: {error}", file=sys.stderr)
        return 2
    redis = connect(url)
    try:
        groups, games = await GroupMemory(redis).rebuild()
    finally:
        await redis.aclose()
    print(f"rebuilt the stats and ratings of {groups} groups from {games} stored games")
    return 0


if __name__ == "__main__":
    sys.exit(main())
