#!/bin/sh
# The testbed's checkpointing job (a ckpt:GRACE line of a workload; README.md),
# as PyTorch Lightning's and submitit's jobs behave: its step does $WORK seconds
# of work, counted in a progress file it resumes from when Slurm starts the job
# again; on USR1 it requeues its own job (scontrol requeue) and ends. The batch
# shell ignores USR1, so that a signal to the whole job stops only the step.
trap '' USR1
srun -n1 sh -c '
P=/tmp/asrpt-testbed-ckpt-$SLURM_JOB_ID
n=$(cat $P 2>/dev/null || echo 0)
stop=0
trap "stop=1" USR1
while [ $n -lt $WORK ]; do
	if [ $stop = 1 ]; then scontrol requeue $SLURM_JOB_ID; exit 0; fi
	sleep 1; n=$((n+1)); echo $n > $P
done
rm -f $P'
