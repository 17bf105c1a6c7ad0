#!/usr/bin/env bash
# Checks PlazaKit (sdk/) as an app gets it, in a copy outside the clone (`make test` runs it):
#   1. resolving it fetches nothing but the documentation plugin: an app gets no server dependency;
#   2. it builds with no warning in its own code;
#   3. every ```swift block of docs/sdk.md, docs/sdk-*.md and the DocC catalogue's articles compiles
#      against it, in a small package made next to the copy;
#   4. its DocC catalogue builds with warnings as errors.
#
#   scripts/sdk-check.sh        PLAZA_SDK_CHECK_DIR: the work folder (~/.cache/plaza-sdk-check);
#                               SWIFT: the swift to run. The folder is kept, so later runs are warm.
#
# How a documentation block is compiled. Each ```swift block is the body of an `async throws`
# function in a file that imports Foundation and PlazaKit; `import` lines in it move to the top of
# that file. docs/ is one module and each DocC catalogue another, so a guide may use what
# docs/sdk.md declares at the top level. scripts/sdk-check-prelude.swift is the app around them:
# stand-ins for the app's screens and the person's input (`show(_:)`, `showError(_:)`,
# `password`, …), never for PlazaKit. An HTML comment on the line before the fence changes that:
#   <!-- top-level -->                  types and extensions: compiled as they are, at file level
#   <!-- continues -->                  the same function as the block before it, so what that one
#                                       declared is in scope (a walkthrough, step by step)
#   <!-- given: plaza: PlazaClient -->  the app's values the block starts from, as the function's
#                                       parameters (typed, so they are checked too)
#   <!-- needs: UIKit -->               compiled where `canImport(UIKit)`, only parsed elsewhere;
#                                       combine with `;`: <!-- top-level; needs: Security -->
#   <!-- not-compiled: why -->          left out; "Package.swift …" excerpts are checked for the
#                                       SDK's product names and a `package:` that matches the URL
# Compiler errors name the documentation file and line.
set -euo pipefail

root="$(cd "$(dirname "$0")/.." && pwd)"
sdk="$root/sdk"
work="${PLAZA_SDK_CHECK_DIR:-$HOME/.cache/plaza-sdk-check}"
swift="${SWIFT:-swift}"
mkdir -p "$work"
work="$(cd "$work" && pwd)"
case "$work/" in
  "$root/"*) echo "sdk-check: the work folder $work must be outside the clone ($root)" >&2; exit 2 ;;
esac
copy="$work/sdk"
logs="$work/logs"
mkdir -p "$copy" "$logs"

# Seconds since the epoch, to the millisecond where bash has EPOCHREALTIME (bash 5), else whole.
clock() { if [ -n "${EPOCHREALTIME:-}" ]; then echo "${EPOCHREALTIME/,/.}"; else date +%s; fi; }
started="$(clock)"
part_started="$started"
timings=""
part() {
  part_started="$(clock)"
  echo "==> sdk-check: $1"
}
done_part() {
  local seconds
  seconds="$(awk -v a="$part_started" -v b="$(clock)" 'BEGIN { printf "%.1f", b - a }')"
  echo "    $1: ${seconds} s"
  timings="$timings$(printf '  %-34s %6s s' "$1" "$seconds")"$'\n'
}
# The log, with the copy's paths turned back into the clone's, so an editor opens the right file.
show_log() { sed -e "s#$copy/#$sdk/#g" "$1" >&2; }
fail() {
  echo "sdk-check: FAILED: $1" >&2
  exit 1
}

# --- 1. The copy, keeping its .build so that reruns are warm -------------------------------------
part "copying sdk/ to $copy"
if command -v rsync >/dev/null 2>&1; then
  rsync -a --delete --exclude /.build --exclude /.swiftpm --exclude /Package.resolved "$sdk/" "$copy/"
else
  # Without rsync: everything but .build goes, and comes again with its times (tar keeps them),
  # so the unchanged files are not compiled again.
  find "$copy" -mindepth 1 -maxdepth 1 ! -name .build -exec rm -rf {} +
  (cd "$sdk" && tar -cf - --exclude ./.build --exclude ./.swiftpm --exclude ./Package.resolved .) |
    (cd "$copy" && tar -xpf -)
fi
done_part "copy"

# --- 2. What an app resolves ---------------------------------------------------------------------
part "resolving its dependencies (an app must get no server dependency)"
rm -f "$copy/Package.resolved"
if ! "$swift" package --package-path "$copy" resolve >"$logs/resolve.log" 2>&1; then
  show_log "$logs/resolve.log"
  fail "swift package resolve"
