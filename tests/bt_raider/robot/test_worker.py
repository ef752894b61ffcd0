"""worker: background work with a cancel event, never blocking the caller."""

import logging
import math
import subprocess
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bt_raider.robot.worker import JobNotStarted, WorkerPool, submit


def test_result_arrives_and_caller_is_not_blocked():
    release = threading.Event()

    def job(x, *, cancel):
        release.wait(5)
        return x * 2

    pending = submit(job, 21)
    assert not pending.done()  # the job is still waiting: submit returned at once
    release.set()
    assert pending.wait(5)
    assert pending.done() and pending.result() == 42


def test_cancel_sets_the_event_a_running_job_sees():
    started, seen = threading.Event(), threading.Event()

    def job(*, cancel):
        started.set()
        if cancel.wait(5):
            seen.set()
        return "stopped"

    pending = submit(job)
    assert started.wait(5)
    pending.cancel()
    assert pending.cancelled
    assert seen.wait(5)


def test_exception_is_kept_for_the_poller():
    def job(*, cancel):
        raise RuntimeError("tool exploded")

    pending = submit(job)
    assert pending.wait(5)
    assert isinstance(pending.exception(), RuntimeError)


# --------------------------------------------------------------------------- deadlines


def hung(release: threading.Event, calls: list[str], name: str):
    """A job that ignores its cancel event until the test releases it (a hung check)."""

    def job(*, cancel):
        calls.append(name)
        release.wait(30)
        return name

    return job


def quick(x, *, cancel):
    return x


def wait_until(predicate, timeout: float = 10.0) -> bool:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if predicate():
            return True
        time.sleep(0.01)
    return predicate()


def test_jobs_hung_on_every_worker_do_not_starve_the_queue():
    pool = WorkerPool(2, slow_after=0.1, name="test_hung")
    release, calls = threading.Event(), []
    assert all(submit(quick, i, executor=pool).wait(10) for i in range(4))  # what "slow" is
    try:
        stuck = [
            submit(hung(release, calls, f"h{i}"), executor=pool, deadline=60) for i in range(2)
        ]
        assert wait_until(lambda: len(calls) == 2)  # both workers are taken by hung jobs
        rest = [submit(quick, i, executor=pool) for i in range(6)]
        # Long before the hung jobs' deadline, other threads stand in for theirs.
        assert all(p.wait(10) for p in rest), pool
        assert [p.result() for p in rest] == list(range(6))
        assert pool.covered >= 1 and 2 < pool.threads <= 2 + pool.covered
        for p in stuck:
            assert not p.done() and not p.overdue() and not p.cancel_event.is_set()
    finally:
        release.set()
    assert all(p.wait(10) for p in stuck) and [p.result() for p in stuck] == ["h0", "h1"]
    assert wait_until(lambda: pool.covered == 0 and pool.threads == 2), pool  # back to size
    pool.shutdown()


def test_a_cold_pool_covers_one_round_of_late_jobs_before_a_job_has_finished():
    # A pool of LLM checks starting up: no job has finished to say what slow is, so a late
    # job's thread is covered once per worker, not in a burst up to max_extra.
    pool = WorkerPool(1, slow_after=0.05, name="test_no_typical")
    release, calls = threading.Event(), []
    try:
        first = submit(hung(release, calls, "first"), executor=pool)
        second = submit(hung(release, calls, "second"), executor=pool)
        queued = submit(quick, "queued", executor=pool)
        # The first is late: a stand-in takes the second (no job has finished yet).
        assert wait_until(lambda: calls == ["first", "second"]), pool
        time.sleep(0.4)  # the second is late too, but the cold pool's round is used up
        assert not queued.done() and pool.covered == 1 and pool.threads == 2
    finally:
        release.set()
    assert first.wait(10) and second.wait(10) and queued.wait(10)
    assert queued.result() == "queued"
    pool.shutdown()


def test_a_job_past_its_deadline_is_cancelled_and_its_thread_covered():
    pool = WorkerPool(1, slow_after=30, name="test_deadline")
    release, calls = threading.Event(), []
    try:
        job = submit(hung(release, calls, "h"), executor=pool, deadline=0.2)
        assert wait_until(lambda: job.cancel_event.is_set())  # at its deadline
        assert job.overdue() and job.timed_out and pool.covered == 1
        after = submit(quick, "next", executor=pool)
        assert after.wait(10) and after.result() == "next"  # on the thread standing in
    finally:
        release.set()
    assert job.wait(10) and job.overdue()  # finished, but late: still overdue
    pool.shutdown()


