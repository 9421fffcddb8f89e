#!/usr/bin/env python3
"""Runs the same scripts through bash + this machine's tools and through the
toolbox shell, and compares: stdout, exit status and the files left behind.

    compare.py PREFIX...            e.g. build/.../msc-toolbox-native
    TOOLBOX_PREFIX='node run-node.mjs busybox.wasm' compare.py

PREFIX is what run_tests.py takes ("{root}" is the scratch directory); each
script runs as PREFIX sh -c SCRIPT in a fresh copy of the fixture tree, and
as bash -c SCRIPT (GNU coreutils, grep, sed, findutils, diffutils, the
system awk) in another. Stderr is not compared (messages differ in wording),
only whether both wrote some. The scripts are what agents type: grep -rn,
find -name -exec, sed -i, awk field sums, sort | uniq -c, xargs, diff,
env. Output whose order the real tools leave to the file system (find,
grep -r) goes through sort in the script itself.

COMPARE_FILTER=regex runs the scripts whose name matches; -v prints each.
Exit status 0 when every script agrees, 1 otherwise, 77 (skip) without bash.
"""
import os
import shlex
import shutil
import subprocess
import sys
import tempfile

FIXTURES = {
    "src/main.c": "#include <stdio.h>\n// TODO: args\nint main(void)\n{\n"
                  "\tprintf(\"hello\\n\");\n\treturn 0;\n}\n",
    "src/util.c": "/* util */\nint add(int a, int b) { return a + b; }\n"
                  "// TODO: overflow\n",
    "src/util.h": "int add(int a, int b);\n",
    "src/lib/deep.c": "static int deep = 42; // todo lower case\n",
    "docs/README.md": "# Title\n\nSome text. TODO: write more.\n",
    "docs/notes.txt": "alpha beta\ngamma delta\nalpha omega\n",
    "data/sales.csv": "region,item,qty,price\nnorth,apple,3,1.50\n"
                      "south,pear,5,2.25\nnorth,pear,2,2.25\n"
                      "east,apple,7,1.50\nsouth,apple,1,1.50\n",
    "data/access.log": "10.0.0.1 GET /index.html 200\n"
                       "10.0.0.2 GET /about 404\n"
                       "10.0.0.1 POST /login 302\n"
                       "10.0.0.3 GET /index.html 200\n"
                       "10.0.0.1 GET /index.html 304\n",
    "data/words.txt": "pear\napple\nfig\napple\nbanana\npear\napple\n",
    "config.ini": "name=demo\nport=8080\ndebug=false\n",
    "empty/": None,
}

