#!/usr/bin/env python3
"""deps_tools.py - the commands and Python modules that shell scripts run.

    python3 tests/deps_tools.py FILE...

For each shell script (parsed by shfmt --to-json, so quoting, $(...),
pipelines and heredocs are read as bash reads them) prints one line per
command it runs, tab-separated:

    call    NAME  FILE:LINE      a command run (after timeout/env/setsid/...)
    probe   NAME  FILE:LINE      `command -v NAME` (a check that it exists)
    func    NAME  FILE:LINE      a shell function the script defines (or
                                 names in a "# deps_guard: functions NAME..."
                                 comment: one from a file it sources)
    module  NAME  FILE:LINE      a Python module imported by python3 -c,
                                 python3 - <<heredoc, or python3 SCRIPT.py
    error   -     FILE:LINE      shfmt could not parse the file

A Makefile is read line by line: each recipe line (a tab first) and each
$(shell ...) is parsed as shell, make's $(VAR) words being no command.
C test files: the commands of snprintf(cmd, ...) format strings and the
programs named by access("/usr/bin/NAME", X_OK).
Only literal command names are reported ("$A" or ./build/aorta is not a
tool).

    python3 tests/deps_tools.py --check PKGS_FILE FILE...
    python3 tests/deps_tools.py --allowed PKGS_FILE   (the packages allowed)

checks them instead: every command a script calls that is not a shell
builtin or one of the scripts' own functions must be installed and belong
to a package of PKGS_FILE (scripts/deps.sh --list) or one those depend on,
or to the base system every set-up starts from (Debian's Essential and
Priority: required packages, which debootstrap --variant=minbase installs,
and the README's prerequisites make, git, ca-certificates, apt), or come from
the CUDA toolkit, or be one of the OPTIONAL tools below, each of which must
be probed (command -v NAME) in the file that calls it, so the script can
say why it skips.  The same for Python modules (the standard library is
python3's own dependency).  Prints one line per problem naming the command,
its caller (file:line) and the package; exit 1 if any.  Used by
tests/deps_guard.sh.
"""
import json
import os
import re
import subprocess
import sys

# commands that run their arguments as a command: how many leading
# arguments (options, a duration) to skip before the command
WRAPPERS = {"timeout", "env", "setsid", "nohup", "sudo", "exec", "nice", "stdbuf", "xargs", "time", "chroot"}
IMPORT_RE = re.compile(r"^\s*(?:import\s+([\w., ]+)|from\s+([\w.]+)\s+import\b)", re.M)


def lit(word):
    """The literal text of a shfmt Word, or None if any part is not literal."""
    out = []
    for p in word.get("Parts", []):
        t = p.get("Type")
        if t == "Lit":
            out.append(p["Value"])
        elif t == "SglQuoted":
            out.append(p["Value"])
        elif t == "DblQuoted" and all(q.get("Type") == "Lit" for q in p.get("Parts", [])):
            out.append("".join(q["Value"] for q in p.get("Parts", [])))
        else:
            return None
    return "".join(out)


def emit(kind, name, where):
    print(f"{kind}\t{name}\t{where}")


def imports(text, where):
    for m in IMPORT_RE.finditer(text):
        names = m.group(1) or m.group(2)
        for n in names.split(","):
            n = n.strip().split(" as ")[0].strip()
            if n:
                emit("module", n.split(".")[0], where)


