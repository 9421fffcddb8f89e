"""Toolbox acceptance cases, run by run_tests.py.

A case is a dict: name; args (an argv) or sh (a command line, run as
["sh", "-c", line]); optional stdin, setup (extra files: path -> content,
"dir/" for a directory), env; expectations: rc (default 0, or "nonzero"),
out (exact stdout), out_re, out_has/out_lacks, err (exact stderr; "" by
default when rc is 0), err_has, files (path -> content after the run, None:
must not exist). "steps": a list of such dicts run in the same directory.
Every case starts from FIXTURES in a fresh directory. Paths are relative:
natively the toolbox runs in the real file system.
"""

LINES = "".join("line%d\n" % i for i in range(1, 11))

FIXTURES = {
    "test.txt": "hello world\nthis is a wasm test\n",
    "a.txt": "file a\n",
    "b.txt": "file b\n",
    "lines.txt": LINES,
    "sub/inner.txt": "inner wasm file\n",
    "sub/deep/x.md": "# title\n",
    "data.csv": "name,age,city\nalice,30,NY\nbob,25,LA\ncarol,35,NY\n",
    "words.txt": "banana\napple\ncherry\napple\nbanana\napple\n",
    "nums.txt": "10\n2\n33\n4\n",
    "empty.txt": "",
    "noeol.txt": "no newline",
}

ROOT_LS = ("a.txt\nb.txt\ndata.csv\nempty.txt\nlines.txt\nnoeol.txt\n"
           "nums.txt\nsub\ntest.txt\nwords.txt\n")

CASES = []


def t(name, cmd, **kw):
    """Adds a case; cmd is an argv list or a shell command line."""
    case = dict(kw, name=name)
    if isinstance(cmd, list):
        case["args"] = cmd
    else:
        case["sh"] = cmd
    CASES.append(case)


def seq(name, *steps):
    CASES.append({"name": name, "steps": [
        dict(s[1], args=s[0]) if isinstance(s[0], list) else
        dict(s[1], sh=s[0]) for s in steps]})


# --- the reference's go_busybox acceptance cases (section 10) ---
t("ref/cat exact", ["cat", "test.txt"],
  out="hello world\nthis is a wasm test\n", err="")
t("ref/ls -la", ["ls", "-la"],
  out_has=["test.txt", "sub", "a.txt", " .\n", " ..\n"])
t("ref/cat a b", ["cat", "a.txt", "b.txt"], out="file a\nfile b\n")
t("ref/grep hello", ["grep", "hello", "test.txt"], out="hello world\n")
t("ref/grep -r wasm .", ["grep", "-r", "wasm", "."],
  out="./sub/inner.txt:inner wasm file\n./test.txt:this is a wasm test\n")
t("ref/stdin cat", ["cat"], stdin="from stdin\n", out="from stdin\n")
t("ref/echo", ["echo", "hello", "world"], out="hello world\n")
t("ref/head -n 3", ["head", "-n", "3", "lines.txt"],
  out="line1\nline2\nline3\n")
t("ref/tail -n 3", ["tail", "-n", "3", "lines.txt"],
  out="line8\nline9\nline10\n")
t("ref/wc -l", ["wc", "-l"], stdin="one\ntwo\n", out="2\n")
t("ref/wc -l file", ["wc", "-l", "test.txt"], out="2 test.txt\n")
seq("ref/mkdir ls rmdir",
    (["mkdir", "newdir"], {}),
    (["ls", "-d", "newdir"], {"out": "newdir\n"}),
    (["rmdir", "newdir"], {}),
    (["ls", "newdir"], {"rc": "nonzero", "err_has": ["No such file"]}))
t("ref/grep missing file", ["grep", "x", "nonexistentfile.txt"], rc=2,
  err="grep: nonexistentfile.txt: No such file or directory\n")
seq("ref/files persist",
    ("echo persisted > p.txt", {}),
    (["cat", "p.txt"], {"out": "persisted\n"}))

# --- multi-call behaviour ---
t("busybox/--list", ["--list"], out_has=["awk\n", "cat\n", "grep\n",
                                           "sed\n", "sh\n", "xargs\n"])
t("busybox/unknown", ["frobnicate", "x"], rc=2,
  err="busybox: applet not found: frobnicate\n", out_has=["ls\n"])
t("busybox/true", ["true"], out="")
t("busybox/false", ["false"], rc=1, err="")

# --- cat ---
t("cat/-n", ["cat", "-n", "a.txt", "b.txt"],
  out="     1\tfile a\n     2\tfile b\n")
t("cat/missing", ["cat", "a.txt", "nope", "b.txt"], rc=1,
  out="file a\nfile b\n", err="cat: nope: No such file or directory\n")
t("cat/dash", ["cat", "a.txt", "-"], stdin="in\n", out="file a\nin\n")
t("cat/no eol", ["cat", "noeol.txt"], out="no newline")
t("cat/dir", ["cat", "sub"], rc=1, err="cat: sub: Is a directory\n")
t("cat/dev null", ["cat", "/dev/null"], out="")

# --- ls ---
t("ls/plain", ["ls"], out=ROOT_LS)
t("ls/-1 dir", ["ls", "-1", "sub"], out="deep\ninner.txt\n")
t("ls/-a", ["ls", "-a", "sub"], out=".\n..\ndeep\ninner.txt\n")
t("ls/-A", ["ls", "-A", "sub"], setup={"sub/.hidden": ""},
  out=".hidden\ndeep\ninner.txt\n")
t("ls/-d", ["ls", "-d", "sub"], out="sub\n")
t("ls/-R", ["ls", "-R", "sub"],
  out="sub:\ndeep\ninner.txt\n\nsub/deep:\nx.md\n")
# toybox ls -l dates are ISO (YYYY-MM-DD hh:mm); GNU's "Mon dd hh:mm" too.
t("ls/-l", ["ls", "-l", "a.txt"],
  out_re=r"^-rw-r--r-- +1 \S+ +\S+ +7 (\w{3} [ \d]\d [\d:]{4,5}|"
  r"\d{4}-\d\d-\d\d \d\d:\d\d) a\.txt\n$")
t("ls/-l dir", ["ls", "-l", "sub"],
  out_re=r"^total \d+\nd\S+ .* deep\n-\S+ .* 16 .* inner\.txt\n$")
t("ls/-lh", ["ls", "-lh", "big.bin"], setup={"big.bin": "x" * 3000},
  out_re=r" 2\.9K .*big\.bin\n$")
t("ls/-S", ["ls", "-S", "a.txt", "lines.txt", "empty.txt"],
  out="lines.txt\na.txt\nempty.txt\n")
t("ls/-r", ["ls", "-r", "sub"], out="inner.txt\ndeep\n")
t("ls/-F", ["ls", "-F", "sub"], out="deep/\ninner.txt\n")
t("ls/files then dirs", ["ls", "sub", "a.txt"],
  out="a.txt\n\nsub:\ndeep\ninner.txt\n")
t("ls/missing", ["ls", "nope"], rc=1,
  err="ls: nope: No such file or directory\n")
t("ls/options after operand", ["ls", "sub", "-r"], out="inner.txt\ndeep\n")
t("ls/bad option", ["ls", "-j"], rc=1, err_has=["Unknown option 'j'"])

# --- grep ---
t("grep/-i", ["grep", "-i", "HELLO", "test.txt"], out="hello world\n")
t("grep/-n", ["grep", "-n", "test", "test.txt"],
  out="2:this is a wasm test\n")