# (name, script): each must be deterministic under bash + GNU tools.
SCRIPTS = [
    ("grep -rn", "grep -rn TODO . | sort"),
    ("grep -rn --include", "grep -rn --include='*.c' TODO src | sort"),
    ("grep -rni -l", "grep -rli todo . | sort"),
    ("grep -c and -v", "grep -c alpha docs/notes.txt; "
     "grep -v alpha docs/notes.txt"),
    ("grep -E -o", "grep -Eo '[0-9]+\\.[0-9]+' data/sales.csv"),
    ("grep no match status", "grep -r nothing-here .; echo rc=$?"),
    ("grep -w -x -q", "grep -w pear data/words.txt | head -1; "
     "grep -qx fig data/words.txt && echo found"),
    ("grep -c -m -l -n on files", "grep -c TODO src/*.c; "
     "grep -m1 -n alpha docs/notes.txt; grep -l TODO src/*.c; "
     "grep -H -n omega docs/notes.txt"),
    ("grep binary and no final newline", "printf 'x\\0TODO\\n' > bin.dat; "
     "grep TODO bin.dat; echo rc=$?; printf 'one\\nlast TODO' > nonl.txt; "
     "grep -n TODO nonl.txt; grep -c TODO nonl.txt"),
    ("find -name", "find . -name '*.c' | sort"),
    ("find -type d", "find . -type d | sort"),
    ("find -name -exec {} ;", "find src -name '*.c' -exec wc -l {} \\; "
     "| sort"),
    ("find -exec {} +", "find src -name '*.h' -exec cat {} +"),
    ("find -exec grep -l", "find . -type f -exec grep -l TODO {} \\; | sort"),
    ("find -maxdepth -empty", "find . -maxdepth 1 -empty; "
     "find . -maxdepth 1 -type f"),
    ("find -path -prune", "find . -path ./src -prune -o -type f -print "
     "| sort"),
    ("find -newer -delete", "find data -name '*.log' -delete; ls data"),
    ("sed -i s///g", "sed -i 's/apple/APPLE/g' data/sales.csv; "
     "cat data/sales.csv"),
    ("sed -i.bak", "sed -i.bak 's/^port=.*/port=9090/' config.ini; "
     "cat config.ini config.ini.bak"),
    ("sed -n p ranges", "sed -n '2,3p' data/words.txt; "
     "sed -n '/gamma/,$p' docs/notes.txt"),
    ("sed -E groups", "sed -E 's/([a-z]+),([a-z]+)/\\2:\\1/' "
     "data/sales.csv"),
    ("sed d and a", "sed -e '/^#/d' -e '$a\\' -e 'end' docs/README.md"),
    ("sed -i on many files", "sed -i 's/TODO/DONE/' src/*.c; "
     "grep -rn DONE src | sort"),
    ("awk field sum", "awk -F, 'NR>1 { s += $3 } END { print s }' "
     "data/sales.csv"),
    ("awk sum by key", "awk -F, 'NR>1 { q[$1] += $3 * $4 } END "
     "{ for (k in q) printf \"%s %.2f\\n\", k, q[k] }' data/sales.csv "
     "| sort"),
    ("awk NF NR $NF", "awk '{ print NR, NF, $NF }' data/access.log"),
    ("awk pattern count", "awk '$4 == 200 { n++ } END { print n+0 }' "
     "data/access.log"),
    ("awk printf columns", "awk '{ printf \"%-10s|%5s\\n\", $1, $4 }' "
     "data/access.log"),
    ("awk -v and length", "awk -v min=4 'length($0) > min' "
     "data/words.txt"),
    ("awk gsub and toupper", "awk '{ gsub(/a/, \"A\"); "
     "print toupper(substr($0, 1, 3)) }' docs/notes.txt"),
    ("awk split", "echo 'a:b:c' | awk '{ n = split($0, p, \":\"); "
     "print n, p[3] }'"),
    ("sort | uniq -c", "sort data/words.txt | uniq -c"),
    ("sort | uniq -c | sort -rn", "sort data/words.txt | uniq -c "
     "| sort -rn | head -2"),
    ("cut | sort | uniq -c", "cut -d' ' -f1 data/access.log | sort "
     "| uniq -c | sort -rn"),
    ("sort -t -k -n", "sort -t, -k3,3n data/sales.csv"),
    ("sort -u and -r", "sort -u data/words.txt; sort -r data/words.txt"),
    ("uniq -d -u", "sort data/words.txt | uniq -d; "
     "sort data/words.txt | uniq -u"),
    ("xargs", "find src -name '*.c' | sort | xargs wc -l"),
    ("xargs grep", "find . -name '*.c' | sort | xargs grep -n TODO"),
    ("xargs -I", "printf 'a\\nb\\n' | xargs -I{} echo item-{}-end"),
    ("xargs -n", "echo 1 2 3 4 5 | xargs -n 2 echo"),
    ("xargs -0", "find src -name '*.h' -print0 | xargs -0 cat"),
    ("head tail wc", "head -n 2 data/access.log; tail -n 1 "
     "data/access.log; wc -l < data/access.log"),
    ("tr and cut", "tr 'a-z' 'A-Z' < config.ini | cut -d= -f1"),
    ("diff -u", "sed 's/8080/8081/' config.ini > new.ini; "
     "diff -u config.ini new.ini | tail -n +3; echo rc=$?"),
    ("wc -l on files", "wc -l data/words.txt docs/notes.txt"),
    ("for loop over files", "for f in src/*.c; do echo \"$f: "
     "$(wc -l < $f)\"; done"),
    ("while read", "while IFS=, read -r r i q p; do "
     "[ \"$r\" = north ] && echo \"$i $q\"; done < data/sales.csv"),
    ("local and arith", "f() { local n=$1; echo $((n ** 2 + 1)); }; "
     "n=7; f 3; echo $n"),
    ("yes | head -c | wc -c", "yes | head -c 20000000 | wc -c"),
    ("mkdir -p cp mv rm", "mkdir -p out/a/b && cp -r src out/a/b/ && "
     "mv out/a/b/src out/copy && rm -r out/a && find out | sort"),
    # toybox's applets (grep sed find ls cp mv rm mkdir du stat md5sum
    # base64 tac rev nl paste tr uniq) in the idioms agents use
    ("grep -rn -A1 context", "grep -rn -A1 alpha docs | sort"),
    ("grep -rl | xargs sed -i", "grep -rl TODO src | sort | "
     "xargs sed -i 's/TODO/DONE/'; grep -rc DONE src | sort"),
    ("find -exec sed -i {} +", "find src -name '*.c' -exec sed -i "
     "'s/int/long/g' {} +; cat src/util.c"),
    ("find -type f | xargs -I", "find docs -type f | sort | "
     "xargs -I{} sh -c 'echo {}; wc -l < {}'"),
    ("sed -n ranges and y", "sed -n '/^north/,/^east/p' data/sales.csv; "
     "echo hello | sed 'y/lo/LO/'"),
    ("sort | uniq -c | sort -rn | head", "cut -d' ' -f1 data/access.log | "
     "sort | uniq -c | sort -rn | head -1"),
    ("ls -a and -1", "ls; ls -a docs; ls -1 src"),
    ("sha256sum -c and md5sum", "sha256sum config.ini > sums; "
     "sha256sum -c sums; md5sum data/words.txt"),
    ("base64 round trip", "base64 config.ini | base64 -d"),
    ("tac rev nl paste", "tac data/words.txt | head -3; echo abc | rev; "
     "nl docs/notes.txt; paste -d, docs/notes.txt docs/notes.txt"),
    ("stat -c and du -b", "stat -c '%s %n' config.ini; du -b config.ini"),
    ("touch ln -s readlink", "touch t && ln -s t l && readlink l && "
     "test -L l && echo link"),
    ("tr -d -s", "echo 'aa  bb  cc' | tr -s ' '; echo hello | tr -d l"),
    # GNU's ways toybox 0.8.9 lacked (tbx/*.c.patch; each failed before)
    ("sed first~step", "seq 1 10 | sed -n '0~3p'; seq 1 10 | sed '1~4d'; "
     "seq 1 7 | sed -n '2~0p'; seq 1 9 | sed -n '3~3,+1p'"),
    ("sed \\U \\L \\u \\l \\E", "echo 'hello big world' | "
     "sed 's/\\(hello\\) \\(big\\)/\\U\\1\\E \\u\\2/'; "
     "echo 'FOO bar' | sed -E 's/([A-Z]+) ([a-z]+)/\\L\\1 \\U\\2x\\E!/'; "
     "echo 'one two' | sed 's/[a-z]*/\\u&/g'; "
     "echo 'ABC DEF' | sed -E 's/([A-Z])([A-Z]*)/\\1\\L\\2/g; s/D/\\lD/'; "
     "echo mixed | sed 's/.*/\\L\\u&/'"),
    ("find -execdir", "find src -name '*.c' -execdir echo {} \\; | sort; "
     "find src -name '*.c' -execdir ls \\; | sort; "
     "find src -name '*.c' -execdir echo {} + | tr ' ' '\\n' | sort; "
     "find src -name '*.h' -execdir sed -i 's/int/long/' {} \\;; "
     "cat src/util.h"),
    ("cut -d '' (NUL)", "printf 'a\\0b\\0c\\nno delim\\n' | cut -d '' -f2; "
     "printf 'x\\0y\\0z\\n' | cut -d '' -f1,3; "
     "printf 'a\\0b\\nplain\\n' | cut -s -d '' -f1"),
    ("sort -h units first", "printf '2000\\n1K\\n1.5M\\n10\\n0.5G\\n"
     "-1K\\n0K\\n3k\\n900M\\n-2\\n' | sort -h; "
     "printf 'b 2G\\na 10M\\nc 1\\n' | sort -k2h"),
    ("grep invalid UTF-8", "printf 'a\\377b\\n' | grep a; "
     "printf 'caf\\351\\nnul\\0x cafe\\n' > l1.txt; grep -c caf l1.txt; "
     "printf 'caf\\351 ok\\n' > l2.txt; grep -rn caf l2.txt"),
    ("head -n -N -c -N", "seq 1 100000 > n.txt; head -n -99997 n.txt; "
     "head -n -3 n.txt | tail -2; head -c -10 n.txt | tail -c 12; "
     "printf 'a\\nb\\nc' | head -n -1; printf 'a\\nb\\nc' | head -c -1"),
    ("find -size rounds up", "echo '-1k:'; find . -type f -size -1k; "
     "echo '1k:'; find . -type f -size 1k | sort; echo '+100c:'; "
     "find . -size +100c -name '*.c'; echo '-2:'; "
     "find . -type f -size -2 | sort"),
    ("sed s///Ng", "sed 's/a/X/2g' docs/notes.txt; echo aaaa | sed 's/a/b/3'"),
    ("grep --color=never", "grep -rn --color=never TODO src | sort; "
     "grep --color=auto -c alpha docs/notes.txt"),
    ("sort -n exact", "printf '9007199254740993\\n9007199254740992\\n-0\\n0\\n"
     "1.50\\n1.5\\n-.5\\n10\\n9.99\\n' | sort -nu; "
     "printf '3\\n-2\\n-10\\n' | sort -n"),
    ("find -size bad unit", "find . -size 1T 2>/dev/null; echo rc=$?; "
     "find . -size 1x 2>/dev/null; echo rc=$?; find . -size 1c | sort"),
    ("grep -n over long skips", "seq 1 200000 > s.txt; "
     "grep -n 199999 s.txt; grep -n 77777 s.txt; grep -c 5 s.txt"),

    # diff, xargs, env, time, yes: toybox's, run in-process
    ("diff normal format", "printf 'a\\nb\\nc\\nd\\n' > o; "
     "printf 'a\\nB\\nc\\nd\\ne\\n' > n; diff o n; echo rc=$?; "
     "printf 'x\\ny\\n' > p; diff o p; diff p o; diff o o; echo rc=$?"),
    ("diff no newline at end", "printf 'a' > x; printf 'a\\n' > y; "
     "diff x y; echo rc=$?; diff -u x y | tail -n +3"),
    ("diff -u -U1", "seq 1 20 > a; seq 1 20 | sed '5d;15s/$/x/' > b; "
     "diff -u a b | tail -n +3; diff -U1 a b | tail -n +3"),
    ("diff -r", "cp -r src src2; echo extra >> src2/util.c; rm src2/util.h; "
     "mkdir src2/new; echo n > src2/new/f; echo x > src2/lib/more.c; "
     "diff -r src src2; echo rc=$?"),
    ("diff -ru -qr", "cp -r docs d2; sed -i 's/beta/BETA/' d2/notes.txt; "
     "diff -ru docs d2 | sed 's/\\t.*//'; diff -qr docs d2; echo rc=$?; "
     "rm d2/notes.txt; diff -r docs d2; echo rc=$?"),
    ("diff missing file and stdin", "diff config.ini nope; echo rc=$?; "
     "printf 'alpha beta\\nx\\n' | diff - docs/notes.txt; echo rc=$?"),
    ("xargs quotes and -n 1", "echo \"'a b' \\\"c d\\\" e\\\\ f\" | "
     "xargs -n 1 echo"),
    ("xargs -I lines", "printf 'one two\\n\\n  three\\n' | "
     "xargs -I % echo '[%]' '%%'; printf '' | xargs -I % echo never; "
     "echo rc=$?"),
    ("xargs -0 -n 1 and -r", "printf 'a b\\0c\\0' | xargs -0 -n 1 echo; "
     "printf '' | xargs -r echo never; printf '' | xargs echo empty"),
    ("xargs status", "echo x | xargs false; echo rc=$?; "
     "echo x | xargs nosuchcmd; echo rc=$?"),
    ("xargs stops at 255 and 127", "printf 'a\\nb\\nc\\n' | xargs -n 1 sh -c "
     "'echo $0; [ $0 = a ] && exit 255; true' 2>/dev/null; echo rc=$?; "
     "printf 'a\\nb\\n' | xargs -n 1 nosuchcmd 2>/dev/null; echo rc=$?"),
    ("xargs stdin of the command", "printf 'a\\nb\\n' | xargs -n 1 sh -c "
     "'cat; echo \"$0\"'"),
    ("env", "env A=1 B=2 sh -c 'echo $A $B'; echo \"[${A-unset}]\"; "
     "env -u HOME sh -c 'echo ${HOME-none}'; X=1 env | grep '^X='; "
     "env -i sh -c 'echo ${X-empty}'; env A=2 true; "
     "echo \"[${A-unset}]\""),
    ("env status", "env nosuchcmd; echo rc=$?; env false; echo rc=$?"),
    ("time", "time true; echo rc=$?"),
    ("yes | head", "yes abc def | head -n 3; yes | head -c 10 | wc -c"),
]


