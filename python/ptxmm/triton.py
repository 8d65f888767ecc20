"""Check a Triton kernel as compiled: ``ptxmm.triton.check(kernel, *args, grid=..., **meta)``.

The ``@triton.jit`` function is compiled for the target (Hopper, ``sm_90``, by default; no GPU is
needed), or an already compiled kernel is taken; its PTX and metadata give the launch (warps,
shared memory, cluster), the call's arguments are bound to the kernel's parameters (scalars as
values, tensors as global buffers of their size, tensor descriptors as tensor maps), and the kernel is checked with
:func:`ptxmm.check_kernel`. Triton writes ``.loc`` lines, so findings name the Python lines of
the kernel's source.

Tensors need not be on a GPU, nor exist: any object with ``dtype`` and ``numel()`` /
``element_size()`` (a ``torch.Tensor``, on any device) or ``dtype`` and ``nbytes`` (a NumPy
array) is a buffer of its bytes, and :class:`Buffer` stands for one without torch.

``launch_file(...)`` writes the PTX and a launch file, so that a failing check reruns from the
shell as ``ptxmm kernel KERNEL.ptx --launch KERNEL.launch.json``.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from typing import Any, Dict, List, Mapping, Optional, Sequence, Tuple, Union

import ptxmm

__all__ = ["Buffer", "Descriptor", "Compiled", "compile", "check", "launch_file", "launch_document"]

# Triton's names of element types, by the names torch and NumPy give them.
_DTYPES = {
    "float32": "fp32", "float": "fp32", "float16": "fp16", "half": "fp16", "bfloat16": "bf16",
    "float64": "fp64", "double": "fp64", "int8": "i8", "int16": "i16", "int32": "i32", "int": "i32",
    "int64": "i64", "long": "i64", "uint8": "u8", "uint16": "u16", "uint32": "u32", "uint64": "u64",
    "bool": "i1", "float8_e4m3fn": "fp8e4nv", "float8_e5m2": "fp8e5",
}
_TRITON_TYPES = set(_DTYPES.values()) | {"fp8e4b15", "i1"}


@dataclass(frozen=True)
class Buffer:
    """A tensor argument by its element type and element count, for checks without torch:
    ``Buffer("fp32", 1024)`` is a buffer of 4096 bytes passed as ``*fp32``."""

    dtype: Any
    numel: int

    @property
    def nbytes(self) -> int:
        bits = int("".join(ch for ch in _type_name(self.dtype) if ch.isdigit()) or 8)
        return self.numel * max(1, bits // 8)


@dataclass(frozen=True)
class Descriptor:
    """A host-side tensor descriptor (what ``triton.tools.tensor_descriptor.TensorDescriptor``
    passes) by element type, shape, block shape and strides in elements (outermost first, as
    Triton gives them; default: packed), for checks without torch. A ``TensorDescriptor`` itself
    is taken as well."""

    dtype: Any
    shape: Sequence[int]
    block_shape: Sequence[int]
    strides: Optional[Sequence[int]] = None


# ptxmm's names of tensor map element types (docs/kernels.md, "Tensor maps"), by Triton's.
_MAP_TYPES = {"fp32": "f32", "fp16": "f16", "bf16": "bf16", "fp64": "f64", "i8": "s8", "u8": "u8", "i16": "s16",
              "u16": "u16", "i32": "s32", "u32": "u32", "i64": "s64", "u64": "u64", "fp8e4nv": "e4m3", "fp8e5": "e5m2"}
_SWIZZLES = {0: "none", 1: "32B", 2: "64B", 3: "128B"}


def _descriptor_parts(d: Any) -> Tuple[str, List[int], List[int], List[int]]:
    """The element type (Triton's name), shape, block shape and element strides of a descriptor."""
    dtype = d.dtype if isinstance(d, Descriptor) else d.base.dtype
    shape = [int(x) for x in d.shape]
    strides = [int(x) for x in d.strides] if d.strides is not None else \
        [int(__import__("math").prod(shape[i + 1:])) for i in range(len(shape))]
    return _type_name(dtype), shape, [int(x) for x in d.block_shape], strides


def _type_name(dtype: Any) -> str:
    """Triton's name of an element type given as Triton's, torch's or NumPy's."""
    name = str(dtype)
    for prefix in ("torch.", "triton.language.", "tl."):
        if name.startswith(prefix):
            name = name[len(prefix):]
    if name in _TRITON_TYPES:
        return name
    if name in _DTYPES:
        return _DTYPES[name]
    raise TypeError(f"ptxmm.triton: element type `{dtype}` has no Triton name ptxmm knows; pass a Buffer with "
                    f"one of {sorted(_TRITON_TYPES)}")


def _is_tensor(arg: Any) -> bool:
    return isinstance(arg, Buffer) or (hasattr(arg, "dtype") and (hasattr(arg, "data_ptr") or hasattr(arg, "nbytes")))


def _nbytes(arg: Any) -> int:
    if isinstance(arg, Buffer):
        return arg.nbytes
    if hasattr(arg, "numel") and hasattr(arg, "element_size"):
        return int(arg.numel()) * int(arg.element_size())
    return int(arg.nbytes)


def _is_descriptor(arg: Any) -> bool:
    return isinstance(arg, Descriptor) or type(arg).__name__ in ("TensorDescriptor", "TensorDescriptorIm2Col")


@dataclass
class Compiled:
    """A Triton kernel compiled, with what ptxmm needs of it: the PTX, the entry, the launch its
    metadata gives, and the value of each PTX parameter the call's arguments bind."""

    ptx: str
    entry: str
    num_warps: int
    shared: int
    cluster: Optional[Tuple[int, int, int]]
    params: Dict[str, Any]
    tensor_maps: Dict[str, str]
    source_name: str

    def launch(self, grid: Union[int, Sequence[int]] = 1) -> Dict[str, Any]:
        """The launch document (docs/ptxmm-launch.schema.json) of this kernel on ``grid``."""
        grid_dims = [grid] if isinstance(grid, int) else list(grid)
        return ptxmm.launch_document(entry=self.entry, block=self.num_warps * 32, grid=grid_dims or [1],
                                     cluster=list(self.cluster) if self.cluster else None,
                                     dynamic_smem=self.shared or None, params=self.params,
                                     tensor_maps=self.tensor_maps or None)


def _metadata(kernel: Any, key: str, default: Any = None) -> Any:
    md = getattr(kernel, "metadata", None)
    if md is None:
        return default
    if isinstance(md, Mapping):
        return md.get(key, default)
    return getattr(md, key, default)


def _bind(fn: Any, args: Sequence[Any], meta: Mapping[str, Any]) -> Tuple[Dict[str, str], Dict[str, Any], List[Any], Dict[str, Any]]:
    """The signature, the constexprs, the runtime arguments in parameter order, and the compile
    options (what of ``meta`` names no parameter)."""
    names = [p.name for p in fn.params]
    if len(args) > len(names):
        raise TypeError(f"ptxmm.triton: {fn.__name__} takes {len(names)} arguments, {len(args)} given")
    values: Dict[str, Any] = dict(zip(names, args))
    for p in fn.params[len(args):]:
        if p.name in meta:
            values[p.name] = meta[p.name]
        elif p.has_default:
            values[p.name] = p.default
        else:
            raise TypeError(f"ptxmm.triton: no value for `{p.name}` of {fn.__name__}")
    options = {k: v for k, v in meta.items() if k not in names}
    signature: Dict[str, str] = {}
    constexprs: Dict[str, Any] = {}
    runtime: List[Any] = []
    for p in fn.params:
        v = values[p.name]
        if p.is_constexpr or v is None:
            signature[p.name] = "constexpr"
            constexprs[p.name] = v
        elif _is_descriptor(v):
            if type(v).__name__ == "TensorDescriptorIm2Col" or getattr(v, "padding", "zero") != "zero":
                raise NotImplementedError(f"ptxmm.triton: `{p.name}`: im2col and NaN-padded descriptors are not modelled")
            ty, _, block, _ = _descriptor_parts(v)
            signature[p.name] = f"tensordesc<{ty}[{', '.join(str(b) for b in block)}]>"
            runtime.append(v)
        elif _is_tensor(v):
            signature[p.name] = "*" + _type_name(v.dtype)
            runtime.append(v)
        elif isinstance(v, bool):
            signature[p.name] = "i1"
            runtime.append(int(v))
        elif isinstance(v, int):
            signature[p.name] = "i32" if -2**31 <= v < 2**31 else "i64"
            runtime.append(v)
        elif isinstance(v, float):
            signature[p.name] = "fp32"
            runtime.append(v)
        else:
            raise TypeError(f"ptxmm.triton: cannot bind `{p.name}` = {v!r}: expected a tensor, a Buffer, an int, a float or None")
    return signature, constexprs, runtime, options


def compile(kernel: Any, *args: Any, arch: int = 90, **meta: Any) -> Compiled:
    """Compile a ``@triton.jit`` function for ``sm_<arch>`` with the call's arguments (``meta``:
    constexprs by name and compile options such as ``num_warps``, ``num_stages``), or take a
    kernel Triton already compiled (``args`` then bind its parameters in order)."""
    import triton

    if hasattr(kernel, "asm") and "ptx" in getattr(kernel, "asm", {}):
        compiled = kernel
        runtime = [a for a in args if a is not None]
        source = "kernel.ptx"
    else:
        from triton.backends.compiler import GPUTarget
        from triton.compiler import ASTSource

        fn = kernel  # an autotuner or heuristics wrapper holds the JITFunction as `fn`
        while not hasattr(fn, "params") and hasattr(fn, "fn"):
            fn = fn.fn
        if not hasattr(fn, "params"):
            raise TypeError(f"ptxmm.triton: {kernel!r} is neither a @triton.jit function nor a compiled kernel")
        signature, constexprs, runtime, options = _bind(fn, args, meta)
        compiled = triton.compile(ASTSource(fn, signature=signature, constexprs=constexprs),
                                  target=GPUTarget("cuda", arch, 32), options=options or None)
        source = f"{fn.__name__}.ptx"
    ptx = compiled.asm["ptx"]
    params: Dict[str, Any] = {}
    tensor_maps: Dict[str, str] = {}
    descriptors = list(_metadata(compiled, "tensordesc_meta", None) or [])
    n = 0
    for a in runtime:
        if _is_descriptor(a):
            # The launcher passes a descriptor as its CUtensorMap (128 bytes), then its shape
            # (i32 each) and its strides (i64 each), outermost first (make_tensordesc_arg).
            ty, shape, block, strides = _descriptor_parts(a)
            meta_d = descriptors.pop(0) if descriptors else {}
            if ty not in _MAP_TYPES:
                raise NotImplementedError(f"ptxmm.triton: a descriptor of `{ty}` elements has no tensor map type ptxmm models")
            bytes_per = int(meta_d.get("elem_size") or max(1, int("".join(c for c in ty if c.isdigit()) or 8) // 8))
            inner_first = list(reversed(shape))
            desc = f"{_MAP_TYPES[ty]},{'x'.join(map(str, inner_first))},box={'x'.join(map(str, reversed(block)))}"
            if len(shape) > 1:
                desc += ",stride=" + "x".join(str(s * bytes_per) for s in reversed(strides[:-1]))
            desc += f",swizzle={_SWIZZLES.get(int(meta_d.get('swizzle', 0)), 'none')}"
            tensor_maps[f"param_{n}"] = desc
            n += 1
            for x in shape + strides:
                params[f"param_{n}"] = x
                n += 1
        else:
            params[f"param_{n}"] = f"buffer:{max(4, _nbytes(a))}" if _is_tensor(a) else a
            n += 1
    # Triton appends its scratch pointers (global, then profile): buffers of the sizes it asks.
    for j, key in enumerate(("global_scratch_size", "profile_scratch_size")):
        size = int(_metadata(compiled, key, 0) or 0)
        if size > 0:
            params[f"param_{n + j}"] = f"buffer:{size}"
    cluster = _metadata(compiled, "cluster_dims")
    cluster_dims = tuple(int(x) for x in cluster) if cluster and any(int(x) > 1 for x in cluster) else None
    return Compiled(ptx=ptx, entry=str(_metadata(compiled, "name")), num_warps=int(_metadata(compiled, "num_warps", 4)),
                    shared=int(_metadata(compiled, "shared", 0) or 0), cluster=cluster_dims, params=params,
                    tensor_maps=tensor_maps, source_name=source)


def check(kernel: Any, *args: Any, grid: Union[int, Sequence[int]] = 1, arch: int = 90, timeout: float = 10.0,
          warps: Optional[Union[str, Sequence[int]]] = None, lanes: Optional[Union[str, Sequence[int]]] = None,
          readings: Sequence[str] = (), **meta: Any) -> "ptxmm.KernelResult":
    """Compile (or take) a Triton kernel, bind the call's arguments and check it:
    ``ptxmm.triton.check(add_kernel, x, y, out, n, BLOCK=1024, grid=(4,), num_warps=4)``.
    Findings name the kernel's Python lines."""
    c = compile(kernel, *args, arch=arch, **meta)
    launch = c.launch(grid)
    if warps is not None:
        launch["warps"] = warps if isinstance(warps, str) else list(warps)
    if lanes is not None:
        launch["lanes"] = lanes if isinstance(lanes, str) else list(lanes)
    return ptxmm.check_kernel(c.ptx, launch=launch, timeout=timeout, readings=readings, name=c.source_name)


def launch_document(kernel: Any, *args: Any, grid: Union[int, Sequence[int]] = 1, arch: int = 90, **meta: Any) -> Dict[str, Any]:
    """The launch document of a Triton call, as :func:`check` would check it."""
    return compile(kernel, *args, arch=arch, **meta).launch(grid)


def launch_file(kernel: Any, *args: Any, path: Union[str, "os.PathLike[str]"], grid: Union[int, Sequence[int]] = 1,
                arch: int = 90, **meta: Any) -> Tuple[str, str]:
    """Write the kernel's PTX to ``path`` (``.ptx``) and its launch beside it
    (``.launch.json``); returns both paths. ``ptxmm kernel PTX --launch LAUNCH`` then checks it
    as :func:`check` does."""
    c = compile(kernel, *args, arch=arch, **meta)
    ptx_path = os.fspath(path)
    base = ptx_path[:-4] if ptx_path.endswith(".ptx") else ptx_path
    launch_path = base + ".launch.json"
    with open(ptx_path, "w", encoding="utf-8") as f:
        f.write(c.ptx)
    with open(launch_path, "w", encoding="utf-8") as f:
        json.dump(c.launch(grid), f, indent=2)
        f.write("\n")
    return ptx_path, launch_path