t("grep/-v", ["grep", "-v", "hello", "test.txt"],
  out="this is a wasm test\n")
t("grep/-c", ["grep", "-c", "apple", "words.txt"], out="3\n")
t("grep/-l", ["grep", "-l", "file", "a.txt", "b.txt", "test.txt"],
  out="a.txt\nb.txt\n")
t("grep/-L", ["grep", "-L", "file", "a.txt", "test.txt"], out="test.txt\n")
t("grep/no match", ["grep", "zzz", "test.txt"], rc=1, out="")
t("grep/-q", ["grep", "-q", "hello", "test.txt"], out="")
t("grep/-E", ["grep", "-E", "^(apple|cherry)$", "words.txt"],
  out="apple\ncherry\napple\napple\n")
t("grep/BRE +", ["grep", "an\\+a", "words.txt"], out="banana\nbanana\n")
t("grep/-F", ["grep", "-F", "a.b", "-"], stdin="a.b\naxb\n", out="a.b\n")
t("grep/-w", ["grep", "-w", "is", "test.txt"],
  out="this is a wasm test\n")
t("grep/-w no", ["grep", "-w", "wa", "test.txt"], rc=1, out="")
t("grep/-x", ["grep", "-x", "apple", "words.txt"],
  out="apple\napple\napple\n")
t("grep/-o", ["grep", "-o", "l\\+", "test.txt"], out="ll\nl\n")
t("grep/-e -e", ["grep", "-e", "cherry", "-e", "banana", "words.txt"],
  out="banana\ncherry\nbanana\n")
t("grep/multi file", ["grep", "file", "a.txt", "b.txt"],
  out="a.txt:file a\nb.txt:file b\n")
t("grep/-h", ["grep", "-h", "file", "a.txt", "b.txt"],
  out="file a\nfile b\n")
t("grep/-H", ["grep", "-H", "hello", "test.txt"],
  out="test.txt:hello world\n")
t("grep/-r no operand", ["grep", "-r", "title"], out="sub/deep/x.md:# title\n")
t("grep/-rl", ["grep", "-rl", "wasm", "sub"], out="sub/inner.txt\n")
t("grep/--include", ["grep", "-r", "--include=*.md", "t", "."],
  out="./sub/deep/x.md:# title\n")
t("grep/-A", ["grep", "-A", "1", "line2$", "lines.txt"],
  out="line2\nline3\n")
t("grep/-B -n", ["grep", "-n", "-B", "1", "line5", "lines.txt"],
  out="4-line4\n5:line5\n")
t("grep/-C sep", ["grep", "-C", "1", "-e", "line2$", "-e", "line8",
                   "lines.txt"],
  out="line1\nline2\nline3\n--\nline7\nline8\nline9\n")
t("grep/-m", ["grep", "-m", "2", "apple", "words.txt"],
  out="apple\napple\n")
t("grep/-s", ["grep", "-s", "x", "nope"], rc=2, err="")
t("grep/dir without -r", ["grep", "x", "sub"], rc=2,
  err="grep: sub: Is a directory\n")
t("grep/stdin", ["grep", "b"], stdin="a\nb\nc\n", out="b\n")
t("grep/bad regex", ["grep", "-E", "(", "test.txt"], rc=2,
  err_has=["grep:"])

# --- sed ---
t("sed/s", ["sed", "s/hello/bye/", "test.txt"],
  out="bye world\nthis is a wasm test\n")
t("sed/s g", ["sed", "s/a/A/g", "words.txt"],
  out="bAnAnA\nApple\ncherry\nApple\nbAnAnA\nApple\n")
t("sed/s N", ["sed", "s/a/_/2"], stdin="banana\n", out="ban_na\n")
t("sed/s I", ["sed", "s/HELLO/x/I", "test.txt"],
  out="x world\nthis is a wasm test\n")
t("sed/-n p", ["sed", "-n", "3,4p", "lines.txt"], out="line3\nline4\n")
t("sed/d", ["sed", "2,9d", "lines.txt"], out="line1\nline10\n")
t("sed/$", ["sed", "-n", "$p", "lines.txt"], out="line10\n")
t("sed/regex addr", ["sed", "-n", "/line1/p", "lines.txt"],
  out="line1\nline10\n")
t("sed/range re", ["sed", "-n", "/line3/,/line5/p", "lines.txt"],
  out="line3\nline4\nline5\n")
t("sed/!", ["sed", "-n", "/apple/!p", "words.txt"],
  out="banana\ncherry\nbanana\n")
t("sed/q", ["sed", "3q", "lines.txt"], out="line1\nline2\nline3\n")
t("sed/=", ["sed", "-n", "/cherry/=", "words.txt"], out="3\n")
t("sed/y", ["sed", "y/abc/xyz/"], stdin="aabbcc\n", out="xxyyzz\n")
t("sed/a i c", ["sed", "-e", "1i top", "-e", "2a after", "-e", "3c\\",
                "-e", "changed", "-"], stdin="1\n2\n3\n",
  out="top\n1\n2\nafter\nchanged\n")
t("sed/-E groups", ["sed", "-E", "s/([a-z]+) ([a-z]+)/\\2 \\1/", "test.txt"],
  out="world hello\nis this a wasm test\n")
t("sed/BRE groups", ["sed", "s/\\(l*\\)o/[\\1]/"], stdin="hello\n",
  out="he[ll]\n")
t("sed/&", ["sed", "s/[0-9]*/<&>/"], stdin="42 x\n", out="<42> x\n")
t("sed/empty match g", ["sed", "s/x*/-/g"], stdin="abc\n", out="-a-b-c-\n")
t("sed/multiple -e", ["sed", "-e", "s/a/b/", "-e", "s/b/c/"],
  stdin="a\n", out="c\n")
t("sed/semicolons", ["sed", "s/1/one/;s/2/two/"], stdin="1 2\n",
  out="one two\n")
t("sed/block", ["sed", "-n", "/apple/{s/apple/APPLE/;p}", "words.txt"],
  out="APPLE\nAPPLE\nAPPLE\n")
t("sed/N join", ["sed", ":a;N;$!ba;s/\\n/,/g", "nums.txt"],
  out="10,2,33,4\n")
t("sed/hold", ["sed", "-n", "1!G;h;$p", "nums.txt"], out="4\n33\n2\n10\n")
t("sed/-i", ["sed", "-i", "s/file/FILE/", "a.txt", "b.txt"], out="",
  files={"a.txt": "FILE a\n", "b.txt": "FILE b\n"})
t("sed/-i.bak from the shell", "sed -i.bak 's/a$/A/' a.txt; cat a.txt "
  "a.txt.bak; sed -i.orig 's/A/B/' a.txt; cat a.txt.orig a.txt",
  out="file A\nfile a\nfile A\nfile B\n")
t("sed/-i.bak", ["sed", "-i.bak", "s/a$/A/", "a.txt"], out="",
  files={"a.txt": "file A\n", "a.txt.bak": "file a\n"})
t("sed/no eol kept", ["sed", "s/no/NO/", "noeol.txt"], out="NO newline")
t("sed/addr,+N", ["sed", "-n", "/line2/,+2p", "lines.txt"],
  out="line2\nline3\nline4\n")
t("sed/t branch", ["sed", "s/a/A/;t;s/$/!/"], stdin="a\nb\n",
  out="A\nb!\n")
t("sed/custom delim", ["sed", "s|/usr|/opt|"], stdin="/usr/bin\n",
  out="/opt/bin\n")
