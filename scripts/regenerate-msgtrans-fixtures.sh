#!/usr/bin/env bash
# Rewrites Tests/MsgTransTests/Fixtures from Tests/MsgTransTests/Support/FixtureGenerator.swift.
# Compressed payloads depend on the installed libzstd/zlib, so review the diff before committing.
# Usage: scripts/regenerate-msgtrans-fixtures.sh [scratch-path]
set -euo pipefail
cd "$(dirname "$0")/.."
scratch="${1:-.build}"
MSGTRANS_REGENERATE_FIXTURES=1 swift test --scratch-path "$scratch" --filter 'MsgTransTests.regenerateFixtures'
git status --short Tests/MsgTransTests/Fixtures
