"""Threads calling one Tuner at once (lavapipe): the GIL is released while libtune tunes and
launches and taken back by Python callbacks, so threads neither deadlock (the watchdog in
conftest.py ends a hung run) nor mix up their outputs."""
import sys
import threading
import time

import numpy as np

import libtune
from kernels import FAST, saxpy


def run_threads(tuner, dev, sizes):
    errors = []

    def work(i, n):
        try:
            rng = np.random.default_rng(i)
            for _ in range(3):
                x = rng.uniform(-1, 1, n).astype(np.float32)
                y = rng.uniform(-1, 1, n).astype(np.float32)
                a = float(i + 1)
                want = np.float32(a) * x + y
                tuner(dev, x, y, a, n)
                np.testing.assert_allclose(y, want, rtol=1e-6, atol=1e-5)
        except Exception as e:  # reported by the main thread
            errors.append((i, e))

    threads = [threading.Thread(target=work, args=(i, n)) for i, n in enumerate(sizes)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors


def test_threads_share_one_key_and_tune_it_once(vulkan_device):
    tuner = libtune.Tuner(saxpy(), **FAST)
    run_threads(tuner, vulkan_device, [3000] * 6)
    assert len(tuner.reports()) == 1  # single flight: one tuning, five waiters


def test_threads_with_python_callbacks_and_different_keys(vulkan_device):
    calls = {"dims": 0}
    lock = threading.Lock()

    def dims(config, args):  # a Python call on every launch, tuning and hits alike
        with lock:
            calls["dims"] += 1
        return -(-args["n"] // (config["block.x"] * config["ELEMS"]))

    def small(config, device):
        return config["block.x"] <= 64

    tuner = libtune.Tuner(saxpy(dims=dims, constraints={"small": small},
                                verify=lambda c, out: True), **FAST)
    run_threads(tuner, vulkan_device, [500, 1000, 2000, 4000, 500, 1000])
    assert len(tuner.reports()) == 4
    assert calls["dims"] > 0


def test_the_gil_is_released_while_tuning(vulkan_device):
    # With a switch interval of 60 s, Python never takes the GIL from a thread: this thread can
    # run only while the other one has released it. It counts while the other thread is inside
    # the call (compiling and timing nine variants in C++): with the GIL held throughout, it
    # would wake only after the call returned and count nothing.
    tuner = libtune.Tuner(saxpy(), **FAST)
    entered, done = threading.Event(), threading.Event()
    errors = []

    def tune():
        try:
            x = np.ones(8000, np.float32)
            y = np.zeros(8000, np.float32)
            entered.set()
            tuner(vulkan_device, x, y, 2.0, 8000)
            done.set()
            np.testing.assert_array_equal(y, np.full(8000, 2.0, np.float32))
        except Exception as e:
            errors.append(e)
        finally:
            done.set()

    old = sys.getswitchinterval()
    sys.setswitchinterval(60)
    try:
        t = threading.Thread(target=tune)
        steps_while_tuning = 0
        t.start()
        entered.wait()
        while not done.is_set():
            steps_while_tuning += 1
            time.sleep(0)  # hands the GIL back, so the call can return when it finishes
        t.join()
    finally:
        sys.setswitchinterval(old)
    assert not errors, errors
    assert len(tuner.reports()) == 1
    assert steps_while_tuning > 100, steps_while_tuning
