#!/usr/bin/env bash
# Installs the Debian 12 packages bud needs, only those missing. Quiet when nothing is missing.
set -euo pipefail
pkgs=(build-essential cmake pkg-config verilator libprotobuf-dev protobuf-compiler
      libboost-dev libcli11-dev catch2 libedit-dev zlib1g-dev libzstd-dev gtkwave python3
      python3-protobuf clang libclang-rt-14-dev tmux libgrpc++-dev protobuf-compiler-grpc
      python3-grpcio ccache nlohmann-json3-dev libxml2-dev libxxhash-dev slurm-wlm munge libsqlite3-dev
      python3-matplotlib python3-pil chromium libonnx-dev python3-onnx python3-numpy
      libtomlplusplus-dev)
missing=()
for p in "${pkgs[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done
[ ${#missing[@]} -eq 0 ] && exit 0
echo "setup: installing ${missing[*]}"
sudo=""
[ "$(id -u)" -ne 0 ] && sudo="sudo"
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -qq
$sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
