"""Translations: gettext catalogs compiled from `tgbot/locales/<lang>/LC_MESSAGES/messages.po`.

Every message is a whole sentence with named placeholders (`%(name)s`), so a translator
sees and reorders the whole thing; nothing is assembled from translated fragments.
Messages are always formatted with a mapping, so a literal percent sign is written `%%`.
"""

from __future__ import annotations

from functools import cache
from pathlib import Path

from babel.support import NullTranslations, Translations

LANGUAGES = ("en", "es", "ru", "bg", "eo")
DEFAULT_LANGUAGE = "en"
LOCALE_DIR = Path(__file__).parent / "locales"
DOMAIN = "messages"


def supported(language_code: str | None) -> str | None:
    """The supported language for a Telegram language code ("es-AR" -> "es"), or None."""
    if not language_code:
        return None
    base = language_code.split("-")[0].split("_")[0].lower()
    return base if base in LANGUAGES else None


@cache
def translations(language: str) -> NullTranslations:
    if language == DEFAULT_LANGUAGE or language not in LANGUAGES:
        return NullTranslations()
    return Translations.load(str(LOCALE_DIR), [language], DOMAIN)


def t(language: str, message: str, **values: object) -> str:
    return translations(language).gettext(message) % values


def tn(language: str, singular: str, plural: str, n: int, **values: object) -> str:
    return translations(language).ngettext(singular, plural, n) % {"n": n, **values}


def N_(message: str) -> str:
    """Mark a message for the catalog where it is defined; it is translated where it is used."""
    return message
