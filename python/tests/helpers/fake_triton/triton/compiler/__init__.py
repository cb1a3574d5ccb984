from triton.compiler.compiler import CompiledKernel, compile
