"""Sending a spread index's scripts to the masters of a Redis Cluster, in parallel.

redis-py's cluster pipelines do not send scripts, and ``WAIT`` must go down the same
connection as the writes it waits for. So each master gets a plain asyncio client, a call
is one pipeline to the master of its hash tag (the script, then ``WAIT`` when asked), and
the calls of one round of the protocol are gathered. The asyncio loop runs in a thread of
its own: the index is used from synchronous code. The slot map is redis-py's asyncio
``RedisCluster``'s, read again after a redirection or a lost connection (a failover).
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import logging
import threading
import time
from collections.abc import Coroutine
from typing import Any

import redis
import redis.asyncio
import redis.asyncio.cluster
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


class NotReplicated(redis.RedisError):
    """A write was not acknowledged by a replica within the wait."""


class SpreadIO:
    """The connections of one spread index. *client_kwargs* are redis-py's connection
    options (host and port of any node first); *replicas*: how many replicas must have
    every write of a check before it is acknowledged (0: none waited for); *wait_ms*: how
    long to wait for them; *retry_for*: seconds a call is retried after a redirection or
    a lost connection (a failover takes the cluster's node timeout and a little more)."""

    def __init__(
        self, client_kwargs: dict[str, Any], *, replicas: int, wait_ms: int, retry_for: float
    ) -> None:
        self.replicas = replicas
        self.wait_ms = wait_ms
        self.retry_for = retry_for
        node_kwargs = {k: v for k, v in client_kwargs.items() if k not in ("retry", "host", "port")}
        node_kwargs.pop("retry_on_error", None)
        self._node_kwargs = node_kwargs
        self._nodes: dict[str, redis.asyncio.Redis] = {}
        self._scripts: dict[str, str] = {}
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, daemon=True)
        self._thread.start()
        self._background: set[asyncio.Task] = set()
        self.cluster: redis.asyncio.RedisCluster | None = None
        self.commands = 0  #: calls sent (each one round trip to one master)

        async def connect():
            cluster = redis.asyncio.RedisCluster(
                host=client_kwargs["host"], port=client_kwargs["port"], **node_kwargs
            )
            await cluster.initialize()
            return cluster

        self.cluster = self.run(connect())

    # -- the bridge from synchronous code --------------------------------------------

    def run(self, coroutine: Coroutine) -> Any:
        """Run *coroutine* on the index's loop and return its result."""
        return asyncio.run_coroutine_threadsafe(coroutine, self._loop).result()

    def later(self, coroutine: Coroutine) -> None:
        """Run *coroutine* on the loop without waiting for it (the lazy clean-up after a
        check); :meth:`close` waits for what is left."""

        async def quietly() -> None:
            try:
                await coroutine
            except Exception as e:  # the next check or vacuum cleans up what is left
                logger.debug("Background clean-up of a spread index failed: %s", e)

        def start() -> None:
            task = self._loop.create_task(quietly())
            self._background.add(task)
            task.add_done_callback(self._background.discard)

        self._loop.call_soon_threadsafe(start)

    def close(self) -> None:
        async def shut() -> None:
            if self._background:
                await asyncio.wait(list(self._background), timeout=10)
            for client in self._nodes.values():
                with contextlib.suppress(Exception):
                    await client.aclose()
            if self.cluster is not None:
                with contextlib.suppress(Exception):
                    await self.cluster.aclose()

        if self._loop.is_running():
            with contextlib.suppress(Exception):
                self.run(shut())
            self._loop.call_soon_threadsafe(self._loop.stop)
            self._thread.join(timeout=10)
            self._loop.close()

    # -- calls -------------------------------------------------------------------------

    def script(self, lua: str) -> str:
        """Register *lua*; return the SHA1 to call it by."""
        sha = hashlib.sha1(lua.encode()).hexdigest()
        self._scripts[sha] = lua
        return sha

    def master_of(self, tag: str) -> str:
        """``host:port`` of the master serving *tag* (for benchmarks and tests)."""
        assert self.cluster is not None
        return self.cluster.nodes_manager.get_node_from_slot(key_slot(tag.encode())).name

    async def call(
        self, tag: str, sha: str | None, keys: list[str], args: list[Any], *, wait: bool = False
    ) -> Any:
        """Run the script *sha* (or, with *sha* ``None``, the command ``args``) on the
        master of *tag*; see :meth:`batch`."""
        return (await self.batch([(tag, sha, keys, args)], wait=wait))[0]

    async def batch(self, calls: list[Call], *, wait: bool = False) -> list[Any]:
        """Run *calls* (``(tag, sha, keys, args)``), one pipeline to each master holding
        some of them, in the order given on each master; with *wait*, each pipeline ends
        with ``WAIT`` and :class:`NotReplicated` is raised unless the replicas acknowledged.
        Calls answered with a redirection or lost with a connection are sent again (the
        scripts are idempotent) for ``retry_for`` seconds: a failover."""
        results: list[Any] = [None] * len(calls)
        todo = list(range(len(calls)))
        deadline = time.monotonic() + self.retry_for
        delay = 0.05
        while True:
            by_node: dict[str, list[int]] = {}
            for i in todo:
                by_node.setdefault(self._node_name(calls[i][0]), []).append(i)
            replies = await asyncio.gather(
                *(
                    self._send(name, [calls[i] for i in indexes], wait)
                    for name, indexes in by_node.items()
                ),
                return_exceptions=True,
            )
            todo, error = [], None
            for indexes, reply in zip(by_node.values(), replies, strict=True):
                if isinstance(reply, _RETRIED):
                    todo += indexes
                    error = reply
                elif isinstance(reply, BaseException):
                    raise reply
                else:
                    for i, result in zip(indexes, reply, strict=True):
                        if isinstance(result, _MOVED):
                            todo.append(i)
                            error = result
                        elif isinstance(result, Exception):
                            raise result
                        else:
                            results[i] = result
            if not todo:
                return results
            if time.monotonic() + delay > deadline:
                raise error  # type: ignore[misc]
            await asyncio.sleep(delay)
            delay = min(delay * 2, 0.5)
            with contextlib.suppress(redis.RedisError, RedisClusterException, OSError):
                assert self.cluster is not None
                await self.cluster.nodes_manager.initialize()

    def _node_name(self, tag: str) -> str:
        assert self.cluster is not None
        node = self.cluster.nodes_manager.get_node_from_slot(key_slot(tag.encode()))
        if node.name not in self._nodes:
            self._nodes[node.name] = redis.asyncio.Redis(
                host=node.host, port=node.port, **self._node_kwargs
            )
        return node.name

    async def _send(self, name: str, calls: list[Call], wait: bool) -> list[Any]:
        client = self._nodes[name]
        for _ in range(2):
            pipe = client.pipeline(transaction=False)
            for _, sha, keys, args in calls:
                if sha is None:
                    pipe.execute_command(*args)
                else:
                    pipe.execute_command("EVALSHA", sha, len(keys), *keys, *args)
            if wait and self.replicas:
                pipe.execute_command("WAIT", self.replicas, self.wait_ms)
            self.commands += 1
            replies = await pipe.execute(raise_on_error=False)
            if any(isinstance(r, redis.exceptions.NoScriptError) for r in replies):
                for lua in self._scripts.values():  # a new master, or a restarted one
                    await client.script_load(lua)
                continue
            moved = next((r for r in replies if isinstance(r, _MOVED)), None)
            if moved is not None:
                raise moved  # a master no more (its WAIT fails too): all of them again
            if wait and self.replicas:
                acknowledged = replies.pop()
                if isinstance(acknowledged, Exception):
                    raise acknowledged
                if int(acknowledged) < self.replicas:
                    raise NotReplicated(
                        f"writes to {name} reached {acknowledged} of {self.replicas} replicas "
                        f"within {self.wait_ms} ms"
                    )
            return replies
        raise redis.ResponseError(f"the scripts could not be loaded on {name}")

    async def gather(self, *calls: Coroutine) -> list[Any]:
        """Await *calls* together; the first error is raised once all have finished."""
        results = await asyncio.gather(*calls, return_exceptions=True)
        for result in results:
            if isinstance(result, BaseException):
                raise result
        return results
