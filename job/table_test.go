package job

import (
	"errors"
	"fmt"
	"math"
	"reflect"
	"strings"
	"testing"
	"unsafe"
)

func sampleJobs(n int) []Job {
	jobs := make([]Job, n)
	for i := range jobs {
		jobs[i] = Job{ID: fmt.Sprintf("%d_%d", i/3, i%3), Submit: float64(1000 + i/2), User: fmt.Sprintf("u%d", i%7),
			Name: fmt.Sprintf("train-%d", i%11), Account: []string{"", "phys", "chem"}[i%3], Partition: "gpu",
			QOS: "normal", GPUs: 1 << (i % 4), Nodes: i % 3, RunTime: float64(10 + i), TimeLimit: float64(3600 * (i % 2)),
			State: "COMPLETED", Iterations: float64(i % 5)}
		if i%5 == 0 {
			jobs[i].Profile = "gpt2-1.5b"
		}
		if i%4 != 0 {
			jobs[i].ArrayJobID = fmt.Sprint(i / 3)
		}
		if i%3 != 0 {
			jobs[i].Command = CommandKey("/home/u", fmt.Sprintf("sbatch run.sh --epochs %d", i%9))
		}
	}
	return jobs
}

// TestTableRoundTrip: every job comes back equal, across chunk borders,
// and the accessors agree with Job.
func TestTableRoundTrip(t *testing.T) {
	jobs := sampleJobs(TableChunk + 100)
	tab, err := TableOf(jobs)
	if err != nil {
		t.Fatal(err)
	}
	if tab.Len() != len(jobs) {
		t.Fatalf("len %d, want %d", tab.Len(), len(jobs))
	}
	for i := range jobs {
		j := &jobs[i]
		if got := tab.Job(i); !reflect.DeepEqual(got, *j) {
			t.Fatalf("job %d: %+v, want %+v", i, got, *j)
		}
		if tab.Submit(i) != j.Submit || tab.GPUs(i) != j.GPUs || tab.RunTime(i) != j.RunTime || tab.ID(i) != j.ID ||
			string(tab.IDBytes(i)) != j.ID || tab.User(i) != j.User || tab.Account(i) != j.Account || tab.Profiled(i) != j.Profiled() {
			t.Fatalf("job %d: accessors disagree with %+v", i, *j)
		}
	}
	if !reflect.DeepEqual(tab.Jobs(), jobs) {
		t.Error("Jobs differs from the input")
	}
	if got := unsafe.Sizeof(record{}); got != 88 {
		t.Errorf("record is %d bytes, want 88", got)
	}
}

// TestTableEdit: Set, SetRunTime, Keep and SortStable.
func TestTableEdit(t *testing.T) {
	jobs := sampleJobs(10)
	tab, err := TableOf(jobs)
	if err != nil {
		t.Fatal(err)
	}
	repl := Job{ID: "new", Submit: 5, GPUs: 3, RunTime: 7, User: "zed"}
	if err := tab.Set(4, &repl); err != nil {
		t.Fatal(err)
	}
	tab.SetRunTime(0, 99)
	jobs[4], jobs[0].RunTime = repl, 99
	if dropped := tab.Keep(func(i int) bool { return i%2 == 0 }); dropped != 5 {
		t.Errorf("dropped %d, want 5", dropped)
	}
	var kept []Job
	for i := 0; i < len(jobs); i += 2 {
		kept = append(kept, jobs[i])
	}
	if !reflect.DeepEqual(tab.Jobs(), kept) {
		t.Fatalf("after Keep: %+v, want %+v", tab.Jobs(), kept)
	}
	bySubmit := func(t *Table, a, b int) int {
		switch sa, sb := t.Submit(a), t.Submit(b); {
		case sa < sb:
			return -1
		case sa > sb:
			return 1
		}
		return 0
	}
	if tab.IsSorted(bySubmit) {
		t.Fatal("sorted before SortStable")
	}
	tab.SortStable(bySubmit)
	if !tab.IsSorted(bySubmit) || tab.Job(0).ID != "new" || tab.Len() != 5 {
		t.Errorf("after SortStable: %+v", tab.Jobs())
	}
	// Appending after a sort and a Keep still works.
	if err := tab.Append(&Job{ID: "last", GPUs: 1}); err != nil || tab.Job(5).ID != "last" {
		t.Errorf("append after sort: %v, %+v", err, tab.Jobs())
	}
	tab.Keep(func(int) bool { return false })
	if tab.Len() != 0 || len(tab.Jobs()) != 0 {
		t.Errorf("after keeping none: %d jobs", tab.Len())
	}
}

// TestTableLimits: values past the compact form are refused, naming the
// job, and leave the table as it was.
func TestTableLimits(t *testing.T) {
	for _, c := range []struct {
		name string
		j    Job
	}{
		{"gpus", Job{ID: "a", GPUs: math.MaxInt32 + 1}},
		{"nodes", Job{ID: "b", Nodes: math.MinInt32 - 1}},
		{"id", Job{ID: strings.Repeat("x", MaxTableIDLen+1)}},
		{"name", Job{ID: "c", Name: strings.Repeat("x", MaxTableIDLen+1)}},
	} {
		var tab Table
		err := tab.Append(&c.j)
		if !errors.Is(err, ErrTableLimit) || tab.Len() != 0 {
			t.Errorf("%s: %v, %d jobs", c.name, err, tab.Len())
		}
	}
}

// BenchmarkTableAppend measures appending one job to a growing table
// (the recurring names and users of a trace, a new id and name each).
func BenchmarkTableAppend(b *testing.B) {
	jobs := sampleJobs(4096)
	var tab Table
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		if err := tab.Append(&jobs[i%len(jobs)]); err != nil {
			b.Fatal(err)
		}
		i++
	}
}
