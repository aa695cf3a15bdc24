#!/usr/bin/env bash
# Installs, from Debian's packages, whatever attend needs that is missing; does nothing
# when everything is there. Runs apt-get as root, or through sudo.
#   scripts/install_deps.sh            the build, test and plotting dependencies
#   scripts/install_deps.sh PKG...     those plus extra packages (lesson data, for example)
set -euo pipefail

packages=(
  g++ make cmake            # compiler and build (CMake >= 3.25 also brings ctest)
  libfmt-dev                # fmt: formatting and printing
  catch2                    # Catch2 v2.13: the tests
  libstb-dev                # stb_image / stb_image_write: reading and writing images
  libgnuplot-iostream-dev   # gnuplot-iostream: plots from C++ (pulls Boost headers)
  gnuplot-nox               # gnuplot without X11/Qt: satisfies the line above without a GUI stack
  zlib1g-dev                # zlib: reading gzip-compressed datasets
  graphviz                  # dot: draws the autograd graphs as PNG
  "$@"
)

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done
[ ${#missing[@]} -eq 0 ] && exit 0

echo "Installing missing packages: ${missing[*]}"
if [ "$(id -u)" -eq 0 ]; then
  apt=(apt-get)
elif command -v sudo >/dev/null 2>&1; then
  apt=(sudo apt-get)
else
  echo "error: these packages are missing and I am neither root nor able to use sudo:" >&2
  echo "  apt-get install --no-install-recommends ${missing[*]}" >&2
  exit 1
fi
export DEBIAN_FRONTEND=noninteractive
# --no-install-recommends keeps the install at ~18 packages instead of ~58 (no ImageMagick,
# no X fonts). A fresh machine may have no package lists yet: update once and retry.
if ! "${apt[@]}" install -y --no-install-recommends "${missing[@]}"; then
  "${apt[@]}" update
  "${apt[@]}" install -y --no-install-recommends "${missing[@]}"
fi
