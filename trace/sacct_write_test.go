package trace

import (
	"bytes"
	"errors"
	"math"
	"reflect"
	"strings"
	"testing"

	"github.com/asrpt/asrpt/job"
)

// sacctRounded is what WriteSacct then Read should give for jobs: sacct's
// whole seconds and minutes, no profile, sorted as the readers sort.
func sacctRounded(jobs []job.Job) []job.Job {
	var out []job.Job
	for _, j := range jobs {
		j.Submit = math.Floor(j.Submit)
		rt := math.Round(j.RunTime)
		if j.RunTime > 0 {
			rt = max(1, rt)
		}
		j.RunTime = rt
		j.TimeLimit = math.Ceil(j.TimeLimit/60) * 60
		j.Profile, j.Iterations, j.Command = "", 0, 0
		j.Name, j.User = strings.TrimSpace(j.Name), strings.TrimSpace(j.User)
		if j.GPUs == 0 || j.RunTime == 0 {
			continue // skipped by the reader
		}
		out = append(out, j)
	}
	Sort(out)
	return out
}

func TestWriteSacctRoundTrip(t *testing.T) {
	gen := DefaultGenConfig()
	gen.Jobs, gen.Seed, gen.ProfiledShare = 2000, 7, 0.5
	generated, err := Generate(gen)
	if err != nil {
		t.Fatal(err)
	}
	t0 := float64(DefaultStart)
	tests := []struct {
		name  string
		jobs  []job.Job
		stats Stats // Rows and skip counts expected
	}{
		{"generated", generated, Stats{Rows: len(generated)}},
		{"edges", []job.Job{
			{ID: "10", Submit: t0 + 0.9, User: "alice", Name: "train-bert run3", Account: "nlp", Partition: "gpu", QOS: "normal",
				GPUs: 16, Nodes: 2, RunTime: 3600.4, TimeLimit: 7200, State: "COMPLETED", Profile: "bert-large", Iterations: 1000},
			{ID: "9", Submit: t0 + 0.2, User: "bob", GPUs: 1, RunTime: 0.3, TimeLimit: 61, State: "FAILED",
				Command: job.CommandKey("/w", "sbatch x.sh")}, // 1 s, 2 min; ties 10 on submit; the command is dropped
			{ID: "123_4", Submit: t0 + 5, User: " carol ", Name: " x ", GPUs: 2, RunTime: 59.5, State: "TIMEOUT"},
			{ID: "11", Submit: t0 + 6, User: "dave", GPUs: 0, RunTime: 10, State: "COMPLETED"},      // CPU job: skipped
			{ID: "12", Submit: t0 + 7, User: "erin", GPUs: 4, RunTime: 0, State: "CANCELLED"},       // never ran: skipped
			{ID: "13", Submit: 0, User: "frank", GPUs: 8, Nodes: 1, RunTime: 1, State: "COMPLETED"}, // the epoch
			{ID: "14", Submit: t0 + 8, User: "gina", Name: "sweep", GPUs: 1, RunTime: 30, State: "COMPLETED", ArrayJobID: "14"},
			{ID: "15", Submit: t0 + 8, User: "gina", Name: "sweep", GPUs: 1, RunTime: 40, State: "COMPLETED", ArrayJobID: "14"},
		}, Stats{Rows: 8, NoGPU: 1, NotRun: 1}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var buf bytes.Buffer
			if err := WriteSacct(&buf, tc.jobs); err != nil {
				t.Fatal(err)
			}
			got, st, err := ReadStats(&buf, "out.txt", Sacct, Options{})
			if err != nil {
				t.Fatal(err)
			}
			want := sacctRounded(tc.jobs)
			tc.stats.Jobs = len(want)
			if st != tc.stats {
				t.Errorf("stats %+v, want %+v", st, tc.stats)
			}
			if len(got) != len(want) {
				t.Fatalf("%d jobs back, want %d", len(got), len(want))
			}
			for i := range want {
				if !reflect.DeepEqual(got[i], want[i]) {
					t.Fatalf("job %d:\n got %+v\nwant %+v", i, got[i], want[i])
				}
			}
		})
	}
}

func TestWriteSacctHeader(t *testing.T) {
	var buf bytes.Buffer
	j := job.Job{ID: "1", Submit: float64(DefaultStart), User: "u", Name: "n", GPUs: 2, Nodes: 1, RunTime: 60, TimeLimit: 3600, State: "COMPLETED"}
	a := j
	a.ID, a.ArrayJobID = "7", "5"
	b := a
	b.ID = "5"
	if err := WriteSacct(&buf, []job.Job{j, a, b}); err != nil {
		t.Fatal(err)
	}
	want := "JobIDRaw|JobID|JobName|User|Account|Partition|QOS|Submit|ElapsedRaw|TimelimitRaw|NNodes|AllocTRES|State\n" +
		"1|1|n|u||||2026-11-02T00:00:00|60|60|1|gres/gpu=2,node=1|COMPLETED\n" +
		"7|5_0|n|u||||2026-11-02T00:00:00|60|60|1|gres/gpu=2,node=1|COMPLETED\n" +
		"5|5_1|n|u||||2026-11-02T00:00:00|60|60|1|gres/gpu=2,node=1|COMPLETED\n"
	if buf.String() != want {
		t.Errorf("got\n%s\nwant\n%s", buf.String(), want)
	}
}

func TestWriteSacctErrors(t *testing.T) {
	ok := job.Job{ID: "1", Submit: 1, User: "u", GPUs: 1, RunTime: 1}
	tests := []struct {
		name string
		edit func(*job.Job)
	}{
		{"empty id", func(j *job.Job) { j.ID = "" }},
		{"step id", func(j *job.Job) { j.ID = "1.batch" }},
		{"delimiter in name", func(j *job.Job) { j.Name = "a|b" }},
		{"newline in user", func(j *job.Job) { j.User = "a\nb" }},
		{"negative submit", func(j *job.Job) { j.Submit = -1 }},
		{"submit past 9999", func(j *job.Job) { j.Submit = 1e12 }},
		{"submit past 2200 (MaxSubmit)", func(j *job.Job) { j.Submit = MaxSubmit + 1 }},
		{"run time past a year (MaxRunTime)", func(j *job.Job) { j.RunTime = MaxRunTime + 1 }},
		{"limit past a year (MaxRunTime)", func(j *job.Job) { j.TimeLimit = MaxRunTime + 1 }},
		{"NaN run time", func(j *job.Job) { j.RunTime = math.NaN() }},
		{"negative limit", func(j *job.Job) { j.TimeLimit = -60 }},
		{"infinite limit", func(j *job.Job) { j.TimeLimit = math.Inf(1) }},
		{"negative GPUs", func(j *job.Job) { j.GPUs = -1 }},
		{"array id not a number", func(j *job.Job) { j.ArrayJobID = "a1" }},
	}
	for _, tc := range tests {
		j := ok
		tc.edit(&j)
		err := WriteSacct(&bytes.Buffer{}, []job.Job{ok, j})
		if !errors.Is(err, ErrValue) {
			t.Errorf("%s: error %v, want one wrapping ErrValue", tc.name, err)
		}
	}
}
