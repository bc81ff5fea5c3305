"""Translations: the gettext catalogs `tgbot/locales/<lang>/LC_MESSAGES/messages.po`.

The catalogs are kept as .po text only and compiled in memory with Babel when first used,
so there is no generated binary to forget to rebuild. `tools/update_catalogs.sh` extracts
the messages again after the code changes.

Every message is a whole sentence with named placeholders (`%(name)s`), so a translator
sees and reorders the whole thing; nothing is assembled from translated fragments.
Messages are always formatted with a mapping, so a literal percent sign is written `%%`.
"""

from __future__ import annotations

from functools import cache
from io import BytesIO
from pathlib import Path

from babel.messages.mofile import write_mo
from babel.messages.pofile import read_po
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


def catalog_path(language: str) -> Path:
    return LOCALE_DIR / language / "LC_MESSAGES" / f"{DOMAIN}.po"


@cache
def translations(language: str) -> NullTranslations:
    if language == DEFAULT_LANGUAGE or language not in LANGUAGES:
        return NullTranslations()
    with catalog_path(language).open("rb") as po:
        catalog = read_po(po, locale=language, domain=DOMAIN)
    compiled = BytesIO()
    write_mo(compiled, catalog, use_fuzzy=False)
    compiled.seek(0)
    return Translations(fp=compiled, domain=DOMAIN)


def t(language: str, message: str, /, **values: object) -> str:
    return translations(language).gettext(message) % values


def tn(language: str, singular: str, plural: str, n: int, /, **values: object) -> str:
    return translations(language).ngettext(singular, plural, n) % {"n": n, **values}


def N_(message: str) -> str:
    """Mark a message for the catalog where it is defined; it is translated where it is used."""
    return message


def Nn_(singular: str, plural: str) -> tuple[str, str]:  # noqa: N802 (the gettext convention)
    """Mark a counted message (both forms) for the catalog; `tn` translates it where it is used."""
    return singular, plural
