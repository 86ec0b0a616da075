#!/usr/bin/env bash
# lab.sh — real Slurm clusters on one machine, for asrpt's integration tests.
#
#   lab.sh up      VERSION        install what is missing, configure, start, wait until ready
#   lab.sh down    VERSION|all    cancel jobs, stop what this script started, unmount
#   lab.sh status  VERSION|all    what runs (exit 0 only if every daemon is alive)
#   lab.sh exec    VERSION CMD…   run a Slurm client command as root against that lab
#   lab.sh as      VERSION USER CMD…  the same as USER (alice, bob, slurmrest)
#   lab.sh token   VERSION USER [LIFESPAN_S]   print a JWT for USER
#   lab.sh sched   VERSION builtin|backfill    switch SchedulerType (restarts slurmctld)
#   lab.sh prio    VERSION zero|fairshare      switch the multifactor weights (restarts slurmctld)
#   lab.sh purge   VERSION        down, then delete the lab's state (jobs, accounting DB)
#
# VERSION is 22.05 (Debian 12 packages on the host), 24.11 (a Debian 13 trixie
# chroot) or 26.05 (a Debian forky chroot). Every lab has 4 nodes (one slurmd
# each, `slurmd -N nodeN`) with 4 fake GPUs (character devices, major 195),
# munge, MariaDB, slurmdbd, slurmctld and two slurmrestd: JWT on TCP and
# rest_auth/local on a unix socket, both as the service user `slurmrest`
# (AdminLevel=Operator). Labs use disjoint ports and can run at the same time.
#
# On success `up` writes $SLURMLAB_ENV_DIR/slurmlab-VERSION.env (KEY=VALUE
# lines, read by the Go tests through package test/slurmlab) and the
# shell-quoted STATE/env.sh. Must run as root. See README.md in this directory
# for the layout, ports, timings and tunables.
set -euo pipefail
umask 022

SELF=$(readlink -f "${BASH_SOURCE[0]}")
BASE=${SLURMLAB_BASE:-/tmp/slurmlab}              # host-side state of all labs
ENV_DIR=${SLURMLAB_ENV_DIR:-/tmp}                 # where slurmlab-VERSION.env goes
if [[ -z ${SLURMLAB_CACHE:-} ]]; then             # chroot roots (kept across down)
	if mkdir -p /var/cache/asrpt-slurmlab 2>/dev/null && [[ -w /var/cache/asrpt-slurmlab ]]; then
		SLURMLAB_CACHE=/var/cache/asrpt-slurmlab
	else
		SLURMLAB_CACHE=/tmp/asrpt-slurmlab-cache
	fi
fi
MIRROR=${SLURMLAB_MIRROR:-http://deb.debian.org/debian}
SECURITY_MIRROR=${SLURMLAB_SECURITY_MIRROR:-http://deb.debian.org/debian-security}
SCHED=${SLURMLAB_SCHED:-backfill}
# Multifactor weights: zero (every weight 0, the default) or fairshare
# (PriorityWeightFairshare=10000, PriorityWeightAge=1000).
PRIO=${SLURMLAB_PRIO:-zero}
NODES=4
GPUS=4
GPU_TYPE=tesla
NODE_CPUS=16
NODE_MEM=64000
TOKEN_LIFESPAN=${SLURMLAB_TOKEN_LIFESPAN:-31536000}   # seconds: one year
PATHV=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
PKGS_SLURM=(munge mariadb-server slurmctld slurmd slurm-client slurmrestd slurmdbd
	slurm-wlm-jwt-plugin slurm-wlm-mysql-plugin slurm-wlm-basic-plugins)
# Test users: name:uid. Same UIDs on the host and in every chroot.
USERS=(slurmrest:1001 alice:1002 bob:1003)
OPERATOR=slurmrest
ACCOUNT=lab
PARTITION=gpu
# A second partition over node3 and node4 with a higher PriorityTier: Slurm
# considers its jobs first on those nodes, whatever their priority, and a job
# may be submitted to both (-p gpu,urgent).
PARTITION2=urgent

log() { printf '[slurmlab %s %s] %s\n' "${VER:-}" "$(date +%T)" "$*" >&2; }
die() { log "ERROR: $*"; exit 1; }
now() { date +%s.%N; }
elapsed() { awk -v a="$1" -v b="$(now)" 'BEGIN{printf "%.1f", b-a}'; }

# ---------------------------------------------------------------- lab table
# lab VERSION sets every per-lab variable. H_* are host paths, V_* the same
# paths as the lab's processes see them (they differ inside a chroot).
lab() {
	VER=$1
	case $VER in
	22.05)
		KIND=host SUITE=bookworm PORT0=6800 CLUSTER=lab22 NODE_PORT0=17000 MYSQL_PORT=13306
		APIS="v0.0.38" PING_API=v0.0.38
		;;
	24.11)
		KIND=chroot SUITE=trixie PORT0=7800 CLUSTER=lab24 NODE_PORT0=7830 MYSQL_PORT=13307
		APIS="v0.0.40 v0.0.41 v0.0.42" PING_API=v0.0.42
		;;
	26.05)
		KIND=chroot SUITE=forky PORT0=8800 CLUSTER=lab26 NODE_PORT0=8830 MYSQL_PORT=13308
		APIS="v0.0.42 v0.0.43 v0.0.44 v0.0.45" PING_API=v0.0.44
		;;
	*) die "unknown lab version '$VER' (want 22.05, 24.11 or 26.05)" ;;
	esac
	H_BASE=$BASE/$VER                       # host-side bookkeeping (pids, logs of this script)
	# The ports above, shifted by a multiple of 10000 when something this
	# lab did not start holds one of them: lab.sh up picks the shift
	# (choose_ports) and keeps it in port-shift until lab.sh down. The
	# labs' ranges stay disjoint whatever shifts they take.
	BASE_PORT0=$PORT0 BASE_NODE_PORT0=$NODE_PORT0 BASE_MYSQL_PORT=$MYSQL_PORT
	local pshift=0
	[[ -f $H_BASE/port-shift ]] && pshift=$(<"$H_BASE/port-shift")
	[[ $pshift =~ ^[0-4]0000$|^0$ ]] || pshift=0
	set_ports "$pshift"
	if [[ $KIND == host ]]; then
		ROOT=""
		V_LAB=$H_BASE/lab
		V_CONF=$V_LAB/etc
	else
		ROOT=$SLURMLAB_CACHE/$VER/root
		V_LAB=/lab
		V_CONF=/etc/slurm
	fi
	H_LAB=$ROOT$V_LAB H_CONF=$ROOT$V_CONF
	PIDS=$H_BASE/pids
	ENV_FILE=$ENV_DIR/slurmlab-$VER.env
	INSTANCE="slurmlab-$VER"                # marker in the environment of every daemon
}

