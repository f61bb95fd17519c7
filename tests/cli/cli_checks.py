"""What the CLI test scripts share: a named check printed as PASS or FAIL,
with the failures kept for the exit status."""

failures = []


def check(name, ok, detail=""):
    print(("PASS " if ok else "FAIL ") + name)
    if not ok:
        failures.append(name)
        if detail:
            print(detail)
