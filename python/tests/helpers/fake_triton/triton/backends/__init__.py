import types

from triton.backends.nvidia.compiler import CUDABackend

backends = {"nvidia": types.SimpleNamespace(compiler=CUDABackend)}
