"""Tuning Vulkan kernels on NumPy arrays (lavapipe here): outputs against a CPU reference on
random inputs, verify against references, reset/restore, keys, reports, dtype errors."""
import numpy as np
import pytest

import libtune
from kernels import ACCUMULATE_GLSL, FAST, SPACE, saxpy, wrong_saxpy

RNG = np.random.default_rng(1234)


def random_inputs(n):
    x = RNG.uniform(-1, 1, n).astype(np.float32)
    y = RNG.uniform(-1, 1, n).astype(np.float32)
    return x, y


def test_saxpy_tunes_and_matches_the_cpu(vulkan_device):
    tuner = libtune.Tuner(saxpy(), **FAST)
    n = 10007
    x, y = random_inputs(n)
    want = np.float32(0.75) * x + y
    tuner(vulkan_device, x, y, 0.75, n)
    np.testing.assert_allclose(y, want, rtol=1e-6, atol=1e-6)  # written back into the array

    rows = tuner.report()
    assert len(rows) == len(SPACE["block.x"]) * len(SPACE["ELEMS"])
    assert {(r["block.x"], r["ELEMS"]) for r in rows} == {
        (b, e) for b in SPACE["block.x"] for e in SPACE["ELEMS"]}
    assert all(r["status"] == "ok" for r in rows), rows
    winners = [r for r in rows if r["winner"]]
    assert len(winners) == 1
    assert all(r["kernel"] == "saxpy" and r["source"] == "tuned" for r in rows)
    best = tuner.best(vulkan_device, x, y, 0.75, n)
    assert (best["block.x"], best["ELEMS"]) == (winners[0]["block.x"], winners[0]["ELEMS"])
    # The same columns in every row: pandas.DataFrame(rows) is a table.
    assert len({tuple(sorted(r)) for r in rows}) == 1


def test_key_buckets_and_hits(vulkan_device):
    tuner = libtune.Tuner(saxpy(), **FAST)
    for n in (1000, 1020, 3000):  # 1000 and 1020 share the key 1024
        x, y = random_inputs(n)
        want = np.float32(-2.0) * x + y
        tuner(vulkan_device, x, y, -2.0, n)
        np.testing.assert_allclose(y, want, rtol=1e-6, atol=1e-6)
    reports = tuner.reports()
    assert len(reports) == 2, [r["key"] for r in reports]
    assert reports[0]["key"] != reports[1]["key"]


def test_device_arrays_stay_on_the_device(vulkan_device):
    tuner = libtune.Tuner(saxpy(), **FAST)
    n = 4096
    x, y = random_inputs(n)
    y0 = y.copy()
    dx, dy = vulkan_device.array(x), vulkan_device.array(y)
    assert dx.shape == (n,) and dx.dtype == "f32"
    tuner(vulkan_device, dx, dy, 0.5, n)
    tuner(vulkan_device, dx, dy, 0.5, n)  # a hit: y updated twice
    np.testing.assert_allclose(dy.numpy(), 0.5 * x + 0.5 * x + y, rtol=1e-5, atol=1e-6)
    np.testing.assert_array_equal(y, y0)  # the host array was copied, not used
    z = vulkan_device.zeros((2, 8), "float32")
    np.testing.assert_array_equal(z.numpy(), np.zeros((2, 8), np.float32))


def test_restore_value_gives_exactly_one_launch(vulkan_device):
    # y is updated in place: without restore_value every timed launch would add a*x again.
    tuner = libtune.Tuner(saxpy(), **FAST)
    n = 2048
    x, y = random_inputs(n)
    want = np.float32(3.0) * x + y
    tuner(vulkan_device, x, y, 3.0, n)
    np.testing.assert_allclose(y, want, rtol=1e-6, atol=1e-6)


def test_reset_to_zero_zeroes_before_the_launch(vulkan_device):
    k = libtune.Kernel("accumulate", ACCUMULATE_GLSL, language="glsl",
                       signature=["x: f32[]", "o: f32[]", "n: i32"],
                       space={"block.x": [32, 64]}, key=["n"], reset_to_zero=["o"],
                       dims=libtune.grid_1d("n"), outputs=["o"])
    tuner = libtune.Tuner(k, **FAST)
    n = 3000
    x = RNG.uniform(-1, 1, n).astype(np.float32)
    o = np.full(n, 7.0, np.float32)
    tuner(vulkan_device, x, o, n)
    np.testing.assert_allclose(o, x, rtol=0, atol=0)  # one launch on a zeroed buffer


def test_nothing_to_compare_reports_not_checked(vulkan_device):
    # Neither the kernel's verify nor a call's reference: nothing was compared, so no row may say
    # verified; a later call with a reference checks the winner it reuses from memory.
    tuner = libtune.Tuner(saxpy(), **FAST)
    n = 4000
    x, y = random_inputs(n)
    tuner(vulkan_device, x, y, 2.0, n)
    rows = tuner.report()
    assert rows and all(r["status"] == "ok" for r in rows), rows
    assert all(r["verification"] == "not_checked" and not r["verified"] for r in rows), rows


