"""A stand-in for Triton's layout where jitscope.triton wraps it (Triton
3.6): compile() runs the stages a backend's add_stages fills, and a
CompiledKernel loads its binary at its first launch (_init_handles)."""
from triton import backends, compiler
from triton.compiler import compile
