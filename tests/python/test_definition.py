"""Kernel definitions refused before any device is involved, each error naming the culprit:
the binding's own checks (TypeError / ValueError) and Autotuner::make's (TuneError)."""
import pytest

import libtune
from kernels import SAXPY_GLSL, saxpy


def test_a_valid_definition_builds_a_tuner():
    tuner = libtune.Tuner(saxpy(), persistent=False)
    assert tuner.report() == [] and tuner.reports() == []
    tuner.close()
    with pytest.raises(libtune.TuneError, match="closed"):
        tuner.warmup(None)


def test_binding_errors_name_the_culprit():
    with pytest.raises(TypeError, match="signature= is required"):
        libtune.Kernel("k", SAXPY_GLSL, language="glsl", space={"block.x": [64]}, dims=lambda c, a: 1)
    with pytest.raises(ValueError, match="language 'opencl'"):
        saxpy(language="opencl")
    with pytest.raises(TypeError, match="language= is required"):
        libtune.Kernel("k", SAXPY_GLSL, signature=["x: f32[]"], space={"block.x": [64]},
                       dims=lambda c, a: 1)
    with pytest.raises(TypeError, match="unsupported dtype 'complex64'"):
        saxpy(signature=["x: complex64[]", "y: f32[]", "a: f32", "n: i32"])
    with pytest.raises(ValueError, match="signature entry 'x f32'"):
        saxpy(signature=["x f32", "y: f32[]", "a: f32", "n: i32"])
    with pytest.raises(TypeError, match="unexpected keyword argument 'spaces'"):
        saxpy(spaces={})
    with pytest.raises(ValueError, match="outputs: 'n' is not a buffer"):
        saxpy(outputs=["n"])
    with pytest.raises(ValueError, match="grid_1d: 'm' is not an argument"):
        saxpy(dims=libtune.grid_1d("m"))
    with pytest.raises(TypeError, match="ELEMS"):
        saxpy(space={"block.x": [64], "ELEMS": [1.5]})
    with pytest.raises(TypeError, match="unexpected keyword argument 'warmup'"):
        libtune.Tuner(saxpy(), warmup=3)
    with pytest.raises(ValueError, match="effort: 'huge'.*'quick', 'standard' or 'thorough'"):
        libtune.Tuner(saxpy(), effort="huge")
    for effort in ("quick", "standard", "thorough"):
        libtune.Tuner(saxpy(), effort=effort, persistent=False).close()


def test_autotuner_make_errors_are_tune_errors():
    with pytest.raises(libtune.TuneError) as e:
        libtune.Tuner(saxpy(key=["m"]))
    assert e.value.code == "invalid_argument" and "'m'" in e.value.message
    with pytest.raises(libtune.TuneError) as e:
        libtune.Tuner(saxpy(), rep_ms=-1)
    assert e.value.code == "invalid_argument" and "rep_ms" in e.value.message
    with pytest.raises(libtune.TuneError) as e:
        libtune.Tuner(saxpy(space={"block.x": [64], "TUNE_X": [1]}))
    assert "TUNE_X" in e.value.message


def test_dtype_names():
    for name in ("f16", "float16", "bf16", "bfloat16", "f32", "float64", "i8", "uint64"):
        saxpy(signature=[f"x: {name}[]", "y: f32[]", "a: f32", "n: i32"])
    with pytest.raises(TypeError, match="unsupported dtype 'bool'"):
        saxpy(signature=["x: bool[]", "y: f32[]", "a: f32", "n: i32"])
