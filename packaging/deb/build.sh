#!/usr/bin/env bash
# Builds the asrpt Debian package: packaging/deb/build.sh OUTDIR VERSION.
# The static binary (CGO_ENABLED=0) with its version linked in, the
# systemd units of contrib/ with paths for a packaged install (/usr/bin),
# the example configuration as a conffile, the docs. The postinst creates
# the asrpt system user; nothing is enabled or started (asrpt.toml needs
# slurm.url and a token first: /usr/share/doc/asrpt/setup.md).
set -euo pipefail
cd "$(dirname "$0")/../.."
out=${1:?usage: build.sh OUTDIR VERSION}
version=${2:?usage: build.sh OUTDIR VERSION}
# Debian versions start with a digit: v1.2.3-4-gabc → 1.2.3+4.gabc;
# a bare commit → 0~git<commit>.
deb_version=$(sed -E 's/^v//; s/-([0-9]+)-g/+\1.g/; s/-dirty$/+dirty/' <<<"$version")
[[ $deb_version =~ ^[0-9] ]] || deb_version="0~git$deb_version"
arch=$(dpkg --print-architecture)
root=$(mktemp -d)
trap 'rm -rf "$root"' EXIT
chmod 0755 "$root"

install -d "$root/DEBIAN" "$root/usr/bin" "$root/lib/systemd/system" "$root/etc/asrpt" \
	"$root/usr/share/doc/asrpt" "$root/usr/share/asrpt"
CGO_ENABLED=0 go build -trimpath -ldflags "-s -w -X github.com/asrpt/asrpt/internal/buildinfo.version=$version" \
	-o "$root/usr/bin/asrpt" ./cmd/asrpt
for u in asrpt.service asrpt-token.service asrpt-token.timer; do
	sed -e 's#/usr/local/bin/asrpt#/usr/bin/asrpt#g' \
		-e 's#file:///usr/local/share/doc/asrpt/README.md#file:///usr/share/doc/asrpt/README.md#' \
		-e 's#/etc/systemd/system/#/lib/systemd/system/#' \
		"contrib/$u" >"$root/lib/systemd/system/$u"
	chmod 0644 "$root/lib/systemd/system/$u"
done
install -m 0640 contrib/asrpt.toml "$root/etc/asrpt/asrpt.toml"
install -m 0644 contrib/README.md "$root/usr/share/doc/asrpt/README.md"
install -m 0644 contrib/setup.md "$root/usr/share/doc/asrpt/setup.md"
install -m 0644 contrib/asrpt-alerts.yml "$root/usr/share/doc/asrpt/asrpt-alerts.yml"
install -m 0644 contrib/asrpt-grafana.json "$root/usr/share/doc/asrpt/asrpt-grafana.json"
install -m 0644 README.md "$root/usr/share/doc/asrpt/README.project.md"
install -m 0644 contrib/slurm.conf.asrpt "$root/usr/share/asrpt/slurm.conf.asrpt"
cat >"$root/usr/share/doc/asrpt/copyright" <<COPY
Format: https://www.debian.org/doc/packaging-manuals/copyright-format/1.0/
Upstream-Name: asrpt
Files: *
Copyright: the asrpt authors
License: see the project repository
COPY

echo "/etc/asrpt/asrpt.toml" >"$root/DEBIAN/conffiles"
size=$(du -sk "$root" | cut -f1)
cat >"$root/DEBIAN/control" <<CTRL
Package: asrpt
Version: $deb_version
Architecture: $arch
Maintainer: asrpt <asrpt@localhost>
Installed-Size: $size
Depends: adduser
Recommends: slurmctld | slurm-wlm
Section: admin
Priority: optional
Homepage: https://github.com/asrpt/asrpt
Description: A-SRPT scheduling sidecar for Slurm
 asrpt runs beside slurmctld: it predicts how long pending GPU jobs will
 run from the accounting history, orders them by shortest remaining
 processing time on a virtual single machine, places multi-node jobs with
 communication-aware Heavy-Edge, and writes priorities and node lists back
 through slurmrestd. asrpt replay runs the site's own accounting history
 through A-SRPT and the usual policies first.
CTRL
cat >"$root/DEBIAN/postinst" <<'POST'
#!/bin/sh
set -e
if [ "$1" = configure ]; then
	if ! getent passwd asrpt >/dev/null; then
		adduser --system --group --home /var/lib/asrpt --no-create-home --quiet asrpt
	fi
	# The state directory: asrpt's, writable by no one else (install -d
	# corrects one that exists; the sidecar refuses anything else).
	install -d -m 0750 -o asrpt -g asrpt /var/lib/asrpt
	chown root:asrpt /etc/asrpt /etc/asrpt/asrpt.toml
	chmod 0750 /etc/asrpt
	chmod 0640 /etc/asrpt/asrpt.toml
	if [ -d /run/systemd/system ]; then
		systemctl daemon-reload >/dev/null || true
	fi
fi
POST
cat >"$root/DEBIAN/prerm" <<'PRERM'
#!/bin/sh
set -e
if [ -d /run/systemd/system ] && [ "$1" = remove ]; then
	systemctl stop asrpt.service asrpt-token.timer >/dev/null 2>&1 || true
fi
PRERM
cat >"$root/DEBIAN/postrm" <<'POSTRM'
#!/bin/sh
set -e
if [ "$1" = purge ]; then
	rm -rf /var/lib/asrpt
	rm -f /etc/asrpt/slurm.jwt /etc/asrpt/slurm.jwt.new
	rmdir /etc/asrpt 2>/dev/null || true
fi
if [ -d /run/systemd/system ]; then
	systemctl daemon-reload >/dev/null || true
fi
POSTRM
chmod 0755 "$root/DEBIAN/postinst" "$root/DEBIAN/prerm" "$root/DEBIAN/postrm"
mkdir -p "$out"
deb="$out/asrpt_${deb_version}_${arch}.deb"
dpkg-deb --root-owner-group --build "$root" "$deb" >/dev/null
echo "$deb"
