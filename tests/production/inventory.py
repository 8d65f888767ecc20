#!/usr/bin/env python3
"""Inventory of the PTX forms in the production kernels (tests/production/README.md's tables).

    python3 tests/production/inventory.py            # markdown tables on stdout
    python3 tests/production/inventory.py --json     # the same facts as JSON

For each .ptx listed in kernels.csv it counts the forms a PTX front end has to handle (see FORMS
below: each is a regular expression over the instructions or declarations) and lists the distinct
opcode stems (the opcode up to its first '.') outside COMMON_STEMS. Instructions are the
statements of the file with comments removed, split at ';' (inline-asm blocks put several on a
line), with a leading guard predicate (@%p / @!%p) dropped.
"""
import csv
import json
import os
import re
import sys
from collections import Counter, OrderedDict

HERE = os.path.dirname(os.path.abspath(__file__))

COMMON_STEMS = set("ld st atom red mov add sub mul mad fma setp selp cvt cvta bra ret bar barrier fence "
                   "membar mbarrier cp and or xor not shl shr min max neg abs div rem".split())

# name -> (kind, regex); kind "insn" matches each instruction, "text" matches declaration lines.
FORMS = OrderedDict([
    (".extern .shared", ("text", r"^\s*\.extern\s+\.shared\b")),
    ("shared var > 4096 B", ("decl", None)),  # computed from `.shared ... name[N]` declarations
    ("aggregate .param .align N .b8 x[K]", ("text", r"^\s*\.param\s+\.align\s+\d+\s+\.b8\s+\w+\[\d+\]")),
    ("cp.async.bulk.tensor (register tensor map)", ("insn", r"^cp\.async\.bulk\.tensor\b.*\[\s*%\w+\s*,\s*\{")),
    ("cp.async.bulk.tensor (param tensor map)", ("insn", r"^cp\.async\.bulk\.tensor\b.*\[\s*[A-Za-z_$][\w$]*\s*,\s*\{")),
    ("cp.async.bulk (non-tensor)", ("insn", r"^cp\.(reduce\.)?async\.bulk\.(?!tensor)")),
    ("cp.async (sm80 ldgsts)", ("insn", r"^cp\.async\.(ca|cg)\.")),
    ("cvta.param", ("insn", r"^cvta\.param\b")),
    ("ld.param through a register ([%rd+off])", ("insn", r"^ld\.param\S*\s.*\[\s*%")),
    ("param address (mov %rd, param)", ("insn", r"^mov\.[bu]64\s+%\w+\s*,\s*[A-Za-z_$][\w$]*param_\d+\s*$")),
    ("%ctaid.y/.z", ("insn", r"%ctaid\.[yz]\b")),
    ("%tid.y/.z", ("insn", r"%tid\.[yz]\b")),
    ("%nctaid", ("insn", r"%nctaid\b")),
    ("%ntid", ("insn", r"%ntid\b")),
    ("%cluster_* / %clusterid / %nclusterid", ("insn", r"%(cluster_\w+|clusterid|nclusterid|is_explicit_cluster)\b")),
    ("shfl.sync ...|%p", ("insn", r"^shfl\.sync\b.*\|\s*%?\w+")),
    ("labels repeated in {} blocks", ("labels", None)),
    ("stmatrix", ("insn", r"^stmatrix\b")),
    ("ldmatrix", ("insn", r"^ldmatrix\b")),
    ("bfe", ("insn", r"^bfe\b")),
    ("bfi", ("insn", r"^bfi\b")),
    ("brev", ("insn", r"^brev\b")),
    ("clz", ("insn", r"^clz\b")),
    ("prmt", ("insn", r"^prmt\b")),
    ("lop3", ("insn", r"^lop3\b")),
    ("shf", ("insn", r"^shf\b")),
    ("popc", ("insn", r"^popc\b")),
    ("setmaxnreg", ("insn", r"^setmaxnreg\b")),
    ("prefetch.tensormap", ("insn", r"^prefetch\.(\w+\.)?tensormap\b")),
    ("bar.warp.sync", ("insn", r"^bar\.warp\.sync\b")),
    ("griddepcontrol", ("insn", r"^griddepcontrol\b")),
    ("nanosleep", ("insn", r"^nanosleep\b")),
    (".multicast::cluster", ("insn", r"\.multicast::cluster\b")),
    ("tensormap.replace", ("insn", r"^tensormap\.replace\b")),
    ("tensormap.cp_fenceproxy", ("insn", r"^tensormap\.cp_fenceproxy\b")),
    ("fence.proxy.tensormap", ("insn", r"^fence\.proxy\.tensormap")),
    ("fence.proxy.async", ("insn", r"^fence\.proxy\.async\b")),
    ("one-element vector store {%r}", ("insn", r"^st\.\S*\s.*\],\s*\{\s*%\w+\s*\}\s*$")),
    ("one-element vector (other) {%r}", ("insn", r"^(?!st\.)\S+\s.*\{\s*%\w+\s*\}")),
    ("wgmma", ("insn", r"^wgmma\b")),
    ("mma.sync (sm80)", ("insn", r"^mma\.sync\b")),
    ("mbarrier", ("insn", r"^mbarrier\b")),
    ("mbarrier remote (shared::cluster)", ("insn", r"^mbarrier\.\S*shared::cluster")),
    ("mapa", ("insn", r"^mapa\b")),
    ("barrier.cluster", ("insn", r"^barrier\.cluster\b")),
    ("bar.sync id, N (named, with count)", ("insn", r"^(bar|barrier)\.(sync|arrive|red)(\.aligned)?(\.\w+)*\s+[^,;]+,\s*[^,;]+")),
    ("bar.sync/barrier.sync (one operand)", ("insn", r"^(bar|barrier)\.(sync|arrive)(\.aligned)?\s+[^,;]+$")),
    ("elect.sync", ("insn", r"^elect\.sync\b")),
    ("call", ("insn", r"^call\b")),
    ("st.async / red.async", ("insn", r"^(st|red)\.async\b")),
    ("ld.acquire / st.release / atom scoped", ("insn", r"^(ld|st|atom|red)\.(\w+\.)*(acquire|release|relaxed|acq_rel)\b")),
    ("atom / red", ("insn", r"^(atom|red)\.")),
    ("vote / match / redux", ("insn", r"^(vote|match|redux)\.")),
    ("trap / brkpt / exit", ("insn", r"^(trap|brkpt|exit)\b")),
    ("inline-asm scope { .reg ... }", ("text", r"^\s*\{\s*$|^\s*\{\s*\.reg")),
    ("inline-asm registers without % (P1, p, r0, ...)", ("text", r"^\s*\{?\s*\.reg\s+\.\w+\s+[A-Za-z_]")),
    ("sink operand _ (mbarrier.arrive _, ...)", ("insn", r"\s_\s*,")),
    ("ld/st .volatile", ("insn", r"^(ld|st)\.volatile\b")),
    ("TMA store (cp.async.bulk.tensor global.shared::cta)", ("insn", r"^cp\.async\.bulk\.tensor\.\w+\.global\.shared::cta")),
    ("cp.async.bulk.commit_group / wait_group", ("insn", r"^cp\.async\.bulk\.(commit_group|wait_group)")),
    ("cp.async.bulk.tensor 4d/5d", ("insn", r"^cp\.async\.bulk\.tensor\.[45]d\b")),
    ("shared::cluster addressing", ("insn", r"\.shared::cluster\b")),
    ("module-scope .global variable", ("text", r"^\.global\s")),
    ("module-scope .global with initializer", ("text", r"^\.global\s.*=")),
    (".section .debug_*", ("text", r"^\s*\.section\s+\.debug_")),
    (".pragma \"nounroll\"", ("text", r"^\s*\.pragma\s+\"nounroll\"")),
    (".pragma \"used_bytes_mask N\"", ("text", r"^\s*\.pragma\s+\"used_bytes_mask")),
    (".loc ... inlined_at", ("text", r"^\s*\.loc\s.*inlined_at")),
])