t("sed/w file", ["sed", "-n", "/apple/w out.txt", "words.txt"], out="",
  files={"out.txt": "apple\napple\napple\n"})
t("sed/missing file", ["sed", "p", "nope"], rc=1,
  err="sed: nope: No such file or directory\n")
t("sed/bad command", ["sed", "k", "a.txt"], rc=1,
  err_has=["bad pattern 'k'"])
t("sed/unterminated s", ["sed", "s/a/b", "a.txt"], rc=1,
  err_has=["bad pattern 's/a/b'"])
t("sed/-f", ["sed", "-f", "script.sed", "a.txt"],
  setup={"script.sed": "s/file/F/\ns/a/A/\n"}, out="F A\n")

# --- awk ---
t("awk/print field", ["awk", "-F,", "{print $2}", "data.csv"],
  out="age\n30\n25\n35\n")
t("awk/NR pattern", ["awk", "-F,", "NR>1 {s+=$2} END {print s}",
                     "data.csv"], out="90\n")
t("awk/regex pattern", ["awk", "/apple/", "words.txt"],
  out="apple\napple\napple\n")
t("awk/count array", ["awk", "{c[$1]++} END {for (k in c) print k, c[k]}",
                      "words.txt"], out="apple 3\nbanana 2\ncherry 1\n")
t("awk/NF $NF", ["awk", "{print NF, $NF}", "test.txt"],
  out="2 world\n5 test\n")
t("awk/OFS", ["awk", "BEGIN{OFS=\"-\"} {$1=$1; print}", "test.txt"],
  out="hello-world\nthis-is-a-wasm-test\n")
t("awk/-v", ["awk", "-v", "n=3", "BEGIN {print n*2}"], out="6\n")
t("awk/printf", ["awk", "BEGIN {printf \"%05.1f|%-3s|%x|%c\\n\", "
                 "3.14159, \"a\", 255, 65}"], out="003.1|a  |ff|A\n")
t("awk/string funcs", ["awk", "BEGIN {s=\"Hello World\"; print length(s), "
                       "substr(s, 7), substr(s, 1, 5), index(s, \"o\"), "
                       "tolower(s), toupper(s)}"],
  out="11 World Hello 5 hello world HELLO WORLD\n")
t("awk/split", ["awk", "BEGIN {n = split(\"a:b:c\", p, \":\"); "
                "print n, p[1] p[3]}"], out="3 ac\n")
t("awk/sub gsub", ["awk", "{n = gsub(/a/, \"[&]\"); sub(/^b/, \"B\"); "
                   "print n, $0}"], stdin="banana\n", out="3 B[a]n[a]n[a]\n")
t("awk/match", ["awk", "BEGIN {print match(\"foobar\", /o+b/), RSTART, "
                "RLENGTH}"], out="2 2 3\n")
t("awk/sprintf", ["awk", "BEGIN {x = sprintf(\"%3d|%s\", 7, \"z\"); "
                  "print x}"], out="  7|z\n")
t("awk/if else while", ["awk", "BEGIN {i = 0; while (i < 5) { if (i % 2) "
                        "printf \"o\"; else printf \"e\"; i++ }; print \"\"}"],
  out="eoeoe\n")
t("awk/for loop", ["awk", "BEGIN {for (i = 1; i <= 3; i++) s = s i; "
                   "print s}"], out="123\n")
t("awk/do while", ["awk", "BEGIN {do { n++ } while (n < 4); print n}"],
  out="4\n")
t("awk/function", ["awk", "function fact(n) { return n <= 1 ? 1 : "
                   "n * fact(n - 1) } BEGIN { print fact(10) }"],
  out="3628800\n")
t("awk/array param", ["awk", "function fill(a) { a[\"x\"] = 1 } "
                      "BEGIN { fill(arr); print length(arr), arr[\"x\"] }"],
  out="1 1\n")
t("awk/next", ["awk", "/apple/ {next} {print}", "words.txt"],
  out="banana\ncherry\nbanana\n")
t("awk/exit code", ["awk", "BEGIN {exit 3}"], rc=3, out="")
t("awk/exit runs END", ["awk", "{exit} END {print \"end\", NR}",
                        "lines.txt"], out="end 1\n")
t("awk/range", ["awk", "/line3/,/line5/ {print NR}", "lines.txt"],
  out="3\n4\n5\n")
t("awk/in delete", ["awk", "BEGIN {a[1]; a[2]; delete a[1]; "
                    "print (1 in a), (2 in a)}"], out="0 1\n")
t("awk/multi subscripts", ["awk", "BEGIN {a[1,2] = 3; for (k in a) "
                           "{ split(k, p, SUBSEP); print p[1], p[2], a[k] }}"],
  out="1 2 3\n")
t("awk/comparison kinds", ["awk", "{print ($1 < $2)}"],
  stdin="10 9\nabc abd\n", out="0\n1\n")
t("awk/concat precedence", ["awk", "BEGIN {print 1 \" \" 2+3, -1 \" \" 2}"],
  out="1 5 -1 2\n")
t("awk/numeric output", ["awk", "BEGIN {print 0.1 + 0.2, 1e6, 1/3, "
                         "2^10, 7 % 3, int(-3.7)}"],
  out="0.3 1000000 0.333333 1024 1 -3\n")
t("awk/getline file", ["awk", "BEGIN {while ((getline l < \"nums.txt\") "
                       "> 0) s += l; print s}"], out="49\n")
t("awk/cmd getline", ["awk", "BEGIN {\"echo hi there\" | getline; "
                      "print $2}"], out="there\n")
t("awk/print > file", ["awk", "{print $1 > \"out.txt\"}", "test.txt"],
  out="", files={"out.txt": "hello\nthis\n"})
t("awk/print | cmd", ["awk", "{print | \"sort\"}", "nums.txt"],
  out="10\n2\n33\n4\n")
t("awk/system", ["awk", "BEGIN {r = system(\"exit 3\"); print r}"],
  out="3\n")
t("awk/FS regex", ["awk", "-F", "[,:]+", "{print $3}"], stdin="a,,b:c\n",
  out="c\n")
t("awk/-F tab", ["awk", "-F", "\\t", "{print $2}"], stdin="a\tb c\n",
  out="b c\n")
t("awk/assign NF", ["awk", "{NF = 2; print}"], stdin="a b c d\n",
  out="a b\n")
t("awk/field beyond NF", ["awk", "{$5 = \"e\"; print; print NF}"],
  stdin="a b\n", out="a b   e\n5\n")
t("awk/ENVIRON", "TBVAR=set awk 'BEGIN {print ENVIRON[\"TBVAR\"]}'",
  out="set\n")
t("awk/FILENAME FNR", ["awk", "FNR == 1 {print FILENAME}", "a.txt",
                       "b.txt"], out="a.txt\nb.txt\n")
t("awk/operand assignment", ["awk", "{print x, $0}", "x=1", "a.txt", "x=2",
                             "b.txt"], out="1 file a\n2 file b\n")
t("awk/uninitialized", ["awk", "BEGIN {print x + 0, \"[\" x \"]\", "
                        "length(x)}"], out="0 [] 0\n")
t("awk/regex dynamic", ["awk", "BEGIN {r = \"^a.c$\"; print (\"abc\" ~ r), "
                        "(\"abd\" ~ r)}"], out="1 0\n")
t("awk/ternary nested", ["awk", "{print ($1 > 5 ? \"big\" : $1 > 2 ? "
                         "\"mid\" : \"small\")}"], stdin="1\n3\n9\n",
  out="small\nmid\nbig\n")
