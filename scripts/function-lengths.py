#!/usr/bin/env python3
"""Fails when a Swift function, initializer or computed property in Sources/ is longer than the
house limit (60 lines, its signature and closing brace included):

    scripts/function-lengths.py [FOLDER] [--max N]

It reads the code as text, matching braces outside string literals and comments, so it is a
guard, not a parser: a long declaration it misreads shows up as a long one to look at.
"""
import glob
import re
import sys

DECLARATION = re.compile(
    r"^\s*(?:@\w+(?:\([^)]*\))?\s+)*"
    r"(?:(?:public|private|fileprivate|internal|package|static|class|override|mutating|nonisolated|final|"
    r"convenience|required)\s+)*"
    r"(func\s+[^\s(<]+|init[?!]?|deinit|var\s+\w+\s*:[^=]*\{\s*$)")
STRING = re.compile(r'"(?:\\.|[^"\\])*"')


def lengths(path: str):
    lines = open(path, encoding="utf-8").read().split("\n")
    for start, line in enumerate(lines):
        match = DECLARATION.match(line)
        if not match:
            continue
        depth, opened, end = 0, False, start
        while end < len(lines):
            code = STRING.sub('""', lines[end]).split("//")[0]
            for character in code:
                if character == "{":
                    depth, opened = depth + 1, True
                elif character == "}":
                    depth -= 1
            if opened and depth <= 0:
                break
            if not opened and end > start + 8:  # a declaration without a body (a protocol's)
                break
            end += 1
        if opened:
            yield end - start + 1, start + 1, match.group(1)


def main() -> int:
    args = sys.argv[1:]
    limit = 60
    if "--max" in args:
        index = args.index("--max")
        limit = int(args[index + 1])
        del args[index:index + 2]
    folder = args[0] if args else "Sources"
    long = [(n, path, line, name) for path in sorted(glob.glob(f"{folder}/**/*.swift", recursive=True))
            for n, line, name in lengths(path) if n > limit]
    for n, path, line, name in sorted(long, reverse=True):
        print(f"{path}:{line}: {name.strip()} is {n} lines (at most {limit})")
    return 1 if long else 0


if __name__ == "__main__":
    sys.exit(main())