_insn_re = {k: re.compile(v[1]) for k, v in FORMS.items() if v[0] in ("insn", "text")}
_shared_decl = re.compile(r"^\s*(?:\.extern\s+)?\.shared\s+(?:\.align\s+\d+\s+)?\.(\w+)\s+([\w$]+)(?:\[(\d*)\])?")
_label = re.compile(r"^\s*([A-Za-z_$][\w$]*)\s*:")
_elem_size = {"b8": 1, "u8": 1, "s8": 1, "b16": 2, "u16": 2, "s16": 2, "f16": 2, "b32": 4, "u32": 4, "s32": 4,
              "f32": 4, "b64": 8, "u64": 8, "s64": 8, "f64": 8}


def strip_comments(text):
    text = re.sub(r"/\*.*?\*/", "", text, flags=re.S)
    return "\n".join(line.split("//", 1)[0] for line in text.split("\n"))


def instructions(text):
    """(line number, instruction) for each instruction of the file."""
    out = []
    for no, line in enumerate(text.split("\n"), 1):
        for stmt in line.split(";"):
            s = stmt.strip()
            # Scope braces of inline-asm blocks (`{ .reg ...; ...; }`), not vector operands `{ %r1 }`:
            # a leading `}` always, a leading `{` or a trailing `}` while the braces do not balance.
            while s.startswith("}") or (s.startswith("{") and s.count("{") > s.count("}")):
                s = s[1:].strip()
            while s.endswith("}") and s.count("}") > s.count("{"):
                s = s[:-1].strip()
            if not s or s.startswith(".") or s in (")", "("):
                continue
            m = _label.match(s)
            if m:
                s = s[m.end():].strip()
                if not s:
                    continue
            s = re.sub(r"^@!?%?[\w$]+\s+", "", s)
            if s and not s.startswith(".") and s not in (")", "("):
                out.append((no, s))
    return out