t("awk/pre post incr", ["awk", "BEGIN {i = 5; print i++, i, ++i, i--, i}"],
  out="5 6 7 7 6\n")
t("awk/compound assign", ["awk", "BEGIN {x = 10; x += 5; x -= 3; x *= 2; "
                          "x /= 4; x %= 4; x ^= 3; print x}"], out="8\n")
t("awk/$0 reassign", ["awk", "{$0 = \"x y z\"; print NF, $2}"],
  stdin="a\n", out="3 y\n")
t("awk/paragraph mode", ["awk", "BEGIN {RS = \"\"} {print NR \": \" $1}"],
  stdin="a b\nc\n\n\nd e\n", out="1: a\n2: d\n")
t("awk/printf no newline", ["awk", "{printf \"%s,\", $0} END {print \"\"}",
                            "nums.txt"], out="10,2,33,4,\n")
t("awk/syntax error", ["awk", "BEGIN {print (}"], rc=2,
  err_has=["syntax error"])
t("awk/division by zero", ["awk", "BEGIN {print 1/0}"], rc=2,
  err_has=["division by zero"])
t("awk/missing file", ["awk", "{print}", "nope"], rc=2,
  err_has=["nope"])
t("awk/-f", ["awk", "-f", "prog.awk", "nums.txt"],
  setup={"prog.awk": "{ s += $1 }\nEND { print s }\n"}, out="49\n")
t("awk/getline var main", ["awk", "NR == 1 {getline x; print $0 \"+\" x}",
                           "nums.txt"], out="10+2\n")
# Fewer arguments than conversions: BWK awk refuses (gawk prints "a-").
t("awk/printf too few args", ["awk", "BEGIN {printf \"%s-%s\\n\", \"a\"}"],
  rc=2, err_has=["not enough args in printf"])
t("awk/long program", ["awk", """
function max(a, b) { return a > b ? a : b }
BEGIN { FS = "," }
NR > 1 {
    total += $2
    oldest = max(oldest, $2)
    cities[$3] = cities[$3] ? cities[$3] " " $1 : $1
}
END {
    printf "total=%d oldest=%d\\n", total, oldest
    for (c in cities)
        print c ": " cities[c] | "sort"
}""", "data.csv"], out="total=90 oldest=35\nLA: bob\nNY: alice carol\n")

# BWK awk inside the toolbox process (bwk/bwk.c): an error or exit() ends
# the awk run only, the next run starts afresh, awk nests through the shell.
t("awk/error ends the run only", "awk 'BEGIN { x = 1 / 0 }'; echo rc=$?; "
  "awk 'BEGIN { print \"again\" }'", out="rc=2\nagain\n",
  err_has=["division by zero"])
t("awk/no state between runs", "awk 'BEGIN { n++; a[1] = 5; FS = \":\" }"
  " END { print n, length(a) }' < /dev/null; echo x:y | "
  "awk '{ n++; print n, $1, length(a) }'", out="1 1\n1 x:y 0\n")
t("awk/exit in a function in an expression", "awk 'function f() { exit 3 } "
  "BEGIN { x = f(); print \"not here\" } END { print \"end\" }'; "
  "echo rc=$?", out="end\nrc=3\n")
t("awk/nested awk through system", "echo outer | awk '{ system(\"echo in "
  "| awk -f in.awk\"); v = $1 } END { print v, NR }'",
  setup={"in.awk": "{ print $1 \"-\" NR }\n"}, out="in-1\nouter 1\n")
t("awk/pipe runs at an error", "awk 'BEGIN { print \"b\" | \"sort\"; "
  "print \"a\" | \"sort\"; x = 1 / 0 }'; echo rc=$?",
  out="a\nb\nrc=2\n", err_has=["division by zero"])
t("awk/deep recursion then error", "awk 'function r(n) { if (n == 0) "
  "return 1 / 0; return r(n - 1) } BEGIN { r(500) }'; echo rc=$?",
  out="rc=2\n", err_has=["division by zero"])

# --- sort / uniq ---
t("sort/plain", ["sort", "words.txt"],
  out="apple\napple\napple\nbanana\nbanana\ncherry\n")
t("sort/-u", ["sort", "-u", "words.txt"], out="apple\nbanana\ncherry\n")
t("sort/-r", ["sort", "-r", "nums.txt"], out="4\n33\n2\n10\n")
t("sort/-n", ["sort", "-n", "nums.txt"], out="2\n4\n10\n33\n")
t("sort/-nr", ["sort", "-nr", "nums.txt"], out="33\n10\n4\n2\n")
t("sort/-t -k", ["sort", "-t,", "-k2", "-n", "data.csv"],
  out="name,age,city\nbob,25,LA\nalice,30,NY\ncarol,35,NY\n")
t("sort/-k2,2 -k1", ["sort", "-k2,2", "-k1,1r"],
  stdin="a 2\nb 1\nc 2\n", out="b 1\nc 2\na 2\n")
t("sort/-f", ["sort", "-f"], stdin="b\nA\na\nB\n", out="A\na\nB\nb\n")
t("sort/-o", ["sort", "-o", "sorted.txt", "nums.txt"], out="",
  files={"sorted.txt": "10\n2\n33\n4\n"})
t("sort/-h", ["sort", "-h"], stdin="2K\n1M\n512\n", out="512\n2K\n1M\n")
t("sort/multiple files", ["sort", "a.txt", "b.txt", "-r"],
  out="file b\nfile a\n")
t("sort/missing", ["sort", "nope"], rc=2, err_has=["nope"])
t("uniq/plain", ["uniq"], stdin="a\na\nb\na\n", out="a\nb\na\n")
t("uniq/-c", "sort words.txt | uniq -c",
  out="      3 apple\n      2 banana\n      1 cherry\n")
t("uniq/-d", "sort words.txt | uniq -d", out="apple\nbanana\n")
t("uniq/-u", "sort words.txt | uniq -u", out="cherry\n")
t("uniq/-i", ["uniq", "-i"], stdin="a\nA\nb\n", out="a\nb\n")
t("sort uniq pipeline", "sort words.txt | uniq -c | sort -rn | head -1",
  out="      3 apple\n")

# --- wc / cut / tr ---
t("wc/all", ["wc", "test.txt"], out=" 2  7 32 test.txt\n")
t("wc/-w stdin", ["wc", "-w"], stdin="a b  c\nd\n", out="4\n")
t("wc/-c", ["wc", "-c", "a.txt"], out="7 a.txt\n")
t("wc/-m utf8", ["wc", "-m"], stdin="h\u00e9\n", out="3\n")
t("wc/total", ["wc", "-l", "a.txt", "lines.txt"],
  out=" 1 a.txt\n10 lines.txt\n11 total\n")
t("cut/-f -d", ["cut", "-d,", "-f1,3", "data.csv"],
  out="name,city\nalice,NY\nbob,LA\ncarol,NY\n")
t("cut/-f range", ["cut", "-d", ",", "-f", "2-"], stdin="a,b,c\n",
  out="b,c\n")
t("cut/-c", ["cut", "-c", "1-3,5"], stdin="abcdefg\n", out="abce\n")
t("cut/-s", ["cut", "-d:", "-f1", "-s"], stdin="a:b\nnodelim\n",
  out="a\n")
