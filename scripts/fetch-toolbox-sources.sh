#!/bin/sh
# Fetches the maintained sources the WebAssembly toolbox builds from
# (services/wasm-driver/toolbox/README.md) into third_party/ (not in git):
#   original-awk  the one true awk (BWK), MIT-style licence
#   toybox        0BSD
# Only each package's .orig tarball is used (Debian's patch tarball of
# toybox is not always downloadable, and we need none of its patches); its
# SHA-256 comes from the archive's signed Sources index. Idempotent: a tree
# already unpacked is kept. Needs root (or sudo) the first time, to add a
# deb-src entry mirroring the machine's deb entries.
set -eu
cd "$(dirname "$0")/.."
SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO=sudo
DEST=third_party
# package  version (as Debian spells it)  directory the tarball unpacks to
PKGS="original-awk=2022-09-12-1:original-awk-2022-09-12
toybox=0.8.9+dfsg-1:toybox-0.8.9"

need=""
for p in $PKGS; do
	[ -d "$DEST/${p#*:}" ] || need="$need ${p%%:*}"
done
[ -n "$need" ] || exit 0

# A deb-src twin of every deb entry (deb822 files and sources.list lines),
# in one file of ours that is rewritten, never appended to.
src_list() {
	for f in /etc/apt/sources.list.d/*.sources; do
		[ -f "$f" ] || continue
		case "$f" in */msc-toolbox-src.sources) continue ;; esac
		awk 'BEGIN { RS = ""; ORS = "\n\n" }
		    /(^|\n)Types:[^\n]*deb([ \n]|$)/ && !/(^|\n)Enabled: *no/ {
			sub(/Types:[^\n]*/, "Types: deb-src"); print }' "$f"
	done
}
src_legacy() {
	for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list; do
		[ -f "$f" ] || continue
		sed -n 's/^[[:space:]]*deb[[:space:]]/deb-src /p' "$f"
	done
}
have_sources() {
	for p in $need; do
		apt-cache showsrc "${p%%=*}" 2>/dev/null |
		    grep -q "^Version: ${p#*=}\$" || return 1
	done
}
if ! have_sources; then
	tmp=$(mktemp)
	src_list >"$tmp"
	legacy=$(src_legacy)
	$SUDO install -m 644 "$tmp" /etc/apt/sources.list.d/msc-toolbox-src.sources
	if [ -n "$legacy" ]; then
		printf '%s\n' "$legacy" >"$tmp"
		$SUDO install -m 644 "$tmp" /etc/apt/sources.list.d/msc-toolbox-src.list
	fi
	rm -f "$tmp"
	$SUDO apt-get update -qq
	have_sources || { echo "fetch-toolbox-sources: no deb-src for:$need" >&2; exit 1; }
fi

mkdir -p "$DEST"
for p in $PKGS; do
	dir=${p#*:}
	[ -d "$DEST/$dir" ] && continue
	spec=${p%%:*}
	# 'URI' file size SHA256:hex, for the .orig tarball only.
	line=$(apt-get source --print-uris -qq "$spec" | grep '\.orig\.tar\.')
	set -- $line
	uri=$(printf '%s' "$1" | tr -d "'")
	file=$DEST/$2
	/usr/lib/apt/apt-helper download-file "$uri" "$PWD/$file" "$4" >/dev/null 2>&1 ||
	    { echo "fetch-toolbox-sources: download of $2 failed" >&2; exit 1; }
	tar -xf "$file" -C "$DEST"
	rm -f "$file"
	[ -d "$DEST/$dir" ] || { echo "fetch-toolbox-sources: $2 has no $dir/" >&2; exit 1; }
done
echo "fetch-toolbox-sources: sources in $DEST/" >&2
