package decision

import (
	"maps"
	"testing"
	"time"

	"github.com/asrpt/asrpt/reason"
	"github.com/asrpt/asrpt/slurmclient"
)

// TestClassify checks the class of each kind of record in one queue: a
// cluster of 8 GPUs, scope the partition gpu.
func TestClassify(t *testing.T) {
	now := epoch.Add(time.Hour)
	with := func(id string, gpus int, edit func(*slurmclient.Job)) slurmclient.Job {
		j := pending(id, "j", gpus, epoch)
		if edit != nil {
			edit(&j)
		}
		return j
	}
	jobs := []slurmclient.Job{
		with("1", 2, nil),
		with("2", 2, func(j *slurmclient.Job) { j.State = "RUNNING" }),
		with("3", 2, func(j *slurmclient.Job) { j.Held = true }),
		with("4", 0, nil),
		with("5", 0, func(j *slurmclient.Job) { j.Partition = "cpu" }),
		with("6", 2, func(j *slurmclient.Job) { j.Partition = "gpu,cpu" }),
		with("7", 16, nil),
		with("8", 2, func(j *slurmclient.Job) { j.Dependency = "afterok:1" }),
		with("9", 2, func(j *slurmclient.Job) { j.Array = slurmclient.Array{JobID: "9", TaskID: -1, Throttle: 1} }),
		with("10", 2, func(j *slurmclient.Job) { j.Array = slurmclient.Array{JobID: "9", TaskID: 3}; j.State = "RUNNING" }),
		with("20", 2, func(j *slurmclient.Job) { j.Het = slurmclient.Het{LeaderID: "20", Components: []string{"20", "21"}} }),
		with("21", 3, func(j *slurmclient.Job) {
			j.Het = slurmclient.Het{LeaderID: "20", Offset: 1, Components: []string{"20", "21"}}
			j.Reason = "QOSMaxGRESPerUser"
		}),
		with("30", 2, func(j *slurmclient.Job) { j.Held, j.Partition = true, "held" }),
		with("31", 2, func(j *slurmclient.Job) { j.Dependency, j.Partition = "afterok:1", "dep" }),
	}
	want := map[string]class{
		"1":  {ok: true, gpus: 2},
		"2":  {why: reason.Of(reason.NotPending, ""), gpus: 2},
		"3":  {why: reason.Of(reason.Held, ""), gpus: 2},
		"4":  {why: reason.Of(reason.NoGPUs, ""), standable: true},
		"5":  {why: reason.Of(reason.NoGPUs, "")},
		"6":  {why: reason.Of(reason.OutOfScope, ""), gpus: 2},
		"7":  {why: reason.Of(reason.LargerThanCluster, ""), gpus: 16, standable: true},
		"8":  {ok: true, gpus: 2, heldBack: "Dependency"},
		"9":  {why: reason.Of(reason.ArrayThrottled, ""), gpus: 2},
		"10": {why: reason.Of(reason.NotPending, ""), gpus: 2},
		"20": {ok: true, gpus: 5, heldBack: "QOSMaxGRESPerUser"},
		"21": {why: reason.Of(reason.HetComponent, ""), gpus: 3, heldBack: "QOSMaxGRESPerUser"},
		"30": {why: reason.Of(reason.Held, ""), gpus: 2},
		"31": {why: reason.Of(reason.OutOfScope, ""), gpus: 2, heldBack: "Dependency"},
	}
	v := newQueueView(jobs, unixSeconds(now), Scope{Partitions: []string{"gpu"}}, 8, true)
	for i := range jobs {
		got, w := v.classify(&jobs[i]), want[jobs[i].ID]
		if got.ok != w.ok || got.why.Code != w.why.Code || got.gpus != w.gpus || got.heldBack != w.heldBack || got.standable != w.standable ||
			got.shape != jobs[i].Shape() {
			t.Errorf("job %s: class %+v, want %+v (shape %s)", jobs[i].ID, got, w, jobs[i].Shape())
		}
	}
	// The partitions of the pending jobs neither held nor held back (not
	// those of 30, held, nor of 31 and the component 21, held back).
	if want := map[string]bool{"gpu": true, "cpu": true}; !maps.Equal(v.claimed, want) {
		t.Errorf("claimed partitions %v, want %v", v.claimed, want)
	}
	if newQueueView(jobs, unixSeconds(now), Scope{}, 8, false).claimed != nil {
		t.Error("claimed partitions computed without being asked for")
	}
	e := &Entry{HandsOff: true}
	if ok, why := admitted(v.classify(&jobs[0]), e); ok || why.Code != reason.AdminPriority {
		t.Errorf("a job whose priority an admin set: admitted %v (%s)", ok, why.Code)
	}
	if ok, why := admitted(v.classify(&jobs[2]), e); ok || why.Code != reason.Held {
		t.Errorf("a held job whose priority an admin set: admitted %v (%s), want held", ok, why.Code)
	}
}