t("cut/tab default", ["cut", "-f2"], stdin="a\tb\tc\n", out="b\n")
t("cut/no list", ["cut", "a.txt"], rc=1, err_has=["cut:"])
t("tr/range", ["tr", "a-z", "A-Z"], stdin="hello\n", out="HELLO\n")
t("tr/-d", ["tr", "-d", "lo"], stdin="hello world\n", out="he wrd\n")
t("tr/-s", ["tr", "-s", " "], stdin="a   b  c\n", out="a b c\n")
t("tr/class", ["tr", "[:lower:]", "[:upper:]"], stdin="abc\n",
  out="ABC\n")
t("tr/-cd", ["tr", "-cd", "0-9"], stdin="a1b2c3\n", out="123")
t("tr/escape", ["tr", "\\n", ","], stdin="a\nb\n", out="a,b,")
t("tr/short set2", ["tr", "abc", "x"], stdin="aabbcc\n", out="xxxxxx\n")

# --- head / tail ---
t("head/default", ["head", "lines.txt"], out=LINES)
t("head/-c", ["head", "-c", "5", "test.txt"], out="hello")
t("head/-N", ["head", "-2", "lines.txt"], out="line1\nline2\n")
t("head/-n -N", ["head", "-n", "-8", "lines.txt"], out="line1\nline2\n")
t("head/multi", ["head", "-n", "1", "a.txt", "b.txt"],
  out="==> a.txt <==\nfile a\n\n==> b.txt <==\nfile b\n")
t("tail/+N", ["tail", "-n", "+9", "lines.txt"], out="line9\nline10\n")
t("tail/-c", ["tail", "-c", "5", "test.txt"], out="test\n")
t("tail/-N", ["tail", "-1", "lines.txt"], out="line10\n")
t("tail/no eol", ["tail", "-n", "1", "noeol.txt"], out="no newline")
t("tail/stdin", ["tail", "-n", "2"], stdin="a\nb\nc\n", out="b\nc\n")
t("head/missing", ["head", "nope"], rc=1, err_has=["nope"])

# --- diff ---
t("diff/same", ["diff", "a.txt", "a.txt"], out="")
t("diff/normal", ["diff", "old.txt", "new.txt"],
  setup={"old.txt": "a\nb\nc\nd\n", "new.txt": "a\nB\nc\nd\ne\n"}, rc=1,
  out="2c2\n< b\n---\n> B\n4a5\n> e\n")
t("diff/delete", ["diff", "old.txt", "new.txt"],
  setup={"old.txt": "a\nb\nc\n", "new.txt": "a\nc\n"}, rc=1,
  out="2d1\n< b\n")
t("diff/-u", "diff -u old.txt new.txt | sed 1,2d",
  setup={"old.txt": "1\n2\n3\n4\n5\n6\n7\n8\n9\n",
         "new.txt": "1\n2\n3\n4\nfive\n6\n7\n8\n9\n10\n"},
  out="@@ -2,8 +2,9 @@\n 2\n 3\n 4\n-5\n+five\n 6\n 7\n 8\n 9\n+10\n")
t("diff/-u header", ["diff", "-u", "a.txt", "b.txt"], rc=1,
  out_re=r"^--- a\.txt\t\d{4}-.*\n\+\+\+ b\.txt\t.*\n@@ -1 \+1 @@\n"
         r"-file a\n\+file b\n$")
t("diff/-q", ["diff", "-q", "a.txt", "b.txt"], rc=1,
  out="Files a.txt and b.txt differ\n")
t("diff/no eol", ["diff", "x", "y"], setup={"x": "a", "y": "a\n"}, rc=1,
  out="1c1\n< a\n\\ No newline at end of file\n---\n> a\n")
t("diff/-i -w", ["diff", "-i", "-w", "x", "y"],
  setup={"x": "Hello  World\n", "y": "hello world\n"}, out="")
t("diff/missing", ["diff", "a.txt", "nope"], rc=2, err_has=["nope"])
t("diff/empty vs file", ["diff", "empty.txt", "a.txt"], rc=1,
  out="0a1\n> file a\n")
t("diff/larger", "seq 1 200 > x; seq 1 200 | sed '50d;120s/$/x/' > y; "
  "diff x y", rc=1, out="50d49\n< 50\n120c119\n< 120\n---\n> 120x\n")

# --- find ---
# find lists a directory in its own order (readdir's), as GNU find does.
t("find/all", "find sub | sort",
  out="sub\nsub/deep\nsub/deep/x.md\nsub/inner.txt\n")
t("find/-name", ["find", ".", "-name", "*.txt", "-path", "./sub/*"],
  out="./sub/inner.txt\n")
t("find/-type d", ["find", ".", "-type", "d"], out=".\n./sub\n./sub/deep\n")
t("find/-type f -name", ["find", "-type", "f", "-name", "*.md"],
  out="./sub/deep/x.md\n")
t("find/-maxdepth", "find . -maxdepth 1 -name '[ab].txt' | sort",
  out="./a.txt\n./b.txt\n")
t("find/-mindepth", ["find", "sub", "-mindepth", "2"],
  out="sub/deep/x.md\n")
t("find/-iname", ["find", "sub", "-iname", "X.MD"], out="sub/deep/x.md\n")
t("find/-size", "find . -size +10c -name '*.txt' -maxdepth 1 | sort",
  out="./lines.txt\n./test.txt\n./words.txt\n")
t("find/-empty", ["find", ".", "-empty"], out="./empty.txt\n")
t("find/! -o", ["find", "sub", "(", "-name", "deep", "-o", "-name",
                "*.md", ")", "!", "-type", "d"], out="sub/deep/x.md\n")
t("find/-delete", ["find", "sub", "-name", "*.md", "-delete"], out="",
  files={"sub/deep/x.md": None})
t("find/-exec", ["find", "sub", "-name", "*.txt", "-exec", "cat", "{}",
                 ";"], out="inner wasm file\n")
t("find/-exec +", "find sub -type f -exec wc -l {} + | sort",
  out=" 1 sub/deep/x.md\n 1 sub/inner.txt\n 2 total\n")
t("find/missing", ["find", "nope"], rc=1,
  err="find: 'nope': No such file or directory\n")
t("find/bad predicate", ["find", ".", "-bogus"], rc=1, err_has=["bad arg"])

# --- file operations ---
t("mkdir/-p", "mkdir -p x/y/z && ls -R x",
  out="x:\ny\n\nx/y:\nz\n\nx/y/z:\n")
t("mkdir/exists", ["mkdir", "sub"], rc=1, err="mkdir: 'sub': File exists\n")
t("mkdir/-p exists", ["mkdir", "-p", "sub/deep"], out="")
t("mkdir/no parent", ["mkdir", "q/r"], rc=1, err_has=["No such file"])
t("rmdir/not empty", ["rmdir", "sub"], rc=1,
  err="rmdir: sub: Directory not empty\n")
t("rm/file", ["rm", "a.txt"], out="", files={"a.txt": None})
t("rm/dir needs -r", ["rm", "sub"], rc=1, err="rm: sub: Is a directory\n")
t("rm/-r", ["rm", "-r", "sub"], out="", files={"sub/inner.txt": None})
t("rm/-f missing", ["rm", "-f", "nope"], out="")
t("rm/missing", ["rm", "nope"], rc=1,
  err="rm: nope: No such file or directory\n")
# POSIX: . and .. are skipped (toybox: silently; GNU: with a message, 1).
t("rm/refuse dot", ["rm", "-rf", "."], out="",
  files={"a.txt": "file a\n", "sub/inner.txt": "inner wasm file\n"})
