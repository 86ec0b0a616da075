#!/usr/bin/env bash
# record-openapi.sh [VERSION…] — record the OpenAPI documents that each lab's
# own slurmrestd publishes, into slurmclient/openapi/<api>/ (the documents the
# REST adapters are generated from), with a SOURCE.md naming the Slurm release,
# the plugin options and the SHA-256 of each file.
#
# For every document a throw-away slurmrestd (JWT, port REST+1) is started in
# the lab with only the plugins of that API version loaded, /openapi/v3 is
# fetched with the operator's token, and the instance is stopped. The lab must
# be up (`lab.sh up VERSION`); default: every lab that is up.
#
#   22.05 → v0.0.38/openapi.json              (-s openapi/v0.0.38)
#           v0.0.38/openapi+dbv0.0.38.json    (-s openapi/v0.0.38,openapi/dbv0.0.38;
#                                              dbv0.0.38 alone refers to v0.0.38_meta)
#   24.11 → v0.0.42/openapi.json              (-d data_parser/v0.0.42)
#   26.05 → v0.0.44/openapi.json              (-d data_parser/v0.0.44)
set -euo pipefail
cd "$(dirname "$0")/../.."
LABSH=$PWD/test/slurmlab/lab.sh
OUT=${OPENAPI_OUT:-$PWD/slurmclient/openapi}
ENV_DIR=${SLURMLAB_ENV_DIR:-/tmp}

say() { printf '[record-openapi] %s\n' "$*" >&2; }

envval() { sed -n "s/^$2=//p" "$ENV_DIR/slurmlab-$1.env"; }

# record VERSION API FILE PLUGIN_ARGS…
record() {
	local ver=$1 api=$2 file=$3; shift 3
	local url port tok pid dst=$OUT/$api/$file tmp
	url=$(envval "$ver" SLURMLAB_URL)
	port=$((${url##*:} + 1))
	tok=$(cat "$(envval "$ver" SLURMLAB_TOKEN_FILE)")
	# exec semantics: $! is slurmrestd itself.
	bash "$LABSH" exec "$ver" env SLURM_JWT=daemon slurmrestd -u slurmrest -a rest_auth/jwt "$@" "127.0.0.1:$port" \
		</dev/null >/dev/null 2>&1 &
	pid=$!
	trap 'kill $pid 2>/dev/null || true' RETURN
	mkdir -p "$OUT/$api"
	tmp=$(mktemp "$dst.XXXXXX")
	local i ok=0
	for ((i = 0; i < 100; i++)); do
		if curl -fsS --max-time 30 -o "$tmp" -H "X-SLURM-USER-NAME: slurmrest" -H "X-SLURM-USER-TOKEN: $tok" \
			"http://127.0.0.1:$port/openapi/v3" 2>/dev/null; then ok=1; break; fi
		sleep 0.1
	done
	((ok)) || { rm -f "$tmp"; say "lab $ver: no answer from the throw-away slurmrestd on port $port"; return 1; }
	jq -e '.openapi and (.paths | length > 0)' "$tmp" >/dev/null || { rm -f "$tmp"; say "lab $ver: $file is not an OpenAPI document"; return 1; }
	chmod 644 "$tmp" && mv -f "$tmp" "$dst"
	local release
	release=$(envval "$ver" SLURMLAB_RELEASE)
	printf '| %s | Slurm %s (lab %s) | `slurmrestd %s` | %s | %s | %s |\n' "$file" "$release" "$ver" "$*" \
		"$(jq '.paths | length' "$dst")" "$(wc -c <"$dst")" "$(sha256sum "$dst" | cut -c1-16)" >>"$OUT/$api/.SOURCE.rows"
	say "lab $ver: $dst ($(wc -c <"$dst") bytes, $(jq '.paths | length' "$dst") paths)"
}

finish() { # finish API
	local d=$OUT/$1
	[[ -f $d/.SOURCE.rows ]] || return 0
	{
		echo "# OpenAPI documents for $1"
		echo
		echo "Recorded by \`test/slurmlab/record-openapi.sh\` from the slurmrestd of the project's own Slurm lab"
		echo "(\`test/slurmlab/lab.sh\`): a throw-away instance with only the plugins below loaded, \`GET /openapi/v3\`."
		echo "Do not edit: re-record instead."
		echo
		echo "| file | release | plugins | paths | bytes | sha256 (first 16) |"
		echo "|---|---|---|---|---|---|"
		sort "$d/.SOURCE.rows"
	} >"$d/SOURCE.md"
	rm -f "$d/.SOURCE.rows"
}

vers=("$@")
if ((${#vers[@]} == 0)); then
	for v in 22.05 24.11 26.05; do [[ -f $ENV_DIR/slurmlab-$v.env ]] && vers+=("$v"); done
fi
((${#vers[@]})) || { say "no lab is up; start one with: bash $LABSH up VERSION"; exit 1; }
apis=()
for v in "${vers[@]}"; do
	[[ -f $ENV_DIR/slurmlab-$v.env ]] || { say "lab $v is not up"; exit 1; }
	case $v in
	22.05)
		rm -f "$OUT/v0.0.38/.SOURCE.rows"
		record 22.05 v0.0.38 openapi.json -s openapi/v0.0.38
		record 22.05 v0.0.38 openapi+dbv0.0.38.json -s openapi/v0.0.38,openapi/dbv0.0.38
		apis+=(v0.0.38)
		;;
	24.11)
		rm -f "$OUT/v0.0.42/.SOURCE.rows"
		record 24.11 v0.0.42 openapi.json -d data_parser/v0.0.42
		apis+=(v0.0.42)
		;;
	26.05)
		rm -f "$OUT/v0.0.44/.SOURCE.rows"
		record 26.05 v0.0.44 openapi.json -d data_parser/v0.0.44
		apis+=(v0.0.44)
		;;
	*) say "unknown lab $v"; exit 1 ;;
	esac
done
for a in "${apis[@]}"; do finish "$a"; done
