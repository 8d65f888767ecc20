"""Compile a Triton kernel of this folder for sm_90a without a GPU, as triton.jit would launch it.

Each kernel file NAME.py defines its @triton.jit kernel and a `launch()` returning the call a
user would make (the argument values, the grid, the compile options). This module specializes
the arguments exactly as JITFunction.run does (native_specialize_impl: pointers and ints
divisible by 16 get tt.divisibility=16, ints equal to 1 become constexprs, host
TensorDescriptors become `tensordesc<...>`), compiles with
    triton.compile(ASTSource(fn, signature, constexprs, attrs), target=GPUTarget("cuda", 90, 32),
                   options=...)
and writes NAME.ptx (the `.file` paths made relative) and NAME.json (the metadata plus the
signature, constexprs, attrs, grid and the problem).

    python tcompile.py NAME.py      # writes NAME.ptx and NAME.json next to it
"""
import importlib.util
import json
import os
import re
import sys

os.environ.setdefault("TRITON_DEFAULT_FP_FUSION", "1")

import triton  # noqa: E402
from triton.backends.compiler import GPUTarget  # noqa: E402
from triton.backends.nvidia.compiler import CUDABackend  # noqa: E402
from triton._C.libtriton import native_specialize_impl  # noqa: E402


class FakeDtype:
    """Stands in for a torch dtype: native_specialize_impl reads str(dtype) ("torch.float16")."""

    sizes = {"float16": 2, "bfloat16": 2, "float32": 4, "float8_e4m3fn": 1, "int32": 4}

    def __init__(self, name):
        self.name = name
        self.itemsize = self.sizes[name]

    def __str__(self):
        return "torch." + self.name


class FakeTensor:
    """A device tensor as the launcher sees it: a data_ptr (16-byte aligned), a dtype, a shape."""

    def __init__(self, shape, dtype="float16", tag=0xA):
        self.shape = list(shape)
        self.dtype = FakeDtype(dtype)
        self.tag = tag

    def data_ptr(self):
        return 0x7F0000000000 + (self.tag << 24)

    def stride(self, dim=None):
        s, acc = [], 1
        for d in reversed(self.shape):
            s.insert(0, acc)
            acc *= d
        return s if dim is None else s[dim]

    def element_size(self):
        return self.dtype.itemsize


def specialize(fn, args):
    """JITFunction._pack_args, for a kernel and a dict of its argument values."""
    backend = CUDABackend
    signature, constexprs, attrs = {}, {}, {}
    for i, p in enumerate(fn.params):
        v = args[p.name]
        if p.is_constexpr:
            signature[p.name] = "constexpr"
            constexprs[(i, )] = v
            continue
        ty, attr = native_specialize_impl(backend, v, p.is_const, not p.do_not_specialize,
                                          not p.do_not_specialize_on_alignment)
        signature[p.name] = ty
        if ty == "constexpr":
            constexprs[(i, )] = attr
        elif isinstance(attr, str):
            attrs[(i, )] = backend.parse_attr(attr)
    return signature, constexprs, attrs


def relative_files(ptx, roots):
    # `.file N "/abs/path"`: keep paths relative to the repository (our kernels) or to triton.
    for root, name in roots:
        ptx = ptx.replace('"' + root.rstrip("/") + "/", '"' + name)
    return ptx


def main(path):
    path = os.path.abspath(path)
    name = os.path.splitext(os.path.basename(path))[0]
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    call = mod.launch()
    fn = call["kernel"]
    signature, constexprs, attrs = specialize(fn, call["args"])
    src = triton.compiler.ASTSource(fn=fn, signature=signature, constexprs=constexprs, attrs=attrs)
    compiled = triton.compile(src, target=GPUTarget("cuda", 90, 32), options=call.get("options", {}))
    repo = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", ".."))
    tdir = os.path.dirname(triton.__file__)
    ptx = relative_files(compiled.asm["ptx"], [(repo, ""), (tdir, "triton/")])
    # The Triton cache directory may appear in comments; drop absolute paths there too.
    ptx = re.sub(r"/[^\s\"]*/triton_cache/", "triton_cache/", ptx)
    with open(os.path.join(os.path.dirname(path), name + ".ptx"), "w") as f:
        f.write(ptx)
    md = compiled.metadata._asdict()
    md["target"] = {"backend": md["target"].backend, "arch": md["target"].arch, "warp_size": md["target"].warp_size}
    md.pop("extern_libs", None)  # absolute paths of this machine's libdevice
    md.pop("hash", None)
    # The kernel's .param list, in order: what each parameter of the PTX entry holds.
    params = []
    for pname, ty in signature.items():
        if ty == "constexpr":
            continue
        v = call["args"][pname]
        if ty.startswith("tensordesc"):
            rank = ty.split("[", 1)[1].split("]", 1)[0].count(",") + 1
            params.append(f"{pname}: CUtensorMap (.align 64 .b8 [128]) {ty} over a {list(v.shape)} tensor")
            params += [f"{pname}.shape[{i}] (i32) = {v.shape[i]}" for i in range(rank)]
            params += [f"{pname}.strides[{i}] (i64) = {v.strides[i]}" for i in range(rank)]
        elif isinstance(v, (int, float)) and not isinstance(v, bool):
            params.append(f"{pname} ({ty}) = {v}")
        else:
            params.append(f"{pname} ({ty})")
    params += ["global_scratch (*i8: grid * global_scratch_size bytes, or null when 0)",
               "profile_scratch (*i8: null unless profiling)"]
    n_ptx = len(re.findall(r"^\s*\.param ", ptx.split(")\n", 1)[0], re.M))
    assert n_ptx == len(params), (n_ptx, params)
    out = {
        "triton_version": triton.__version__,
        "kernel": fn.__name__,
        "problem": call.get("problem", {}),
        "grid": list(call["grid"]) + [1] * (3 - len(call["grid"])),
        "block": [md["num_warps"] * 32, 1, 1],
        "cluster": [md.get("num_ctas", 1), 1, 1],
        "dynamic_smem": md["shared"],
        "signature": signature,
        "constexprs": {fn.params[k[0]].name: v for k, v in constexprs.items()},
        "attrs": {fn.params[k[0]].name: v for k, v in attrs.items()},
        "options": call.get("options", {}),
        "params": {f"param_{i}": d for i, d in enumerate(params)},
        "metadata": md,
    }
    with open(os.path.join(os.path.dirname(path), name + ".json"), "w") as f:
        json.dump(out, f, indent=1, default=str)
        f.write("\n")
    print(f"{name}: {ptx.count(chr(10))} lines of PTX, shared {md['shared']} B, "
          f"{md['num_warps']} warps, grid {out['grid']}")


if __name__ == "__main__":
    for p in sys.argv[1:]:
        main(p)