# set_ports SHIFT: the lab's ports, its table's shifted by SHIFT.
set_ports() {
	PORT_SHIFT=$1
	PORT0=$((BASE_PORT0 + $1)) NODE_PORT0=$((BASE_NODE_PORT0 + $1)) MYSQL_PORT=$((BASE_MYSQL_PORT + $1))
	CTLD_PORT=$((PORT0 + 17)) DBD_PORT=$((PORT0 + 19)) REST_PORT=$((PORT0 + 20))
}

# lab_ports: every TCP port the lab listens on.
lab_ports() {
	local n
	echo "$MYSQL_PORT" "$DBD_PORT" "$CTLD_PORT" "$REST_PORT" $((NODE_PORT0 + 9))
	for ((n = 1; n <= NODES; n++)); do echo $((NODE_PORT0 + n)); done
}

# choose_ports: when none of the lab's daemons runs, the first shift
# (0, 10000, … 40000) under which every port of the lab is free, so that a
# port taken by anything else moves the lab instead of failing it; kept in
# port-shift for the other subcommands.
choose_ports() {
	local name s p ok=0
	for name in mariadbd slurmdbd slurmctld slurmrestd-jwt; do
		saved "$name" >/dev/null && return 0 # running: keep its ports
	done
	for s in 0 10000 20000 30000 40000; do
		set_ports "$s"
		ok=1
		for p in $(lab_ports); do port_free "$p" || { ok=0; break; }; done
		((ok)) && break
	done
	((ok)) || die "no free set of ports for the lab (its ports shifted by 0 to 40000 are all partly taken)"
	((PORT_SHIFT == 0)) || log "its default ports are taken: using them shifted by $PORT_SHIFT (REST port $REST_PORT)"
	echo "$PORT_SHIFT" >"$H_BASE/port-shift"
}

# --------------------------------------------------------------- helpers
# in CMD…: run CMD as root in the lab's view (host or chroot) with a clean env.
in_lab() {
	local envs=("PATH=$PATHV" "SLURM_CONF=$V_CONF/slurm.conf" "SLURMLAB_INSTANCE=$INSTANCE" HOME=/root LANG=C.UTF-8)
	if [[ $KIND == host ]]; then
		env -i "${envs[@]}" "$@"
	else
		chroot "$ROOT" /usr/bin/env -i "${envs[@]}" "$@"
	fi
}

# as_user USER CMD…: run CMD as USER in the lab's view.
as_user() {
	local u=$1; shift
	local uid gid
	uid=$(user_uid "$u") || die "unknown lab user $u"
	gid=$uid
	local envs=("PATH=$PATHV" "SLURM_CONF=$V_CONF/slurm.conf" "HOME=/home/$u" "USER=$u" "LOGNAME=$u" LANG=C.UTF-8)
	if [[ $KIND == host ]]; then
		exec setpriv --reuid="$uid" --regid="$gid" --init-groups env -i "${envs[@]}" "$@"
	else
		exec chroot --userspec="$uid:$gid" --groups="$gid" "$ROOT" /usr/bin/env -i "${envs[@]}" "$@"
	fi
}

user_uid() {
	local e
	for e in "${USERS[@]}"; do [[ ${e%%:*} == "$1" ]] && { echo "${e#*:}"; return 0; }; done
	return 1
}

# alive PID: the process exists and is not a zombie (PID 1 here reaps late,
# so `kill -0` would report dead daemons as alive).
alive() {
	local st
	[[ -n ${1:-} && -r /proc/$1/status ]] || return 1
	st=$(awk '/^State:/{print $2}' "/proc/$1/status" 2>/dev/null) || return 1
	[[ -n $st && $st != Z ]]
}

# saved NAME: the PID this script recorded for daemon NAME, if still alive and
# still the same program (checked through /proc/PID/comm against the record).
saved() {
	local f=$PIDS/$1 pid comm
	[[ -f $f ]] || return 1
	read -r pid comm <"$f" || return 1
	alive "$pid" || return 1
	[[ $(cat "/proc/$pid/comm" 2>/dev/null) == "$comm" ]] || return 1
	echo "$pid"
}

record() { # record NAME PID
	local comm
	comm=$(cat "/proc/$2/comm" 2>/dev/null) || die "$1 (pid $2) exited at once; see $H_LAB/log"
	echo "$2 $comm" >"$PIDS/$1"
}

# wait_pidfile NAME FILE COMM: wait for a self-daemonizing program to write
# FILE with a live PID whose comm is COMM, then record it.
wait_pidfile() {
	local name=$1 file=$2 comm=$3 i pid
	for ((i = 0; i < 200; i++)); do
		if [[ -s $file ]]; then
			pid=$(tr -dc 0-9 <"$file")
			if alive "$pid" && [[ $(cat "/proc/$pid/comm" 2>/dev/null) == "$comm" ]]; then
				echo "$pid $comm" >"$PIDS/$name"
				return 0
			fi
		fi
		sleep 0.05
	done
	die "$name did not start (no live pid in $file); see $H_LAB/log"
}

# wait_for DESC TIMEOUT_S CMD…: retry CMD until it succeeds.
wait_for() {
	local desc=$1 t=$2; shift 2
	local end=$(($(date +%s) + t))
	until "$@" >/dev/null 2>&1; do
		(($(date +%s) < end)) || { log "timeout after ${t}s waiting for $desc"; return 1; }
		sleep 0.1
	done
}

