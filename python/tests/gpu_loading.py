"""On a GPU (ctest label gpu): a kernel built in a compile unit and loaded
later, outside it, as Triton loads at first launch, is credited to the
unit by unit.loading(); one loaded without it is not. The CUDA driver is
called through ctypes with a PTX kernel (the driver JIT-compiles it), so
nothing beyond the standard library is needed.

Without a GPU the whole file exits 77 (ctest: skipped), unless
JSTEST_GPU_REQUIRE=1, which makes that a failure."""

import ctypes
import os

import jitscope
import pytest
from conftest import load_trace

REQUIRE = os.environ.get("JSTEST_GPU_REQUIRE") == "1"


def _driver():
    try:
        cuda = ctypes.CDLL("libcuda.so.1")
    except OSError as e:
        return None, f"no CUDA driver ({e})"
    if cuda.cuInit(0) != 0:
        return None, "cuInit failed: no usable GPU"
    count = ctypes.c_int(0)
    if cuda.cuDeviceGetCount(ctypes.byref(count)) != 0 or count.value == 0:
        return None, "no CUDA device"
    return cuda, ""


CUDA, WHY = _driver()
if CUDA is None:
    if REQUIRE:
        raise RuntimeError(f"JSTEST_GPU_REQUIRE=1 but {WHY}")
    # 77 for ctest's SKIP_RETURN_CODE: pytest turns its own exit during
    # collection into an error, and a skipped test into a pass.
    print(f"gpu_loading SKIPPED: {WHY}", flush=True)
    os._exit(77)


def check(result, what):
    assert result == 0, f"{what} returned CUDA error {result}"


def ptx(name):
    return (f".version 8.0\n.target sm_75\n.address_size 64\n"
            f".visible .entry {name}()\n{{\n  ret;\n}}\n").encode()


def load_and_launch(name, text):
    module, function = ctypes.c_void_p(), ctypes.c_void_p()
    check(CUDA.cuModuleLoadData(ctypes.byref(module), ctypes.c_char_p(text)), "cuModuleLoadData")
    check(CUDA.cuModuleGetFunction(ctypes.byref(function), module, name.encode()),
          "cuModuleGetFunction")
    for _ in range(2):
        check(CUDA.cuLaunchKernel(function, 1, 1, 1, 32, 1, 1, 0, None, None, None),
              "cuLaunchKernel")
    check(CUDA.cuCtxSynchronize(), "cuCtxSynchronize")


def test_a_kernel_loaded_after_its_unit_closed_is_credited_through_loading(out):
    device, context = ctypes.c_int(), ctypes.c_void_p()
    check(CUDA.cuDeviceGet(ctypes.byref(device), 0), "cuDeviceGet")
    check(CUDA.cuDevicePrimaryCtxRetain(ctypes.byref(context), device), "cuDevicePrimaryCtxRetain")
    check(CUDA.cuCtxSetCurrent(context), "cuCtxSetCurrent")
    path = out("loading.json")
    jitscope.reset_compile_state()
    assert jitscope.start(path, cupti="on")
    with jitscope.compile_unit("ptx_kernel", key="credited") as unit:
        text = ptx("credited")  # the "compile": PTX made inside the unit
    with unit.loading():
        load_and_launch("credited", text)  # loaded and launched after the unit closed
    load_and_launch("uncredited", ptx("uncredited"))
    stats = jitscope.stop()
    assert stats.cupti_on, "CUPTI did not start on a machine with a GPU"
    trace = load_trace(path)
    (u,) = [e for e in trace if e.get("cat") == "compile_unit" and e.get("ph") == "X"]
    kernels = {}
    for e in trace:
        if e.get("ph") == "X" and e.get("name") in ("credited", "uncredited"):
            kernels.setdefault(e["name"], []).append(e.get("args", {}).get("compiled_by"))
    assert kernels == {"credited": [u["name"]] * 2, "uncredited": [None] * 2}, kernels
