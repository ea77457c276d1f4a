# tests/e2e/lib/slurm_single.sh: a throw-away single-node Slurm for a test,
# sourced. slurm_start DIR writes DIR/slurm.conf (auth/none, no munge, no
# cgroups, no systemd), starts slurmctld and slurmd in the foreground in the
# background of this shell, exports SLURM_CONF and waits until the node is
# idle. slurm_stop ends both (by pid). On failure slurm_start returns 1 and
# sets SLURM_WHY to the reason, with the daemons' last log lines.
SLURM_PIDS=()
SLURM_WHY=

slurm_free_port() {
	python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'
}

slurm_start() {
	local d=$1 host cpus p1 p2
	host=$(hostname -s)
	cpus=$(nproc)
	p1=$(slurm_free_port)
	p2=$(slurm_free_port)
	while [ "$p2" = "$p1" ]; do p2=$(slurm_free_port); done
	mkdir -p "$d/state" "$d/spool"
	cat >"$d/slurm.conf" <<CONF
ClusterName=ka
SlurmctldHost=$host(127.0.0.1)
SlurmctldPort=$p1
SlurmdPort=$p2
AuthType=auth/none
CredType=cred/none
SlurmUser=$(id -un)
SlurmdUser=$(id -un)
StateSaveLocation=$d/state
SlurmdSpoolDir=$d/spool
SlurmctldPidFile=$d/slurmctld.pid
SlurmdPidFile=$d/slurmd.pid
SlurmctldLogFile=$d/slurmctld.log
SlurmdLogFile=$d/slurmd.log
ProctrackType=proctrack/pgid
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
MpiDefault=none
MailProg=/bin/true
ReturnToService=2
SlurmctldTimeout=30
SlurmdTimeout=30
NodeName=$host NodeAddr=127.0.0.1 CPUs=$cpus State=UNKNOWN
PartitionName=ka Nodes=$host Default=YES MaxTime=INFINITE State=UP
CONF
	export SLURM_CONF=$d/slurm.conf
	slurmctld -D -i -f "$SLURM_CONF" >"$d/slurmctld.out" 2>&1 &
	SLURM_PIDS+=($!)
	slurmd -D -f "$SLURM_CONF" -N "$host" >"$d/slurmd.out" 2>&1 &
	SLURM_PIDS+=($!)
	local i state
	for i in $(seq 1 60); do
		state=$(sinfo -h -N -o '%t' 2>/dev/null | head -1)
		case "$state" in idle | mix | alloc) return 0 ;; esac
		for p in "${SLURM_PIDS[@]}"; do
			if ! kill -0 "$p" 2>/dev/null; then
				SLURM_WHY="a slurm daemon exited: $(tail -n 3 "$d"/slurm*.out "$d"/slurm*.log 2>/dev/null | tr '\n' ' ' | head -c 600)"
				return 1
			fi
		done
		sleep 0.5
	done
	SLURM_WHY="the node did not become idle in 30 s (state '$state'): $(tail -n 3 "$d"/slurm*.log 2>/dev/null | tr '\n' ' ' | head -c 600)"
	return 1
}

slurm_stop() {
	local p
	for p in "${SLURM_PIDS[@]}"; do kill "$p" 2>/dev/null; done
	for p in "${SLURM_PIDS[@]}"; do wait "$p" 2>/dev/null; done
	SLURM_PIDS=()
}
