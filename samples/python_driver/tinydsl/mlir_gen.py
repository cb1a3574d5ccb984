"""Stage 2, mlir_gen: a traced Graph as MLIR text, the form mlir_gpu's
compiler library takes: one gpu.module holding one `gpu.func ... kernel`
(gpu, arith, memref and scf dialects), every shape static."""

from __future__ import annotations

_ARITH = {("add", "index"): "arith.addi", ("sub", "index"): "arith.subi",
          ("mul", "index"): "arith.muli", ("div", "index"): "arith.divui",
          ("add", "f32"): "arith.addf", ("sub", "f32"): "arith.subf",
          ("mul", "f32"): "arith.mulf", ("div", "f32"): "arith.divf"}


def _memref(size):
    return f"memref<{size}xf32>"


def _constant(value, type_):
    if type_ == "f32":
        return f"arith.constant {float(value)!r} : f32"
    return f"arith.constant {int(value)} : index"


def render(graph, name: str) -> str:
    """The module; `name` names the gpu.module, the gpu.func and the PTX entry."""
    params = []
    for p in graph.params:
        params.append(f"%{p[1]}: {_memref(p[2])}" if p[0] == "tensor" else f"%{p[1]}: f32")
    lines = ["module attributes {gpu.container_module} {",
             f"  gpu.module @{name} {{",
             f"    gpu.func @{name}({', '.join(params)}) kernel {{",
             "      %zero = arith.constant 0.0 : f32"]
    masks = 0
    for kind, result, type_, operands, extra in graph.ops:
        if kind == "const":
            lines.append(f"      {result.name} = {_constant(extra, type_)}")
        elif kind in ("block_id", "thread_id"):
            lines.append(f"      {result.name} = gpu.{kind} x")
        elif kind in ("add", "sub", "mul", "div"):
            a, b = operands
            lines.append(f"      {result.name} = {_ARITH[kind, type_]} {a.name}, {b.name} : {type_}")
        elif kind in ("load", "store"):
            # Masked by the tensor's size: out of range loads 0, stores nothing.
            tensor, index = extra, operands[0]
            t = _memref(tensor.size)
            mask, size = f"%m{masks}", f"%n{masks}"
            masks += 1
            lines.append(f"      {size} = arith.constant {tensor.size} : index")
            lines.append(f"      {mask} = arith.cmpi ult, {index.name}, {size} : index")
            if kind == "load":
                lines += [f"      {result.name} = scf.if {mask} -> (f32) {{",
                          f"        %l{masks} = memref.load {tensor.name}[{index.name}] : {t}",
                          f"        scf.yield %l{masks} : f32",
                          "      } else {",
                          "        scf.yield %zero : f32",
                          "      }"]
            else:
                lines += [f"      scf.if {mask} {{",
                          f"        memref.store {operands[1].name}, {tensor.name}[{index.name}] : {t}",
                          "      }"]
        else:  # a Graph only makes the kinds above
            raise AssertionError(f"unknown operation {kind}")
    lines += ["      gpu.return", "    }", "  }", "}", ""]
    return "\n".join(lines)
