import os

import triton.backends as backends

LOADS = []  # (kernel name, its binary) per load, in order


class CompiledKernel:
    def __init__(self, name, binary):
        self.name = name
        self.binary = binary
        self.module = None

    def _init_handles(self):
        if self.module is not None:
            return
        LOADS.append((self.name, self.binary))
        self.module = f"module:{self.name}"

    def __getitem__(self, grid):
        def launch(*args):
            self._init_handles()
            return self.module
        return launch


def compile(src, target=None, options=None):
    backend = backends.backends["nvidia"].compiler()
    stages = {}
    backend.add_stages(stages, options or {})
    ir = src.fn.__name__
    metadata = {}
    for ext, run in stages.items():
        ir = run(ir, metadata)
    if os.environ.get("FAKE_TRITON_FAIL") == src.fn.__name__:
        raise RuntimeError("ptxas died")
    return CompiledKernel(src.fn.__name__, ir)
