"""Start-up settings: a mistake is one clear line and exit code 2, never a traceback."""

from __future__ import annotations

import asyncio
import logging
import subprocess
import sys

import pytest

from tests.servers import free_port
from tgbot.__main__ import OneLineFormatter, secrets_of
from tgbot.config import ConfigError, load_settings
from tgbot.offline.fake_server import FakeTelegramServer
from tgbot.offline.fake_telegram import FakeTelegram

TOKEN = "123456:ABCDEFGHIJKLMNOPQRSTUVWXYZ012345678"


def test_a_complete_environment_is_read():
    settings = load_settings(
        {
            "TELEGRAM_BOT_TOKEN": TOKEN,
            "REDIS_URL": "redis://127.0.0.1:6379/0",
            "TELEGRAM_API_BASE_URL": "http://127.0.0.1:8081/bot/",
            "LOG_LEVEL": "debug",
        }
    )
    assert settings.token == TOKEN and settings.redis_url == "redis://127.0.0.1:6379/0"
    assert settings.api_base_url == "http://127.0.0.1:8081/bot"
    assert settings.api_base_file_url == "http://127.0.0.1:8081/file/bot"
    assert settings.log_level == "DEBUG"


def test_defaults_without_redis_or_base_url():
    settings = load_settings({"TELEGRAM_BOT_TOKEN": TOKEN})
    assert (settings.redis_url, settings.api_base_url, settings.log_level) == (None, None, "INFO")


@pytest.mark.parametrize(
    "url",
    [
        "redis+cluster://10.0.0.1:7000",
        "redis+cluster://10.0.0.1:7000,10.0.0.2:7001,redis-3:7002",
        "rediss+cluster://bot:secret@10.0.0.1:7000,10.0.0.2:7001/0?ssl_cert_reqs=none",
    ],
)
def test_a_redis_cluster_url_is_accepted(url):
    assert load_settings({"TELEGRAM_BOT_TOKEN": TOKEN, "REDIS_URL": url}).redis_url == url


@pytest.mark.parametrize(
    ("url", "says"),
    [
        ("redis+cluster://", "no host"),
        ("redis+cluster://10.0.0.1:7000,", "no host"),
        ("redis+cluster://10.0.0.1:port", "no valid port"),
        ("redis+cluster://10.0.0.1:7000/2", "database 0 only"),
        ("cluster://10.0.0.1:7000", r"redis\+cluster://"),
    ],
)
def test_a_bad_redis_cluster_url_is_explained(url, says):
    with pytest.raises(ConfigError, match=f"REDIS_URL.*{says}"):
        load_settings({"TELEGRAM_BOT_TOKEN": TOKEN, "REDIS_URL": url})


@pytest.mark.parametrize(
    ("env", "named"),
    [
        ({}, "TELEGRAM_BOT_TOKEN"),
        ({"TELEGRAM_BOT_TOKEN": "not-a-token"}, "TELEGRAM_BOT_TOKEN"),
        ({"TELEGRAM_BOT_TOKEN": TOKEN, "REDIS_URL": "http://localhost"}, "REDIS_URL"),
        ({"TELEGRAM_BOT_TOKEN": TOKEN, "TELEGRAM_API_BASE_URL": "ftp://x/bot"}, "TELEGRAM_API_BASE_URL"),
        ({"TELEGRAM_BOT_TOKEN": TOKEN, "TELEGRAM_API_BASE_URL": "http://x:8081/api"}, "TELEGRAM_API_BASE_URL"),
        ({"TELEGRAM_BOT_TOKEN": TOKEN, "LOG_LEVEL": "LOUD"}, "LOG_LEVEL"),
    ],
)
def test_a_bad_setting_is_named(env, named):
    with pytest.raises(ConfigError, match=named):
        load_settings(env)


def test_the_command_stops_with_one_line_and_no_traceback():
    done = subprocess.run(
        [sys.executable, "-m", "tgbot"], capture_output=True, text=True, env={"PATH": "/usr/bin:/bin"}, timeout=60
    )
    assert done.returncode == 2
    assert done.stderr.strip().splitlines() == [
        "resistance-bot: TELEGRAM_BOT_TOKEN is not set: get a token from @BotFather and export it"
    ]
    assert "Traceback" not in done.stderr and done.stdout == ""


async def run_the_bot(env: dict[str, str]) -> tuple[int, str]:
    """`resistance-bot` with only `env` (and PATH) set, until it exits: (exit code, all it printed)."""
    bot = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "tgbot",
        env={"PATH": "/usr/bin:/bin", **env},
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.STDOUT,
    )
    printed, _ = await asyncio.wait_for(bot.communicate(), timeout=60)
    return bot.returncode, printed.decode()


