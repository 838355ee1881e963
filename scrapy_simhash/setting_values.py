"""One setting's value, read as its type: a value of the wrong type is a
:class:`~scrapy_simhash.exceptions.ConfigurationError` naming the setting, never a silent
fallback.

Apart from :mod:`~scrapy_simhash.settings` (the names, the defaults and what the values
mean) because these rules hold for any setting: a boolean is read the same way whether it
is ``SIMHASH_ANCHORS`` or ``SIMHASH_ENABLED``. No Scrapy import: the settings read are
anything with ``get``.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Mapping
from typing import Any

from .exceptions import ConfigurationError

__all__ = ["SettingReader", "log_level", "media_types", "setting_bool", "setting_list"]


class SettingReader:
    """The values of *settings* (anything with ``get``, as Scrapy's ``Settings``), each
    read as its type, with the default of *defaults* for a setting not given."""

    def __init__(self, settings: Any, defaults: Mapping[str, Any]) -> None:
        self.settings = settings
        self.defaults = defaults

    def get(self, name: str) -> Any:
        return self.settings.get(name, self.defaults[name])

    def getint(self, name: str) -> int:
        value = self.get(name)
        if isinstance(value, bool) or (isinstance(value, float) and not value.is_integer()):
            raise ConfigurationError(f"{name}={value!r} is not an integer")
        try:
            return int(value)
        except (TypeError, ValueError):
            raise ConfigurationError(f"{name}={value!r} is not an integer") from None

    def getfloat(self, name: str) -> float:
        value = self.get(name)
        try:
            if isinstance(value, bool):
                raise TypeError
            return float(value)
        except (TypeError, ValueError):
            raise ConfigurationError(f"{name}={value!r} is not a number") from None

    def getbool(self, name: str) -> bool:
        return setting_bool(name, self.get(name))

    def getstr(self, name: str, *, optional: bool = False) -> Any:
        """A string; with *optional*, ``None`` for ``None`` or ``""``."""
        value = self.get(name)
        if optional and value in (None, ""):
            return None
        if not isinstance(value, str):
            raise ConfigurationError(
                f"{name}={value!r} is a {type(value).__name__}; it must be a string"
            )
        return value

    def getlist(self, name: str) -> tuple[str, ...]:
        return setting_list(name, self.get(name))


def setting_list(name: str, value: Any) -> tuple[str, ...]:
    """A list setting: a list or tuple of non-empty strings, or one string split at
    commas and spaces (``"title content"`` and ``"title,content"`` are two fields)."""
    if isinstance(value, str):
        return tuple(part for part in re.split(r"[\s,]+", value) if part)
    if not isinstance(value, list | tuple):
        raise ConfigurationError(
            f"{name}={value!r} is a {type(value).__name__}; give a list of strings, "
            "e.g. ['title', 'content']"
        )
    for part in value:
        if not isinstance(part, str) or not part.strip():
            raise ConfigurationError(
                f"{name}={list(value)!r} holds {part!r}; every entry must be a non-empty string"
            )
    return tuple(part.strip() for part in value)


def setting_bool(name: str, value: Any) -> bool:
    """A boolean setting as Scrapy reads one (True/False, 1/0, "true"/"false"), but
    anything else is an error rather than a guess."""
    if isinstance(value, bool):
        return value
    if isinstance(value, int) and value in (0, 1):
        return bool(value)
    if isinstance(value, str) and value.strip().lower() in _BOOLEANS:
        return _BOOLEANS[value.strip().lower()]
    raise ConfigurationError(f"{name}={value!r} is not a boolean; use True or False")


_BOOLEANS = {"true": True, "1": True, "yes": True, "false": False, "0": False, "no": False}


def media_types(values: tuple[str, ...]) -> tuple[str, ...]:
    """``SIMHASH_MIDDLEWARE_CONTENT_TYPES``: media types, lower-cased (``type/*`` allowed)."""
    types = tuple(value.strip().lower() for value in values)
    for media_type in types:
        if "/" not in media_type:
            raise ConfigurationError(
                f"SIMHASH_MIDDLEWARE_CONTENT_TYPES holds {media_type!r}, which is not a media "
                "type; use e.g. 'text/html' or 'text/*'"
            )
    return types


def log_level(value: Any) -> int:
    """``SIMHASH_DROP_LOG_LEVEL``: a level's number, or its name."""
    if isinstance(value, int):
        return value
    level = logging.getLevelName(str(value).upper())
    if not isinstance(level, int):
        raise ConfigurationError(
            f"SIMHASH_DROP_LOG_LEVEL={value!r} is not a log level; use DEBUG, INFO or WARNING"
        )
    return level
