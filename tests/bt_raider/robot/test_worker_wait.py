"""worker.wait_for_any: a tick loop sleeps until its period ends or a job finishes."""

from __future__ import annotations

import threading
import time

from bt_raider.robot.worker import submit, wait_for_any


def test_a_finished_job_ends_the_wait_early():
    release = threading.Event()

    def job(*, cancel):
        release.wait(5)
        return 1

    pending = submit(job)
    timer = threading.Timer(0.05, release.set)
    timer.start()
    start = time.monotonic()
    woke = False
    while not pending.done() and time.monotonic() - start < 10:
        woke = wait_for_any(10.0) or woke  # a wait may also end for another pool's job
    assert pending.done() and pending.result() == 1 and woke
    assert time.monotonic() - start < 9  # not the whole timeout


def test_with_nothing_finishing_it_sleeps_the_timeout():
    start = time.monotonic()
    assert wait_for_any(0.05) is False
    assert time.monotonic() - start >= 0.045


def test_no_time_left_returns_at_once():
    start = time.monotonic()
    assert wait_for_any(0.0) is False and wait_for_any(-1.0) is False
    assert wait_for_any(float("nan")) is False
    assert time.monotonic() - start < 0.05