async def test_a_token_telegram_refuses_ends_in_one_line_and_is_never_printed():
    async with FakeTelegramServer(FakeTelegram(token="1000:FAKE")) as telegram:
        code, printed = await run_the_bot({"TELEGRAM_BOT_TOKEN": TOKEN, "TELEGRAM_API_BASE_URL": telegram.base_url})
    assert code == 2
    assert printed.splitlines()[-1] == (
        "resistance-bot: Telegram refused TELEGRAM_BOT_TOKEN: copy it again from @BotFather (/mybots, API Token)"
    )
    # python-telegram-bot quotes a rejected token in its own error; the log shows it masked.
    assert TOKEN not in printed and "ABCDEFGHIJ" not in printed
    assert "<TELEGRAM_BOT_TOKEN>" in printed
    assert not any(line.startswith("Traceback") for line in printed.splitlines())


async def test_a_telegram_that_cannot_be_reached_ends_in_one_line():
    unreachable = f"http://127.0.0.1:{free_port()}/bot"
    code, printed = await run_the_bot({"TELEGRAM_BOT_TOKEN": TOKEN, "TELEGRAM_API_BASE_URL": unreachable})
    assert code == 1
    last = printed.splitlines()[-1]
    assert last.startswith("resistance-bot: could not reach Telegram (") and last.endswith("): check the network")
    assert TOKEN not in printed and not any(line.startswith("Traceback") for line in printed.splitlines())


def test_log_lines_show_neither_the_token_nor_the_webhook_secret():
    secret = "s3cret-of-the-webhook-x"
    settings = load_settings(
        {"TELEGRAM_BOT_TOKEN": TOKEN, "BOT_MODE": "webhook", "WEBHOOK_URL": "https://bot.example/hook"}
        | {"WEBHOOK_SECRET": secret}
    )
    formatter = OneLineFormatter("%(levelname)s %(message)s", secrets_of(settings))
    record = logging.LogRecord(
        "telegram.Bot", logging.DEBUG, __file__, 1, "POST https://api.telegram.org/bot%s/setWebhook %s", None, None
    )
    record.args = (TOKEN, {"url": "https://bot.example/hook", "secret_token": secret})
    line = formatter.format(record)
    assert TOKEN not in line and secret not in line
    assert "bot<TELEGRAM_BOT_TOKEN>/setWebhook" in line and "'secret_token': '<WEBHOOK_SECRET>'" in line


def test_the_offline_demo_plays_a_whole_game():
    """Two simulated people and three computer players; one person's /hints after every mission."""
    done = subprocess.run(
        [sys.executable, "-m", "tgbot", "demo", "--players", "5", "--seed", "2"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    group = done.stdout.split("'s /hints after mission")[0]
    assert "🏁" in group and "Spies:" in group and "Resistance:" in group
    assert group.count("🤖 Ada") and group.count("🤖 Alan") and group.count("🤖 Grace")
    assert done.stdout.count("'s private chat") == 2
    track = next(line for line in group.split("🏁")[1].splitlines() if line.startswith("Missions:"))
    played = track.count("✅") + track.count("❌")
    # After every mission but the last, the asker's hints: a bar per other player.
    assert done.stdout.count("'s /hints after mission") == played - 1
    hints = done.stdout.split("'s private chat")[0]
    assert hints.count("how likely each other player is to be a spy") == played - 1
    assert "you are a spy" not in group.lower()
    # The group reads as it happened: the lobby as posted, each seat taken, the lobby's edits where
    # they came (the last one closing it) and the start after that; the end after the last result.
    lobby = "a new game is open."
    closed = "[✏️ edited «🕵️ The Resistance: a new game is open.»]\n🕵️ This lobby is closed: the game has started."
    assert group.index("/newgame") < group.index(lobby) < group.index("takes a seat")
    assert group.rindex("takes a seat") < group.index(closed) < group.index("the game has started with")
    assert group.index("🏁") > group.rindex("Mission 1 ")
    # A board is shown when posted, asking for votes, and again where its votes were revealed.
    asking = group.index("Everyone votes: approve this team or reject it?")
    assert asking < group.index("[✏️ edited «Missions:", asking) < group.index("Rejected teams", asking + 1)


def test_the_offline_demo_plays_a_plot_game():
    done = subprocess.run(
        [sys.executable, "-m", "tgbot", "demo", "--players", "7", "--seed", "1", "--plot"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    group = done.stdout.split("'s /hints after mission")[0]
    assert "🏁" in group and "🃏" in group and "gave" in group
    assert done.stdout.count("'s private chat") == 2 and "🤖 Ada" in group
    assert "you saw" not in group and "you watched" not in group
