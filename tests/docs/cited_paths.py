#!/usr/bin/env python3
"""Every repository path a README or man page cites exists.

usage: cited_paths.py SOURCE_ROOT

Reads every README.md, docs/*.md and docs/man/*.in under SOURCE_ROOT and
takes as a citation each word that names a file of the repository: in
Markdown, a `code span` (its first word, when it is a command line); in a
man page, a word of the text as the reader sees it (fonts dropped, comments
included). A word is a citation when
- it has a folder and a source file's extension (.cpp, .hpp, .py, .sh, .md,
  meson.build, ...) or ends in .* (hub/fence_tree.*), or its first folder
  is one of the repository's, at the root or next to the citing file
  (protocol/hub/, os/README.md, e2e/test_mpi_stacks);
- it is a bare file name with such an extension (option_table.hpp), a
  bare glob (user_file.*) or a bare folder (base/).
Not citations: URLs, absolute paths, ~, $VARIABLES, @PLACEHOLDERS@,
<placeholders>, options, ./programs, build/... (the build tree), other
projects' files (FOREIGN), words with characters no path here has, and
bare names that also name files outside the repository (slurm.conf,
stepmap.yaml).

A citation resolves against the citing file's folder, then the repository
root; it may leave out its extension (os/user_file); a glob
must match something. A bare name may also name a file or folder anywhere
in the repository (the text names its folder nearby). A path leading out of
the repository (../shared/notes/...) fails too: the repository cannot keep
it true. Prints FILE:LINE: `PATH` for each citation that names nothing.
"""

import fnmatch
import glob
import os
import re
import sys

# Extensions of the files this repository keeps and its texts cite.
SOURCE_EXTENSIONS = {
    "c", "cpp", "h", "hpp", "py", "sh", "md", "build", "in", "lds", "txt",
    "xml", "yaml", "json", "example", "supp", "options", "Debian", "dict",
}
# Extensions that also name files outside the repository (slurm.conf,
# stepmap.yaml, env.sh in the cluster's state): cited bare, they are not
# checked; with a folder they are.
BARE_AMBIGUOUS = {"conf", "yaml", "xml", "json", "txt"}
PATH_CHARS = re.compile(r"^[A-Za-z0-9_.+*/\-{},]+$")
TRAILING = ".,;:)"
# Folders the reader chooses (dir/stepmap-stepd.job.step.*).
PLACEHOLDERS = {"dir", "DIR"}
# Files the scripts write, cited bare (the local cluster's env.sh).
GENERATED = {"env.sh"}
# Other projects' files the texts cite (Slurm's headers, Open MPI's sources).
FOREIGN = ("spank.h", "slurm.h", "opal/")


def texts(root):
    """The files whose citations are checked, relative to root."""
    found = []
    for folder, dirs, files in os.walk(root):
        # Hidden folders, build trees (in-tree or not) are not sources.
        dirs[:] = sorted(d for d in dirs if not d.startswith(".")
                         and not os.path.exists(os.path.join(folder, d, "meson-private")))
        rel = os.path.relpath(folder, root)
        for name in sorted(files):
            path = os.path.normpath(os.path.join(rel, name))
            if name == "README.md" \
                    or (rel == "docs" and name.endswith(".md")) \
                    or (rel == os.path.join("docs", "man") and name.endswith(".in")):
                found.append(path)
    return found


def markdown_words(text):
    """(line, word) for each code span of Markdown text (fenced blocks skipped)."""
    # Blank out fenced blocks, keeping the line count.
    text = re.sub(r"^```.*?^```", lambda m: "\n" * m.group(0).count("\n"),
                  text, flags=re.M | re.S)
    for m in re.finditer(r"(`+)(.+?)\1", text, flags=re.S):
        line = text.count("\n", 0, m.start(2)) + 1
        span = m.group(2).strip()
        words = span.split()
        if not words:
            continue
        # A command line: its program may be a repository script.
        yield line, words[0]


ALTERNATING = {"BI", "BR", "IB", "IR", "RB", "RI"}