fi
identities=""
if [ -f "$copy/Package.resolved" ]; then
  identities="$(sed -n 's/.*"identity"[[:space:]]*:[[:space:]]*"\([^"]*\)".*/\1/p' "$copy/Package.resolved")"
fi
unexpected=""
for identity in $identities; do
  case "$identity" in
    swift-docc-plugin | swift-docc-symbolkit) ;;
    *) unexpected="$unexpected $identity" ;;
  esac
done
[ -z "$unexpected" ] || fail "sdk/ resolves more than the documentation plugin:$unexpected (sdk/Package.swift)"
echo "    resolved: $(echo $identities)"
done_part "resolve"

# --- 3. The SDK builds without warnings ----------------------------------------------------------
# Warnings are errors in a build folder of its own: a file is compiled again until it is clean,
# so a warm run that compiles nothing has still checked every file. (The documentation plugin
# builds in .build, without the flag: each folder stays warm.)
part "building it (no warning in its own code)"
build_ok=true
"$swift" build --package-path "$copy" --scratch-path "$work/build-strict" -Xswiftc -warnings-as-errors \
  >"$logs/build.log" 2>&1 || build_ok=false
warnings="$(grep -E "^$copy/Sources/[^:]+:[0-9]+:[0-9]+: (warning|error):" "$logs/build.log" |
  sed "s#$copy/#$sdk/#" | awk '!seen[$0]++' || true)"
if [ -n "$warnings" ]; then
  echo "$warnings" >&2
  fail "sdk/ does not build cleanly: the warnings and errors above (warnings count as errors)"
fi
if [ "$build_ok" != true ]; then
  show_log "$logs/build.log"
  fail "swift build of sdk/"
fi
done_part "build"

# --- 4. The documentation's snippets compile -----------------------------------------------------
part "compiling the Swift blocks of docs/sdk.md, docs/sdk-*.md and the DocC articles"
snippets="$work/snippets"
python3 - "$root" "$snippets" "$root/scripts/sdk-check-prelude.swift" <<'PY' || fail "the documentation's snippet blocks: the file and line are above"
import glob, os, re, sys

root, out, prelude_path = sys.argv[1], sys.argv[2], sys.argv[3]

# Documentation sets, each compiled as one module: docs/ (the guide and its companions), and each
# DocC catalogue of the SDK (it ships with the SDK, so it stands alone).
sets = [("DocsSnippets", ["docs/sdk.md"] + sorted(os.path.relpath(p, root) for p in glob.glob(f"{root}/docs/sdk-*.md")))]
for catalogue in sorted(glob.glob(f"{root}/sdk/Sources/*/*.docc")):
    articles = sorted(os.path.relpath(p, root) for p in glob.glob(f"{catalogue}/**/*.md", recursive=True))
    name = re.sub(r"\W", "", os.path.basename(catalogue)[: -len(".docc")]) + "DocCSnippets"
    sets.append((name, articles))

FENCE = re.compile(r"^(\s*)(`{3,}|~{3,})\s*([^\s`]*)")
MARKER = re.compile(r"^\s*<!--(.*)-->\s*$")
IMPORT = re.compile(r"^\s*(?:@\w+\s+)*import\s+(?:\w+\s+)?(\w+)")
problems = []
counts = {"compiled": 0, "parsed only": 0, "left out": 0}
notes = []


def blocks(path):
    """(first line of the body, its lines, marker text or None) for each ```swift block."""
    lines = open(os.path.join(root, path), encoding="utf-8").read().split("\n")
    i = 0
    while i < len(lines):
        m = FENCE.match(lines[i])
        if not m:
            i += 1
            continue
        indent, fence, language = m.group(1), m.group(2), m.group(3).lower()
        start = i + 1
        j = start
        while j < len(lines) and not (lines[j].strip().startswith(fence[0] * len(fence)) and lines[j].strip().strip(fence[0]) == ""):
            j += 1
        if language == "swift":
            marker = MARKER.match(lines[i - 1]) if i > 0 else None
            body = [l[len(indent):] if l.startswith(indent) else l.lstrip() for l in lines[start:j]]
            yield start + 1, body, marker.group(1).strip() if marker else None
        i = j + 1


