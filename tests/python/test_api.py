"""The Python API over the library: kernels of tests/kernels, a litmus test, errors."""

import json
import subprocess
import sys

import pytest

import ptxmm


def test_a_correct_kernel_has_no_finding(kernels):
    r = ptxmm.check_kernel_file(kernels / "tma_pipeline.ptx", block=64)
    assert r.ok and not r.found and r.findings == [] and r.not_decided == []
    assert r.summary == "no finding"
    assert r.liveness is not None and not r.liveness.may_hang
    assert r.entry.startswith("_Z12tma_pipeline")
    assert "Summary: no finding" in str(r)


def test_a_buggy_kernel_names_its_lines_and_hint(kernels):
    r = ptxmm.check_kernel_file(kernels / "tma_pipeline-bug.ptx", block=64)
    assert r.found and r.exit_status == 3
    read_early = [f for f in r.undefined if f.rule == "U1-read-before-completion"]
    assert read_early, r.report
    f = read_early[0]
    # The consumer's read of the stage, `out[k] = tile[0]`, at its PTX and CUDA lines.
    consumer = [s for s in f.sites if s.line == 101]
    assert consumer and consumer[0].source == "tma_pipeline.cu:38"
    assert consumer[0].source_file == "tma_pipeline.cu" and consumer[0].source_line == 38
    assert f.hint and "parity" in f.hint
    assert r.hangs and r.hangs[0].source == "tma_pipeline.cu:34"
    assert "tma_pipeline.cu:38" in str(r)


def test_the_launch_is_a_launch_file_and_keywords_override_it(kernels):
    doc = ptxmm.launch_document(block=64, params={"param_1": "buffer:256"})
    assert doc == {"block": 64, "params": {"param_1": "buffer:256"}}
    r = ptxmm.check_kernel_file(kernels / "tma_pipeline.ptx", launch={"block": 32}, block=64)
    assert r.launch["block"] == [64, 1, 1] and r.ok


def test_the_record_is_the_kernel_json_of_the_command_line(kernels):
    r = ptxmm.check_kernel_file(kernels / "tma_pipeline-bug.ptx", block=64)
    out = subprocess.run([sys.executable, "-m", "ptxmm", "kernel", str(kernels / "tma_pipeline-bug.ptx"), "--block", "64",
                          "--json"], capture_output=True, text=True)
    assert out.returncode == 3, out.stderr
    cli = json.loads(out.stdout)
    for key in ("verdict", "summary", "undefined", "races", "found", "exit_status"):
        assert r.record[key] == cli[key], key


def test_a_litmus_test_is_decided():
    mp = """PTX MP
{ x = 0; y = 0; }
 P0@cta 0,gpu 0        | P1@cta 1,gpu 0        ;
 st.relaxed.gpu.u32 [x], 1 | ld.acquire.gpu.u32 r0, [y] ;
 st.release.gpu.u32 [y], 1 | ld.relaxed.gpu.u32 r1, [x] ;
exists (P1:r0 == 1 /\\ P1:r1 == 0)
"""
    r = ptxmm.run(mp)
    assert r.test == "MP" and r.verdict == "Forbidden" and r.findings == []
    assert r.liveness is not None and r.liveness.status
    weak = mp.replace("st.release.gpu", "st.relaxed.gpu").replace("ld.acquire.gpu", "ld.relaxed.gpu")
    assert ptxmm.run(weak).verdict == "Allowed"


def test_a_malformed_test_raises_the_located_error():
    with pytest.raises(ptxmm.PtxmmError) as e:
        ptxmm.run("PTX bad\n{ x = 0; }\n P0@cta 0,gpu 0 ;\n ld.u32 r0, [x oops ;\nexists (P0:r0 == 1)\n", name="bad.litmus")
    err = e.value
    assert (err.file, err.line, err.column) == ("bad.litmus", 4, 16)
    assert "oops" in err.message and "bad.litmus:4:16" in str(err)


def test_a_malformed_module_and_launch_raise(kernels):
    with pytest.raises(ptxmm.PtxmmError) as e:
        ptxmm.check_kernel(".version 8.0\n.target sm_90a\n.visible .entry k(\n{\n ret;\n}\n", name="broken.ptx")
    assert e.value.file in (None, "broken.ptx") and e.value.code in (1, 2)
    with pytest.raises(ptxmm.PtxmmError) as e:
        ptxmm.check_kernel_file(kernels / "tma_pipeline.ptx", launch={"blocks": 64})
    assert e.value.file == "launch" and "blocks" in e.value.message
    with pytest.raises(ptxmm.PtxmmError) as e:
        ptxmm.run("PTX t\n{ }\n P0@cta 0,gpu 0 ;\n ret ;\nexists (true)\n", model="no-such-model")
    assert e.value.code == 2


def test_the_command_is_on_the_path():
    out = subprocess.run(["ptxmm", "--version"], capture_output=True, text=True)
    assert out.returncode == 0 and out.stdout.startswith("ptxmm ")
