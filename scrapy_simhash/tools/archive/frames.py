"""A :class:`~.batch.Batch` of records as a pandas DataFrame, as the dask engine moves it
between workers, and back."""

from __future__ import annotations

import pickle

import pandas as pd
import pyarrow as pa

from .batch import Batch

#: What the rule reads of a record (:class:`~.texts.Text`), pickled: Dask would turn a
#: column of objects into strings.
_BINARY = pd.ArrowDtype(pa.binary())
RECORD_META = pd.DataFrame(
    {
        "order": pd.Series(dtype="int64"),
        "kind": pd.Series(dtype="int8"),
        "value": pd.Series(dtype="uint64"),
        "key": pd.Series(dtype=object),
        "text": pd.Series(dtype=_BINARY),
    }
)


def as_frame(batch: Batch) -> pd.DataFrame:
    return pd.DataFrame(
        {
            "order": batch.order,
            "kind": batch.kind,
            "value": batch.value,
            "key": pd.Series(batch.key, dtype=object),
            "text": pd.Series([_pickled(t) for t in batch.text.tolist()], dtype=_BINARY),
        }
    )


def as_batch(frame: pd.DataFrame) -> Batch:
    return Batch.of(
        frame["order"].to_numpy(),
        frame["kind"].to_numpy(),
        frame["value"].to_numpy(),
        frame["key"].to_numpy(dtype=object),
        [_unpickled(t) for t in frame["text"].tolist()],
    )


def _pickled(text) -> bytes | None:
    return None if text is None else pickle.dumps(text, protocol=pickle.HIGHEST_PROTOCOL)


def _unpickled(data) -> object:
    return pickle.loads(data) if isinstance(data, bytes) else None  # None, or pandas' NA