def parse_marker(path, line, text):
    options = {"top-level": False, "continues": False, "needs": [], "given": [], "not-compiled": None}
    if text is None:
        return options
    for part in [p.strip() for p in text.split(";") if p.strip()]:
        key, _, value = part.partition(":")
        key, value = key.strip(), value.strip()
        if key in ("top-level", "continues") and not value:
            options[key] = True
        elif key == "needs" and value:
            options["needs"] = [v.strip() for v in value.split(",") if v.strip()]
        elif key == "given" and value:
            options["given"] = parameters(value)
        elif key == "not-compiled" and value:
            options["not-compiled"] = value
        else:
            problems.append(f"{path}:{line - 2}: unknown snippet marker <!-- {text} --> (scripts/sdk-check.sh lists them)")
    return options


def parameters(text):
    """`a: T, b: [K: V]` split at the commas outside brackets, as (name, "name: type")."""
    found, depth, current = [], 0, ""
    for c in text + ",":
        depth += c in "[(<"
        depth -= c in "])>"
        if c == "," and depth == 0:
            if current.strip():
                found.append((current.split(":")[0].strip(), current.strip()))
            current = ""
        else:
            current += c
    return found


def products():
    manifest = open(os.path.join(root, "sdk/Package.swift"), encoding="utf-8").read()
    return set(re.findall(r'\.library\(\s*name:\s*"([^"]+)"', manifest))


def check_manifest_excerpt(path, line, body):
    """A Package.swift excerpt: products the SDK has, from a package named as its URL or path says."""
    text = "\n".join(body)
    known = products()
    packages = {}
    for url in re.findall(r'\.package\(\s*url:\s*"([^"]+)"', text):
        packages[re.sub(r"\.git$", "", url.rstrip("/").rsplit("/", 1)[-1]).lower()] = url
    for path_ in re.findall(r'\.package\(\s*path:\s*"([^"]+)"', text):
        packages[path_.rstrip("/").rsplit("/", 1)[-1].lower()] = path_
    uses = re.findall(r'\.product\(\s*name:\s*"([^"]+)"\s*,\s*package:\s*"([^"]+)"\s*\)', text)
    if not uses:
        problems.append(f"{path}:{line}: a Package.swift excerpt that adds no .product(name:package:)")
    for product, package in uses:
        if product not in known:
            problems.append(f"{path}:{line}: .product(name: \"{product}\") is not a product of sdk/Package.swift ({', '.join(sorted(known))})")
        if package.lower() not in packages:
            problems.append(f"{path}:{line}: .product(…, package: \"{package}\") matches no .package(url:/path:) of the excerpt ({', '.join(sorted(packages)) or 'none'})")


def location(path, line):
    return f'#sourceLocation(file: "{os.path.join(root, path)}", line: {line})'


def generate(path):
    """The Swift file of one documentation file's blocks."""
    head = [f"// Made by scripts/sdk-check.sh from {path}; edit that file, not this one.", "import Foundation", "import PlazaKit"]
    functions = []  # [first line, needs, given, [(line, body)]]
    tops = []
    for line, body, marker in blocks(path):
        options = parse_marker(path, line, marker)
        if options["not-compiled"] is not None:
            counts["left out"] += 1
            notes.append(f"{path}:{line}: left out ({options['not-compiled']})")
            if options["not-compiled"].lower().startswith("package.swift"):
                check_manifest_excerpt(path, line, body)
            continue
        needs = options["needs"]
        counts["parsed only" if any(not can_import(n) for n in needs) else "compiled"] += 1
        if options["top-level"]:
            if options["continues"] or options["given"]:
                problems.append(f"{path}:{line - 2}: a top-level block neither continues nor is given values")
            tops.append((line, needs, body))
            continue
        moved = []
        for k, text in enumerate(body):
            m = IMPORT.match(text)
            if m:
                moved.append(text.strip())
                body[k] = ""
        for statement in moved:
            head.extend(guarded(needs, [statement]))
        if options["continues"]:
            if not functions:
                problems.append(f"{path}:{line - 2}: <!-- continues --> with no block before it to continue")
                continue
            functions[-1][1] = sorted(set(functions[-1][1]) | set(needs))
            names = [name for name, _ in functions[-1][2]]
            functions[-1][2] += [g for g in options["given"] if g[0] not in names]
            functions[-1][3].append((line, body))
        else:
            functions.append([line, needs, options["given"], [(line, body)]])
    text = head + [""]
    for line, needs, body in tops:
        text += guarded(needs, [location(path, line)] + body + ["#sourceLocation()"]) + [""]
    for first, needs, given, parts in functions:
        function = [f"func snippet_line_{first}({', '.join(p for _, p in given)}) async throws {{"]
        for line, body in parts:
            function += [location(path, line)] + body
        function += ["#sourceLocation()", "}"]
        text += guarded(needs, function) + [""]
    return "\n".join(text)


