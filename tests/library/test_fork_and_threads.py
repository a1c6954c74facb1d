"""Processes and threads: a fork child starts with no cached session (onnxruntime's sessions do
not survive a fork, and freeing one there blocked forever), a spawn child builds its own, and
threads share the cache without building a runner or a session twice. Every wait has a timeout:
a regression fails here instead of hanging the suite."""

import gc
import multiprocessing
import os
import signal
import threading

import numpy as np
import pytest

import surgeon
from surgeon.runtime import clear_cache, get_runner, sessions_created
from surgeon.runtime import runners
from surgeon.runtime.runners import make_runner
from surgeon.io.load import load_in_memory
from surgeon.rewrite.plugins import PluginSet

from .stn_sample import SMALL, STN, stn_feeds
from .workers import fuse_run_validate

TIMEOUT = float(os.environ.get("SURGEON_TEST_POOL_TIMEOUT", 240))  # seconds; a hang is what the test is for


def _used_in_parent() -> float:
    """fuse, validate and run here first, so that the cache holds sessions a fork child inherits."""
    result = surgeon.fuse(STN, validate=True, quiet=True)
    assert surgeon.validate(STN, result.model, far=False, quiet=True).passed
    y = surgeon.run(result.model, stn_feeds(1), quiet=True)["y"]
    assert runners.cached_count() > 0
    return float(np.sum(y))


@pytest.mark.parametrize("method", ["fork", "spawn"])
def test_a_pool_runs_fuse_run_validate_after_the_parent_used_them(method):
    assert method in multiprocessing.get_all_start_methods()  # Linux has both: the wheel is manylinux
    want = _used_in_parent()
    with multiprocessing.get_context(method).Pool(2) as pool:
        done = pool.map_async(fuse_run_validate, [1, 1, 2]).get(timeout=TIMEOUT)
    assert [passed for passed, _, _ in done] == [True] * 3
    assert done[0][1] == done[1][1] == pytest.approx(want, rel=1e-6) and done[2][1] != done[0][1]
    assert len(SMALL) > runners.CACHE_SIZE and {ran for _, _, ran in done} == {len(SMALL)}  # evictions happened
    assert _used_in_parent() == pytest.approx(want, rel=1e-6)  # the parent's own sessions still work


def test_a_fork_child_starts_with_no_runner_and_builds_its_own():
    _used_in_parent()

    def child() -> str:
        found = runners.cached_count()
        surgeon.run(STN, stn_feeds(), quiet=True)
        return f"{found} {runners.cached_count()}"
    assert _in_fork_child(child) == "0 1"


def test_a_fork_child_collecting_the_parents_garbage_does_not_block():
    """A runner in a reference cycle (an exception's traceback can hold one) is freed by the cycle
    collector, which may run in a child: its session must not be destroyed there."""
    gc.disable()  # the cycle stays garbage until the child collects it
    try:
        runner = make_runner(load_in_memory(surgeon.fuse(STN, quiet=True).model), PluginSet.installed())
        runner.run(stn_feeds())
        cycle = [runner]
        cycle.append(cycle)
        del runner, cycle
        assert _in_fork_child(lambda: str(gc.collect() > 0)) == "True"
    finally:
        gc.enable()
    gc.collect()  # in the parent, freeing it is fine


def _in_fork_child(work) -> str:
    """``work()`` in a fork child, its text back; a child that does not answer is killed."""
    read, write = os.pipe()
    pid = os.fork()
    # The child leaves as multiprocessing's do, with os._exit: onnxruntime's own exit handlers block
    # in any fork child of a process that loaded it (plain onnxruntime too), surgeon or not.
    if pid == 0:
        try:
            os.write(write, work().encode())
        finally:
            os._exit(0)
    os.close(write)
    try:
        return _read_with_timeout(read, TIMEOUT)
    except BaseException:
        os.kill(pid, signal.SIGKILL)  # a hung child must not outlive the test
        raise
    finally:
        os.waitpid(pid, 0)
        os.close(read)


def _read_with_timeout(fd: int, seconds: float) -> str:
    box = []
    reader = threading.Thread(target=lambda: box.append(os.read(fd, 100).decode()), daemon=True)
    reader.start()
    reader.join(seconds)
    assert box, "the fork child did not answer: it hangs"
    return box[0]


def test_threads_asking_for_one_model_build_one_runner():
    clear_cache()
    plugins = PluginSet.installed()
    start = threading.Barrier(8)
    got = []

    def ask():
        start.wait()
        got.append(get_runner(STN, plugins))
    threads = [threading.Thread(target=ask) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(TIMEOUT)
    assert len(got) == 8 and len({id(r) for r in got}) == 1


def test_threads_running_a_new_runner_at_once_build_each_session_once():
    runner = make_runner(load_in_memory(surgeon.fuse(STN, quiet=True).model), PluginSet.installed())
    feeds = stn_feeds(3)
    start = threading.Barrier(8)
    before = sessions_created()
    got, errors = [], []

    def first_run():
        start.wait()
        try:
            got.append(runner.run(dict(feeds))["y"])
        except Exception as exc:  # a race shows as an exception in one of the threads
            errors.append(exc)
    threads = [threading.Thread(target=first_run) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(TIMEOUT)
    assert not errors and len(got) == 8
    assert all(np.array_equal(g, got[0]) for g in got)
    assert runner.sessions_created == sessions_created() - before == len(runner.plan().ort_stages)


def test_fuse_validate_and_run_from_threads_agree_with_one_thread():
    result = surgeon.fuse(STN, quiet=True)
    want = surgeon.run(result.model, stn_feeds(4), quiet=True)["y"]
    answers, errors = [], []

    def work(k):
        try:
            if k % 3 == 0:
                answers.append(np.array_equal(surgeon.run(result.model, stn_feeds(4), quiet=True)["y"], want))
            elif k % 3 == 1:
                answers.append(surgeon.validate(STN, result.model, far=False, quiet=True).passed)
            else:
                answers.append(len(surgeon.fuse(STN, quiet=True).report.rewrites) == 1)
        except Exception as exc:
            errors.append(exc)
    threads = [threading.Thread(target=work, args=(k,)) for k in range(9)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(TIMEOUT)
    assert not errors and answers == [True] * 9