def test_verify_callable_reports_verified(vulkan_device):
    seen = []

    def verify(config, outputs):
        seen.append(config["ELEMS"])
        return True

    tuner = libtune.Tuner(saxpy(verify=verify), **FAST)
    n = 4000
    x, y = random_inputs(n)
    tuner(vulkan_device, x, y, 2.0, n)
    (winner,) = [r for r in tuner.report() if r["winner"]]
    assert seen and winner["verification"] == "verified", winner


def test_reference_drops_the_wrong_variant(vulkan_device):
    tuner = libtune.Tuner(wrong_saxpy(wrong_at=4), **FAST)
    n = 5000
    x, y = random_inputs(n)
    want = np.float32(1.5) * x + y
    tuner(vulkan_device, x, y, 1.5, n, reference={"y": want}, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(y, want, rtol=1e-5, atol=1e-6)
    rows = tuner.report()
    # Only what can win is verified (docs/cpp.md): the winner was checked; an ELEMS=4 row the rule
    # reached is wrong_output with the reason, one it never reached stays unverified (ok on its
    # timing) and never wins. Which rows the rule reaches depends on the device's timings.
    (winner,) = [r for r in rows if r["winner"]]
    assert winner["verified"] and winner["status"] == "ok" and winner["ELEMS"] != 4, winner
    assert winner["verification"] == "verified", winner
    for r in rows:
        if r["ELEMS"] == 4 and r["verified"]:
            assert r["status"] == "wrong_output", r
            assert r["verification"] == "wrong_output", r
            assert "output 'y' differs from the reference" in r["reason"], r["reason"]
            assert "rtol 1e-05" in r["reason"]
        elif r["ELEMS"] == 4:
            # Garbage that never came near winning: ok on its timing, and says not checked.
            assert r["status"] == "ok" and not r["winner"], r
            assert r["verification"] == "not_checked", r
        else:
            assert r["status"] == "ok", r
            assert r["verification"] == ("verified" if r["verified"] else "not_checked"), r


def test_every_configuration_checks_each_output(vulkan_device):
    # Kernel Tuner's semantics on request: every configuration's output is checked before it
    # is timed, so each wrong ELEMS=4 variant is wrong_output and every other one verified.
    tuner = libtune.Tuner(wrong_saxpy(wrong_at=4), verify="every_configuration", **FAST)
    n = 5000
    x, y = random_inputs(n)
    want = np.float32(1.5) * x + y
    tuner(vulkan_device, x, y, 1.5, n, reference={"y": want}, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(y, want, rtol=1e-5, atol=1e-6)
    rows = tuner.report()
    assert len(rows) == len(SPACE["block.x"]) * len(SPACE["ELEMS"])
    for r in rows:
        assert r["verified"], r
        if r["ELEMS"] == 4:
            assert r["status"] == "wrong_output" and r["verification"] == "wrong_output", r
            assert r["samples"] == 0, r  # never timed
        else:
            assert r["status"] == "ok" and r["verification"] == "verified", r
    with pytest.raises(ValueError, match="verify: 'all'"):
        libtune.Tuner(saxpy(), verify="all")


def test_reference_fails_every_wrong_variant(vulkan_device):
    # Every configuration wrong: the rule reaches each in turn, whatever the device's timings.
    tuner = libtune.Tuner(wrong_saxpy(wrong_at=4, space={"block.x": [32, 64], "ELEMS": [4]}),
                          **FAST)
    n = 5000
    x, y = random_inputs(n)
    want = np.float32(1.5) * x + y
    with pytest.raises(libtune.TuneError) as e:
        tuner(vulkan_device, x, y, 1.5, n, reference={"y": want}, rtol=1e-5, atol=1e-6)
    assert "all_failed" in str(e.value), str(e.value)
    assert str(e.value).count("output 'y' differs from the reference") == 2, str(e.value)


def test_reference_that_nothing_matches_fails_with_every_reason(vulkan_device):
    tuner = libtune.Tuner(saxpy(), **FAST)
    n = 512
    x, y = random_inputs(n)
    wrong = np.float32(1.5) * x + y + 1.0
    with pytest.raises(libtune.TuneError) as e:
        tuner(vulkan_device, x, y, 1.5, n, reference={"y": wrong})
    assert e.value.code == "all_failed"
    assert "output 'y' differs from the reference" in e.value.message
    with pytest.raises(ValueError, match="reference 'y' has 3 elements"):
        tuner(vulkan_device, x, y, 1.5, n, reference={"y": np.zeros(3, np.float32)})
    with pytest.raises(ValueError, match="'n' is not a buffer"):
        tuner(vulkan_device, x, y, 1.5, n, reference={"n": wrong})


def test_verify_callable_drops_what_it_rejects(vulkan_device, monkeypatch):
    # Only what can win is verified (docs/cpp.md, "Verification"): the winner rule's pick, checked
    # while the race waits for compiles or after it, then the next in the rule's order until one
    # passes. Every ELEMS other than 4 is rejected, so the winner is an ELEMS=4 configuration
    # that was checked; each configuration is checked at most once, and exactly the rejected
    # ones are stored as wrong_output. The bucket's edge checks (on by default: they verify the
    # winner and the runner-up again, at other sizes) are off: this is the tuning's own
    # verification.
    monkeypatch.setenv("TUNE_BUCKET_EDGES", "0")
    seen = []

    def verify(config, outputs):
        seen.append((config["block.x"], config["ELEMS"]))
        assert outputs["y"].dtype == np.float32 and outputs["y"].shape == (777,)
        return config["ELEMS"] == 4

    tuner = libtune.Tuner(saxpy(verify=verify), **FAST)
    x, y = random_inputs(777)
    tuner(vulkan_device, x, y, 1.0, 777)
    assert seen and len(set(seen)) == len(seen), seen  # none checked twice
    best = tuner.best(vulkan_device, x, y, 1.0, 777)
    assert best["ELEMS"] == 4 and (best["block.x"], best["ELEMS"]) in seen, (best, seen)
    rejected = {c for c in seen if c[1] != 4}
    for r in tuner.report():
        key = (r["block.x"], r["ELEMS"])
        assert (r["status"] == "wrong_output") == (key in rejected), r
        assert r["verified"] == (key in seen), r
        if key in rejected:
            assert "verify returned False" in r["reason"]


def test_dtype_and_argument_errors_name_the_culprit(vulkan_device):
    tuner = libtune.Tuner(saxpy(), **FAST)
    x, y = random_inputs(64)
    with pytest.raises(TypeError, match="argument 'x': dtype float64 does not match the declared float32"):
        tuner(vulkan_device, x.astype(np.float64), y, 1.0, 64)
    with pytest.raises(TypeError, match="argument 'y': unsupported dtype 'complex64'"):
        tuner(vulkan_device, x, y.astype(np.complex64), 1.0, 64)
    with pytest.raises(ValueError, match="argument 'x': the array is not C-contiguous"):
        tuner(vulkan_device, np.zeros((64, 2), np.float32)[:, 0], y, 1.0, 64)
    with pytest.raises(TypeError, match="takes 4 arguments, 3 were given"):
        tuner(vulkan_device, x, y, 1.0)
    with pytest.raises(ValueError, match="argument 'n': 4294967296 is out of range"):
        tuner(vulkan_device, x, y, 1.0, 2**32)
    with pytest.raises(TypeError, match="argument 'n': expected an int"):
        tuner(vulkan_device, x, y, 1.0, 64.0)
    with pytest.raises(TypeError, match="argument 'x': expected a NumPy array"):
        tuner(vulkan_device, [1.0] * 64, y, 1.0, 64)
    with pytest.raises(TypeError, match="unexpected keyword argument 'bogus'"):
        tuner(vulkan_device, x, y, 1.0, 64, bogus=1)


def test_read_only_arrays_are_inputs(vulkan_device):
    tuner = libtune.Tuner(saxpy(), **FAST)
    x, y = random_inputs(256)
    y0 = y.copy()
    y.setflags(write=False)
    tuner(vulkan_device, x, y, 1.0, 256)  # runs; nothing can be written back
    np.testing.assert_array_equal(y, y0)


def test_rotating_input_copies_match_the_cpu(vulkan_device):
    # timing_cache="rotate": timed launches read copies of x (y is restored, so it stays the
    # caller's); the call's own launch writes the caller's y.
    tuner = libtune.Tuner(saxpy(), timing_cache="rotate", **FAST)
    n = 1 << 16
    x, y = random_inputs(n)
    want = np.float32(2.0) * x + y
    tuner(vulkan_device, x, y, 2.0, n)
    np.testing.assert_allclose(y, want, rtol=1e-6, atol=1e-6)
    with pytest.raises(ValueError, match="timing_cache: 'cold'"):
        libtune.Tuner(saxpy(), timing_cache="cold", **FAST)


def test_effort_and_tolerance_keywords(vulkan_device):
    # effort="quick" with a tolerance: the tuner times on the quick preset and still matches
    # the CPU; a misspelt effort is refused naming the keyword.
    tuner = libtune.Tuner(saxpy(), effort="quick", tolerance=0.02, persistent=False)
    n = 1 << 12
    x, y = random_inputs(n)
    want = np.float32(3.0) * x + y
    tuner(vulkan_device, x, y, 3.0, n)
    np.testing.assert_allclose(y, want, rtol=1e-6, atol=1e-6)
    with pytest.raises(ValueError, match="effort: 'fast'"):
        libtune.Tuner(saxpy(), effort="fast", **FAST)