def man_plain(line):
    """A man(7) line as the reader sees it (comments kept: they cite too)."""
    if line.startswith('.\\"'):
        return line[3:]
    macro = re.match(r"^\.([A-Z]{1,2})\s*(.*)$", line)
    if macro:
        args = re.findall(r'"[^"]*"|\S+', macro.group(2))
        args = [a[1:-1] if a.startswith('"') else a for a in args]
        line = ("".join(args) if macro.group(1) in ALTERNATING else " ".join(args))
    line = re.sub(r"\\f(\[[^]]*\]|\(..|.)", "", line)
    line = re.sub(r"\\\(aq", "'", line)
    line = line.replace("\\%", "").replace("\\-", "-").replace("\\&", "").replace("\\|", "") \
               .replace("\\e", "\\").replace("\\c", "")
    return line


def man_words(text):
    for number, line in enumerate(text.split("\n"), 1):
        for word in man_plain(line).split():
            yield number, word


def citation(word, folder, root):
    """The path word cites, or None when it is no repository path."""
    word = word.strip("'\"").lstrip("(")
    word = word.rstrip(TRAILING)
    word = re.sub(r":\d+(-\d+)?$", "", word)  # file.cpp:120
    if not word or "://" in word or word.startswith(("/", "~", "$", "-", "<", "build/")):
        return None
    if not PATH_CHARS.match(word) or word.startswith(FOREIGN):
        return None
    if word.startswith("./"):
        return None  # a program in the current directory (./app)
    base = word.rstrip("/").split("/")[-1]
    extension = base.rsplit(".", 1)[-1] if "." in base else ""
    if "/" not in word.rstrip("/"):
        if word.endswith("/"):
            return word  # a folder, named alone
        if word in GENERATED:
            return None
        if (extension in SOURCE_EXTENSIONS and extension not in BARE_AMBIGUOUS) \
                or extension == "*":
            return word
        return None
    first = word.split("/")[0]
    if first in PLACEHOLDERS:
        return None
    if word.startswith("../") or extension in SOURCE_EXTENSIONS or extension == "*" \
            or os.path.isdir(os.path.join(root, first)) \
            or os.path.isdir(os.path.join(root, folder, first)):
        return word
    return None


def exists(path, folder, root, names):
    """Whether the cited path names something of the repository."""
    if os.path.normpath(os.path.join(folder, path)).startswith(".."):
        return False  # outside the repository
    for base in (os.path.join(root, folder), root):
        pattern = os.path.join(base, path)
        if any(ch in path for ch in "*?{"):
            if any(glob.glob(p) for p in braces(pattern)):
                return True
        elif os.path.exists(pattern):
            return True
        elif not path.endswith("/") and glob.glob(glob.escape(pattern) + ".*"):
            return True  # named without its extension (os/user_file)
    # A file or folder named alone, its folder named nearby.
    return "/" not in path.rstrip("/") and bool(fnmatch.filter(names, path))


def braces(pattern):
    """a{b,c}d as [abd, acd] (glob does not expand braces)."""
    m = re.search(r"\{([^{}]*)\}", pattern)
    if not m:
        return [pattern]
    return [x for alt in m.group(1).split(",")
            for x in braces(pattern[:m.start()] + alt + pattern[m.end():])]


def main(argv):
    if len(argv) != 2:
        sys.exit(__doc__)
    root = argv[1]
    names = set()  # every file, and every folder as "name/"
    for folder, dirs, files in os.walk(root):
        dirs[:] = [d for d in dirs if not d.startswith(".")
                   and not os.path.exists(os.path.join(folder, d, "meson-private"))]
        names.update(files)
        names.update(d + "/" for d in dirs)
    stale = []
    checked = 0
    for path in texts(root):
        with open(os.path.join(root, path), encoding="utf-8") as f:
            text = f.read()
        folder = os.path.dirname(path)
        words = markdown_words(text) if path.endswith(".md") else man_words(text)
        for line, word in words:
            cited = citation(word, folder, root)
            if cited is None:
                continue
            checked += 1
            if not exists(cited, folder, root, names):
                outside = os.path.normpath(os.path.join(folder, cited)).startswith("..")
                stale.append(f"{path}:{line}: `{cited}`"
                             + (" (outside the repository)" if outside else ""))
    for s in stale:
        print(s)
    if stale:
        print(f"{len(stale)} cited paths do not exist in the repository "
              "(relative to the citing file's folder, or the root)", file=sys.stderr)
        return 1
    print(f"{checked} cited paths, all present")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
