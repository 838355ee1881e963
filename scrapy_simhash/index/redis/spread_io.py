"""Sending a spread index's scripts to the masters of a Redis Cluster, in parallel.

redis-py's cluster pipelines do not send scripts, and ``WAIT`` must go down the same
connection as the writes it waits for. So each master gets one plain connection, and a
round of the protocol is pipelined by hand: every master's calls are written first (the
scripts, then ``WAIT`` when asked), then every master's replies are read, so the masters
work at the same time and a round costs about one round trip, without an event loop or a
thread. Calls whose replies nobody waits for (the clean-up after a check) are written at
once and their replies read before the next ones on that connection. The slot map is the
synchronous ``RedisCluster``'s, read again after a redirection or a lost connection (a
failover).
"""

from __future__ import annotations

import hashlib
import logging
import threading
import time
from typing import Any

import redis
from redis.crc import key_slot
from redis.exceptions import RedisClusterException

logger = logging.getLogger("scrapy_simhash.index.redis")

#: A call: (hash tag, script SHA1 or None for a command, keys, args).
Call = tuple[str, "str | None", list[str], list[Any]]
_MOVED = (
    redis.exceptions.MovedError,
    redis.exceptions.AskError,
    redis.exceptions.TryAgainError,
    redis.exceptions.ClusterDownError,
)
#: Errors after which the slot map is read again and the calls to that master sent again.
_RETRIED = (redis.ConnectionError, redis.TimeoutError, RedisClusterException, *_MOVED)
#: Calls of one round at most (written to their masters, then read): bounds the memory.
_CHUNK = 2000


class NotReplicated(redis.RedisError):
    """A write was not acknowledged by a replica within the wait."""


class _Master:
    """One connection to one master, and the count of replies owed on it: those of calls
    written without waiting (:meth:`SpreadIO.later`), read before the next ones."""

    def __init__(self, client: redis.Redis) -> None:
        self.client = client
        self.connection = client.connection_pool.get_connection()
        self.owed = 0

    def send(self, commands: list[tuple]) -> None:
        self.connection.send_packed_command(self.connection.pack_commands(commands))

    def settle(self) -> None:
        """Read the replies owed (errors in them are the lazy clean-up's: logged)."""
        while self.owed:
            self.owed -= 1
            try:
                self.connection.read_response()
            except redis.ResponseError as e:
                logger.debug("Clean-up call of a spread index failed: %s", e)

    def read(self) -> Any:
        try:
            return self.connection.read_response()
        except redis.ResponseError as e:
            return e

    def drop(self) -> None:
        self.owed = 0
        self.connection.disconnect()

    def close(self) -> None:
        self.client.connection_pool.disconnect()
        self.client.close()


