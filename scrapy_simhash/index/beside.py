"""Stores kept beside an index's pages, outside its versioned layout (the URL rules, the
sites' templates): one per index object, made for its backend on first use."""

from __future__ import annotations

import importlib
from typing import Any

#: Backend -> where its stores are: the module ``{where}{store}`` of this package holds
#: the class ``{Backend}{Store}`` (``.sqlite.templates``: ``SqliteTemplates``).
_WHERE = {"sqlite": ".sqlite.", "redis": ".redis.", "memory": "."}


def beside(index: Any, store: str) -> Any:
    """The store *store* (``"templates"``, ``"skip_rules"``) of *index*, made on first use
    for its backend (imported only when that backend is used)."""
    found = getattr(index, f"_{store}", None)
    if found is not None:
        return found
    for backend, where in _WHERE.items():
        if type(index).__module__.startswith(f"scrapy_simhash.index.{backend}"):
            name = backend.title() + store.title().replace("_", "")
            module = importlib.import_module(where + store, __package__)
            # Handed the index's store, which holds the connection.
            found = getattr(module, name)(index.store)
            setattr(index, f"_{store}", found)
            return found
    raise TypeError(f"No {store.replace('_', ' ')} for {type(index).__name__}")
