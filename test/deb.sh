#!/usr/bin/env bash
# make deb, then install the package on this machine, check what it put
# where (binary and version, the asrpt user, the configuration's owner and
# mode, the units pass systemd-analyze verify), remove it (the conffile
# stays) and purge it (nothing left). Needs root. DEB_OUT: where the .deb
# goes (default a temporary directory).
set -euo pipefail
cd "$(dirname "$0")/.."
say() { printf '[deb %s] %s\n' "$(date -u +%T)" "$*" >&2; }
fail() { say "FAILED: $*"; exit 1; }
((EUID == 0)) || fail "needs root (dpkg -i)"
if dpkg -s asrpt >/dev/null 2>&1; then
	fail "an asrpt package is installed already; this test installs and purges its own"
fi
out=${DEB_OUT:-$(mktemp -d)}
version=$(git describe --tags --always --dirty 2>/dev/null || echo unknown)
deb=$(bash packaging/deb/build.sh "$out" "$version")
say "built $deb ($(du -h "$deb" | cut -f1))"
trap 'dpkg -P asrpt >/dev/null 2>&1 || true' EXIT
dpkg -i "$deb" >/dev/null || fail "dpkg -i"
got=$(/usr/bin/asrpt --version) || fail "asrpt --version"
[[ $got == "asrpt $version"* ]] || fail "asrpt --version says '$got', want 'asrpt $version …'"
getent passwd asrpt >/dev/null || fail "no asrpt user after install"
[[ $(stat -c '%U:%G %a' /etc/asrpt/asrpt.toml) == "root:asrpt 640" ]] ||
	fail "/etc/asrpt/asrpt.toml is $(stat -c '%U:%G %a' /etc/asrpt/asrpt.toml), want root:asrpt 640"
for u in asrpt.service asrpt-token.service asrpt-token.timer; do
	[[ -f /lib/systemd/system/$u ]] || fail "no /lib/systemd/system/$u"
done
if command -v systemd-analyze >/dev/null; then
	v=$(systemd-analyze verify /lib/systemd/system/asrpt.service /lib/systemd/system/asrpt-token.service \
		/lib/systemd/system/asrpt-token.timer 2>&1) || fail "systemd-analyze verify: $v"
	[[ -z $v ]] || fail "systemd-analyze verify: $v"
	say "systemd-analyze verify: clean"
fi
# The example configuration is refused until it is filled in, naming why.
if check=$(/usr/bin/asrpt sidecar --config /etc/asrpt/asrpt.toml --check 2>&1); then
	fail "the example configuration passed --check before setup"
fi
grep -q "slurm.token_file" <<<"$check" || fail "--check on the fresh install does not name slurm.token_file: $check"
echo "# local change" >>/etc/asrpt/asrpt.toml
dpkg -r asrpt >/dev/null || fail "dpkg -r"
[[ ! -e /usr/bin/asrpt ]] || fail "/usr/bin/asrpt left after dpkg -r"
grep -q "# local change" /etc/asrpt/asrpt.toml || fail "the changed conffile did not survive dpkg -r"
dpkg -P asrpt >/dev/null || fail "dpkg -P"
[[ ! -e /etc/asrpt ]] || fail "/etc/asrpt left after purge"
trap - EXIT
say "installed, checked, removed and purged cleanly"
