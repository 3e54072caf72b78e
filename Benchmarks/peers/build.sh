#!/usr/bin/env bash
# Builds the two peer clients of the benchmark into Benchmarks/peers/.bin/:
#   go-net-http   Go's net/http (Debian's golang-go, standard library only)
#   rust-reqwest  reqwest 0.11 on hyper 0.14 and tokio 1 (Debian's vendored crates, offline)
#
#   bash Benchmarks/peers/build.sh
#
# Installs what is missing with apt-get (golang-go, librust-reqwest-dev and the crates it pulls,
# libssl-dev and pkg-config for native-tls, and Debian's cargo when no cargo is on the PATH).
# Nothing is downloaded but Debian packages: Go builds with GOPROXY=off and no dependencies,
# Rust with --offline from /usr/share/cargo/registry (rust/.cargo/config.toml). Build output goes
# to stderr.
set -euo pipefail
PEERS_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
BIN="$PEERS_DIR/.bin"

apt_install() {
    echo "peers/build.sh: installing $*" >&2
    export DEBIAN_FRONTEND=noninteractive
    if ! apt-get install -y --no-install-recommends "$@" >&2; then
        apt-get update >&2
        apt-get install -y --no-install-recommends "$@" >&2
    fi
}

missing=()
command -v go >/dev/null 2>&1 || missing+=(golang-go)
for package in librust-reqwest-dev librust-tokio-dev librust-libc-dev libssl-dev pkg-config; do
    dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q 'install ok installed' || missing+=("$package")
done
# The machine's cargo (rustup) when there is one, else Debian's (rustc 1.63 builds this too).
command -v cargo >/dev/null 2>&1 || missing+=(cargo)
((${#missing[@]} == 0)) || apt_install "${missing[@]}"

mkdir -p "$BIN"

echo "peers/build.sh: $(go version)" >&2
(
    cd "$PEERS_DIR/go"
    export GOTOOLCHAIN=local GOPROXY=off GOFLAGS= GO111MODULE=on
    go build -trimpath -o "$BIN/go-net-http" .
)

echo "peers/build.sh: $(cargo --version), $(rustc --version)" >&2
(
    cd "$PEERS_DIR/rust"
    # A lockfile written by a newer cargo (version 4) stops Debian's cargo 0.66: let it resolve
    # again from the registry (the same versions: one of each crate is installed).
    if [[ -f Cargo.lock ]] && ! cargo metadata --offline --format-version 1 >/dev/null 2>&1; then
        rm -f Cargo.lock
    fi
    # rust/.cargo/config.toml points crates-io at Debian's registry and sets offline.
    cargo build --release --offline >&2
    cp target/release/rust-reqwest "$BIN/rust-reqwest"
)
echo "peers/build.sh: built $BIN/go-net-http and $BIN/rust-reqwest" >&2
