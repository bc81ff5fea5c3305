"""Settings from the environment, checked at start so a mistake costs one clear line, not a traceback."""

from __future__ import annotations

import logging
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass
from urllib.parse import urlparse

from tgbot.cluster_url import is_cluster_url, parse_cluster_url

_TOKEN = re.compile(r"\d+:[A-Za-z0-9_-]{20,}")
# Telegram accepts 1-256 characters of A-Z, a-z, 0-9, _ and - as a webhook's secret token.
_SECRET = re.compile(r"[A-Za-z0-9_-]{16,256}")


class ConfigError(ValueError):
    """A missing or malformed setting; the message names it and says what is expected."""


@dataclass(frozen=True)
class Webhook:
    url: str  # the public HTTPS address Telegram posts updates to
    listen: str  # the address this worker listens on
    port: int
    secret: str  # every request must carry it in X-Telegram-Bot-Api-Secret-Token

    @property
    def path(self) -> str:
        return urlparse(self.url).path or "/"


@dataclass(frozen=True)
class Settings:
    token: str | None
    redis_url: str | None
    api_base_url: str | None
    log_level: str
    webhook: Webhook | None = None  # None: long polling

    @property
    def api_base_file_url(self) -> str | None:
        """The file URL that goes with a self-hosted Bot API server's base URL (…/bot -> …/file/bot)."""
        if self.api_base_url is None:
            return None
        return self.api_base_url[: -len("/bot")] + "/file/bot"


def load_settings(env: Mapping[str, str] | None = None, *, need_token: bool = True) -> Settings:
    env = os.environ if env is None else env
    token = env.get("TELEGRAM_BOT_TOKEN", "").strip() or None
    if need_token and token is None:
        raise ConfigError("TELEGRAM_BOT_TOKEN is not set: get a token from @BotFather and export it")
    if token is not None and not _TOKEN.fullmatch(token):
        raise ConfigError("TELEGRAM_BOT_TOKEN does not look like a bot token (digits, a colon, then 35 characters)")

    redis_url = env.get("REDIS_URL", "").strip() or None
    if redis_url is not None:
        check_redis_url(redis_url)

    base_url = env.get("TELEGRAM_API_BASE_URL", "").strip().rstrip("/") or None
    if base_url is not None:
        parsed = urlparse(base_url)
        if parsed.scheme not in ("http", "https") or not parsed.netloc or not base_url.endswith("/bot"):
            raise ConfigError("TELEGRAM_API_BASE_URL must look like http://127.0.0.1:8081/bot")

    level = env.get("LOG_LEVEL", "INFO").strip().upper() or "INFO"
    if not isinstance(logging.getLevelName(level), int):
        raise ConfigError("LOG_LEVEL must be one of DEBUG, INFO, WARNING, ERROR")
    return Settings(token=token, redis_url=redis_url, api_base_url=base_url, log_level=level, webhook=_webhook(env))


def check_redis_url(url: str) -> None:
    if is_cluster_url(url):
        try:
            parse_cluster_url(url)
        except ValueError as error:
            raise ConfigError(f"REDIS_URL: {error} (e.g. redis+cluster://10.0.0.1:7000,10.0.0.2:7000)") from None
    elif urlparse(url).scheme not in ("redis", "rediss", "unix"):
        raise ConfigError(
            "REDIS_URL must be a redis://, rediss:// or unix:// URL, or redis+cluster:// or rediss+cluster:// "
            "for a Redis Cluster"
        )


def _webhook(env: Mapping[str, str]) -> Webhook | None:
    mode = env.get("BOT_MODE", "polling").strip().lower() or "polling"
    if mode == "polling":
        return None
    if mode != "webhook":
        raise ConfigError("BOT_MODE must be 'polling' or 'webhook'")
    url = env.get("WEBHOOK_URL", "").strip()
    parsed = urlparse(url)
    if parsed.scheme != "https" or not parsed.netloc:
        raise ConfigError("WEBHOOK_URL must be the public https:// address Telegram posts updates to")
    secret = env.get("WEBHOOK_SECRET", "").strip()
    if not _SECRET.fullmatch(secret):
        raise ConfigError("WEBHOOK_SECRET must be 16 to 256 characters of A-Z, a-z, 0-9, _ and -")
    port_text = env.get("WEBHOOK_PORT", "8080").strip() or "8080"
    if not port_text.isdigit() or not 1 <= int(port_text) <= 65535:
        raise ConfigError("WEBHOOK_PORT must be a port number")
    listen = env.get("WEBHOOK_LISTEN", "0.0.0.0").strip() or "0.0.0.0"
    return Webhook(url=url, listen=listen, port=int(port_text), secret=secret)