port_free() { ! (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

# ----------------------------------------------------------- installation
APT_ENV=(DEBIAN_FRONTEND=noninteractive APT_LISTCHANGES_FRONTEND=none)

# host_install PKG…: install the missing host packages (apt-get update at most
# once per boot of the lab base dir), with services kept from starting.
host_install() {
	local missing=() p
	for p in "$@"; do
		dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q '^install ok installed' || missing+=("$p")
	done
	((${#missing[@]})) || return 0
	local t0; t0=$(now)
	mkdir -p "$BASE"
	(
		flock 9
		local tmp_policy=0
		if [[ ! -e /usr/sbin/policy-rc.d ]]; then
			printf '#!/bin/sh\nexit 101\n' >/usr/sbin/policy-rc.d && chmod 755 /usr/sbin/policy-rc.d
			# shellcheck disable=SC2034 # read by the EXIT trap
			tmp_policy=1
		fi
		trap '((tmp_policy)) && rm -f /usr/sbin/policy-rc.d' EXIT
		if [[ ! -e $BASE/.host-apt-updated ]]; then
			env "${APT_ENV[@]}" apt-get update -qq && touch "$BASE/.host-apt-updated"
		fi
		# One retry after repairing an interrupted dpkg and refreshing the lists.
		env "${APT_ENV[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" >"$BASE/host-apt.log" 2>&1 ||
			{ env "${APT_ENV[@]}" dpkg --configure -a && env "${APT_ENV[@]}" apt-get update -qq &&
				env "${APT_ENV[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}"; } >>"$BASE/host-apt.log" 2>&1 ||
			{ tail -30 "$BASE/host-apt.log" >&2; exit 1; }
	) 9>"$BASE/.host-apt.lock" || die "host apt-get install ${missing[*]} failed"
	log "host: installed ${missing[*]} in $(elapsed "$t0") s"
}

mount_chroot() {
	local m
	for m in proc sys dev; do
		mountpoint -q "$ROOT/$m" && continue
		mkdir -p "$ROOT/$m"
		case $m in
		proc) mount -t proc proc "$ROOT/proc" ;;
		*) mount --bind "/$m" "$ROOT/$m" ;;
		esac
	done
}

# umount_chroot: unmount everything mounted under the chroot (ours, or left by
# an interrupted debootstrap), deepest first.
umount_chroot() {
	[[ -n $ROOT ]] || return 0
	local m
	awk -v r="$ROOT/" 'index($2, r) == 1 {print $2}' /proc/mounts | sort -r | while read -r m; do
		umount "$m" 2>/dev/null || umount -l "$m"
	done
}

# build_root: debootstrap the chroot and install Slurm in it, once. The
# finished root is marked with .slurmlab-ready and reused afterwards.
build_root() {
	[[ -e $ROOT/.slurmlab-ready ]] && return 0
	local t0 t1 script=() extra=()
	t0=$(now)
	host_install debootstrap
	if [[ ! -e $ROOT/.slurmlab-bootstrapped ]]; then
		umount_chroot
		rm -rf --one-file-system "$ROOT" && mkdir -p "$ROOT"
		# Bookworm's debootstrap has no script for forky; sid's works for it.
		[[ -e /usr/share/debootstrap/scripts/$SUITE ]] || script=(/usr/share/debootstrap/scripts/sid)
		log "debootstrap --variant=minbase $SUITE (once; cached in $ROOT)"
		debootstrap --variant=minbase "$SUITE" "$ROOT" "$MIRROR" "${script[@]}" >"$H_BASE/debootstrap.log" 2>&1 ||
			{ tail -20 "$H_BASE/debootstrap.log" >&2; die "debootstrap $SUITE failed (log: $H_BASE/debootstrap.log)"; }
		touch "$ROOT/.slurmlab-bootstrapped"
		log "debootstrap done in $(elapsed "$t0") s"
	fi
	t1=$(now)
	cat >"$ROOT/etc/apt/sources.list" <<-EOF
		deb $MIRROR $SUITE main
		deb $MIRROR $SUITE-updates main
		deb $SECURITY_MIRROR $SUITE-security main
	EOF
	# The chroot is ours: services never start from package scripts in it.
	printf '#!/bin/sh\nexit 101\n' >"$ROOT/usr/sbin/policy-rc.d" && chmod 755 "$ROOT/usr/sbin/policy-rc.d"
	# forky's mirror may serve Release files past their Valid-Until date.
	echo 'Acquire::Check-Valid-Until "false";' >"$ROOT/etc/apt/apt.conf.d/99slurmlab-no-valid-until"
	cp -L /etc/resolv.conf "$ROOT/etc/resolv.conf" 2>/dev/null || true
	# slurm-wlm-basic-plugins wants systemd | systemd-standalone-sysusers in
	# forky; name the small one so that apt does not pick systemd.
	[[ $SUITE == forky ]] && extra=(systemd-standalone-sysusers)
	mount_chroot
	local capt=(chroot "$ROOT" /usr/bin/env -i "PATH=$PATHV" "${APT_ENV[@]}")
	local pkgs=("${PKGS_SLURM[@]}" "${extra[@]}" curl jq procps util-linux)
	# One retry after repairing a dpkg run that an interrupted up left behind.
	{ "${capt[@]}" apt-get update -qq && "${capt[@]}" apt-get install -y -qq --no-install-recommends "${pkgs[@]}"; } \
		>"$H_BASE/chroot-apt.log" 2>&1 ||
		{ "${capt[@]}" dpkg --configure -a && "${capt[@]}" apt-get install -y -qq --no-install-recommends "${pkgs[@]}"; } \
			>>"$H_BASE/chroot-apt.log" 2>&1 ||
		{ tail -30 "$H_BASE/chroot-apt.log" >&2; die "apt-get install in the $SUITE chroot failed (log: $H_BASE/chroot-apt.log)"; }
	chroot "$ROOT" apt-get clean
	touch "$ROOT/.slurmlab-ready"
	log "chroot packages installed in $(elapsed "$t1") s"
}

# ensure_users: service and test users with fixed UIDs, in the lab's view.
ensure_users() {
	local e u id pre=()
	[[ $KIND == chroot ]] && pre=(chroot "$ROOT")
	for e in "${USERS[@]}"; do
		u=${e%%:*} id=${e#*:}
		if "${pre[@]}" getent passwd "$u" >/dev/null; then
			[[ $("${pre[@]}" id -u "$u") == "$id" ]] || die "user $u exists with a uid other than $id"
			continue
		fi
		"${pre[@]}" getent passwd "$id" >/dev/null && die "uid $id is taken; user $u needs it"
		"${pre[@]}" getent group "$id" >/dev/null || "${pre[@]}" groupadd -g "$id" "$u"
		"${pre[@]}" useradd -u "$id" -g "$id" -m -s /bin/bash "$u"
	done
}

# ------------------------------------------------------------- configuration
# write_if_changed FILE: stdin to FILE; returns 0 if the content changed.
write_if_changed() {
	local f=$1 tmp
	tmp=$(mktemp "$f.XXXXXX") && chmod 644 "$tmp"
	cat >"$tmp"
	if [[ -f $f ]] && cmp -s "$tmp" "$f"; then rm -f "$tmp"; chmod 644 "$f"; return 1; fi
	mv -f "$tmp" "$f"
	return 0
}

CONF_CHANGED=0
write_configs() {
	local host; host=$(hostname -s)
	mkdir -p "$H_CONF" "$H_LAB"/{run,log,spool/ctld,mysql,dev,tmp}
	chmod 1777 "$H_LAB/run" "$H_LAB/tmp"
	in_lab chown slurm: "$V_LAB/log" "$V_LAB/spool/ctld"
	chmod 755 "$H_LAB" "$H_LAB/spool"
	local g
	for ((g = 0; g < GPUS; g++)); do
		[[ -c $H_LAB/dev/nvidia$g ]] || { rm -f "$H_LAB/dev/nvidia$g"; mknod -m 666 "$H_LAB/dev/nvidia$g" c 195 "$g"; }
	done
	if [[ ! -s $H_CONF/jwt_hs256.key ]]; then
		head -c 32 /dev/urandom >"$H_CONF/jwt_hs256.key"
	fi
	in_lab chown slurm: "$V_CONF/jwt_hs256.key"
	chmod 600 "$H_CONF/jwt_hs256.key"

	# 22.05 has task/none and no cgroup.conf; newer releases have no task/none
	# (an empty TaskPlugin= is fatal), and need cgroups disabled explicitly.
	local task="TaskPlugin=task/none"
	[[ $KIND == chroot ]] && task="# TaskPlugin unset: no task plugin (24.11+ has no task/none)"
	[[ $SCHED == builtin || $SCHED == backfill ]] || die "SLURMLAB_SCHED must be builtin or backfill, not '$SCHED'"
	local wfs="# PriorityWeight*: all 0 (lab.sh prio VERSION fairshare sets some)" wage=""
	case $PRIO in
	zero) ;;
	fairshare) wfs="PriorityWeightFairshare=10000" wage="PriorityWeightAge=1000" ;;
	*) die "SLURMLAB_PRIO must be zero or fairshare, not '$PRIO'" ;;
	esac
	if write_if_changed "$H_CONF/slurm.conf" <<-EOF; then CONF_CHANGED=1; fi
		# Written by test/slurmlab/lab.sh for lab $VER. Do not edit.
		ClusterName=$CLUSTER
		SlurmctldHost=$host(127.0.0.1)
		SlurmUser=slurm
		SlurmctldPort=$CTLD_PORT
		SlurmdPort=$((NODE_PORT0 + 9))
		AuthType=auth/munge
		CredType=cred/munge
		AuthAltTypes=auth/jwt
		AuthAltParameters=jwt_key=$V_CONF/jwt_hs256.key
		StateSaveLocation=$V_LAB/spool/ctld
		SlurmdSpoolDir=$V_LAB/spool/slurmd-%n
		SlurmctldPidFile=$V_LAB/run/slurmctld.pid
		SlurmdPidFile=$V_LAB/run/slurmd-%n.pid
		SlurmctldLogFile=$V_LAB/log/slurmctld.log
		SlurmdLogFile=$V_LAB/log/slurmd-%n.log
		ProctrackType=proctrack/linuxproc
		$task
		MpiDefault=none
		SelectType=select/cons_tres
		SelectTypeParameters=CR_Core_Memory
		DefMemPerCPU=1000
		GresTypes=gpu
		SchedulerType=sched/$SCHED
		SchedulerParameters=sched_interval=5,bf_interval=5
		PriorityType=priority/multifactor
		$wfs
		$wage
		AccountingStorageType=accounting_storage/slurmdbd
		AccountingStorageHost=127.0.0.1
		AccountingStoragePort=$DBD_PORT
		AccountingStorageTRES=gres/gpu
		AccountingStoreFlags=job_comment
		JobAcctGatherType=jobacct_gather/linux
		MailProg=/bin/true
		SlurmdParameters=config_overrides
		ReturnToService=2
		# "lab.sh sched" changes SchedulerType under running slurmd on purpose.
		DebugFlags=NO_CONF_HASH
		NodeName=node[1-$NODES] NodeHostname=$host NodeAddr=127.0.0.1 Port=[$((NODE_PORT0 + 1))-$((NODE_PORT0 + NODES))] CPUs=$NODE_CPUS RealMemory=$NODE_MEM Gres=gpu:$GPU_TYPE:$GPUS State=UNKNOWN
		PartitionName=$PARTITION Nodes=ALL Default=YES MaxTime=INFINITE State=UP PriorityTier=1
		PartitionName=$PARTITION2 Nodes=node[3-$NODES] Default=NO MaxTime=INFINITE State=UP PriorityTier=2
	EOF
	if write_if_changed "$H_CONF/gres.conf" <<-EOF; then CONF_CHANGED=1; fi
		AutoDetect=off
		NodeName=node[1-$NODES] Name=gpu Type=$GPU_TYPE File=$V_LAB/dev/nvidia[0-$((GPUS - 1))]
	EOF
	if [[ $KIND == chroot ]]; then
		if write_if_changed "$H_CONF/cgroup.conf" <<<"CgroupPlugin=disabled"; then CONF_CHANGED=1; fi
	fi
	write_if_changed "$H_CONF/slurmdbd.conf" <<-EOF || true
		AuthType=auth/munge
		AuthAltTypes=auth/jwt
		AuthAltParameters=jwt_key=$V_CONF/jwt_hs256.key
		DbdAddr=127.0.0.1
		DbdHost=localhost
		DbdPort=$DBD_PORT
		SlurmUser=slurm
		LogFile=$V_LAB/log/slurmdbd.log
		PidFile=$V_LAB/run/slurmdbd.pid
		StorageType=accounting_storage/mysql
		StorageHost=127.0.0.1
		StoragePort=$MYSQL_PORT
		StorageUser=slurm
		StoragePass=slurmlab
		StorageLoc=slurm_acct_db
	EOF
	in_lab chown slurm: "$V_CONF/slurmdbd.conf"
	chmod 600 "$H_CONF/slurmdbd.conf"
	# innodb_snapshot_isolation: MariaDB 11.8 defaults to ON, which slurmdbd
	# does not support; "loose-" lets 10.11 (22.05's) ignore the option.
	write_if_changed "$H_LAB/my.cnf" <<-EOF || true
		[mysqld]
		user=mysql
		datadir=$V_LAB/mysql
		socket=$V_LAB/run/mysqld.sock
		pid-file=$V_LAB/run/mysqld.pid
		bind-address=127.0.0.1
		port=$MYSQL_PORT
		skip-name-resolve
		innodb_buffer_pool_size=512M
		innodb_log_file_size=64M
		innodb_lock_wait_timeout=900
		loose-innodb_snapshot_isolation=OFF
	EOF
}

# -------------------------------------------------------------- daemons
mysql_q() { in_lab mariadb --no-defaults --socket="$V_LAB/run/mysqld.sock" -uroot -e "$1"; }

start_munge() {
	if [[ $KIND == host ]]; then
		# The host's munged is shared: reuse one that works, else start ours.
		if munge -n 2>/dev/null | unmunge >/dev/null 2>&1; then return 0; fi
		mkdir -p /run/munge && chown munge: /run/munge
		[[ -s /etc/munge/munge.key ]] || die "/etc/munge/munge.key is missing"
		rm -f /run/munge/munged.pid
		env -i PATH=$PATHV SLURMLAB_INSTANCE=$INSTANCE runuser -u munge -- /usr/sbin/munged
		wait_pidfile munged /run/munge/munged.pid munged
		wait_for "munged" 10 sh -c 'munge -n | unmunge'
	else
		saved munged >/dev/null && return 0
		mkdir -p "$ROOT/run/munge"
		in_lab chown munge: /run/munge
		if [[ ! -s $ROOT/etc/munge/munge.key ]]; then
			head -c 1024 /dev/urandom >"$ROOT/etc/munge/munge.key"
			in_lab chown munge: /etc/munge/munge.key
			chmod 400 "$ROOT/etc/munge/munge.key"
		fi
		rm -f "$ROOT/run/munge/munged.pid"
		in_lab runuser -u munge -- /usr/sbin/munged
		wait_pidfile munged "$ROOT/run/munge/munged.pid" munged
		wait_for "munged" 10 in_lab sh -c 'munge -n | unmunge'
	fi
}

start_mariadb() {
	saved mariadbd >/dev/null && return 0
	if [[ ! -d $H_LAB/mysql/mysql ]]; then
		rm -rf "$H_LAB/mysql" && mkdir -p "$H_LAB/mysql"
		in_lab chown mysql: "$V_LAB/mysql"
		in_lab mariadb-install-db --no-defaults --user=mysql --datadir="$V_LAB/mysql" \
			--auth-root-authentication-method=socket --skip-test-db >"$H_LAB/log/mariadb-install.log" 2>&1 ||
			{ cat "$H_LAB/log/mariadb-install.log" >&2; rm -rf "$H_LAB/mysql"; die "mariadb-install-db failed"; }
	fi
	port_free "$MYSQL_PORT" || die "port $MYSQL_PORT (MariaDB) is taken by a process this lab did not start"
	rm -f "$H_LAB/run/mysqld.pid"
	setsid bash "$SELF" _in "$VER" mariadbd --defaults-file="$V_LAB/my.cnf" </dev/null >>"$H_LAB/log/mariadb.log" 2>&1 &
	wait_pidfile mariadbd "$H_LAB/run/mysqld.pid" mariadbd
	wait_for "MariaDB" 60 mysql_q "SELECT 1" || die "MariaDB did not answer; see $H_LAB/log/mariadb.log"
	# Idempotent. Pre-create the database: with libmariadb 11.8 slurmdbd dies
	# on its very first start otherwise (_check_mysql_concat_is_sane).
	mysql_q "CREATE USER IF NOT EXISTS 'slurm'@'127.0.0.1' IDENTIFIED BY 'slurmlab';
		CREATE DATABASE IF NOT EXISTS slurm_acct_db;
		GRANT ALL ON slurm_acct_db.* TO 'slurm'@'127.0.0.1'; FLUSH PRIVILEGES;" ||
		die "creating the slurm database user failed"
}

start_slurmdbd() {
	if ! saved slurmdbd >/dev/null; then
		port_free "$DBD_PORT" || die "port $DBD_PORT (slurmdbd) is taken by a process this lab did not start"
		rm -f "$H_LAB/run/slurmdbd.pid"
		in_lab slurmdbd
		wait_pidfile slurmdbd "$H_LAB/run/slurmdbd.pid" slurmdbd
	fi
	wait_for "slurmdbd" 120 in_lab sacctmgr -n show cluster || die "slurmdbd did not answer; see $H_LAB/log/slurmdbd.log"
}

register_accounts() {
	local users=() e
	for e in "${USERS[@]}"; do users+=("${e%%:*}"); done
	[[ -n $(in_lab sacctmgr -n -P show cluster "$CLUSTER" format=cluster) ]] || in_lab sacctmgr -i -Q add cluster "$CLUSTER" >/dev/null
	[[ -n $(in_lab sacctmgr -n -P show account "$ACCOUNT" format=account) ]] || in_lab sacctmgr -i -Q add account "$ACCOUNT" cluster="$CLUSTER" >/dev/null
	local have; have=$(in_lab sacctmgr -n -P show assoc cluster="$CLUSTER" account="$ACCOUNT" format=user)
	local u missing=()
	for u in "${users[@]}"; do grep -qx "$u" <<<"$have" || missing+=("$u"); done
	if ((${#missing[@]})); then
		in_lab sacctmgr -i -Q add user "$(IFS=,; echo "${missing[*]}")" account="$ACCOUNT" cluster="$CLUSTER" >/dev/null
	fi
	[[ $(in_lab sacctmgr -n -P show user "$OPERATOR" format=adminlevel) == Operator ]] ||
		in_lab sacctmgr -i -Q modify user "$OPERATOR" set adminlevel=Operator >/dev/null
}

start_slurmctld() {
	if saved slurmctld >/dev/null && ((CONF_CHANGED)); then
		log "configuration changed: restarting slurmctld"
		stop_one slurmctld
	fi
	if ! saved slurmctld >/dev/null; then
		port_free "$CTLD_PORT" || die "port $CTLD_PORT (slurmctld) is taken by a process this lab did not start"
		rm -f "$H_LAB/run/slurmctld.pid"
		in_lab slurmctld
		wait_pidfile slurmctld "$H_LAB/run/slurmctld.pid" slurmctld
	fi
	wait_for "slurmctld" 60 sh -c "bash '$SELF' _in '$VER' scontrol ping | grep -q UP" ||
		die "slurmctld did not answer; see $H_LAB/log/slurmctld.log"
}

start_slurmds() {
	local n
	for ((n = 1; n <= NODES; n++)); do
		if ((CONF_CHANGED)) && saved "slurmd-node$n" >/dev/null; then stop_one "slurmd-node$n"; fi
		saved "slurmd-node$n" >/dev/null && continue
		port_free $((NODE_PORT0 + n)) || die "port $((NODE_PORT0 + n)) (slurmd node$n) is taken"
		rm -f "$H_LAB/run/slurmd-node$n.pid"
		in_lab slurmd -N "node$n"
	done
	for ((n = 1; n <= NODES; n++)); do
		[[ -s $PIDS/slurmd-node$n ]] && saved "slurmd-node$n" >/dev/null && continue
		wait_pidfile "slurmd-node$n" "$H_LAB/run/slurmd-node$n.pid" slurmd
	done
}

nodes_ready() {
	local states
	states=$(in_lab sinfo -h -N -p "$PARTITION" -o '%N %t' 2>/dev/null | sort -u)
	[[ $(wc -l <<<"$states") -eq $NODES ]] || return 1
	# plnd (24.11+): idle, but planned by backfill for a pending job.
	! grep -Evq ' (idle|mix|alloc|comp|plnd)$' <<<"$states"
}

wait_nodes() {
	wait_for "nodes to register" 30 nodes_ready && return 0
	# A node left drained or down by an earlier test: resume it once.
	in_lab scontrol update nodename="node[1-$NODES]" state=resume >/dev/null 2>&1 || true
	wait_for "nodes to become idle" 60 nodes_ready ||
		{ in_lab sinfo -N >&2 || true; die "nodes are not ready; see $H_LAB/log/slurmd-*.log"; }
}

token_for() { # token_for USER LIFESPAN_S
	local out
	out=$(in_lab scontrol token username="$1" lifespan="$2") || return 1
	out=${out#SLURM_JWT=}
	[[ -n $out ]] || return 1
	printf '%s\n' "$out"
}

# start_rest NAME AUTH LISTEN: one slurmrestd as user slurmrest. The JWT
# instance needs SLURM_JWT=daemon, which breaks rest_auth/local, hence two.
start_rest() {
	local name=$1 auth=$2 listen=$3 jwtenv=()
	saved "$name" >/dev/null && return 0
	[[ $auth == rest_auth/jwt ]] && jwtenv=(SLURM_JWT=daemon)
	if [[ $listen == unix:* ]]; then
		rm -f "$ROOT${listen#unix:}"
	else
		port_free "${listen##*:}" || die "port ${listen##*:} (slurmrestd) is taken by a process this lab did not start"
	fi
	local argv=(env "${jwtenv[@]}" slurmrestd -u "$OPERATOR" -a "$auth" "$listen")
	local logf=$H_LAB/log/$name.log
	if [[ $KIND == host ]]; then
		# 22.05's slurmrestd logs only to a TTY (else to syslog): give it one.
		setsid script -qfec "exec bash '$SELF' _in '$VER' $(printf '%q ' "${argv[@]}")" "$logf" </dev/null >/dev/null 2>&1 &
	else
		setsid bash "$SELF" _in "$VER" "${argv[@]}" </dev/null >>"$logf" 2>&1 &
	fi
	local launcher=$! i pid=""
	for ((i = 0; i < 100; i++)); do
		# chroot: the launcher execs into slurmrestd; host: it is script's child.
		if [[ $(cat "/proc/$launcher/comm" 2>/dev/null) == slurmrestd ]]; then pid=$launcher
		else pid=$(pgrep -x slurmrestd -P "$launcher" 2>/dev/null | head -1) || true; fi
		[[ -n $pid ]] && alive "$pid" && break
		pid=""
		sleep 0.05
	done
	[[ -n $pid ]] || die "$name did not start; see $logf"
	record "$name" "$pid"
}

curl_jwt() { # curl_jwt PATH
	curl -fsS --max-time 10 -H "X-SLURM-USER-NAME: $OPERATOR" -H "X-SLURM-USER-TOKEN: $(cat "$H_BASE/token-$OPERATOR")" \
		"http://127.0.0.1:$REST_PORT$1"
}
curl_sock() {
	curl -fsS --max-time 10 --unix-socket "$H_LAB/run/slurmrestd.sock" "http://localhost$1"
}
ping_ok() { "$@" "/slurm/$PING_API/ping" | jq -e '(.errors // []) == [] and (.pings | length) > 0' >/dev/null; }

write_env() {
	local release
	release=$(in_lab sinfo -V | awk '{print $2}')
	local kv=(
		"SLURMLAB_VERSION=$VER"
		"SLURMLAB_RELEASE=$release"
		"SLURMLAB_URL=http://127.0.0.1:$REST_PORT"
		"SLURMLAB_SOCKET=$H_LAB/run/slurmrestd.sock"
		"SLURMLAB_JWT_KEY=$H_CONF/jwt_hs256.key"
		"SLURMLAB_TOKEN_FILE=$H_BASE/token-$OPERATOR"
		"SLURMLAB_TOKEN_USER=$OPERATOR"
		"SLURMLAB_API_VERSIONS=$APIS"
		"SLURMLAB_CLUSTER=$CLUSTER"
		"SLURMLAB_CONF_DIR=$H_CONF"
		"SLURMLAB_ROOT=$ROOT"
		"SLURMLAB_LOG_DIR=$H_LAB/log"
		"SLURMLAB_PARTITION=$PARTITION"
		"SLURMLAB_PARTITION2=$PARTITION2"
		"SLURMLAB_ACCOUNT=$ACCOUNT"
		"SLURMLAB_USERS=alice bob $OPERATOR"
		"SLURMLAB_OPERATOR=$OPERATOR"
		"SLURMLAB_NODES=$NODES"
		"SLURMLAB_GPUS_PER_NODE=$GPUS"
		"SLURMLAB_GPU_TYPE=$GPU_TYPE"
		"SLURMLAB_SCHED=$SCHED"
		"SLURMLAB_PRIO=$PRIO"
		"SLURMLAB_EXEC=bash $SELF exec $VER"
		"SLURMLAB_AS=bash $SELF as $VER"
		"SLURMLAB_SCHED_CMD=bash $SELF sched $VER"
		"SLURMLAB_PRIO_CMD=bash $SELF prio $VER"
		"SLURMLAB_TOKEN_CMD=bash $SELF token $VER"
	)
	mkdir -p "$ENV_DIR"
	{
		echo "# Slurm lab $VER, written by test/slurmlab/lab.sh up; KEY=VALUE, the value is the rest of the line."
		printf '%s\n' "${kv[@]}"
	} >"$ENV_FILE.tmp" && mv -f "$ENV_FILE.tmp" "$ENV_FILE"
	{
		echo "# source me: Slurm lab $VER (does not export SLURM_JWT on purpose: it breaks other labs' clients)"
		local e
		for e in "${kv[@]}"; do printf 'export %s=%q\n' "${e%%=*}" "${e#*=}"; done
	} >"$H_BASE/env.sh"
}

# ----------------------------------------------------------------- stop
# stop_one NAME: TERM the recorded PID, wait, then KILL.
stop_one() {
	local pid i t0
	pid=$(saved "$1") || { rm -f "$PIDS/$1"; return 0; }
	t0=$(now)
	kill -TERM "$pid" 2>/dev/null || true
	for ((i = 0; i < 200; i++)); do alive "$pid" || break; sleep 0.05; done
	[[ ${SLURMLAB_DEBUG:-0} == 1 ]] && log "stopped $1 in $(elapsed "$t0") s"
	if alive "$pid"; then
		log "$1 (pid $pid) ignored SIGTERM for 10 s: SIGKILL"
		kill -KILL "$pid" 2>/dev/null || true
		for ((i = 0; i < 40; i++)); do alive "$pid" || break; sleep 0.05; done
	fi
	rm -f "$PIDS/$1"
}

# leftovers: processes started by this lab's daemons (slurmstepd, jobs):
# those carrying our marker in their environment, or living in our chroot.
leftovers() {
	{
		grep -lzx "SLURMLAB_INSTANCE=$INSTANCE" /proc/[0-9]*/environ 2>/dev/null | cut -d/ -f3
		[[ -n $ROOT ]] && find /proc -mindepth 2 -maxdepth 2 -name root -lname "$ROOT" 2>/dev/null | cut -d/ -f3
	} | sort -un | while read -r p; do
		[[ $p == "$$" ]] || ! alive "$p" || echo "$p"
	done
	return 0
}

do_down() {
	local t0; t0=$(now)
	mkdir -p "$PIDS"
	if [[ ${SLURMLAB_KEEP_JOBS:-0} != 1 ]] && saved slurmctld >/dev/null; then
		local jobs
		jobs=$(in_lab squeue -h -o %i 2>/dev/null || true)
		if [[ -n $jobs ]]; then
			# shellcheck disable=SC2086
			in_lab scancel $jobs 2>/dev/null || true
			wait_for "jobs to end" 15 sh -c "[ -z \"\$(bash '$SELF' _in '$VER' squeue -h -t R,CG -o %i)\" ]" || true
		fi
	fi
	local n name
	for name in slurmrestd-jwt slurmrestd-local; do stop_one "$name"; done
	for ((n = 1; n <= NODES; n++)); do stop_one "slurmd-node$n"; done
	stop_one slurmctld
	stop_one slurmdbd
	stop_one mariadbd
	stop_one munged
	local p left
	left=$(leftovers)
	if [[ -n $left ]]; then
		log "stopping leftover processes: $(echo $left)"
		for p in $left; do kill -TERM "$p" 2>/dev/null || true; done
		sleep 0.5
		for p in $(leftovers); do kill -KILL "$p" 2>/dev/null || true; done
	fi
	umount_chroot
	rm -f "$ENV_FILE" "$H_BASE/port-shift"
	log "down in $(elapsed "$t0") s"
}

# ------------------------------------------------------------------ up
do_up() {
	[[ $(id -u) == 0 ]] || die "lab.sh up must run as root"
	local t0 t; t0=$(now)
	mkdir -p "$H_BASE" "$PIDS"
	chmod 755 "$BASE" "$H_BASE"
	if [[ $KIND == host ]]; then
		host_install "${PKGS_SLURM[@]}" curl jq util-linux procps
	else
		host_install curl jq
		build_root
		mount_chroot
		# minbase has no /etc/hosts; MariaDB and munged look the host name up.
		grep -qw "$(hostname -s)" "$ROOT/etc/hosts" 2>/dev/null ||
			printf '127.0.0.1\tlocalhost %s\n' "$(hostname -s)" >>"$ROOT/etc/hosts"
	fi
	ensure_users
	choose_ports
	write_configs
	t=$(now)
	start_munge
	start_mariadb
	start_slurmdbd
	register_accounts
	start_slurmctld
	start_slurmds
	wait_nodes
	start_rest slurmrestd-jwt rest_auth/jwt "127.0.0.1:$REST_PORT"
	start_rest slurmrestd-local rest_auth/local "unix:$V_LAB/run/slurmrestd.sock"
	(umask 077; token_for "$OPERATOR" "$TOKEN_LIFESPAN" >"$H_BASE/token-$OPERATOR.tmp") ||
		die "scontrol token failed"
	mv -f "$H_BASE/token-$OPERATOR.tmp" "$H_BASE/token-$OPERATOR"
	wait_for "slurmrestd (JWT, port $REST_PORT)" 30 ping_ok curl_jwt || die "slurmrestd JWT ping failed; see $H_LAB/log/slurmrestd-jwt.log"
	wait_for "slurmrestd (unix socket)" 30 ping_ok curl_sock || die "slurmrestd socket ping failed; see $H_LAB/log/slurmrestd-local.log"
	write_env
	log "up in $(elapsed "$t0") s (daemons $(elapsed "$t") s): REST http://127.0.0.1:$REST_PORT, env $ENV_FILE"
}

do_status() {
	local name pid rc=0 n rss pss trss=0 tpss=0 names=(munged mariadbd slurmdbd slurmctld)
	for ((n = 1; n <= NODES; n++)); do names+=("slurmd-node$n"); done
	names+=(slurmrestd-jwt slurmrestd-local)
	printf '%-18s %-8s %8s %8s\n' daemon pid RSS_KiB PSS_KiB
	for name in "${names[@]}"; do
		if pid=$(saved "$name"); then
			read -r rss pss < <(awk '/^Rss:/{r=$2} /^Pss:/{p=$2} END{print r+0, p+0}' "/proc/$pid/smaps_rollup" 2>/dev/null || echo "0 0")
			trss=$((trss + rss)) tpss=$((tpss + pss))
			printf '%-18s %-8s %8s %8s\n' "$name" "$pid" "$rss" "$pss"
		elif [[ $name == munged && $KIND == host ]]; then
			printf '%-18s %s\n' "$name" "(the host's own, not started by this lab)"
		else
			printf '%-18s %s\n' "$name" "stopped"; rc=1
		fi
	done
	printf '%-18s %-8s %8s %8s\n' total "" "$trss" "$tpss"
	[[ -f $ENV_FILE ]] && echo "env file: $ENV_FILE"
	return $rc
}

# ------------------------------------------------------------------ main
ALL=(22.05 24.11 26.05)
cmd=${1:-}
[[ -n $cmd ]] || { sed -n '2,19p' "$SELF" | sed 's/^# \{0,1\}//'; exit 2; }
shift
case $cmd in
exec | _in)
	# The command replaces this script (same PID), so signals reach it.
	lab "${1:?usage: lab.sh exec VERSION CMD…}"; shift
	[[ $KIND == host ]] && exec env -i PATH=$PATHV SLURM_CONF=$V_CONF/slurm.conf SLURMLAB_INSTANCE=$INSTANCE HOME=/root LANG=C.UTF-8 "$@"
	exec chroot "$ROOT" /usr/bin/env -i PATH=$PATHV SLURM_CONF=$V_CONF/slurm.conf SLURMLAB_INSTANCE=$INSTANCE HOME=/root LANG=C.UTF-8 "$@"
	;;
up) lab "${1:?usage: lab.sh up VERSION}"; do_up ;;
down | status)
	v=${1:?usage: lab.sh $cmd VERSION|all}
	vs=("$v"); [[ $v == all ]] && vs=("${ALL[@]}")
	rc=0
	for v in "${vs[@]}"; do
		lab "$v"
		if [[ $cmd == down ]]; then do_down
		else echo "== lab $v"; do_status || rc=1; fi
	done
	exit $rc
	;;
as) lab "${1:?usage: lab.sh as VERSION USER CMD…}"; u=${2:?user}; shift 2; as_user "$u" "$@" ;;
token) lab "${1:?usage: lab.sh token VERSION USER [LIFESPAN_S]}"; token_for "${2:?user}" "${3:-1800}" ;;
sched)
	lab "${1:?usage: lab.sh sched VERSION builtin|backfill}"
	SCHED=${2:?builtin or backfill}
	saved slurmctld >/dev/null || die "lab $VER is not up"
	# Keep the weights the lab runs with.
	PRIO=$(sed -n 's/^SLURMLAB_PRIO=//p' "$ENV_FILE" 2>/dev/null || true); PRIO=${PRIO:-zero}
	write_configs
	start_slurmctld
	wait_nodes
	sed -i "s/^SLURMLAB_SCHED=.*/SLURMLAB_SCHED=$SCHED/" "$ENV_FILE" 2>/dev/null || true
	log "SchedulerType=sched/$SCHED"
	;;