t("cp/file", ["cp", "a.txt", "c.txt"], out="", files={"c.txt": "file a\n"})
t("cp/into dir", ["cp", "a.txt", "b.txt", "sub"], out="",
  files={"sub/a.txt": "file a\n", "sub/b.txt": "file b\n"})
t("cp/dir needs -r", ["cp", "sub", "sub2"], rc=1,
  err_has=["Skipped dir 'sub2'"], files={"sub2": None})
t("cp/-r", ["cp", "-r", "sub", "sub2"], out="",
  files={"sub2/inner.txt": "inner wasm file\n",
         "sub2/deep/x.md": "# title\n"})
t("cp/-r into itself", ["cp", "-r", "sub", "sub/deep"], rc=1,
  err_has=["'sub/deep/sub' is 'sub/deep'"])
t("cp/same file", ["cp", "a.txt", "a.txt"], rc=1,
  err_has=["'a.txt' is 'a.txt'"], files={"a.txt": "file a\n"})
t("cp/missing", ["cp", "nope", "x"], rc=1, err_has=["nope"])
t("mv/rename", ["mv", "a.txt", "c.txt"], out="",
  files={"a.txt": None, "c.txt": "file a\n"})
t("mv/into dir", ["mv", "a.txt", "sub"], out="",
  files={"a.txt": None, "sub/a.txt": "file a\n"})
t("mv/dir", ["mv", "sub", "moved"], out="",
  files={"moved/inner.txt": "inner wasm file\n"})
t("mv/missing", ["mv", "nope", "x"], rc=1,
  err="mv: bad 'nope': No such file or directory\n")
t("touch/create", ["touch", "new.txt"], out="", files={"new.txt": ""})
t("touch/keeps content", ["touch", "a.txt"], out="",
  files={"a.txt": "file a\n"})
t("touch/-d newer", "touch -d @1000000000 old; find . -maxdepth 1 -name "
  "'old' -newer a.txt; find . -maxdepth 1 -name 'a.txt' -newer old",
  out="./a.txt\n")
t("ln/-s", "ln -s a.txt link && cat link && readlink link",
  out="file a\na.txt\n")
t("stat/-c", ["stat", "-c", "%n %s %F", "a.txt", "sub"],
  out_re=r"^a\.txt 7 regular file\nsub \d+ directory\n$")
t("stat/default", ["stat", "a.txt"],
  out_has=["  File: a.txt\n", "Size: 7", "regular file"])
# du -b counts directories' own sizes too (as GNU du does), and those
# depend on the file system: files only here.
t("du/-s", ["du", "-s", "-b", "sub/inner.txt"], out="16\tsub/inner.txt\n")
t("du/-a", "du -ab sub | grep -v 'sub$' | grep -v deep$ | sort",
  out="16\tsub/inner.txt\n8\tsub/deep/x.md\n")

# --- echo / printf / misc ---
t("echo/-n", ["echo", "-n", "a", "b"], out="a b")
t("echo/-e", ["echo", "-e", "a\\tb\\nc"], out="a\tb\nc\n")
t("echo/no -e", ["echo", "a\\tb"], out="a\\tb\n")
t("echo/not an option", ["echo", "-x", "y"], out="-x y\n")
t("printf/formats", ["printf", "%s|%5d|%-3s|%.2f|%x|%o|%c|%%\\n", "str",
                     "42", "ab", "3.14159", "255", "8", "Z"],
  out="str|   42|ab |3.14|ff|10|Z|%\n")
t("printf/reuse", ["printf", "%s=%s\\n", "a", "1", "b", "2"],
  out="a=1\nb=2\n")
t("printf/%b", ["printf", "%b", "x\\ny\\n"], out="x\ny\n")
t("printf/bad number", ["printf", "%d\\n", "abc"], rc=1, out="0\n",
  err_has=["abc"])
t("seq/basic", ["seq", "3"], out="1\n2\n3\n")
t("seq/range step", ["seq", "2", "3", "10"], out="2\n5\n8\n")
t("seq/negative", ["seq", "3", "-1", "1"], out="3\n2\n1\n")
t("seq/-s -w", ["seq", "-s", ",", "-w", "8", "10"], out="08,09,10\n")
t("seq/float", ["seq", "0", "0.5", "1.5"], out="0.0\n0.5\n1.0\n1.5\n")
t("basename", ["basename", "/a/b/c.txt", ".txt"], out="c\n")
t("dirname", ["dirname", "/a/b/c.txt"], out="/a/b\n")
t("dirname/relative", ["dirname", "file"], out=".\n")
t("pwd", ["pwd"], out_re=r"^/.*\n$")
t("sleep", ["sleep", "0.1"], out="")
t("sleep/bad", ["sleep", "x"], rc=1, err_has=["'x'"])
t("yes/head", "yes | head -n 3", out="y\ny\ny\n")
t("yes/word", "yes ok | head -2", out="ok\nok\n")
t("yes/bounded", "yes > y; wc -c < y; yes | wc -c",
  out="67108864\n67108864\n")
t("env/var", ["env", "FOO=bar", "sh", "-c", "echo $FOO"], out="bar\n")
t("env/list", "export TBX=1; env", out_has=["TBX=1\n"])
t("tee", ["tee", "t1.txt"], stdin="data\n", out="data\n",
  files={"t1.txt": "data\n"})
t("tee/-a", ["tee", "-a", "a.txt"], stdin="more\n", out="more\n",
  files={"a.txt": "file a\nmore\n"})
t("test/file", "test -f a.txt && test -d sub && ! test -e nope && "
  "[ -s a.txt ] && [ ! -s empty.txt ] && echo ok", out="ok\n")
t("test/strings", "[ abc = abc ] && [ a != b ] && [ -z '' ] && "
  "[ -n x ] && echo ok", out="ok\n")
t("test/numbers", "[ 10 -gt 9 ] && [ 2 -le 2 ] && ! [ 1 -eq 2 ] && "
  "[ 1 -lt 2 -a 3 -gt 2 ] && echo ok", out="ok\n")
t("test/bad integer", ["test", "a", "-eq", "1"], rc=2,
  err_has=[": a"])
t("[/missing bracket", ["[", "a"], rc=2, err_has=["issing ']'"])
t("xargs/default echo", ["xargs"], stdin="a b\nc\n", out="a b c\n")
t("xargs/-n", ["xargs", "-n", "2", "echo", "x"], stdin="1 2 3\n",
  out="x 1 2\nx 3\n")
t("xargs/-I", ["xargs", "-I", "{}", "echo", "<{}>"], stdin="a b\nc\n",
  out="<a b>\n<c>\n")
t("xargs/cat", "ls *.txt | head -2 | xargs cat", out="file a\nfile b\n")
t("xargs/quotes", ["xargs", "-n", "1"], stdin="'a b' \"c d\" e\n",
  out="a b\nc d\ne\n")
t("xargs/not found", ["xargs", "nosuchcmd"], stdin="a\n", rc=127,
  err_has=["nosuchcmd"])
t("xargs/-0", ["xargs", "-0", "-n", "1"], stdin="a b\0c\0",
  out="a b\nc\n")
t("date/+%Y", ["date", "-d", "@0", "+%Y-%m-%d %H:%M:%S"],
  out="1970-01-01 00:00:00\n")
t("date/default", ["date"], out_re=r"^\w{3} \w{3} [ \d]\d \d\d:\d\d:\d\d "
  r"\w+ \d{4}\n$")