def entries(text):
    return re.findall(r"^\s*(?:\.visible\s+)?\.entry\s+([\w$]+)\s*\(", text, re.M)


def analyse(path):
    raw = open(path).read()
    text = strip_comments(raw)
    lines = raw.count("\n")
    insns = instructions(text)
    counts = Counter()
    for name, (kind, _) in FORMS.items():
        if kind == "text":
            counts[name] = sum(1 for line in text.split("\n") if _insn_re[name].search(line))
        elif kind == "insn":
            counts[name] = sum(1 for _, s in insns if _insn_re[name].search(s))
    big_shared = []
    for line in text.split("\n"):
        m = _shared_decl.match(line)
        if m and m.group(3):
            size = int(m.group(3)) * _elem_size.get(m.group(1), 1)
            if size > 4096:
                big_shared.append(size)
    counts["shared var > 4096 B"] = len(big_shared)
    # Labels defined more than once in the file (each inline-asm `{ }` block may reuse its names).
    labels = Counter()
    for line in text.split("\n"):
        for stmt in line.split(";"):
            s = stmt.strip().lstrip("{").strip()
            m = _label.match(s)
            if m and not s.startswith("$L__"):
                labels[m.group(1)] += 1
    repeated = {k: v for k, v in labels.items() if v > 1}
    counts["labels repeated in {} blocks"] = sum(repeated.values())
    stems = Counter(s.split()[0].split(".")[0] for _, s in insns)
    unusual = {k: v for k, v in sorted(stems.items()) if k not in COMMON_STEMS}
    # Families of the common stems that differ a lot in meaning: list their sub-opcodes too.
    fam = Counter()
    for _, s in insns:
        op = s.split()[0]
        parts = op.split(".")
        if parts[0] in ("cp", "fence", "mbarrier", "barrier", "bar", "cvta", "red", "atom", "membar"):
            fam[".".join(parts[:3] if parts[0] == "cp" else parts[:2])] += 1
    return {
        "lines": lines,
        "bytes": len(raw.encode()),
        "entries": entries(text),
        "instructions": len(insns),
        "forms": {k: counts[k] for k in FORMS},
        "big_shared_sizes": sorted(set(big_shared)),
        "repeated_labels": sorted(repeated),
        "unusual_stems": unusual,
        "families": dict(sorted(fam.items())),
    }


def kernels():
    with open(os.path.join(HERE, "kernels.csv")) as f:
        return list(csv.DictReader(f))


def main():
    rows = kernels()
    facts = OrderedDict()
    for r in rows:
        facts[r["file"]] = analyse(os.path.join(HERE, r["file"]))
    if "--json" in sys.argv:
        json.dump(facts, sys.stdout, indent=1)
        print()
        return
    names = [os.path.splitext(os.path.basename(f))[0] for f in facts]
    print("| form | " + " | ".join(f"{i + 1}" for i in range(len(names))) + " |")
    print("|---|" + "---|" * len(names))
    for form in FORMS:
        cells = []
        for f in facts:
            n = facts[f]["forms"][form]
            cells.append(str(n) if n else "")
        print(f"| {form} | " + " | ".join(cells) + " |")
    print()
    print("| # | file | lines | bytes | entries | shared vars > 4 KiB | unusual opcode stems (count) |")
    print("|---|---|---|---|---|---|---|")
    for i, f in enumerate(facts):
        d = facts[f]
        st = ", ".join(f"{k} ({v})" for k, v in d["unusual_stems"].items())
        sh = ", ".join(str(s) for s in d["big_shared_sizes"])
        print(f"| {i + 1} | {f} | {d['lines']} | {d['bytes']} | {len(d['entries'])} | {sh} | {st} |")
    print()
    print("| # | file | cp / fence / barrier / mbarrier / atom / red families (count) | repeated labels |")
    print("|---|---|---|---|")
    for i, f in enumerate(facts):
        d = facts[f]
        fam = ", ".join(f"{k} ({v})" for k, v in d["families"].items())
        rl = ", ".join(d["repeated_labels"][:8]) + (" ..." if len(d["repeated_labels"]) > 8 else "")
        print(f"| {i + 1} | {f} | {fam} | {rl} |")


if __name__ == "__main__":
    main()
