#!/usr/bin/env bash
# Checks contrib/asrpt-alerts.yml with promtool from Debian's prometheus
# package, unpacked (not installed: no daemon starts) into a cache
# directory: PROMTOOL_CACHE (default /var/cache/asrpt-promtool).
set -euo pipefail
cd "$(dirname "$0")/.."
cache=${PROMTOOL_CACHE:-/var/cache/asrpt-promtool}
tool=$cache/root/usr/bin/promtool
if [[ ! -x $tool ]]; then
	mkdir -p "$cache"
	(cd "$cache" && rm -f prometheus_*.deb && apt-get download prometheus >/dev/null) ||
		{ echo "promtool: apt-get download prometheus failed" >&2; exit 1; }
	rm -rf "$cache/root"
	dpkg-deb -x "$cache"/prometheus_*.deb "$cache/root"
fi
"$tool" check rules contrib/asrpt-alerts.yml
