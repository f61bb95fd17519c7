#!/usr/bin/env python3
"""Every man page renders without a single warning.

usage: man_lint.py PAGE...

groff (Debian: groff-base) formats each page with every warning enabled
(-ww), for the PostScript device and for the terminal, where man(1) shows it;
mandoc's linter runs as well when it is installed. Any message fails the page.
"""

import shutil
import subprocess
import sys


def messages(command, page):
    result = subprocess.run(command + [page], capture_output=True, text=True,
                            errors="backslashreplace", timeout=60)
    text = (result.stdout + result.stderr).strip()
    if result.returncode != 0 and not text:
        text = "exit status %d" % result.returncode
    return text


def main(pages):
    if not shutil.which("groff"):
        print("groff is not installed (Debian: apt-get install groff-base)")
        return 1
    linters = [["groff", "-ww", "-z", "-man"], ["groff", "-ww", "-z", "-man", "-Tutf8"]]
    if shutil.which("mandoc"):
        linters.append(["mandoc", "-T", "lint"])
    failed = 0
    for page in pages:
        for linter in linters:
            text = messages(linter, page)
            if text:
                print("%s: %s:\n%s" % (page, " ".join(linter), text))
                failed += 1
    print("%d pages, %d linters: %d failed" % (len(pages), len(linters), failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