def call(args, redirs, where, path):
    words = [lit(a) for a in args]
    i = 0
    while i < len(words):
        w = words[i]
        if w is None:
            return
        if w in WRAPPERS:
            emit("call", w, where) if w not in ("exec", "time") else None
            i += 1
            # skip options, VAR=value and a duration
            while i < len(words) and words[i] is not None and (
                    words[i].startswith("-") or "=" in words[i] or re.fullmatch(r"[0-9.]+[smhd]?", words[i])):
                i += 1
            continue
        break
    else:
        return
    name = words[i]
    if name in ("command", "type", "which", "hash") and i + 2 <= len(words):
        rest = [x for x in words[i + 1:] if x is not None and not x.startswith("-")]
        if any(x in ("-v", "-V") for x in words[i + 1:] if x) or name in ("type", "which", "hash"):
            for r in rest:
                emit("probe", r, where)
            return
        if rest:
            name = rest[0]
    if "/" in name or "$" in name or not re.fullmatch(r"[A-Za-z0-9_.+-]+", name):
        return
    emit("call", name, where)
    if re.fullmatch(r"python3(\.\d+)?", name):
        rest = words[i + 1:]
        if "-c" in rest:
            j = rest.index("-c")
            if j + 1 < len(rest) and rest[j + 1] is not None:
                imports(rest[j + 1], where)
            elif j + 1 < len(args) - i - 1:
                # a double-quoted program with expansions: its literal parts
                w = args[i + 1 + j + 1]
                imports("".join(q.get("Value", "") for p in w.get("Parts", []) for q in p.get("Parts", [p])), where)
        elif rest and rest[0] == "-":
            for r in redirs:
                h = r.get("Hdoc")
                if h:
                    imports("".join(p.get("Value", "") for p in h.get("Parts", [])), where)
        elif rest and rest[0] and rest[0].endswith(".py"):
            root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
            py = os.path.join(root, rest[0])
            if os.path.isfile(py):
                with open(py, encoding="utf-8", errors="replace") as f:
                    imports(f.read(), f"{rest[0]}:0 (run by {where})")


def walk(node, path, line0=0):
    if isinstance(node, dict):
        t = node.get("Type")
        if t == "CallExpr" and node.get("Args"):
            where = f"{path}:{node['Pos']['Line'] + line0}"
            call(node["Args"], node.get("_redirs", []), where, path)
        if t == "FuncDecl":
            emit("func", node["Name"]["Value"], f"{path}:{node['Pos']['Line'] + line0}")
        # a statement's redirections (heredocs) belong to its command
        if "Cmd" in node and isinstance(node["Cmd"], dict) and node.get("Redirs"):
            node["Cmd"]["_redirs"] = node["Redirs"]
        for k, v in node.items():
            if k != "_redirs":
                walk(v, path, line0)
    elif isinstance(node, list):
        for v in node:
            walk(v, path, line0)


def parse(text, path, line0=0, quiet=False):
    r = subprocess.run(["shfmt", "--to-json", "-ln", "bash"], input=text, capture_output=True, text=True)
    if r.returncode != 0:
        if not quiet:
            emit("error", "-", f"{path}:{line0 + 1}: {r.stderr.strip()}")
        return
    walk(json.loads(r.stdout), path, line0)


def makefile(path):
    with open(path, encoding="utf-8") as f:
        lines = f.read().split("\n")
    for n, l in enumerate(lines):
        cmds = []
        if l.startswith("\t"):
            cmds.append(l[1:])
        cmds += re.findall(r"\$\(shell ([^()]*(?:\([^()]*\)[^()]*)*)\)", l)
        for c in cmds:
            # make's own syntax is no command: $(VAR), $@, $<, $^, @/- prefixes
            c = re.sub(r"^[@-]+", "", c.strip())
            if c.startswith("$(say)"):  # printf of a label
                continue
            c = re.sub(r"^\$\(Q\)\s*", "", c)
            c = re.sub(r"\$\(([A-Za-z_][A-Za-z0-9_]*)\)", r"${\1}", c)
            c = re.sub(r"\$\(\w+ [^()]*\)", "x", c)
            c = c.replace("$$", "$").replace("$@", "x").replace("$<", "x").replace("$^", "x")
            parse(c, path, n, quiet=True)


def cfile(path):
    with open(path, encoding="utf-8", errors="replace") as f:
        text = f.read()
    for m in re.finditer(r"snprintf\(\s*cmd\s*,\s*sizeof\s*\(?cmd\)?\s*,\s*\"((?:[^\"\\]|\\.)*)\"", text):
        line = text.count("\n", 0, m.start()) + 1
        s = m.group(1).replace("%s", "$x").replace("\\\"", "\"")
        s = re.sub(r"%[-0-9.]*[a-z]+", "1", s)
        parse(s, path, line - 1, quiet=True)
    for m in re.finditer(r"access\(\s*\"/usr/(?:local/)?s?bin/([A-Za-z0-9_.+-]+)\"\s*,\s*X_OK", text):
        where = f"{path}:{text.count(chr(10), 0, m.start()) + 1}"
        emit("probe", m.group(1), where)  # access() is the check
        emit("call", m.group(1), where)


