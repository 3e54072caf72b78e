#!/usr/bin/env bash
# Installs what building Curlew needs on a fresh Debian/Ubuntu machine: libcurl's development
# package (headers and pkg-config file), the headers of the decoders Curlew links (zlib, brotli,
# zstd; the tests also link their encoders), plus the curl command the server smoke tests drive and
# python3, which extracts the README's examples for the tests, and the servers the connection
# tests run (scripts/connection-servers.sh): nginx, openssl (test certificates), tinyproxy (HTTP
# proxy) and microsocks (SOCKS5 proxy), and PostgreSQL for the CurlewFleet tests (scripts/postgres.sh).
# Does nothing when they are already there.
set -euo pipefail
if pkg-config --exists libcurl 2>/dev/null && [ -f /usr/include/zlib.h ] && [ -f /usr/include/brotli/decode.h ] \
    && [ -f /usr/include/zstd.h ] && command -v curl >/dev/null && command -v python3 >/dev/null \
    && command -v nginx >/dev/null && command -v openssl >/dev/null && command -v tinyproxy >/dev/null \
    && command -v microsocks >/dev/null && ls /usr/lib/postgresql/*/bin/postgres >/dev/null 2>&1; then
    exit 0
fi
SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
echo "Installing libcurl4-openssl-dev, the zlib, brotli and zstd headers, pkg-config and the test servers…" >&2
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq libcurl4-openssl-dev zlib1g-dev libbrotli-dev libzstd-dev pkg-config curl python3 nginx openssl tinyproxy microsocks postgresql >/dev/null
