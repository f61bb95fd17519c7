#!/usr/bin/env python3
"""stepmap(8) keeps up with the plugin's code.

usage: man_coverage.py STEPMAP_8 OPTION_TABLE_HPP SITE_KEYS_HPP PSI_ENVIRONMENT_CPP

Every option of spank_plugin/option_table.hpp has its entry (.TP) under
OPTIONS, with an argument exactly when it takes one, named as srun --help
names it (an optional one, "[svg:FILE]" in the table, as --name[=svg:FILE]),
and is in the SYNOPSIS; every plugstack.conf key of
spank_plugin/site_keys.hpp has its entry under PLUGSTACK.CONF ARGUMENTS; every
PSI_* variable psi_environment.cpp reads has one under ENVIRONMENT. An entry
for an option or key the code does not have fails too.
"""

import re
import sys


def between(text, start, end="};"):
    """The part of text after start, up to end."""
    at = text.index(start) + len(start)
    return text[at:text.index(end, at)]


def options_of(header):
    table = between(header, "kOptionSpecs[] = {")
    return {name: arg for name, arg in
            re.findall(r'\{"([a-z0-9-]+)",\s*(?:nullptr|"([^"]*)")', table)}


# The macros that set their arguments in alternating fonts, joined.
ALTERNATING = {"BI", "BR", "IB", "IR", "RB", "RI"}


def plain(line):
    """A man(7) text line or macro line as the reader sees its words."""
    macro = re.match(r"^\.([A-Z]{1,2})\s*(.*)$", line)
    words = line
    if macro:
        args = [a if a[:1] != '"' else a[1:-1]
                for a in re.findall(r'"[^"]*"|\S+', macro.group(2))]
        words = ("" if macro.group(1) in ALTERNATING else " ").join(args)
    words = re.sub(r"\\f(?:\[[^]]*\]|.)", "", words)
    words = words.replace("\\-", "-").replace("\\%", "").replace("\\&", "").replace("\\c", "")
    return words.strip()


def sections(page):
    """Section name -> the plain headings of its tagged paragraphs (.TP/.TQ)."""
    result, name, lines = {}, None, page.splitlines()
    for i, line in enumerate(lines):
        if line.startswith(".SH"):
            name = plain(line)
            result[name] = []
        elif line.startswith((".TP", ".TQ")) and name and i + 1 < len(lines):
            result[name].append(plain(lines[i + 1]))
    return result


def check_options(found, options, synopsis, failures):
    named = {}
    for heading in found.get("OPTIONS", []):
        m = re.match(r"^--([a-z0-9-]+)(?:=(\S+)|\[=(\S+)\])?$", heading)
        if m:
            named[m.group(1)] = m.group(2) or ("[%s]" % m.group(3) if m.group(3) else None)
    for name, arg in options.items():
        if name not in named:
            failures.append("OPTIONS has no entry for --%s" % name)
        elif bool(arg) != bool(named[name]):
            failures.append("OPTIONS: --%s %s" % (name, "takes %s" % arg if arg else
                                                  "takes no argument"))
        elif arg and arg.startswith("[") and named[name] != arg:
            shown = named[name] if named[name].startswith("[") else "=" + named[name]
            failures.append("OPTIONS: --%s%s, srun --help says --%s=%s (write --%s[=%s])" %
                            (name, shown, name, arg, name, arg[1:-1]))
        elif arg and not named[name].startswith(arg):
            failures.append("OPTIONS: --%s=%s, srun --help says --%s=%s" %
                            (name, named[name], name, arg))
        if name not in synopsis:
            failures.append("SYNOPSIS lacks --%s" % name)
    for name in named:
        if name not in options:
            failures.append("OPTIONS documents --%s, which option_table.hpp lacks" % name)


def check_keys(found, keys, failures):
    documented = [h.split("=")[0] for h in found.get("PLUGSTACK.CONF ARGUMENTS", [])
                  if "=" in h]
    for key in keys:
        if key not in documented:
            failures.append("PLUGSTACK.CONF ARGUMENTS has no entry for %s=" % key)
    for key in documented:
        if key not in keys:
            failures.append("PLUGSTACK.CONF ARGUMENTS documents %s=, which site_keys.hpp "
                            "lacks" % key)


def report(page_path, failures, counted):
    """Prints each failure and the count; the exit status."""
    for failure in failures:
        print("%s: %s" % (page_path, failure))
    print("%s: %d missing or wrong" % (counted, len(failures)))
    return 1 if failures else 0


def main(page_path, option_table, site_keys, psi_environment):
    with open(page_path) as f:
        page = f.read()
    with open(option_table) as f:
        options = options_of(f.read())
    with open(site_keys) as f:
        keys = re.findall(r'"([a-z_]+)"', between(f.read(), "kSiteKeys[] = {"))
    with open(psi_environment) as f:
        psi = sorted(set(re.findall(r'"(PSI_[A-Z_]+)"', f.read())))
    if not options or not keys or not psi:
        print("found no options, keys or PSI_* variables in the sources: %d, %d, %d" %
              (len(options), len(keys), len(psi)))
        return 1
    found = sections(page)
    synopsis = {re.split(r"[\s\[=]", plain(line)[2:])[0] for line in page.splitlines()
                if line.startswith(".OP ")}
    failures = []
    check_options(found, options, synopsis, failures)
    check_keys(found, keys, failures)
    environment = " ".join(found.get("ENVIRONMENT", [])).replace(",", " ").split()
    for name in psi:
        if name not in environment:
            failures.append("ENVIRONMENT has no entry for %s" % name)
    return report(page_path, failures, "%d options, %d plugstack.conf keys, %d PSI_* variables" %
                  (len(options), len(keys), len(psi)))


if __name__ == "__main__":
    if len(sys.argv) != 5:
        print(__doc__)
        sys.exit(2)
    sys.exit(main(*sys.argv[1:]))