t("nproc", ["nproc"], out_re=r"^\d+\n$")
t("realpath", "mkdir -p d/e && cd d/e && realpath ../../a.txt | "
  "sed 's|.*/||'", out="a.txt\n")
t("time", ["time", "true"], out="", err_has=["real"], rc=0)
t("which", "which ls cat", out="/bin/ls\n/bin/cat\n")

# --- the shell ---
t("sh/pipeline", "echo hello | tr a-z A-Z", out="HELLO\n")
t("sh/literal pipe arg", ["echo", "hello | tr a-z A-Z"],
  out="hello | tr a-z A-Z\n")
t("sh/three stages", "cat words.txt | sort | uniq | wc -l", out="3\n")
t("sh/&& ||", "false && echo no || echo yes; true && echo t",
  out="yes\nt\n")
t("sh/; and status", "false; echo $?; true; echo $?", out="1\n0\n")
t("sh/not found", "nosuchcmd arg", rc=127,
  err="sh: nosuchcmd: not found\n")
t("sh/> and <", "echo one > o.txt; echo two >> o.txt; cat < o.txt",
  out="one\ntwo\n", files={"o.txt": "one\ntwo\n"})
t("sh/2> file", "ls nope 2> err.txt; cat err.txt",
  out="ls: nope: No such file or directory\n")
t("sh/2>&1", "ls nope 2>&1 | sed 's/ls:/LS:/'",
  out="LS: nope: No such file or directory\n")
t("sh/&>", "ls a.txt nope &> both.txt; cat both.txt",
  out="ls: nope: No such file or directory\na.txt\n")
t("sh/>&2", "echo to-err >&2", err="to-err\n", out="")
t("sh/2>/dev/null", "cat nope 2>/dev/null; echo rc=$?", out="rc=1\n")
t("sh/>/dev/null", "echo hidden > /dev/null", out="")
t("sh/quotes", "X=x; echo 'single $HOME' \"double $X\" back\\ slash",
  out="single $HOME double x back slash\n")
t("sh/vars", "A=1; B=\"$A two\"; echo $B ${A}0 ${#B}", out="1 two 10 5\n")
t("sh/var defaults", "E=; S=s; echo ${U:-def} ${U-d2} ${E:-emp} "
  "${S:+alt}; echo ${U:=set} $U",
  out="def d2 emp alt\nset set\n")
t("sh/var trim", "f=archive.tar.gz; echo ${f%.gz} ${f%%.*} ${f#*.} "
  "${f##*.} ${f/tar/TAR}", out="archive.tar archive tar.gz gz "
  "archive.TAR.gz\n")
t("sh/field splitting", "x='a  b   c'; for w in $x; do echo \"[$w]\"; "
  "done; echo \"$x\"", out="[a]\n[b]\n[c]\na  b   c\n")
t("sh/glob", "echo *.csv sub/*.txt", out="data.csv sub/inner.txt\n")
t("sh/glob quoted", "echo '*.csv' \"*.csv\" \\*.csv",
  out="*.csv *.csv *.csv\n")
t("sh/glob no match", "echo *.nomatch", out="*.nomatch\n")
t("sh/glob class", "echo [ab].txt ?.txt", out="a.txt b.txt a.txt b.txt\n")
t("sh/cd", "cd sub && ls && cd deep && cat x.md && cd ../.. && ls a.txt",
  out="deep\ninner.txt\n# title\na.txt\n")
t("sh/cd missing", "cd nope", rc=1,
  err="sh: cd: nope: No such file or directory\n")
t("sh/pwd after cd", "cd sub/deep; pwd", out_re=r"/sub/deep\n$")
t("sh/exit", "echo a; exit 7; echo b", rc=7, out="a\n")
t("sh/exit status last", "false", rc=1)
t("sh/comments", "echo a # comment\n# whole line\necho b", out="a\nb\n")
t("sh/command substitution", "n=$(wc -l < lines.txt); echo \"n=$n\"; "
  "echo `echo back`", out="n=10\nback\n")
t("sh/nested substitution", "echo $(echo $(echo deep))", out="deep\n")
t("sh/substitution status", "x=$(false); echo $?", out="1\n")
t("sh/arithmetic", "i=3; echo $((i * 4 + 1)) $((10 / 3)) $((10 % 3)) "
  "$((2 > 1 && 0 || 1)) $((i += 2)) $i", out="13 3 1 1 5 5\n")
t("sh/if", "if [ -f a.txt ]; then echo yes; else echo no; fi; "
  "if false; then :; elif true; then echo elif; fi", out="yes\nelif\n")
t("sh/for", "for f in a.txt b.txt; do cat $f; done", out="file a\nfile b\n")
t("sh/for glob", "for f in sub/*; do echo \"<$f>\"; done",
  out="<sub/deep>\n<sub/inner.txt>\n")
t("sh/while", "i=0; while [ $i -lt 3 ]; do i=$((i+1)); echo $i; done",
  out="1\n2\n3\n")
t("sh/until", "i=0; until [ $i -ge 2 ]; do i=$((i+1)); done; echo $i",
  out="2\n")
t("sh/while read", "while read line; do echo \"<$line>\"; done < nums.txt",
  out="<10>\n<2>\n<33>\n<4>\n")
t("sh/pipe into while", "sort -n nums.txt | while read n; do "
  "echo $((n * 2)); done", out="4\n8\n20\n66\n")
t("sh/read fields", "echo 'a b c d' | { read x y z; echo $z $y $x; }",
  out="c d b a\n")
t("sh/break continue", "for i in 1 2 3 4 5; do [ $i = 2 ] && continue; "
  "[ $i = 4 ] && break; echo $i; done", out="1\n3\n")
t("sh/case", "for f in a.txt x.md other; do case $f in *.txt) echo "
  "text;; *.md|*.rst) echo doc;; *) echo other;; esac; done",
  out="text\ndoc\nother\n")
t("sh/functions", "greet() { echo \"hi $1 ($#)\"; return 3; }; greet bob x;"
  " echo $?", out="hi bob (2)\n3\n")
t("sh/subshell", "x=1; (x=2; cd sub; echo $x); echo $x; ls a.txt",
  out="2\n1\na.txt\n")
t("sh/group redirect", "{ echo a; echo b; } > g.txt; cat g.txt",
  out="a\nb\n")
t("sh/heredoc", "X=1\ncat <<EOF\nline $X\n  indented\nEOF\necho after",
  out="line 1\n  indented\nafter\n")
t("sh/heredoc quoted", "cat <<'EOF'\n$NOT expanded `x`\nEOF",
  out="$NOT expanded `x`\n")
t("sh/heredoc to file", "cat > f.txt <<'EOF'\nwritten\nEOF\ncat f.txt",
  out="written\n", files={"f.txt": "written\n"})
t("sh/heredoc -", "cat <<-EOF\n\ttabbed\n\tEOF", out="tabbed\n")
t("sh/here-string", "tr a-z A-Z <<< 'hi there'", out="HI THERE\n")
t("sh/export env", "export V=exported; env | grep '^V='",
  out="V=exported\n")
t("sh/prefix assignment", "V=temp sh -c 'echo $V'; echo \"[$V]\"",
  out="temp\n[]\n")
t("sh/$@ args", ["sh", "-c", "echo $# \"$1\"; for a in \"$@\"; do "
                 "echo \"<$a>\"; done", "zero", "one two", "three"],
  out="2 one two\n<one two>\n<three>\n")