def test_the_deadline_counts_from_the_submission_and_a_job_too_late_never_starts():
    pool = WorkerPool(1, max_extra=0, slow_after=30, name="test_queued")
    release, calls = threading.Event(), []
    busy = submit(hung(release, calls, "busy"), executor=pool)
    assert wait_until(lambda: calls == ["busy"])
    queued = submit(hung(release, calls, "queued"), executor=pool, deadline=0.1)
    assert queued.deadline is not None and not queued.overdue()
    assert wait_until(queued.overdue, 5)  # queued all along, past its deadline all the same
    assert queued.wait(5) and queued.timed_out  # a waiter is not left waiting on the queue
    assert isinstance(queued.exception(), JobNotStarted)
    assert "could not start within its deadline of 0.1 s" in str(queued.exception())
    release.set()
    assert busy.wait(10)
    time.sleep(0.1)
    assert calls == ["busy"]  # the thread came back, and did not start the expired job
    pool.shutdown()


def test_a_queued_job_abandoned_at_its_deadline_never_starts():
    pool = WorkerPool(1, max_extra=0, slow_after=30, name="test_abandon")
    release, calls = threading.Event(), []
    busy = submit(hung(release, calls, "busy"), executor=pool)
    queued = submit(hung(release, calls, "queued"), executor=pool, deadline=0.05)
    assert wait_until(queued.overdue, 5)
    queued.abandon()  # what a guard does when it sees the deadline pass
    assert queued.done() and queued.timed_out and isinstance(queued.exception(), JobNotStarted)
    release.set()
    assert busy.wait(10)
    pool.shutdown()
    assert calls == ["busy"]


def test_past_the_thread_cap_new_jobs_fail_closed_at_their_deadline():
    pool = WorkerPool(2, max_extra=2, slow_after=0.05, cancel_grace=0.05, name="test_full")
    release, calls = threading.Event(), []
    try:
        stuck = [
            submit(hung(release, calls, f"h{i}"), executor=pool, deadline=0.1) for i in range(6)
        ]
        # 4 threads (the cap) run hung jobs; the other 2 never start.
        assert all(p.wait(10) for p in stuck[4:]) and wait_until(lambda: len(calls) == 4)
        assert all(isinstance(p.exception(), JobNotStarted) for p in stuck[4:])
        later = [submit(quick, i, executor=pool, deadline=0.2) for i in range(3)]
        t0 = time.monotonic()
        assert all(p.wait(10) for p in later)
        assert time.monotonic() - t0 < 5
        assert all(p.timed_out and isinstance(p.exception(), JobNotStarted) for p in later)
        assert len(calls) == 4 and pool.threads == 4
    finally:
        release.set()
    pool.shutdown()


def test_cancelled_and_covered_jobs_do_not_teach_the_pool_its_typical_time():
    pool = WorkerPool(1, cancel_grace=0.05, slow_after=0.05, name="test_learn")
    try:
        assert submit(quick, 1, executor=pool).wait(10)
        typical = pool._typical
        assert typical is not None and typical < 0.05
        release, calls = threading.Event(), []
        stopped = submit(hung(release, calls, "stopped"), executor=pool)
        assert wait_until(lambda: calls == ["stopped"])
        stopped.cancel()  # ignored: its thread is covered after the grace period
        assert wait_until(lambda: pool.covered == 1)
        time.sleep(0.3)
        release.set()
        assert stopped.wait(10)
        assert pool._typical == typical  # 0.3 s of a stopped job is not what jobs take
        slow = submit(hung(threading.Event(), calls, "blocked"), executor=pool)
        quick_job = submit(quick, 2, executor=pool)
        assert wait_until(lambda: calls[-1:] == ["blocked"])
        t0 = time.monotonic()
        assert quick_job.wait(10) and quick_job.result() == 2
        assert time.monotonic() - t0 < 1.0  # covered at the cold limit, not 3 x 0.3 s later
        slow.cancel()
    finally:
        release.set()
    pool.shutdown(wait=False)


