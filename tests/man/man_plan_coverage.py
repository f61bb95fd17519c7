#!/usr/bin/env python3
"""stepmap-plan(1) and --help keep up with stepmap-plan's options.

usage: man_plan_coverage.py STEPMAP_PLAN_1 CLI_OPTIONS_CPP

Every option of tools/stepmap-plan/cli_options.cpp's kOptions table is named
in the page (as groff writes it, "\\-\\-map\\-by") and in the usage text
--help prints (usageText, in the same file).
"""

import re
import sys


def main():
    page_path, source_path = sys.argv[1:3]
    with open(page_path) as f:
        page = f.read()
    with open(source_path) as f:
        source = f.read()
    table = source[source.index("kOptions[] = {"):]
    table = table[:table.index("};")]
    options = re.findall(r'\{"(-[a-z-]+)"', table)
    usage = source[source.index("std::string usageText()"):]
    failed = []
    for option in options:
        groff = option.replace("-", "\\-")
        if not re.search(re.escape(groff) + r"(?![a-z\\])", page):
            failed.append("%s: no entry in %s" % (option, page_path))
        if not re.search(r"(?<![a-z-])" + re.escape(option) + r"(?![a-z-])", usage):
            failed.append("%s: not in --help (usageText)" % option)
    for line in failed:
        print(line)
    print("%d options, %d missing" % (len(options), len(failed)))
    return 1 if failed or not options else 0


sys.exit(main())