prio)
	lab "${1:?usage: lab.sh prio VERSION zero|fairshare}"
	PRIO=${2:?zero or fairshare}
	[[ $PRIO == zero || $PRIO == fairshare ]] || die "prio: want zero or fairshare, not '$PRIO'"
	saved slurmctld >/dev/null || die "lab $VER is not up"
	# Keep the scheduler the lab runs with.
	SCHED=$(sed -n 's/^SLURMLAB_SCHED=//p' "$ENV_FILE" 2>/dev/null || true); SCHED=${SCHED:-backfill}
	write_configs
	start_slurmctld
	wait_nodes
	if grep -q '^SLURMLAB_PRIO=' "$ENV_FILE" 2>/dev/null; then
		sed -i "s/^SLURMLAB_PRIO=.*/SLURMLAB_PRIO=$PRIO/" "$ENV_FILE"
	fi
	log "multifactor weights: $PRIO"
	;;
purge)
	lab "${1:?usage: lab.sh purge VERSION}"
	do_down
	rm -rf --one-file-system "$H_LAB" "$H_BASE"
	[[ $KIND == host ]] && rm -rf "$H_CONF"
	log "state of lab $VER removed (the chroot root stays cached in ${ROOT:-/})"
	;;
*) die "unknown command '$cmd' (up, down, status, exec, as, token, sched, prio, purge)" ;;
esac