def make_tree(root):
    for path, content in FIXTURES.items():
        full = os.path.join(root, path)
        if path.endswith("/"):
            os.makedirs(full, exist_ok=True)
            continue
        os.makedirs(os.path.dirname(full), exist_ok=True)
        with open(full, "w") as f:
            f.write(content)


def snapshot(root):
    """{relative path: bytes or 'dir'} of the tree."""
    tree = {}
    for d, dirs, files in os.walk(root):
        for n in dirs:
            tree[os.path.relpath(os.path.join(d, n), root)] = "dir"
        for n in files:
            p = os.path.join(d, n)
            with open(p, "rb") as f:
                tree[os.path.relpath(p, root)] = f.read()
    return tree


def run(cmd, root):
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "PWD": root,
           "HOME": root, "TZ": "UTC", "LC_ALL": "C", "TOOLBOX_ROOT": root}
    try:
        p = subprocess.run(cmd, cwd=root, env=env, capture_output=True,
                           stdin=subprocess.DEVNULL, timeout=60)
    except subprocess.TimeoutExpired:
        return None, b"", b"timeout", {}
    return p.returncode, p.stdout, p.stderr, snapshot(root)


def main():
    args = sys.argv[1:]
    verbose = args[:1] == ["-v"]
    if verbose:
        args = args[1:]
    prefix = shlex.split(os.environ["TOOLBOX_PREFIX"]) \
        if os.environ.get("TOOLBOX_PREFIX") else args
    if not prefix:
        print(__doc__, file=sys.stderr)
        return 2
    bash = shutil.which("bash")
    if bash is None:
        print("compare: no bash here", file=sys.stderr)
        return 77
    prefix = [os.path.abspath(p) if "/" in p and os.path.exists(p) else p
              for p in prefix]
    flt = os.environ.get("COMPARE_FILTER", "")
    import re
    todo = [s for s in SCRIPTS if re.search(flt, s[0])]
    base = tempfile.mkdtemp(prefix="toolbox-compare-")
    failed = 0
    try:
        for n, (name, script) in enumerate(todo, 1):
            ref_root = os.path.join(base, "ref%d" % n)
            our_root = os.path.join(base, "our%d" % n)
            make_tree(ref_root)
            make_tree(our_root)
            want = run([bash, "-c", script], ref_root)
            got = run([p.replace("{root}", our_root) for p in prefix] +
                      ["sh", "-c", script], our_root)
            bad = []
            if got[0] != want[0]:
                bad.append("exit %s, bash %s" % (got[0], want[0]))
            if got[1] != want[1]:
                bad.append("stdout %r\n        bash   %r" % (got[1], want[1]))
            if bool(got[2]) != bool(want[2]):
                bad.append("stderr %r\n        bash   %r" % (got[2], want[2]))
            if got[3] != want[3]:
                keys = sorted(set(got[3]) ^ set(want[3]) |
                              {k for k in got[3] if k in want[3] and
                               got[3][k] != want[3][k]})
                bad.append("files differ: %s" % ", ".join(keys))
            if bad:
                failed += 1
                print("FAIL %s: %s" % (name, script))
                for b in bad:
                    print("    " + b)
            elif verbose:
                print("ok   %s" % name)
    finally:
        shutil.rmtree(base, ignore_errors=True)
    print("%d/%d comparison scripts agree with bash" %
          (len(todo) - failed, len(todo)))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
