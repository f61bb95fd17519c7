#!/usr/bin/env python3
"""stepmap.yaml(5) keeps up with the site file's parser.

usage: man_site_file_coverage.py STEPMAP_YAML_5 SITE_FILE_HPP

Every key of kSitePolicyKeys (site/site_file.hpp, dotted paths
such as defaults.map_by) has its entry (.TP, "key: value") under KEYS; an
entry for a key the parser does not know fails too.
"""

import re
import sys

from man_coverage import between, report, sections


def main(page_path, site_file):
    with open(page_path) as f:
        page = f.read()
    with open(site_file) as f:
        keys = re.findall(r'"([a-z_.]+)"', between(f.read(), "kSitePolicyKeys[] = {"))
    if not keys:
        print("found no keys in %s" % site_file)
        return 1
    documented = [heading.split(":")[0] for heading in sections(page).get("KEYS", [])]
    failures = ["KEYS has no entry for %s" % key for key in keys if key not in documented]
    failures += ["KEYS documents %s, which site_file.hpp lacks" % key
                 for key in documented if key not in keys]
    failures += ["KEYS documents %s twice" % key
                 for key in sorted(set(documented)) if documented.count(key) > 1]
    return report(page_path, failures, "%d keys" % len(keys))


if __name__ == "__main__":
    if len(sys.argv) != 3:
        print(__doc__)
        sys.exit(2)
    sys.exit(main(*sys.argv[1:]))
