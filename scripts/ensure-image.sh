#!/bin/sh
# Makes sure the default sandbox image exists in the local engine. When the
# tag is missing and no container registry can be reached, it builds a
# minimal Debian bookworm root with debootstrap (from the Debian mirror apt
# already uses) and imports it under that tag.
set -eu
IMAGE=${1:-debian:bookworm-slim}
if docker image inspect "$IMAGE" >/dev/null 2>&1; then
	exit 0
fi
if timeout 60 docker pull "$IMAGE" >/dev/null 2>&1; then
	exit 0
fi
mirror=$(grep -hE '^(URIs:|deb )' /etc/apt/sources.list.d/*.sources \
	/etc/apt/sources.list 2>/dev/null | grep -v security |
	sed -E 's/^URIs: *//; s/^deb (\[[^]]*\] )?//; s/ .*//' | head -1)
[ -n "$mirror" ] || { echo "ensure-image: no Debian mirror in apt sources" >&2; exit 1; }
root=$(mktemp -d /tmp/ktroot.XXXXXX)
trap 'rm -rf "$root"' EXIT
echo "ensure-image: debootstrap bookworm from $mirror" >&2
debootstrap --variant=minbase bookworm "$root" "$mirror" >/tmp/debootstrap.log 2>&1 ||
	{ tail -20 /tmp/debootstrap.log >&2; exit 1; }
rm -rf "$root"/var/cache/apt/archives/*.deb "$root"/var/lib/apt/lists/*
tar -C "$root" -c . | docker import -c 'CMD ["bash"]' - "$IMAGE" >/dev/null
echo "ensure-image: imported $IMAGE" >&2