def can_import(module):
    # What the compiler will decide; only used for the count printed.
    if module in ("Foundation", "Dispatch"):
        return True
    return sys.platform == "darwin" and module not in ("UIKit",)


def guarded(needs, lines):
    if not needs:
        return lines
    condition = " && ".join(f"canImport({n})" for n in needs)
    return [f"#if {condition}"] + lines + ["#endif"]


def write(path, text):
    """Writes only what changed, so that a warm run compiles nothing new."""
    os.makedirs(os.path.dirname(path), exist_ok=True)
    if os.path.exists(path) and open(path, encoding="utf-8").read() == text:
        return
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)


made = set()
prelude = open(prelude_path, encoding="utf-8").read()
for module, files in sets:
    if not files:
        continue
    target = f"{out}/Sources/{module}"
    write(f"{target}/Prelude.swift", prelude)
    made.add(f"{target}/Prelude.swift")
    for path in files:
        name = re.sub(r"\W", "_", os.path.splitext(os.path.basename(path))[0]) + ".swift"
        write(f"{target}/{name}", generate(path))
        made.add(f"{target}/{name}")
modules = [module for module, files in sets if files]
write(f"{out}/Sources/DocSnippets/main.swift", "print(\"The snippets of PlazaKit's documentation compile and link.\")\n")
made.add(f"{out}/Sources/DocSnippets/main.swift")
targets = "".join(
    f'        .target(name: "{m}", dependencies: [.product(name: "PlazaKit", package: "sdk")]),\n' for m in modules)
names = ", ".join(f'"{m}"' for m in modules)
write(f"{out}/Package.swift", f"""// swift-tools-version:6.0
// Made by scripts/sdk-check.sh: an app of the documentation's snippets, on the copy of sdk/ beside it.
import PackageDescription

let package = Package(
    name: "DocSnippets",
    platforms: [.macOS(.v13), .iOS(.v16)],
    dependencies: [.package(path: "../sdk")],
    targets: [
{targets}        .executableTarget(name: "DocSnippets", dependencies: [{names}]),
    ]
)
""")
for folder, _, present in os.walk(f"{out}/Sources"):
    for n in present:
        if os.path.join(folder, n) not in made:
            os.remove(os.path.join(folder, n))
for note in notes:
    print("    " + note)
print(f"    blocks: {counts['compiled']} compiled, {counts['parsed only']} only parsed here (needs: an Apple framework), {counts['left out']} left out")
if problems:
    print("\n".join(problems), file=sys.stderr)
    sys.exit(1)
PY
if ! "$swift" build --package-path "$snippets" >"$logs/snippets.log" 2>&1; then
  # The errors point into the documentation (#sourceLocation); the rest is the compiler's context.
  grep -E ": error: " "$logs/snippets.log" | awk '!seen[$0]++' >&2 || show_log "$logs/snippets.log"
  echo "    (the whole log: $logs/snippets.log)" >&2
  fail "a documentation snippet does not compile: the file and line are above"
fi
# Warnings do not fail (a snippet's values are there to be shown, not used), but those other than
# an unused value are worth a look: a deprecated call, a result dropped that should not be.
grep -E "^$root/[^:]+:[0-9]+:[0-9]+: warning: " "$logs/snippets.log" | grep -v "was never used" |
  awk '!seen[$0]++' | sed 's/^/    note: /' || true
done_part "documentation snippets"

# --- 5. The DocC catalogue -----------------------------------------------------------------------
part "building the DocC catalogue (warnings are errors)"
[ -d "$copy/Sources/PlazaKit/PlazaKit.docc" ] || fail "sdk/Sources/PlazaKit/PlazaKit.docc is missing"
if ! (cd "$copy" && "$swift" package --disable-sandbox generate-documentation --target PlazaKit \
  --warnings-as-errors --output-path "$work/PlazaKit.doccarchive") >"$logs/docc.log" 2>&1; then
  show_log "$logs/docc.log"
  fail "the DocC catalogue (sdk/Sources/PlazaKit/PlazaKit.docc)"
fi
# --warnings-as-errors covers what docc reports; a warning of the plugin's own would show here.
if grep -E "^(warning|.*: warning):" "$logs/docc.log" >&2; then
  fail "the DocC build warned"
fi
echo "    archive: $work/PlazaKit.doccarchive"
done_part "DocC catalogue"

total="$(awk -v a="$started" -v b="$(clock)" 'BEGIN { printf "%.1f", b - a }')"
printf '%s' "$timings"
echo "==> sdk-check: PlazaKit is fine as an app gets it (${total} s)"