# Tools outside Debian 12 (or outside what the suite needs), each with why it
# may be absent; a script that calls one checks for it first.
OPTIONAL = {
    "nvidia-smi": "the NVIDIA driver (GPU machines only; not in Debian main)",
    "nvcc": "the CUDA toolkit (optional: the GPU code builds when it is found)",
    "nsys": "Nsight Systems (NVIDIA's profiler, not packaged by Debian)",
    "rocprofv3": "ROCm's profiler (not in Debian 12)",
    "rocm-smi": "ROCm SMI's command (AMD GPU machines only)",
    "srun": "Slurm (a cluster's launcher)",
    "torchrun": "PyTorch (the upstream training, on GPU machines)",
    "sudo": "deps.sh uses it only when not root",
    "chromium-browser": "Ubuntu's name for chromium (deps.sh installs chromium)",
    "debootstrap": "scripts/check_clean_root.sh only (run by hand as root; says how to install it)",
    "man": "man-db: only renders a man page in tests/cli/install.sh, which checks the pages' source without it",
}


def closure(roots, deps, provides):
    seen, todo = set(), list(roots)
    while todo:
        p = todo.pop()
        if p in seen:
            continue
        seen.add(p)
        for alt in deps.get(p, []):
            for a in alt:
                for q in [a] + provides.get(a, []):
                    if q in deps and q not in seen:
                        todo.append(q)
    return seen


