"""ptxmm: the PTX memory consistency model, executable, from Python.

Check a compiled kernel's synchronization (races, undefined behaviour, hangs) from its PTX, or
decide a PTX litmus test, in this process, with the same library the ``ptxmm`` command runs::

    import ptxmm
    result = ptxmm.check_kernel(open("pipeline.ptx").read(), block=128)
    for f in result.findings:
        print(f.kind, f.rule, f.location, f.message)

Results are the records of ``ptxmm kernel --json`` and ``ptxmm run --json`` (docs/json.md,
docs/ptxmm-kernel.schema.json) as typed objects; the whole record stays at ``.record``.
Errors in the input raise :class:`PtxmmError` with the located message.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from typing import Any, Dict, List, Mapping, Optional, Sequence, Union

from . import _native

__all__ = [
    "PtxmmError",
    "Site",
    "Finding",
    "Hang",
    "Liveness",
    "KernelResult",
    "LitmusResult",
    "check_kernel",
    "check_kernel_file",
    "run",
    "run_file",
    "launch_document",
    "__version__",
]

__version__: str = _native.__version__

Dims = Union[int, Sequence[int], str]
Selection = Union[str, int, Sequence[int]]
ParamValue = Union[int, float, str, Sequence[int], Mapping[int, Any]]


class PtxmmError(Exception):
    """An input ptxmm cannot check: a malformed PTX module, litmus test or launch, a kernel it
    cannot model, a bad model or option.

    ``str(error)`` is the diagnostic as the command line prints it (``file:line:col: error:
    ...`` with the source line); the parts are attributes.
    """

    def __init__(self, message: str, *, file: Optional[str], line: Optional[int], column: Optional[int],
                 code: int, rendered: str) -> None:
        super().__init__(rendered or message)
        #: What is wrong, without the location.
        self.message = message
        #: The file the error is in (the PTX module, the litmus test, ``launch``, a model file).
        self.file = file
        #: 1-based line and column, where the error has a place.
        self.line = line
        self.column = column
        #: The exit status ``ptxmm`` gives this error (1: cannot be checked, 2: bad option or model).
        self.code = code
        #: The diagnostic as printed.
        self.rendered = rendered


@dataclass(frozen=True)
class Site:
    """One access or instruction a finding names: its thread, PTX line and, from ``-lineinfo``,
    CUDA (or Triton) source line."""

    thread: str
    line: int
    instruction: str
    part: Optional[str] = None
    source: Optional[str] = None
    source_file: Optional[str] = None
    source_line: Optional[int] = None
    inline_chain: List[str] = field(default_factory=list)

    @classmethod
    def _of(cls, d: Mapping[str, Any]) -> "Site":
        return cls(thread=d.get("thread", ""), line=int(d.get("line", 0)), instruction=d.get("instruction", ""),
                   part=d.get("part"), source=d.get("source"), source_file=d.get("source_file"),
                   source_line=d.get("source_line"), inline_chain=list(d.get("inline_chain") or []))

    @property
    def location(self) -> str:
        """``file.cu:LINE`` where the PTX has ``.loc`` lines, else ``PTX line N``."""
        return self.source or f"PTX line {self.line}"


@dataclass(frozen=True)
class Finding:
    """A race, an undefined behaviour or a flagged check of the model, with its sites and the
    hint that fixes it. ``readings`` names the documented ambiguities of the spec it depends on
    (empty: it holds under every reading)."""

    kind: str  #: ``"undefined"``, ``"race"`` or ``"flag"``
    rule: str
    message: str
    hint: Optional[str]
    sites: List[Site]
    readings: List[Dict[str, Any]] = field(default_factory=list)

    @classmethod
    def _of(cls, kind: str, d: Mapping[str, Any]) -> "Finding":
        return cls(kind=kind, rule=d.get("rule", ""), message=d.get("message", ""), hint=d.get("hint"),
                   sites=[Site._of(s) for s in d.get("sites") or []], readings=list(d.get("readings") or []))

    @property
    def location(self) -> str:
        """The first site's source location."""
        return self.sites[0].location if self.sites else ""

    def __str__(self) -> str:
        text = f"{self.location}: {self.kind} [{self.rule}]: {self.message}"
        return f"{text}\n  hint: {self.hint}" if self.hint else text


