#!/usr/bin/env python3
"""The largest async frames in a Swift binary: what each call to an async function takes from its
task's memory, which a task keeps (its allocator reuses memory but does not give it back) until it
ends. A long-lived task (an open stream) keeps the largest frames its calls ever took at once.

    python3 scripts/async-frames.py .build/release/plaza                  # the 40 largest
    python3 scripts/async-frames.py .build/release/plaza --match Streaming --min 0

An async function pointer (a symbol ending in `Tu`) is a 4-byte relative offset to the function
and a 4-byte context size: the frame the caller allocates for it. Needs `nm`, `readelf` and
`swift demangle`; Linux (ELF) binaries only.
"""
from __future__ import annotations

import argparse
import struct
import subprocess
from pathlib import Path


def sections(binary: Path) -> list[tuple[int, int, int]]:
    """(address, file offset, size) of each section with contents in the file."""
    found = []
    for line in subprocess.run(["readelf", "-SW", str(binary)], capture_output=True, text=True, check=True).stdout.splitlines():
        parts = line.replace("[ ", "[").split()
        if len(parts) < 7 or not parts[0].startswith("[") or parts[2] == "NOBITS":
            continue
        try:
            found.append((int(parts[3], 16), int(parts[4], 16), int(parts[5], 16)))
        except ValueError:
            continue
    return found


def frames(binary: Path) -> list[tuple[int, str]]:
    """(context size, mangled name) of every async function pointer in the binary."""
    data = binary.read_bytes()
    spans = sections(binary)
    out = []
    for line in subprocess.run(["nm", str(binary)], capture_output=True, text=True, check=True).stdout.splitlines():
        parts = line.split()
        if len(parts) != 3 or not parts[2].endswith("Tu"):
            continue
        address = int(parts[0], 16)
        for start, offset, size in spans:
            if start <= address < start + size - 8:
                at = offset + address - start
                _, context = struct.unpack("<iI", data[at:at + 8])
                out.append((context, parts[2]))
                break
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("binary", type=Path)
    parser.add_argument("--match", default="", help="only functions whose demangled name contains this")
    parser.add_argument("--min", type=int, default=1000, help="only frames of at least this many bytes")
    parser.add_argument("--top", type=int, default=40)
    args = parser.parse_args()
    chosen = sorted((f for f in frames(args.binary) if f[0] >= args.min), reverse=True)
    names = subprocess.run(["swift", "demangle", "--compact"], input="\n".join(n for _, n in chosen),
                           capture_output=True, text=True, check=True).stdout.splitlines()
    shown = 0
    for (size, _), name in zip(chosen, names):
        name = name.removeprefix("async function pointer to ")
        if args.match in name:
            print(f"{size:>7,}  {name[:200]}")
            shown += 1
            if shown == args.top:
                break


if __name__ == "__main__":
    main()
