"""Stage 1, trace: run the kernel's Python function on stand-in values and
record what it does as a list of operations (a Graph).

Indices (program_id(), thread_id(), int arithmetic on them) have MLIR's
`index` type, data (tensor elements, float arguments) `f32`. Python ints and
floats mix into either as constants; an index and an f32 never mix: that is
a TraceError, raised in this stage, which fails the compile unit.
"""

from __future__ import annotations

import threading

_current = threading.local()


class TraceError(TypeError):
    """A kernel body the DSL cannot compile."""


class Value:
    """An SSA value being traced: `name` ("%v3") of `type` ("index" or "f32")."""

    __slots__ = ("graph", "name", "type")

    def __init__(self, graph, name, type_):
        self.graph, self.name, self.type = graph, name, type_

    def _binary(self, kind, other, swap=False):
        other = self.graph.coerce(other, self.type)
        if other.type != self.type:
            raise TraceError(f"cannot {kind} {self.type} and {other.type} values: "
                             "indices and data do not mix")
        a, b = (other, self) if swap else (self, other)
        return self.graph.emit(kind, self.type, a, b)

    def __add__(self, o): return self._binary("add", o)
    def __radd__(self, o): return self._binary("add", o, swap=True)
    def __sub__(self, o): return self._binary("sub", o)
    def __rsub__(self, o): return self._binary("sub", o, swap=True)
    def __mul__(self, o): return self._binary("mul", o)
    def __rmul__(self, o): return self._binary("mul", o, swap=True)

    def __truediv__(self, o):
        if self.type != "f32":
            raise TraceError("'/' divides data; use '//' for indices")
        return self._binary("div", o)

    def __floordiv__(self, o):
        if self.type != "index":
            raise TraceError("'//' divides indices; use '/' for data")
        return self._binary("div", o)

    def __bool__(self):
        raise TraceError("a traced value has no truth value: kernels cannot branch on data")


class TensorArg:
    """A 1-D f32 tensor argument: `x[i]` loads, `x[i] = v` stores, both
    masked by the tensor's size (out of range: loads give 0, stores do nothing)."""

    def __init__(self, graph, name, size):
        self.graph, self.name, self.size = graph, name, size

    def __getitem__(self, i):
        return self.graph.emit("load", "f32", self.graph.coerce(i, "index"), tensor=self)

    def __setitem__(self, i, value):
        value = self.graph.coerce(value, "f32")
        if value.type != "f32":
            raise TraceError(f"{self.name} holds f32 data, not {value.type} values")
        self.graph.emit("store", None, self.graph.coerce(i, "index"), value, tensor=self)


class Graph:
    """The traced kernel: its parameters (tensors, then f32 scalars, in the
    function's order) and its operations in program order."""

    def __init__(self):
        self.params = []  # ("tensor", name, size) or ("f32", name)
        self.ops = []     # (kind, result or None, type, operands, tensor or constant)
        self._count = 0

    def emit(self, kind, type_, *operands, tensor=None, constant=None):
        result = None
        if type_ is not None:
            result = Value(self, f"%v{self._count}", type_)
            self._count += 1
        self.ops.append((kind, result, type_, operands,
                         tensor if tensor is not None else constant))
        return result

    def coerce(self, x, type_):
        if isinstance(x, Value):
            if x.graph is not self:
                raise TraceError("a value from another kernel")
            return x
        if isinstance(x, bool) or not isinstance(x, (int, float)):
            raise TraceError(f"cannot use {type(x).__name__} in a kernel")
        if isinstance(x, float) and type_ == "index":
            raise TraceError(f"{x!r} is not an index")
        return self.emit("const", type_, constant=x)


def _graph():
    graph = getattr(_current, "graph", None)
    if graph is None:
        raise TraceError("program_id() and thread_id() exist only inside a kernel being traced")
    return graph


def program_id():
    """The block's index along x (gpu.block_id x)."""
    return _graph().emit("block_id", "index")


def thread_id():
    """The thread's index in its block along x (gpu.thread_id x)."""
    return _graph().emit("thread_id", "index")


def trace(fn, params, constexprs) -> Graph:
    """Runs `fn` with a TensorArg per tensor parameter, a Value per f32 one
    and the constexprs as plain Python numbers. `params`: (name, kind, size)."""
    graph = Graph()
    kwargs = dict(constexprs)
    for name, kind, size in params:
        if kind == "tensor":
            graph.params.append(("tensor", name, size))
            kwargs[name] = TensorArg(graph, f"%{name}", size)
        else:
            graph.params.append(("f32", name))
            kwargs[name] = Value(graph, f"%{name}", "f32")
    _current.graph = graph
    try:
        fn(**kwargs)
    finally:
        _current.graph = None
    if not any(op[0] == "store" for op in graph.ops):
        raise TraceError(f"{fn.__qualname__} stores nothing")
    return graph