class SpreadIO:
    """The connections of one spread index. *cluster* is a synchronous
    ``redis.RedisCluster`` (its slot map routes the calls); *client_kwargs* are redis-py's
    connection options; *replicas*: how many replicas must have every write of a check
    before it is acknowledged (0: none waited for); *wait_ms*: how long to wait for them;
    *retry_for*: seconds a call is retried after a redirection or a lost connection (a
    failover takes the cluster's node timeout and a little more)."""

    def __init__(
        self,
        cluster: redis.RedisCluster,
        client_kwargs: dict[str, Any],
        *,
        replicas: int,
        wait_ms: int,
        retry_for: float,
    ) -> None:
        self.replicas = replicas
        self.wait_ms = wait_ms
        self.retry_for = retry_for
        drop = ("retry", "host", "port", "retry_on_error")
        self._node_kwargs = {k: v for k, v in client_kwargs.items() if k not in drop}
        self._masters: dict[str, _Master] = {}
        self._scripts: dict[str, str] = {}
        self._lock = threading.RLock()
        self.cluster = cluster
        self.commands = 0  #: pipelines written (each to one master, replies read or not)
        self.rounds = 0  #: rounds waited for (pipelines written together, then read)

    def settle(self) -> None:
        """Wait for the calls written by :meth:`later` to be done."""
        with self._lock:
            for name, master in list(self._masters.items()):
                try:
                    master.settle()
                except (redis.RedisError, OSError) as e:
                    logger.debug("Clean-up of a spread index not confirmed: %s", e)
                    self._drop(name)

    def close(self) -> None:
        """Wait for the last clean-up and close the connections. Idempotent."""
        with self._lock:
            self.settle()
            masters, self._masters = self._masters, {}
            for master in masters.values():
                master.close()

    # -- calls -------------------------------------------------------------------------

    def script(self, lua: str) -> str:
        """Register *lua*; return the SHA1 to call it by."""
        sha = hashlib.sha1(lua.encode()).hexdigest()
        self._scripts[sha] = lua
        return sha

    def master_of(self, tag: str) -> str:
        """``host:port`` of the master serving *tag*."""
        return self.cluster.nodes_manager.get_node_from_slot(key_slot(tag.encode())).name

    def call(
        self, tag: str, sha: str | None, keys: list[str], args: list[Any], *, wait: bool = False
    ) -> Any:
        """Run the script *sha* (or, with *sha* ``None``, the command ``args``) on the
        master of *tag*; see :meth:`batch`."""
        return self.batch([(tag, sha, keys, args)], wait=wait)[0]

    @staticmethod
    def _command(call: Call) -> tuple:
        _, sha, keys, args = call
        return tuple(args) if sha is None else ("EVALSHA", sha, len(keys), *keys, *args)

    def later(self, calls: list[Call]) -> None:
        """Write *calls* now without waiting for them (the lazy clean-up after a check):
        their replies are read before the next calls to the same master, or at
        :meth:`close`. Failures are only logged: the next check that meets what they
        would have cleaned up does it, ``vacuum`` the rest."""
        if not calls:
            return
        with self._lock:
            by_master: dict[str, list[Call]] = {}
            for call in calls:
                by_master.setdefault(self.master_of(call[0]), []).append(call)
            for name, mine in by_master.items():
                master = None
                try:
                    master = self._master(name)
                    master.send([self._command(call) for call in mine])
                    master.owed += len(mine)
                    self.commands += 1
                except (redis.RedisError, OSError) as e:
                    logger.debug("Clean-up of a spread index not sent to %s: %s", name, e)
                    if master is not None:
                        master.drop()

    def batch(self, calls: list[Call], *, wait: bool = False) -> list[Any]:
        """Run *calls* (``(tag, sha, keys, args)``), in the order given on each master:
        the calls to every master are written, then the replies read, so the masters work
        at once. With *wait*, each master's calls end with ``WAIT`` and
        :class:`NotReplicated` is raised unless the replicas acknowledged. Calls answered
        with a redirection or lost with a connection are sent again (the scripts are
        idempotent) for ``retry_for`` seconds: a failover."""
        with self._lock:
            results: list[Any] = [None] * len(calls)
            for first in range(0, len(calls), _CHUNK):
                chunk = calls[first : first + _CHUNK]
                results[first : first + len(chunk)] = self._batch(chunk, wait)
            return results

    def _batch(self, calls: list[Call], wait: bool) -> list[Any]:
        """One chunk of :meth:`batch`, in rounds until every call has its reply."""
        results: list[Any] = [None] * len(calls)
        todo = list(range(len(calls)))
        deadline = time.monotonic() + self.retry_for
        delay = 0.05
        waiting = wait and self.replicas > 0
        while True:
            self.rounds += 1
            sent, todo, error = self._send(calls, todo, waiting)
            again, read_error, failure, load = self._read(sent, results, waiting)
            todo += again
            if read_error is not None:
                error = read_error
            if failure is not None:
                raise failure
            for name in load:
                for lua in self._scripts.values():
                    self._masters[name].client.script_load(lua)
            if not todo:
                return results
            if error is None:  # only scripts to load: at once
                continue
            if time.monotonic() + delay > deadline:
                raise error
            time.sleep(delay)
            delay = min(delay * 2, 0.5)
            try:
                self.cluster.nodes_manager.initialize()
            except (redis.RedisError, RedisClusterException, OSError) as e:
                logger.debug("The slot map could not be read again: %s", e)

    def _send(
        self, calls: list[Call], todo: list[int], waiting: bool
    ) -> tuple[dict[str, list[int]], list[int], Exception | None]:
        """Write the calls numbered *todo* to their masters (each master's followed by
        ``WAIT`` when *waiting*). Returns the numbers written to each master, the numbers
        to send again (their master's connection failed) and the last error."""
        by_master: dict[str, list[int]] = {}
        for i in todo:
            by_master.setdefault(self.master_of(calls[i][0]), []).append(i)
        again, error = [], None
        sent: dict[str, list[int]] = {}
        for name, indexes in by_master.items():
            commands = [self._command(calls[i]) for i in indexes]
            if waiting:
                commands.append(("WAIT", self.replicas, self.wait_ms))
            try:
                self._master(name).send(commands)
                self.commands += 1
                sent[name] = indexes
            except _RETRIED as e:
                self._drop(name)
                again += indexes
                error = e
        return sent, again, error

    def _read(
        self, sent: dict[str, list[int]], results: list[Any], waiting: bool
    ) -> tuple[list[int], Exception | None, Exception | None, set[str]]:
        """Read the replies of the calls *sent* into *results*. Returns the numbers to
        send again (redirected, lost, or a script the master lacks), the last error that
        calls for a pause, the first failure to raise (a script's error, a write not
        replicated), and the masters that lack the scripts."""
        again, error, failure, load = [], None, None, set()
        for name, indexes in sent.items():
            master = self._masters[name]
            try:
                master.settle()
                replies = [master.read() for _ in range(len(indexes) + waiting)]
            except _RETRIED as e:
                self._drop(name)
                again += indexes
                error = e
                continue
            moved = next((r for r in replies if isinstance(r, _MOVED)), None)
            if moved is not None:  # a master no more (its WAIT fails too): all again
                again += indexes
                error = moved
                continue
            if waiting:
                unreplicated = self._not_replicated(name, replies.pop())
                failure = failure or unreplicated
            for i, reply in zip(indexes, replies, strict=True):
                if isinstance(reply, redis.exceptions.NoScriptError):
                    load.add(name)  # a new master, or a restarted one
                    again.append(i)
                elif isinstance(reply, Exception):
                    failure = failure or reply
                else:
                    results[i] = reply
        return again, error, failure, load

    def _not_replicated(self, name: str, acknowledged: Any) -> Exception | None:
        """The failure of a ``WAIT`` on *name* that *acknowledged* fewer replicas than
        asked (or failed), else ``None``."""
        if isinstance(acknowledged, Exception):
            return acknowledged
        if int(acknowledged) < self.replicas:
            return NotReplicated(
                f"writes to {name} reached {acknowledged} of {self.replicas} "
                f"replicas within {self.wait_ms} ms"
            )
        return None

    def _master(self, name: str) -> _Master:
        master = self._masters.get(name)
        if master is None:
            host, port = name.rsplit(":", 1)
            client = redis.Redis(host=host, port=int(port), **self._node_kwargs)
            master = self._masters[name] = _Master(client)
        return master

    def _drop(self, name: str) -> None:
        master = self._masters.pop(name, None)
        if master is not None:
            master.drop()
            master.close()
