"""worker: background work with a cancel event, never blocking the caller."""

import threading

from bt_raider.runtime.worker import submit


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