@dataclass(frozen=True)
class Hang:
    """A thread that some fair execution leaves stuck: where, and why."""

    thread: str
    line: int
    instruction: str
    reason: str
    source: Optional[str] = None

    @classmethod
    def _of(cls, d: Mapping[str, Any]) -> "Hang":
        return cls(thread=d.get("thread", ""), line=int(d.get("line", 0)), instruction=d.get("instruction", ""),
                   reason=d.get("reason", ""), source=d.get("source"))

    @property
    def location(self) -> str:
        return self.source or f"PTX line {self.line}"


@dataclass(frozen=True)
class Liveness:
    """The liveness answer: ``status`` is ``"terminates"``, ``"may_hang"`` or what the record
    says otherwise (docs/json.md); ``hang`` the stuck threads of a hanging execution."""

    status: str
    hang: List[Hang]
    undefined: List[Finding]
    record: Dict[str, Any]

    @classmethod
    def _of(cls, d: Optional[Mapping[str, Any]]) -> Optional["Liveness"]:
        if d is None:
            return None
        return cls(status=d.get("status", ""), hang=[Hang._of(h) for h in d.get("hang") or []],
                   undefined=[Finding._of("undefined", f) for f in d.get("undefined") or []], record=dict(d))

    @property
    def may_hang(self) -> bool:
        return bool(self.hang)


def _findings(record: Mapping[str, Any]) -> List[Finding]:
    out = [Finding._of("undefined", f) for f in record.get("undefined") or []]
    out += [Finding._of("race", f) for f in record.get("races") or []]
    out += [Finding._of("flag", f) for f in record.get("flag_findings") or []]
    return out


@dataclass(frozen=True)
class LitmusResult:
    """A litmus test decided: its verdict (``Allowed``, ``Forbidden``, ``Undefined`` or
    ``Inconclusive``), findings and liveness. ``report`` is the text ``ptxmm run`` prints."""

    test: str
    verdict: Optional[str]
    findings: List[Finding]
    liveness: Optional[Liveness]
    report: str
    record: Dict[str, Any]

    def __str__(self) -> str:
        return self.report


@dataclass(frozen=True)
class KernelResult:
    """A kernel checked. ``ok`` is true when the check finished with no finding; ``found`` when
    a finding is established; ``not_decided`` says what stopped short (then neither "no bug" nor
    a verdict is claimed). ``exit_status`` is ``ptxmm kernel``'s (0, 1 or 3)."""

    entry: str
    findings: List[Finding]
    liveness: Optional[Liveness]
    summary: str
    found: bool
    not_decided: List[str]
    exit_status: int
    abstracted: List[Dict[str, Any]]
    launch: Dict[str, Any]
    report: str
    record: Dict[str, Any]

    @property
    def ok(self) -> bool:
        return self.exit_status == 0

    @property
    def races(self) -> List[Finding]:
        return [f for f in self.findings if f.kind == "race"]

    @property
    def undefined(self) -> List[Finding]:
        return [f for f in self.findings if f.kind == "undefined"]

    @property
    def hangs(self) -> List[Hang]:
        return self.liveness.hang if self.liveness else []

    def __str__(self) -> str:
        return self.report


def _unwrap(text: str) -> Dict[str, Any]:
    doc = json.loads(text)
    if "error" in doc:
        e = doc["error"]
        raise PtxmmError(e.get("message") or "", file=e.get("file"), line=e.get("line"), column=e.get("column"),
                         code=int(e.get("code") or 1), rendered=e.get("rendered") or e.get("message") or "")
    return doc


def launch_document(*, entry: Optional[str] = None, block: Optional[Dims] = None, grid: Optional[Dims] = None,
                    cluster: Optional[Dims] = None, dynamic_smem: Optional[int] = None,
                    params: Optional[Mapping[str, ParamValue]] = None,
                    tensor_maps: Optional[Mapping[str, str]] = None, ctas: Optional[Selection] = None,
                    warps: Optional[Selection] = None, lanes: Optional[Selection] = None,
                    assert_: Optional[str] = None) -> Dict[str, Any]:
    """The launch file (docs/ptxmm-launch.schema.json) these settings make: what
    ``ptxmm kernel --launch FILE.json`` reads. Unset settings are left out (the kernel's
    defaults)."""
    doc: Dict[str, Any] = {}
    for key, value in (("entry", entry), ("block", block), ("grid", grid), ("cluster", cluster),
                       ("dynamic_smem", dynamic_smem), ("ctas", ctas), ("warps", warps), ("lanes", lanes),
                       ("assert", assert_)):
        if value is not None:
            doc[key] = list(value) if isinstance(value, (tuple, range)) else value
    if params:
        doc["params"] = {name: ({str(k): v for k, v in value.items()} if isinstance(value, Mapping) else
                                list(value) if isinstance(value, (tuple, range)) else value)
                         for name, value in params.items()}
    if tensor_maps:
        doc["tensor_maps"] = dict(tensor_maps)
    return doc


