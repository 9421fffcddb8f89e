#!/usr/bin/env python3
"""Generates toybox's generated/*.h for the applets we build.

    gen_config.py TOYBOX_DIR OUT_DIR CC MKFLAGS MKTAGS FILE... [-- PATCHED...]

FILE... are the toys/*/*.c files we compile (relative to TOYBOX_DIR);
PATCHED... our patched copies of some of them (tbx/*.c.patch applied),
read instead of the file of the same name (their options and GLOBALS).
Toybox's own scripts/make.sh does this from a kconfig .config and a host
build; this does the same steps for a fixed configuration: every command
and "default y" option of the chosen files on, the rest off.

  config.h   CFG_X 0/1 and USE_X(...) for every config symbol
  newtoys.h  the chosen files' NEWTOY/OLDTOY lines, sorted by name
  flags.h    FLAG_x macros (scripts/mkflags, from the preprocessed
             option strings, as make.sh does)
  globals.h  each file's GLOBALS() block and the union "this"
  tags.h     TAGGED_ARRAY indexes (scripts/mktags)
  help.h     HELP_x: each command's help text from its config block
"""
import os
import re
import subprocess
import sys

# Toybox-wide options (Config.in) we turn on; the rest are off (no SUID,
# no LSM, no fork probe: WASI has none, and natively the same config).
GLOBAL_ON = {"TOYBOX", "TOYBOX_FLOAT", "TOYBOX_HELP", "TOYBOX_HELP_DASHDASH",
             "TOYBOX_LSM_NONE", "TOYBOX_NORECURSE"}
# Commands of the chosen files we leave off: linux32 (uname.c) sets a
# personality and execs, taskset (taskset.c, built for nproc) sets CPU
# affinity: WASI has neither.
NEVER = {"LINUX32", "TASKSET"}


def config_blocks(text):
    """[(name, type, default, help, needs)] of the kconfig stanzas in text."""
    out = []
    # (uname.c's "config ARCH " ends with a blank)
    for m in re.finditer(r"^config (\w+)[ \t]*\n((?:[ \t].*\n|\n)*)", text,
                         re.M):
        body = m.group(2)
        typ = re.search(r"^\s+(bool|int|string)", body, re.M)
        dflt = re.search(r"^\s+default (\S+)", body, re.M)
        dep = re.search(r"^\s+depends on (.*)$", body, re.M)
        hlp = re.search(r"^\s+help\n((?:[ \t].*\n|\n)*)", body, re.M)
        text_ = ""
        if hlp:
            lines = hlp.group(1).rstrip("\n").split("\n")
            ind = min((len(l) - len(l.lstrip()) for l in lines if l.strip()),
                      default=0)
            text_ = "\n".join(l[ind:] for l in lines)
        out.append((m.group(1), typ.group(1) if typ else "bool",
                    dflt.group(1) if dflt else "n", text_,
                    dep.group(1).strip() if dep else ""))
    return out


def c_string(s):
    return '"' + s.replace("\\", "\\\\").replace('"', '\\"').replace(
        "\n", "\\n") + '"'


def run(cmd, inp):
    p = subprocess.run(cmd, input=inp, capture_output=True, text=True)
    if p.returncode != 0:
        sys.stderr.write("%s\n%s" % (" ".join(cmd), p.stderr))
        raise SystemExit(1)
    return p.stdout


