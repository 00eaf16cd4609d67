#!/usr/bin/env bash
# A throwaway Slurm cluster on 127.0.0.1 for the Slurm adapter's end-to-end test.
#
#   setup.sh install                 install munge and Slurm from Debian's packages (idempotent)
#   setup.sh start DIR               write the configuration into DIR and start munged, slurmctld
#                                    and one slurmd per node ("multiple slurmd": every node is a
#                                    slurmd -N NAME on its own loopback port); prints the
#                                    environment to use (also written to DIR/env)
#   setup.sh stop DIR                stop the daemons started in DIR (by their recorded pids)
#   setup.sh restart-ctld DIR        stop slurmctld and start it again (its state survives)
#   setup.sh stop-ctld DIR           stop slurmctld only
#   setup.sh start-ctld DIR          start slurmctld again after stop-ctld
#   setup.sh status DIR              sinfo and squeue of the cluster in DIR
#
# No systemd: every daemon runs in the foreground (-D / -F) in the background of this
# script, its pid in DIR/run. Everything (munge key and socket, state, spool, logs) lives in
# DIR; nothing under /etc is touched. Needs root (Slurm runs its jobs as root here).
#
# The cluster: partition "batch" (default) with nodes sn1..sn3, 4 CPUs and 4000 MiB each,
# and partition "gpu" with sn1 and sn2, which have 2 GPUs each (gres/gpu backed by empty
# files: Slurm 22.05 drops file-less GPUs). SchedulerType=sched/builtin; jobs submitted
# held (sbatch -H) wait for the adapter.
#
# Environment: SLURM_E2E_PORT_BASE (default 16800): slurmctld listens on BASE+17, the slurmd
# of node i on BASE+100+i.
set -euo pipefail

NODES=(sn1 sn2 sn3)
GPU_NODES=(sn1 sn2)
PORT_BASE=${SLURM_E2E_PORT_BASE:-16800}

log() { echo "slurm-setup: $*" >&2; }
die() { log "error: $*"; exit 1; }

# sbin finds a daemon binary. Debian ships the real daemons as *-wlm behind alternatives
# that slurm-wlm-emulator (a front-end build) may take over, so prefer the -wlm builds.
sbin() {
	local name=$1
	for p in "/usr/sbin/$name-wlm" "/usr/sbin/$name"; do
		if [[ -x $p ]]; then
			echo "$p"
			return
		fi
	done
	command -v "$name" || die "$name not found: run '$0 install'"
}