def check(pkgs_file, files, allowed_only=False):
    import shutil
    out = subprocess.run(["dpkg-query", "-W", "-f=${Package}\t${Essential}\t${Priority}\t${Provides}\t${Depends}, ${Pre-Depends}\t${Status}\n"],
                         capture_output=True, text=True).stdout
    deps, provides, base = {}, {}, set()
    for l in out.splitlines():
        f = l.split("\t")
        if len(f) < 6 or "installed" not in f[5].split():
            continue
        pkg = f[0]
        deps[pkg] = [[re.sub(r"[ (:].*", "", a.strip()) for a in d.split("|") if a.strip()]
                     for d in f[4].split(",") if d.strip()]
        for v in f[3].split(","):
            v = re.sub(r"[ (].*", "", v.strip())
            if v:
                provides.setdefault(v, []).append(pkg)
        if f[1] == "yes" or f[2] == "required":
            base.add(pkg)
    with open(pkgs_file) as fh:
        listed = {l.strip() for l in fh if l.strip()}
    allowed = closure(listed, deps, provides)
    basic = closure(base | {"apt", "make", "git", "ca-certificates"}, deps, provides)
    if allowed_only:
        print("\n".join(sorted(allowed | basic)))
        return 0
    cuda = os.environ.get("CUDA_HOME", "/usr/local/cuda")
    builtins = set(subprocess.run(["bash", "-c", "compgen -b; compgen -k"], capture_output=True, text=True).stdout.split())

    import io
    import contextlib
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        scan(files)
    rows = [l.split("\t") for l in buf.getvalue().splitlines()]
    funcs = {r[1] for r in rows if r[0] == "func"}
    probes = {(r[2].split(":")[0], r[1]) for r in rows if r[0] == "probe"}
    problems, seen, ntools, nmods = [], set(), set(), set()
    tool_path, mod_origin = {}, {}

    # where a clean Debian machine finds commands (not /usr/local, not
    # ~/.pyenv: what is installed by hand there is no package's)
    std_path = "/usr/sbin:/usr/bin:/sbin:/bin"
    py = shutil.which("python3", path=std_path)
    for kind, name, where in rows:
        if kind == "call" and name not in builtins and name not in funcs:
            tool_path.setdefault(name, shutil.which(name, path=std_path))
    mods = sorted({r[1] for r in rows if r[0] == "module"})
    if py and mods:
        r = subprocess.run([py, "-c", "import importlib.util,sys\nfor m in sys.argv[1:]:\n s=importlib.util.find_spec(m)\n print(m, s.origin if s and s.origin else '-')", *mods],
                           capture_output=True, text=True)
        for l in r.stdout.splitlines():
            m, o = l.split(" ", 1)
            mod_origin[m] = None if o == "-" else o
    # one dpkg -S for every file (merged /usr: dpkg may know /bin/x for /usr/bin/x)
    files_q = set()
    for f in list(tool_path.values()) + list(mod_origin.values()):
        if f and f.startswith("/"):
            for g in {os.path.abspath(f), os.path.realpath(f)}:
                files_q.add(g)
                if g.startswith("/usr/"):
                    files_q.add(g[4:])
    r = subprocess.run(["dpkg", "-S", *sorted(files_q)], capture_output=True, text=True)
    owned = {}
    for l in r.stdout.splitlines():
        if l.startswith("diversion") or ": " not in l:
            continue
        pk, f = l.split(": ", 1)
        owned.setdefault(f, pk.split(",")[0].split(":")[0].strip())

    def owner(path):
        for g in (os.path.abspath(path), os.path.realpath(path)):
            for h in (g, g[4:] if g.startswith("/usr/") else g):
                if h in owned:
                    return owned[h]
        return None

    for kind, name, where in rows:
        fname = where.split(":")[0]
        if kind == "call":
            if name in builtins or name in funcs or (name, fname) in seen:
                continue
            seen.add((name, fname))
            ntools.add(name)
            path = tool_path.get(name)
            if name in OPTIONAL:
                # checked whether or not it is installed here, so a machine
                # that has it cannot hide a script that assumes it
                if (fname, name) not in probes:
                    problems.append(f"{name} (called by {where}) is optional ({OPTIONAL[name]}) but {fname} does not check for it (command -v {name}) before calling it")
                continue
            if path is None:
                problems.append(f"tool {name} (called by {where}) is not installed: add the package that provides it to scripts/deps.sh, or make it optional in tests/deps_tools.py with the reason and a command -v check in the script")
                continue
            if path.startswith(cuda + "/") or path.startswith("/usr/local/cuda"):
                continue
            pkg = owner(path)
            if pkg is None:
                problems.append(f"tool {name} ({path}, called by {where}) belongs to no package: installed by hand? add the package that provides it to scripts/deps.sh")
            elif pkg not in allowed and pkg not in basic:
                problems.append(f"tool {name} comes from package {pkg} ({path}, called by {where}), which scripts/deps.sh does not install")
        elif kind == "module":
            if (name, "py") in seen:
                continue
            seen.add((name, "py"))
            nmods.add(name)
            origin = mod_origin.get(name)
            if not py:
                continue  # python3 itself is reported as a tool
            if not origin:
                problems.append(f"python3 module {name} (imported by {where}) is not installed for {py}: add its python3-* package to scripts/deps.sh")
            elif origin.startswith("/"):
                pkg = owner(origin)
                if pkg is None or (pkg not in allowed and pkg not in basic):
                    problems.append(f"python3 module {name} comes from {pkg or 'no package'} ({origin}, imported by {where}), which scripts/deps.sh does not install")
        elif kind == "error":
            problems.append(f"cannot parse {where}")
    for p in problems:
        print("deps_guard: " + p)
    print(f"tools\t{len(ntools)}\t{len(nmods)}\t{len(files)}")
    return 1 if problems else 0


def scan(files):
    for path in files:
        # functions a script gets from a file it sources at run time (a
        # generated one): "# deps_guard: functions NAME..."
        try:
            with open(path, encoding="utf-8", errors="replace") as f:
                for n, l in enumerate(f, 1):
                    m = re.match(r"\s*#\s*deps_guard:\s*functions\s+(.+)", l)
                    if m:
                        for name in m.group(1).split():
                            emit("func", name, f"{path}:{n}")
        except OSError:
            pass
        if os.path.basename(path) == "Makefile":
            makefile(path)
        elif path.endswith(".c"):
            cfile(path)
        else:
            with open(path, encoding="utf-8", errors="replace") as f:
                parse(f.read(), path)


def main():
    if len(sys.argv) == 3 and sys.argv[1] == "--allowed":
        # the packages whose commands scripts may run: the list's closure
        # and the base system (for the guard's own test)
        sys.exit(check(sys.argv[2], [], allowed_only=True))
    if len(sys.argv) > 2 and sys.argv[1] == "--check":
        sys.exit(check(sys.argv[2], sys.argv[3:]))
    scan(sys.argv[1:])


if __name__ == "__main__":
    main()
