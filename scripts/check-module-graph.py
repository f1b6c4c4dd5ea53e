#!/usr/bin/env python3
"""Checks that Package.swift states the real module graph (issue 18), which SwiftPM's
`--explicit-target-dependency-import-check error` alone does not: that flag only rejects imports of
targets not reachable through any dependency.

- every Swift target's declared dependencies are exactly the package targets (Swift modules and
  system libraries) its sources import: nothing declared that is not imported, nothing imported
  (even transitively available) that is not declared;
- the shared swiftSettings enable InternalImportsByDefault and MemberImportVisibility.

Usage: scripts/check-module-graph.py [REPO]   (exit 1 and one line per problem when it differs)
"""

import os
import re
import sys

CALL = re.compile(r"\.(target|testTarget|executableTarget|systemLibrary)\(")
IMPORT = re.compile(
    r"^\s*(?:@[A-Za-z_]+(?:\([^)]*\))?\s+)*(?:(?:public|package|internal|fileprivate|private)\s+)?import\s+"
    r"(?:(?:struct|class|enum|protocol|func|var|let|typealias)\s+)?([A-Za-z_][A-Za-z0-9_]*)",
    re.M,
)
FEATURES = ["ExistentialAny", "InternalImportsByDefault", "MemberImportVisibility"]


def matching_paren(text, index):
    depth, in_string = 0, False
    while index < len(text):
        c = text[index]
        if in_string:
            if c == "\\":
                index += 1
            elif c == '"':
                in_string = False
        elif c == '"':
            in_string = True
        elif c == "(":
            depth += 1
        elif c == ")":
            depth -= 1
            if depth == 0:
                return index
        index += 1
    raise SystemExit("check-module-graph: unbalanced parentheses in Package.swift")


def targets(manifest):
    for call in CALL.finditer(manifest):
        start = call.end() - 1
        body = manifest[start : matching_paren(manifest, start) + 1]
        kind = call.group(1)
        name = re.search(r'name:\s*"([^"]+)"', body).group(1)
        path = re.search(r'path:\s*"([^"]+)"', body)
        path = path.group(1) if path else ("Tests/" if kind == "testTarget" else "Sources/") + name
        deps = re.search(r"dependencies:\s*\[([^\]]*)\]", body)
        yield kind, name, path, re.findall(r'"([^"]+)"', deps.group(1)) if deps else []


def swift_files(root, path):
    for directory, subdirectories, files in os.walk(os.path.join(root, path)):
        subdirectories.sort()
        yield from (os.path.join(directory, f) for f in sorted(files) if f.endswith(".swift"))


def main():
    root = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "..")
    with open(os.path.join(root, "Package.swift"), encoding="utf-8") as f:
        manifest = f.read()
    problems = [
        "swiftSettings: enableUpcomingFeature(\"%s\") is missing" % feature
        for feature in FEATURES
        if '.enableUpcomingFeature("%s")' % feature not in manifest
    ]
    declared_targets = list(targets(manifest))
    names = {name for _, name, _, _ in declared_targets}
    for kind, name, path, deps in declared_targets:
        files = list(swift_files(root, path)) if kind != "systemLibrary" else []
        if not files:
            continue
        imported = set()
        for file in files:
            with open(file, encoding="utf-8") as f:
                imported.update(IMPORT.findall(f.read()))
        imported = (imported & names) - {name}
        for missing in sorted(imported - set(deps)):
            problems.append("%s imports %s but does not declare it" % (name, missing))
        for unused in sorted(set(deps) - imported):
            problems.append("%s declares %s but never imports it" % (name, unused))
    for problem in problems:
        print("check-module-graph: " + problem)
    sys.exit(1 if problems else 0)


main()
