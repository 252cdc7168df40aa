#!/usr/bin/python3
"""Counts real test cases in meson's testlog.json files and prints, as the
last line, "N passed, N failed, N skipped". A TAP test counts its `ok` /
`not ok` lines; a test program that failed without reporting a failed case
(crash, timeout, bail out) counts as one more failure. For each failed
program its failed cases, its notes and the end of its output go to stderr
(CI's log keeps only its tail). An argument NAME=RC
(a check run outside meson, such as the fuzzers) counts as one test that
passed when RC is 0. Exit 1 on any failure."""
import json
import re
import sys

TAP = re.compile(r"^(ok|not ok)\b(.*)$")
SKIP = re.compile(r"#\s*skip", re.IGNORECASE)


def explain(path, record):
    """What a failed test program printed that says why: its failed cases with
    their comment lines and its last lines, at most 40 lines in all."""
    lines = (record.get("stdout") or "").splitlines()
    keep = []
    for i, line in enumerate(lines):
        if line.startswith("not ok"):
            keep.append(line)
            keep.extend(l for l in lines[i + 1:i + 9] if l.startswith("#"))
    shown = (keep[:28] + ["(its last lines)"] + lines[-12:])
    print(f"{path}: {record.get('name')} ({record.get('result')}, {record.get('duration', 0):.0f} s):",
          file=sys.stderr)
    for line in shown:
        print(f"    {line}", file=sys.stderr)


def tally(path):
    passed = failed = skipped = 0
    with open(path, encoding="utf-8") as log:
        for line in log:
            if not line.strip():
                continue
            record = json.loads(line)
            result = record.get("result", "")
            cases_failed = 0
            cases = 0
            for tap in (record.get("stdout") or "").splitlines():
                m = TAP.match(tap)
                if not m:
                    continue
                cases += 1
                if m.group(1) == "not ok":
                    cases_failed += 1
                elif SKIP.search(m.group(2)):
                    skipped += 1
                else:
                    passed += 1
            failed += cases_failed
            program_failed = result not in ("OK", "SKIP", "EXPECTEDFAIL")
            if program_failed:
                explain(path, record)
            if program_failed and cases_failed == 0:
                failed += 1
                print(f"{path}: {record.get('name')}: {result} without a failed test case", file=sys.stderr)
            elif cases == 0 and result == "OK":
                passed += 1
            elif cases == 0 and result == "SKIP":
                skipped += 1
    return passed, failed, skipped


def main():
    total = [0, 0, 0]
    for path in sys.argv[1:]:
        name, equals, rc = path.partition("=")
        if equals and rc.lstrip("-").isdigit():
            passed = rc == "0"
            if not passed:
                print(f"{name}: exit status {rc}", file=sys.stderr)
            total[0 if passed else 1] += 1
            continue
        try:
            counts = tally(path)
        except OSError as error:
            print(f"{path}: {error}", file=sys.stderr)
            counts = (0, 1, 0)
        total = [a + b for a, b in zip(total, counts)]
    print(f"{total[0]} passed, {total[1]} failed, {total[2]} skipped")
    return 1 if total[1] else 0


if __name__ == "__main__":
    sys.exit(main())