def check_kernel(ptx: str, entry: Optional[str] = None, *, block: Optional[Dims] = None,
                 grid: Optional[Dims] = None, cluster: Optional[Dims] = None,
                 dynamic_smem: Optional[int] = None, params: Optional[Mapping[str, ParamValue]] = None,
                 tensor_maps: Optional[Mapping[str, str]] = None, ctas: Optional[Selection] = None,
                 warps: Optional[Selection] = None, lanes: Optional[Selection] = None,
                 assert_: Optional[str] = None, launch: Optional[Mapping[str, Any]] = None,
                 timeout: float = 10.0, model: Optional[str] = None, cat: Optional[str] = None,
                 readings: Sequence[str] = (), liveness: str = "check", name: str = "kernel.ptx") -> KernelResult:
    """Check one kernel of a PTX module (the text ``nvcc -ptx -lineinfo`` or Triton writes), as
    ``ptxmm kernel`` does.

    ``block``, ``grid`` and ``cluster`` are ``N``, ``(X, Y, Z)`` or ``"X,Y,Z"``; ``params`` maps a
    parameter's name (``param_0`` or nvcc's full name) to a number, ``"buffer:BYTES"``, a list of
    32-bit words, or ``{offset: value}`` for an aggregate; ``tensor_maps`` maps a parameter (or
    ``NAME+OFF``) to ``"TYPE,DIMS,box=BOX[,swizzle=...]"``. ``launch`` is a whole launch document
    (as :func:`launch_document` makes); the keyword settings override its keys. ``timeout`` is in
    seconds (0: none). ``name`` names the module in messages.

    Raises :class:`PtxmmError` for a module, launch or model that cannot be checked.
    """
    doc = dict(launch or {})
    doc.update(launch_document(entry=entry, block=block, grid=grid, cluster=cluster, dynamic_smem=dynamic_smem,
                               params=params, tensor_maps=tensor_maps, ctas=ctas, warps=warps, lanes=lanes,
                               assert_=assert_))
    out = _unwrap(_native.check_kernel(ptx, name, json.dumps(doc), model, cat, list(readings), float(timeout), liveness))
    r = out["record"]
    return KernelResult(entry=r.get("entry", ""), findings=_findings(r), liveness=Liveness._of(r.get("liveness")),
                        summary=r.get("summary", ""), found=bool(r.get("found")), not_decided=list(r.get("not_decided") or []),
                        exit_status=int(r.get("exit_status", 1)), abstracted=list(r.get("abstracted") or []),
                        launch=dict(r.get("launch") or {}), report=out["report"], record=r)


def check_kernel_file(path: Union[str, "os.PathLike[str]"], entry: Optional[str] = None, **settings: Any) -> KernelResult:
    """:func:`check_kernel` of a ``.ptx`` file, named by its path in messages."""
    with open(path, encoding="utf-8") as f:
        text = f.read()
    return check_kernel(text, entry, name=os.fspath(path), **settings)


def run(litmus: str, *, timeout: float = 10.0, model: Optional[str] = None, cat: Optional[str] = None,
        readings: Sequence[str] = (), liveness: str = "check", name: str = "test.litmus") -> LitmusResult:
    """Decide a litmus test (its text), as ``ptxmm run`` does. Raises :class:`PtxmmError` for a
    test or model that cannot be read."""
    out = _unwrap(_native.run(litmus, name, model, cat, list(readings), float(timeout), liveness))
    r = out["record"]
    return LitmusResult(test=r.get("test", ""), verdict=r.get("verdict"), findings=_findings(r),
                        liveness=Liveness._of(r.get("liveness")), report=out["report"], record=r)


def run_file(path: Union[str, "os.PathLike[str]"], **settings: Any) -> LitmusResult:
    """:func:`run` of a ``.litmus`` file, named by its path in messages."""
    with open(path, encoding="utf-8") as f:
        text = f.read()
    return run(text, name=os.fspath(path), **settings)