def test_replacements_are_capped_with_a_warning(caplog):
    pool = WorkerPool(1, max_extra=1, slow_after=30, name="test_cap")
    release, calls = threading.Event(), []
    try:
        first = submit(hung(release, calls, "h1"), executor=pool, deadline=0.2)
        assert wait_until(lambda: pool.covered == 1)
        second = submit(hung(release, calls, "h2"), executor=pool, deadline=0.2)
        assert wait_until(lambda: pool.covered == 2)
        with caplog.at_level(logging.WARNING, logger="bt_raider.robot.worker"):
            waiting = submit(quick, "after", executor=pool)
            time.sleep(0.3)
        assert not waiting.done() and pool.threads == 2 and pool.queued == 1  # the cap holds
        assert "max_extra=1" in caplog.text
    finally:
        release.set()
    assert waiting.wait(10) and waiting.result() == "after"
    assert first.wait(10) and second.wait(10)
    pool.shutdown()


def test_a_running_job_that_ignores_cancel_is_replaced_after_the_grace_period():
    pool = WorkerPool(1, cancel_grace=0.1, slow_after=30, name="test_grace")
    release, calls = threading.Event(), []
    try:
        stubborn = submit(hung(release, calls, "stubborn"), executor=pool)
        assert wait_until(lambda: calls == ["stubborn"])
        stubborn.cancel()
        after = submit(quick, 7, executor=pool)
        assert after.wait(10) and after.result() == 7
        assert not stubborn.done() and not stubborn.timed_out  # cancelled, no deadline
    finally:
        release.set()
    pool.shutdown()


def test_a_foreign_executor_still_runs_jobs_and_sees_deadlines():
    with ThreadPoolExecutor(1) as executor:
        release, calls = threading.Event(), []
        slow = submit(hung(release, calls, "slow"), executor=executor, deadline=0.1)
        assert wait_until(slow.overdue)
        slow.abandon()  # cannot replace the thread: still cancels
        assert slow.cancel_event.is_set()
        release.set()
        assert submit(quick, 3, executor=executor).wait(10)


def test_the_pool_is_an_executor():
    pool = WorkerPool(2, name="test_executor")
    futures = [pool.submit(pow, 2, n) for n in range(5)]
    assert [f.result(timeout=10) for f in futures] == [1, 2, 4, 8, 16]
    with pytest.raises(ZeroDivisionError):
        pool.submit(divmod, 1, 0).result(timeout=10)
    pool.shutdown()
    with pytest.raises(RuntimeError, match="shut down"):
        pool.submit(pow, 2, 2)


def test_a_hung_job_does_not_keep_the_process_alive():
    code = (
        "import threading\n"
        "from bt_raider.robot.worker import submit\n"
        "submit(lambda *, cancel: threading.Event().wait(120))\n"
        "print('done')\n"
    )
    t0 = time.monotonic()
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0 and out.stdout.strip() == "done", out.stderr
    assert time.monotonic() - t0 < 30  # the job would hold the process 120 s


@given(
    st.one_of(
        st.none(),
        st.booleans(),
        st.text(max_size=3),
        st.integers(-5, 5),
        st.floats(allow_nan=True, allow_infinity=True),
    )
)
@settings(max_examples=60, deadline=None)
def test_deadline_is_seconds_above_zero_or_none(deadline):
    valid = deadline is None or (
        not isinstance(deadline, (bool, str)) and not math.isnan(deadline) and deadline > 0
    )
    pool = _EAGER_POOL
    if valid:
        assert submit(quick, 1, executor=pool, deadline=deadline).wait(10)
    else:
        with pytest.raises(ValueError, match="deadline"):
            submit(quick, 1, executor=pool, deadline=deadline)


_EAGER_POOL = WorkerPool(1, name="test_fuzz")


@pytest.mark.parametrize(
    "kwargs",
    [
        {"max_workers": 0},
        {"max_workers": 2, "max_extra": -1},
        {"max_workers": 1, "cancel_grace": -1},
        {"max_workers": 1, "slow_after": float("nan")},
    ],
)
def test_bad_pool_sizes_are_refused(kwargs):
    with pytest.raises(ValueError):
        WorkerPool(**kwargs)
