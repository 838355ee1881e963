"""The index's thread: calls run one at a time, in order, and their answers reach their callers."""

from __future__ import annotations

import asyncio
import random
import threading
import time

import pytest
from scrapy.utils.defer import deferred_f_from_coro_f

from scrapy_simhash.crawl.indexthread import IndexThread


class CountingThread(IndexThread):
    """Counts how often the reactor was given answers."""

    hand_overs = 0

    def _hand_over(self) -> None:
        self.hand_overs += 1
        super()._hand_over()


@deferred_f_from_coro_f
async def test_calls_run_in_order_one_at_a_time_in_one_other_thread():
    thread = IndexThread()
    seen: list[tuple[int, str]] = []
    running = []

    def call(number: int) -> int:
        running.append(number)
        assert len(running) == 1, "two calls ran at once"
        time.sleep(random.random() / 1000)
        seen.append((number, threading.current_thread().name))
        running.pop()
        return number * 10

    try:
        answers = await asyncio.gather(*(thread.run(call, n) for n in range(40)))
    finally:
        thread.close()
    assert answers == [n * 10 for n in range(40)]
    assert [number for number, _ in seen] == list(range(40))
    names = {name for _, name in seen}
    assert len(names) == 1
    assert names != {threading.current_thread().name}


@deferred_f_from_coro_f
async def test_an_error_reaches_its_caller_and_the_next_calls_still_run():
    thread = IndexThread()

    def call(number: int) -> int:
        if number == 2:
            raise ValueError("locked")
        return number

    try:
        answers = await asyncio.gather(
            *(thread.run(call, n) for n in range(5)), return_exceptions=True
        )
    finally:
        thread.close()
    assert answers[:2] == [0, 1] and answers[3:] == [3, 4]
    assert isinstance(answers[2], ValueError) and str(answers[2]) == "locked"


@deferred_f_from_coro_f
async def test_answers_given_while_the_reactor_is_busy_reach_it_in_one_hand_over():
    thread = CountingThread()
    done = threading.Event()

    def call(number: int) -> int:
        if number == 4:
            done.set()
        return number

    try:
        waiting = [asyncio.ensure_future(thread.run(call, n)) for n in range(5)]
        await asyncio.sleep(0)  # the calls are queued
        # The reactor is busy (this coroutine holds it) while the thread answers all five.
        assert done.wait(5)
        time.sleep(0.05)
        answers = await asyncio.gather(*waiting)
    finally:
        thread.close()
    assert answers == list(range(5))
    assert thread.hand_overs == 1


@deferred_f_from_coro_f
async def test_a_cancelled_caller_does_not_stop_the_answers_of_the_others():
    thread = IndexThread()
    gate = threading.Event()

    def call(number: int) -> int:
        gate.wait(5)
        return number

    try:
        first = asyncio.ensure_future(thread.run(call, 0))
        second = asyncio.ensure_future(thread.run(call, 1))
        await asyncio.sleep(0)
        first.cancel()
        gate.set()
        assert await second == 1
        with pytest.raises(asyncio.CancelledError):
            await first
    finally:
        thread.close()


@deferred_f_from_coro_f
async def test_close_waits_for_the_calls_already_queued():
    thread = IndexThread()
    ran: list[int] = []
    pending = [asyncio.ensure_future(thread.run(ran.append, n)) for n in range(20)]
    await asyncio.sleep(0)  # each call reaches the thread's queue
    thread.close()
    assert ran == list(range(20))
    assert await asyncio.gather(*pending) == [None] * 20
    with pytest.raises(RuntimeError, match="after close"):
        await thread.run(ran.append, 99)