def main():
    top, out, cc, mkflags, mktags = sys.argv[1:6]
    files = sys.argv[6:]
    patched = []
    if "--" in files:
        patched = files[files.index("--") + 1:]
        files = files[:files.index("--")]
    os.makedirs(out, exist_ok=True)
    alltoys = []
    for d in sorted(os.listdir(os.path.join(top, "toys"))):
        p = os.path.join(top, "toys", d)
        if os.path.isdir(p):
            alltoys += [os.path.join("toys", d, f)
                        for f in sorted(os.listdir(p)) if f.endswith(".c")]
    bybase = {os.path.basename(p): p for p in patched}
    src = {f: open(bybase.get(os.path.basename(f)) if f in files and
                   os.path.basename(f) in bybase else os.path.join(top, f),
                   encoding="latin-1").read()
           for f in alltoys}
    chosen = set()
    helps = {}
    # make.sh probes these two (scripts/genconfig.sh): not Android, and no
    # fork (there is none under WASI; natively the same configuration).
    symbols = {"TOYBOX_ON_ANDROID": ("bool", "n"),
               "TOYBOX_FORK": ("bool", "n")}
    for name, typ, dflt, hlp, _ in config_blocks(
            open(os.path.join(top, "Config.in")).read()):
        symbols[name] = (typ, dflt)
        if name == "TOYBOX":
            helps[name] = hlp
        if name in GLOBAL_ON:
            chosen.add(name)
    needs = {}
    for f in alltoys:
        for name, typ, dflt, hlp, need in config_blocks(src[f]):
            needs[name] = need
            symbols[name] = (typ, dflt)
            if f in files and name not in NEVER:
                helps[name] = hlp
                if typ == "bool" and dflt == "y" or \
                        re.search(r"TOY\(%s," % name.lower(), src[f]):
                    chosen.add(name)

    # An option whose "depends on" (symbols, ! && || and parentheses) is
    # false is off.
    def holds(expr):
        py = re.sub(r"\b[A-Z]\w*\b", lambda m: str(m.group(0) in chosen),
                    expr)
        py = py.replace("&&", " and ").replace("||", " or ")
        return eval(re.sub(r"!(?!=)", " not ", py), {}) if py else True
    chosen = {n for n in chosen if holds(needs.get(n, ""))}
    conf = []
    for name, (typ, dflt) in sorted(symbols.items()):
        if typ != "bool":
            conf.append("#define CFG_%s %s" % (name, dflt))
        elif name in chosen:
            conf += ["#define CFG_%s 1" % name,
                     "#define USE_%s(...) __VA_ARGS__" % name]
        else:
            conf += ["#define CFG_%s 0" % name, "#define USE_%s(...)" % name]
    config_h = "\n".join(conf) + "\n"

    toylines = []
    for f in files:
        for line in src[f].splitlines():
            m = re.match(r"^(USE_[^(]*\(.*TOY\()([^,]*)(,.*)", line)
            if m:
                toylines.append((m.group(2), line))
    toylines.sort(key=lambda t: t[0])
    newtoys_h = "USE_TOYBOX(NEWTOY(toybox, 0, TOYFLAG_STAYROOT|" \
        "TOYFLAG_NOHELP))\n" + "".join(l + "\n" for _, l in toylines)

    # flags.h: as scripts/make.sh, for this config (A) and all-on (B).
    pairs = {}
    for kind in "AB":
        cfg = config_h if kind == "A" else re.sub(
            r"^(#define USE_\w+\(\.\.\.\))$", r"\1 __VA_ARGS__", config_h,
            flags=re.M)
        text = ("#define NEWTOY(aa,bb,cc) aa %s bb\n#define OLDTOY(...)\n"
                % kind + cfg + '#include "lib/toyflags.h"\n' + newtoys_h)
        pre = run([cc, "-E", "-P", "-I", top, "-"], text)
        for line in pre.splitlines():
            line = re.sub(r'" *"', "", line)
            if not line.strip() or line.startswith("#"):
                continue
            m = re.match(r"^\s*(\S+) %s (.*)$" % kind, line)
            if not m:
                continue
            opt = m.group(2).strip()
            if not opt.startswith('"'):
                opt = '" "'
            pairs.setdefault(m.group(1), {})[kind] = opt
    raw = "".join('%s %s %s\n' % (n, p.get("A", '" "'), p.get("B", '" "'))
                  for n, p in sorted(pairs.items()))
    flags_h = run([mkflags], raw)

    globs = []
    for f in files:
        m = re.search(r"^GLOBALS\(\n(.*?)^\)", src[f], re.M | re.S)
        if m:
            globs.append((os.path.basename(f)[:-2], m.group(1)))
    globals_h = "".join("// %s\n\nstruct %s_data {\n%s};\n\n" % (n, n, b)
                        for n, b in globs)
    globals_h += "\nextern union global_union {\n" + "".join(
        "\tstruct %s_data %s;\n" % (n, n) for n, _ in globs) + "} this;\n"

    tagged = ""
    for f in files + sorted("lib/" + x for x in os.listdir(
            os.path.join(top, "lib")) if x.endswith(".c")):
        text = src.get(f) or open(os.path.join(top, f),
                                  encoding="latin-1").read()
        inside = False	# sed '/TAGGED_ARRAY(/,/^)/' as make.sh
        for line in text.splitlines():
            if not inside and "TAGGED_ARRAY(" in line:
                inside = True
                line = re.sub(r".*TAGGED_ARRAY[(]([^,]*),", r"\1", line)
            elif inside and line.startswith(")"):
                inside = False
            elif not inside:
                continue
            tagged += line + "\n"
    tags_h = run([mktags], tagged) if tagged else ""

    help_h = "".join("#define HELP_%s %s\n" % (n.lower(), c_string(h))
                     for n, h in sorted(helps.items()))
    for name, text in (("config.h", config_h), ("newtoys.h", newtoys_h),
                       ("flags.h", flags_h), ("globals.h", globals_h),
                       ("tags.h", tags_h), ("help.h", help_h)):
        with open(os.path.join(out, name), "w") as f:
            f.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
