"""Python callbacks inside a tuning (lavapipe): constraints, heuristics, early prune, perf model,
hooks; an exception a callback raises comes back from the call as that same Python exception
with its traceback, the key is not remembered, and a configuration that fails is recorded with
its reason while tuning goes on."""
import traceback

import numpy as np
import pytest

import libtune
from kernels import FAST, SAXPY_GLSL, saxpy

RNG = np.random.default_rng(99)


def inputs(n=1000):
    return (RNG.uniform(-1, 1, n).astype(np.float32), RNG.uniform(-1, 1, n).astype(np.float32))


def check_saxpy(tuner, dev, a=2.0, n=1000, **kw):
    x, y = inputs(n)
    want = np.float32(a) * x + y
    tuner(dev, x, y, a, n, **kw)
    np.testing.assert_allclose(y, want, rtol=1e-6, atol=1e-6)


class Boom(Exception):
    pass


def raising_constraint(config, device):
    if config["block.x"] == 64:
        raise Boom("constraint broke on 64")
    return True


def test_constraint_exception_is_the_original_python_exception(vulkan_device):
    tuner = libtune.Tuner(saxpy(constraints={"fits": raising_constraint}), **FAST)
    x, y = inputs()
    with pytest.raises(Boom, match="constraint broke on 64") as e:
        tuner(vulkan_device, x, y, 1.0, 1000)
    frames = [f.name for f in traceback.extract_tb(e.value.__traceback__)]
    assert "raising_constraint" in frames, frames
    notes = "\n".join(getattr(e.value, "__notes__", []))
    assert "callback_failed" in notes and "fits" in notes, notes
    assert tuner.best(vulkan_device, x, y, 1.0, 1000) is None  # not remembered
    assert tuner.reports() == [] or tuner.reports()[-1]["status"] == "callback_failed"


def test_dims_and_hook_exceptions_come_back(vulkan_device):
    def dims(config, args):
        if config["ELEMS"] == 2:
            raise KeyError("dims says no")
        return -(-args["n"] // (config["block.x"] * config["ELEMS"]))

    tuner = libtune.Tuner(saxpy(dims=dims), **FAST)
    x, y = inputs()
    with pytest.raises(KeyError, match="dims says no"):
        tuner(vulkan_device, x, y, 1.0, 1000)

    def pre_hook(config, args):
        raise ZeroDivisionError("pre_hook fails")

    tuner = libtune.Tuner(saxpy(pre_hook=pre_hook), **FAST)
    with pytest.raises(ZeroDivisionError, match="pre_hook fails"):
        tuner(vulkan_device, x, y, 1.0, 1000)

    def verify(config, outputs):
        raise RuntimeError("verify exploded")

    tuner = libtune.Tuner(saxpy(verify=verify), **FAST)
    with pytest.raises(RuntimeError, match="verify exploded"):
        tuner(vulkan_device, x, y, 1.0, 1000)


def test_a_later_call_tunes_again_after_a_callback_failed(vulkan_device):
    state = {"fail": True}

    def flaky(config, device):
        if state["fail"]:
            raise ValueError("not yet")
        return True

    tuner = libtune.Tuner(saxpy(constraints={"flaky": flaky}), **FAST)
    x, y = inputs()
    with pytest.raises(ValueError, match="not yet"):
        tuner(vulkan_device, x, y, 1.0, 1000)
    state["fail"] = False
    check_saxpy(tuner, vulkan_device)
    assert tuner.reports()[-1]["status"] == "ok"


def test_hooks_are_paired_and_told_the_outcome(vulkan_device):
    events = []

    def pre(config, args):
        assert args["n"] == 1000 and args["x"].shape == (1000,)
        events.append(("pre", config["block.x"], config["ELEMS"]))

    def post(config, args, outcome):
        events.append(("post", config["block.x"], config["ELEMS"], outcome))

    tuner = libtune.Tuner(saxpy(pre_hook=pre, post_hook=post), **FAST)
    check_saxpy(tuner, vulkan_device)
    assert events and len(events) % 2 == 0
    for p, q in zip(events[::2], events[1::2]):
        assert p[0] == "pre" and q[0] == "post" and p[1:] == q[1:3]
        assert q[3] is None  # every launch went fine


def test_constraints_heuristics_prune_and_perf_model(vulkan_device):
    def small_blocks(config, device):
        assert device["backend"] == "vulkan" and device["max_threads_per_block"] > 0
        return config["block.x"] <= 64

    tuner = libtune.Tuner(saxpy(constraints={"small": small_blocks}), **FAST)
    check_saxpy(tuner, vulkan_device)
    assert {r["block.x"] for r in tuner.report()} == {32, 64}

    # A heuristic decides ELEMS from the arguments: it is not in the space, and joins the key.
    space = {"block.x": [32, 64, 128]}
    heur = {"ELEMS": lambda args, device: 4 if args["n"] >= 1000 else 1}
    tuner = libtune.Tuner(saxpy(space=space, heuristics=heur), **FAST)
    check_saxpy(tuner, vulkan_device, n=1000)
    check_saxpy(tuner, vulkan_device, n=500)
    elems = [{r["params"]["ELEMS"] for r in rep["results"]} for rep in tuner.reports()]
    assert elems == [{4}, {1}], elems

    def prune(configs, args):
        return [c for c in configs if c["ELEMS"] != 1]

    tuner = libtune.Tuner(saxpy(early_prune=prune), **FAST)
    check_saxpy(tuner, vulkan_device)
    assert {r["ELEMS"] for r in tuner.report()} == {2, 4}

    def model(config, args, device):
        return abs(config["block.x"] - 64) + config["ELEMS"]  # best: block 64, ELEMS 1

    tuner = libtune.Tuner(saxpy(perf_model=model, top_k=2), **FAST)
    check_saxpy(tuner, vulkan_device)
    assert sorted((r["block.x"], r["ELEMS"]) for r in tuner.report()) == [(64, 1), (64, 2)]


def test_a_configuration_that_fails_to_compile_is_recorded(vulkan_device):
    broken = SAXPY_GLSL.replace("void main() {", "#if ELEMS == 2\n  this is not glsl;\n#endif\nvoid main() {")
    tuner = libtune.Tuner(saxpy(source=broken), **FAST)
    check_saxpy(tuner, vulkan_device)
    for r in tuner.report():
        if r["ELEMS"] == 2:
            assert r["status"] == "compile_error", r
            assert r["reason"]
        else:
            assert r["status"] == "ok", r
