#!/usr/bin/env bash
# Installs the Debian packages PulseGate needs, only those that are missing.
# Sourced by scripts/run and scripts/test; safe to run again.
set -euo pipefail

PULSEGATE_APT_PACKAGES=(
    pkg-config
    libsqlite3-dev
    libzstd-dev
    zlib1g-dev
    libcurl4-openssl-dev
    libmicrohttpd-dev
    libgnutls28-dev
    libsimdjson-dev
    libpq-dev
)

pulsegate_missing_packages() {
    local missing=()
    for pkg in "$@"; do
        if ! dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed"; then
            missing+=("$pkg")
        fi
    done
    echo "${missing[@]:-}"
}

pulsegate_apt_install() {
    local missing
    missing=$(pulsegate_missing_packages "$@")
    [ -z "$missing" ] && return 0
    echo "pulsegate: installing missing packages: $missing" >&2
    local sudo=""
    [ "$(id -u)" -ne 0 ] && sudo="sudo"
    # shellcheck disable=SC2086
    $sudo env DEBIAN_FRONTEND=noninteractive apt-get update -qq
    # shellcheck disable=SC2086
    $sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $missing >/dev/null
}

pulsegate_find_swift() {
    if ! command -v swift >/dev/null 2>&1; then
        for dir in /opt/swift/usr/bin /usr/share/swift/usr/bin; do
            if [ -x "$dir/swift" ]; then export PATH="$dir:$PATH"; break; fi
        done
    fi
    if ! command -v swift >/dev/null 2>&1; then
        echo "pulsegate: a Swift 6 toolchain is required (https://www.swift.org/install/linux/); 'swift' is not on PATH" >&2
        exit 1
    fi
}

pulsegate_apt_install "${PULSEGATE_APT_PACKAGES[@]}"
pulsegate_find_swift
