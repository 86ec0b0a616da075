package policy

import (
	"math"
	"testing"

	"github.com/asrpt/asrpt/job"
)

func vmTask(id string, seq int, submit float64) *Task {
	return &Task{Job: &job.Job{ID: id, Submit: submit}, Seq: seq, Released: math.NaN()}
}

// TestVirtualMachineSRPT checks preemptive SRPT on A1: a shorter arrival
// preempts the running job, ties go by submit time then sequence, and
// zero-size jobs release on arrival.
func TestVirtualMachineSRPT(t *testing.T) {
	type rel struct {
		id string
		at float64
	}
	var got []rel
	record := func(t *Task, at float64) { got = append(got, rel{t.ID, at}) }
	vm := NewVirtualMachine(0)
	a, b, c, z := vmTask("a", 0, 0), vmTask("b", 1, 0), vmTask("c", 2, 5), vmTask("z", 3, 6)
	vm.Add(a, 10) // runs 0..5, then c preempts
	vm.Add(b, 10) // ties with a on size and submit: after a by sequence
	vm.Advance(5, record)
	vm.Add(c, 2) // arrives at 5, shorter than a's remaining 5
	if next := vm.NextRelease(); next != 7 {
		t.Fatalf("next release %v, want 7", next)
	}
	vm.Advance(6, record)
	vm.Add(z, 0)
	vm.Advance(6, record)
	vm.Advance(100, record)
	want := []rel{{"z", 6}, {"c", 7}, {"a", 12}, {"b", 22}}
	if len(got) != len(want) {
		t.Fatalf("releases %v, want %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("release %d = %v, want %v", i, got[i], want[i])
		}
	}
	if vm.Len() != 0 || !math.IsInf(vm.NextRelease(), 1) {
		t.Errorf("machine not empty after all releases")
	}
}

// TestVirtualMachineRemove checks that a job started early leaves A1 and
// the others move up.
func TestVirtualMachineRemove(t *testing.T) {
	vm := NewVirtualMachine(0)
	a, b := vmTask("a", 0, 0), vmTask("b", 1, 0)
	vm.Add(a, 4)
	vm.Add(b, 6)
	vm.Remove(a)
	var at float64
	vm.Advance(100, func(t *Task, when float64) { at = when })
	if at != 6 {
		t.Errorf("b released at %v, want 6", at)
	}
}

func BenchmarkVirtualMachine(b *testing.B) {
	const n = 100000
	tasks := make([]*Task, n)
	for i := range tasks {
		tasks[i] = vmTask("x", i, float64(i))
	}
	b.ReportAllocs()
	for b.Loop() {
		vm := NewVirtualMachine(0)
		for i, t := range tasks {
			vm.Advance(float64(i), func(*Task, float64) {})
			vm.Add(t, float64((i*7919)%1000))
		}
		vm.Advance(math.MaxFloat64, func(*Task, float64) {})
	}
}