t("sh/$0", ["sh", "-c", "echo $0", "myname"], out="myname\n")
t("sh/set -e", "set -e; echo a; false; echo b", rc=1, out="a\n")
t("sh/set -e condition", "set -e; if false; then :; fi; false || true; "
  "echo ok", out="ok\n")
t("sh/set -x", "set -x; echo hi", out="hi\n", err="+ echo hi\n")
t("sh/pipefail", "set -o pipefail; false | true; echo $?", out="1\n")
t("sh/! negation", "! false && echo negated", out="negated\n")
t("sh/line continuation", "echo a \\\nb", out="a b\n")
t("sh/syntax error", "if true; then echo x", rc=2,
  err_has=["syntax error"])
t("sh/unterminated quote", "echo 'abc", rc=2, err_has=["unterminated"])
t("sh/script file", ["sh", "script.sh", "arg1"],
  setup={"script.sh": "echo \"script $1\"\nexit 4\n"}, rc=4,
  out="script arg1\n")
t("sh/stdin script", ["sh"], stdin="echo from-stdin\nls a.txt\n",
  out="from-stdin\na.txt\n")
t("sh/source", ". ./lib.sh; echo $LIBVAR", setup={"lib.sh": "LIBVAR=lv\n"},
  out="lv\n")
t("sh/eval", "cmd='echo evaluated'; eval $cmd", out="evaluated\n")
t("sh/ash alias", ["ash", "-c", "echo ash"], out="ash\n")
t("sh/type", "type cd; command -v ls", out="cd is a shell builtin\n"
  "/bin/ls\n")
t("sh/path-qualified", "/bin/echo qualified", out="qualified\n")
t("sh/semicolon newline mix", "echo 1\necho 2;\n\necho 3", out="1\n2\n3\n")
t("sh/empty", "", out="")
t("sh/assignment status", "x=1; echo $?", out="0\n")
t("sh/tilde", "echo ~ | grep -c /", out="1\n")
t("sh/cat > file via stdin", ["sh", "-c", "cat > e2e.txt"],
  stdin="Hello\nWorld\t!\n", out="", files={"e2e.txt": "Hello\nWorld\t!\n"})
t("sh/nested quotes", "echo \"a 'b' \\\"c\\\" $(echo \"d e\")\"",
  out="a 'b' \"c\" d e\n")
t("sh/pipeline exit status", "true | false; echo $?; false | true; "
  "echo $?", out="1\n0\n")
t("sh/big pipe", "seq 1 20000 | tail -n 1; seq 1 20000 | wc -l",
  out="20000\n20000\n")
t("sh/long loop", "i=0; while [ $i -lt 300 ]; do i=$((i+1)); done; "
  "echo $i", out="300\n")
t("sh/fd redirect order", "ls nope 2>&1 >/dev/null | wc -l", out="1\n")
t("sh/local and shift", "f() { local a=$1; shift; echo $a $#; }; "
  "f x y z", out="x 2\n")
t("sh/local scoping", "x=outer; f(){ local x=inner; echo $x; }; f; "
  "echo $x", out="inner\nouter\n")
t("sh/local nested and unset", "f(){ local a=1; g; echo $a; }; "
  "g(){ local a=2; a=3; echo $a; }; unset a; f; echo \"[${a-unset}]\"",
  out="3\n1\n[unset]\n")
t("sh/local outside a function", "local x=1", rc=1,
  err_has=["can only be used in a function"])
t("sh/arith power", "echo $((3**2)) $((2**3**2)) $((-2**2)) "
  "$((2*3**2)) $((2**62))", out="9 512 4 18 4611686018427387904\n")
t("sh/arith negative exponent", "echo $((2**-1))", rc="nonzero",
  err_has=["exponent less than 0"])
t("sh/yes through a big pipe", "yes | head -c 20000000 | wc -c",
  out="20000000\n")
t("sh/recursion limit", "f() { f; }; f", rc="nonzero",
  err_has=["maximum"])
t("sh/export listing", "export Q=1; export | grep -c \"Q='1'\"",
  out="1\n")
t("sh/unset", "V=1; unset V; echo \"[${V-unset}]\"", out="[unset]\n")
t("sh/backslash in dq", "echo \"a\\$b \\\\ \\x\"", out="a$b \\ \\x\n")
t("sh/IFS", "IFS=:; x=a:b:c; for p in $x; do echo $p; done",
  out="a\nb\nc\n")
t("sh/read -r", "printf 'a\\\\b\\n' | { read -r v; echo \"$v\"; }",
  out="a\\b\n")
t("sh/cd -", "cd sub; cd - > /dev/null; ls a.txt", out="a.txt\n")
t("sh/redirect missing input", "cat < nope", rc=1,
  err="sh: nope: No such file or directory\n")
t("sh/test in if", "if [ $(wc -l < nums.txt) -eq 4 ]; then echo four; fi",
  out="four\n")
t("sh/find | xargs grep", "find . -name '*.txt' | sort | xargs grep -l wasm",
  out="./sub/inner.txt\n./test.txt\n")
t("sh/awk in pipeline", "cat data.csv | awk -F, 'NR>1{print $1}' | sort -r",
  out="carol\nbob\nalice\n")
t("sh/sed in pipeline", "seq 5 | sed -n '2,4p' | tr '\\n' ' '",
  out="2 3 4 ")
t("sh/[[ ]]", "x=foo.txt; e=; [[ $x == *.txt ]] && [[ -z $e ]] && "
  "[[ $x =~ ^fo+ ]] && [[ $x != *.md ]] && [[ -f a.txt ]] && echo ok",
  out="ok\n")
t("sh/set -euo pipefail", "set -euo pipefail; echo a; false | true; "
  "echo b", rc=1, out="a\n")
t("sh/nested shells bounded", "echo 'sh self.sh' > self.sh; sh self.sh",
  rc="nonzero", err_has=["too many nested shells"])
t("sh/long script", ";".join(["true"] * 3000) + "; echo done",
  out="done\n")
t("sh/deep nesting refused", "(" * 3000, rc=2,
  err_has=["nested too deeply"])
t("sh/bash alias", ["bash", "-c", "echo from bash"], out="from bash\n")

# --- extras ---
t("sha256sum", ["sha256sum", "empty.txt"],
  out="e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
  "  empty.txt\n")
t("sha256sum/abc", ["sha256sum"], stdin="abc",
  out="ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
  "  -\n")
t("sha256sum/-c", "sha256sum a.txt b.txt > sums && sha256sum -c sums",
  out="a.txt: OK\nb.txt: OK\n")
t("md5sum", ["md5sum"], stdin="abc",
  out="900150983cd24fb0d6963f7d28e17f72  -\n")
t("base64", ["base64"], stdin="hello world", out="aGVsbG8gd29ybGQ=\n")
t("base64/-d", ["base64", "-d"], stdin="aGVsbG8gd29ybGQ=\n",
  out="hello world")
t("base64/wrap", "seq 1 40 | base64 | head -1 | wc -c", out="77\n")
t("tac", ["tac", "nums.txt"], out="4\n33\n2\n10\n")
t("rev", ["rev"], stdin="abc\nxy\n", out="cba\nyx\n")
t("nl", ["nl", "a.txt"], out="     1\tfile a\n")
t("paste", ["paste", "-d", ",", "a.txt", "b.txt"], out="file a,file b\n")
t("paste/-s", ["paste", "-s", "-d", "+", "nums.txt"], out="10+2+33+4\n")
t("uname", ["uname"], out_re=r"^\w+\n$")