cmd_install() {
	local missing=()
	command -v munged >/dev/null || missing+=(munge)
	[[ -x /usr/sbin/slurmctld-wlm || -x /usr/sbin/slurmctld ]] || missing+=(slurmctld)
	[[ -x /usr/sbin/slurmd-wlm || -x /usr/sbin/slurmd ]] || missing+=(slurmd)
	command -v scontrol >/dev/null || missing+=(slurm-client)
	if ((${#missing[@]} == 0)); then
		log "munge and Slurm are installed: slurm $(dpkg-query -W -f '${Version}' slurmctld 2>/dev/null || echo unknown)"
		return
	fi
	[[ $(id -u) == 0 ]] || die "installing ${missing[*]} needs root"
	log "installing ${missing[*]}"
	export DEBIAN_FRONTEND=noninteractive
	if ! apt-get install -y --no-install-recommends "${missing[@]}"; then
		apt-get update
		apt-get install -y --no-install-recommends "${missing[@]}"
	fi
	log "installed: slurm $(dpkg-query -W -f '${Version}' slurmctld 2>/dev/null || echo unknown)"
}

write_config() {
	local dir=$1 host=$2
	local ctld_port=$((PORT_BASE + 17))
	cat >"$dir/etc/slurm.conf" <<EOF
# Written by scripts/slurm/setup.sh for the Sluice Slurm adapter's tests.
ClusterName=sluicee2e
SlurmctldHost=$host(127.0.0.1)
SlurmctldPort=$ctld_port
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
AuthInfo=socket=$dir/munge/munge.socket
CredType=cred/munge
StateSaveLocation=$dir/state
SlurmdSpoolDir=$dir/spool/%n
SlurmctldPidFile=$dir/run/slurmctld.pid
SlurmdPidFile=$dir/run/slurmd-%n.pid
SlurmctldLogFile=$dir/log/slurmctld.log
SlurmdLogFile=$dir/log/slurmd-%n.log
SlurmctldDebug=info
SlurmdDebug=info
MailProg=/bin/true
MpiDefault=none
ProctrackType=proctrack/pgid
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
SchedulerType=sched/builtin
SelectType=select/cons_tres
SelectTypeParameters=CR_Core_Memory
PriorityType=priority/basic
GresTypes=gpu
# The nodes are emulated: take their sizes from this file, not from the hardware.
SlurmdParameters=config_overrides
ReturnToService=2
JobRequeue=1
KillWait=2
MinJobAge=10
InactiveLimit=0
SlurmctldTimeout=30
SlurmdTimeout=300
EOF
	local i=0 n gres
	for n in "${NODES[@]}"; do
		i=$((i + 1))
		gres=""
		if [[ " ${GPU_NODES[*]} " == *" $n "* ]]; then
			gres=" Gres=gpu:2"
		fi
		echo "NodeName=$n NodeHostname=$host NodeAddr=127.0.0.1 Port=$((PORT_BASE + 100 + i)) CPUs=4 RealMemory=4000$gres" >>"$dir/etc/slurm.conf"
	done
	local IFS=,
	echo "PartitionName=batch Nodes=${NODES[*]} Default=YES MaxTime=INFINITE State=UP" >>"$dir/etc/slurm.conf"
	echo "PartitionName=gpu Nodes=${GPU_NODES[*]} MaxTime=INFINITE State=UP PriorityTier=2" >>"$dir/etc/slurm.conf"
	unset IFS
	: >"$dir/etc/gres.conf"
	for n in "${GPU_NODES[@]}"; do
		touch "$dir/dev/$n-gpu0" "$dir/dev/$n-gpu1"
		echo "NodeName=$n Name=gpu File=$dir/dev/$n-gpu[0-1]" >>"$dir/etc/gres.conf"
	done
	# Read only if a cgroup plugin is loaded; proctrack/pgid and task/none load none.
	echo "CgroupPlugin=autodetect" >"$dir/etc/cgroup.conf"
}

# spawn NAME CMD...: start a foreground daemon in the background, its pid in run/NAME.pid.
spawn() {
	local dir=$1 name=$2
	shift 2
	setsid "$@" >>"$dir/log/$name.out" 2>&1 </dev/null &
	echo $! >"$dir/run/$name.bgpid"
}

alive() { [[ -f $1 ]] && kill -0 "$(cat "$1")" 2>/dev/null; }

start_ctld() {
	local dir=$1
	SLURM_CONF=$dir/etc/slurm.conf spawn "$dir" slurmctld "$dir/bin/slurmctld" -D -f "$dir/etc/slurm.conf"
	local deadline=$((SECONDS + 30))
	until SLURM_CONF=$dir/etc/slurm.conf scontrol ping 2>/dev/null | grep -q "is UP"; do
		alive "$dir/run/slurmctld.bgpid" || { tail -20 "$dir/log/slurmctld.out" >&2; die "slurmctld exited"; }
		((SECONDS < deadline)) || die "slurmctld did not answer within 30s"
		sleep 0.5
	done
}

cmd_start() {
	local dir=${1:?usage: setup.sh start DIR}
	[[ $(id -u) == 0 ]] || die "start needs root (SlurmUser=root)"
	mkdir -p "$dir"
	dir=$(cd "$dir" && pwd)
	if alive "$dir/run/slurmctld.bgpid"; then
		die "a cluster is already running in $dir"
	fi
	mkdir -p "$dir"/{etc,munge,state,spool,log,run,bin,dev,jobs}
	chmod 700 "$dir/munge"
	local host
	host=$(hostname -s)
	write_config "$dir" "$host"

	# Daemons under their own names: Slurm enables parts of its configuration (node GRES
	# among them) only when the program is called slurmctld or slurmd, not slurmctld-wlm.
	ln -sf "$(sbin slurmctld)" "$dir/bin/slurmctld"
	ln -sf "$(sbin slurmd)" "$dir/bin/slurmd"
	ln -sf "$(sbin slurmstepd)" "$dir/bin/slurmstepd"

	if [[ ! -s $dir/munge/munge.key ]]; then
		dd if=/dev/urandom of="$dir/munge/munge.key" bs=1024 count=1 status=none
		chmod 400 "$dir/munge/munge.key"
	fi
	# --force: the socket lives under /tmp, whose permissions munged would otherwise refuse.
	spawn "$dir" munged munged -F --force --key-file="$dir/munge/munge.key" \
		--socket="$dir/munge/munge.socket" --pid-file="$dir/munge/munged.pid" \
		--log-file="$dir/log/munged.log" --seed-file="$dir/munge/munged.seed"
	local deadline=$((SECONDS + 15))
	until munge -S "$dir/munge/munge.socket" -n </dev/null 2>/dev/null | unmunge -S "$dir/munge/munge.socket" >/dev/null 2>&1; do
		alive "$dir/run/munged.bgpid" || { cat "$dir/log/munged.out" "$dir/log/munged.log" >&2 || true; die "munged exited"; }
		((SECONDS < deadline)) || die "munged did not answer within 15s"
		sleep 0.2
	done
	log "munged up ($(munged -V 2>&1 | head -1))"

	start_ctld "$dir"
	log "slurmctld up on 127.0.0.1:$((PORT_BASE + 17))"

	local n
	for n in "${NODES[@]}"; do
		mkdir -p "$dir/spool/$n"
		SLURM_CONF=$dir/etc/slurm.conf spawn "$dir" "slurmd-$n" "$dir/bin/slurmd" -D -N "$n" \
			-f "$dir/etc/slurm.conf" -d "$dir/bin/slurmstepd"
	done
	deadline=$((SECONDS + 60))
	local idle
	while true; do
		idle=$(SLURM_CONF=$dir/etc/slurm.conf sinfo -h -N -t idle -o "%N" 2>/dev/null | sort -u | wc -l)
		((idle == ${#NODES[@]})) && break
		for n in "${NODES[@]}"; do
			alive "$dir/run/slurmd-$n.bgpid" || { tail -20 "$dir/log/slurmd-$n.out" >&2; die "slurmd for $n exited"; }
		done
		((SECONDS < deadline)) || { SLURM_CONF=$dir/etc/slurm.conf sinfo -N >&2 || true; die "nodes not idle within 60s"; }
		sleep 0.5
	done
	cat >"$dir/env" <<EOF
export SLURM_CONF=$dir/etc/slurm.conf
export SLURM_E2E_DIR=$dir
EOF
	log "cluster up in $dir: $(SLURM_CONF=$dir/etc/slurm.conf sinfo -h -N -o '%N:%c:%m:%G' | tr '\n' ' ')"
	cat "$dir/env"
}

stop_pid() {
	local f=$1 pid i
	[[ -f $f ]] || return 0
	pid=$(cat "$f")
	if kill -0 "$pid" 2>/dev/null; then
		kill -TERM "$pid" 2>/dev/null || true
		for i in $(seq 1 50); do
			kill -0 "$pid" 2>/dev/null || break
			sleep 0.1
		done
		kill -0 "$pid" 2>/dev/null && kill -KILL "$pid" 2>/dev/null || true
	fi
	rm -f "$f"
}

cmd_stop() {
	local dir=${1:?usage: setup.sh stop DIR} f
	[[ -d $dir/run ]] || return 0
	# Cancel what still runs so that no job process outlives its slurmd.
	if alive "$dir/run/slurmctld.bgpid"; then
		SLURM_CONF=$dir/etc/slurm.conf timeout 10 scancel --full --signal=KILL --user=root 2>/dev/null || true
		SLURM_CONF=$dir/etc/slurm.conf timeout 10 scancel --user=root 2>/dev/null || true
		sleep 1
	fi
	for f in "$dir"/run/slurmd-*.bgpid; do
		[[ -e $f ]] && stop_pid "$f"
	done
	stop_pid "$dir/run/slurmctld.bgpid"
	stop_pid "$dir/run/munged.bgpid"
	log "stopped the cluster in $dir"
}

cmd_restart_ctld() {
	local dir=${1:?usage: setup.sh restart-ctld DIR}
	stop_pid "$dir/run/slurmctld.bgpid"
	log "slurmctld stopped"
	start_ctld "$dir"
	log "slurmctld restarted"
}

cmd_stop_ctld() {
	local dir=${1:?usage: setup.sh stop-ctld DIR}
	stop_pid "$dir/run/slurmctld.bgpid"
	log "slurmctld stopped"
}

cmd_start_ctld() {
	local dir=${1:?usage: setup.sh start-ctld DIR}
	alive "$dir/run/slurmctld.bgpid" && die "slurmctld is running"
	start_ctld "$dir"
	log "slurmctld started"
}

cmd_status() {
	local dir=${1:?usage: setup.sh status DIR}
	SLURM_CONF=$dir/etc/slurm.conf sinfo -N -o "%N %T %c %m %G"
	SLURM_CONF=$dir/etc/slurm.conf squeue -o "%i %j %T %r %Q %y %N"
}

case ${1:-} in
install) cmd_install ;;
start) cmd_start "${2:-}" ;;
stop) cmd_stop "${2:-}" ;;
restart-ctld) cmd_restart_ctld "${2:-}" ;;
stop-ctld) cmd_stop_ctld "${2:-}" ;;
start-ctld) cmd_start_ctld "${2:-}" ;;
status) cmd_status "${2:-}" ;;
*)
	sed -n '2,23p' "$0" >&2
	exit 2
	;;
esac
