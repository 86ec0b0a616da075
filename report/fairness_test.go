package report

import (
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/asrpt/asrpt/job"
	"github.com/asrpt/asrpt/sim"
)

// fairJobs is a hand-made replay on 4 GPUs: accounts phys (ann, bob) and
// chem (cat), and one job of dan without an account.
//
//	id  user/account  GPUs  submit  start  end  wait  slowdown
//	1   ann/phys      2     0       0      100  0     1
//	2   cat/chem      2     0       0      50   0     1
//	10  cat/chem      2     20      50     150  30    1.3
//	3   bob/phys      4     10      150    250  140   2.4
//	5   dan/-         1     200     250    260  50    6
//
// Jobs wait in [10, 150) and [200, 250): 190 s contended. The GPU-seconds
// delivered then: job 1 2×90, job 2 2×40, job 10 2×100, job 3 4×50, job 5
// none; 660 in all, phys 380, chem 280.
func fairJobs() []row {
	return []row{
		{ID: "1", User: "ann", Account: "phys", JobResult: sim.JobResult{GPUs: 2, Submit: 0, Start: 0, End: 100, RunTime: 100}},
		{ID: "2", User: "cat", Account: "chem", JobResult: sim.JobResult{GPUs: 2, Submit: 0, Start: 0, End: 50, RunTime: 50}},
		{ID: "10", User: "cat", Account: "chem", JobResult: sim.JobResult{GPUs: 2, Submit: 20, Start: 50, End: 150, RunTime: 100}},
		{ID: "3", User: "bob", Account: "phys", JobResult: sim.JobResult{GPUs: 4, Submit: 10, Start: 150, End: 250, RunTime: 100}},
		{ID: "5", User: "dan", JobResult: sim.JobResult{GPUs: 1, Submit: 200, Start: 250, End: 260, RunTime: 10}},
	}
}

func TestFairness(t *testing.T) {
	// Per-group figures that do not depend on the targets or preemption.
	chem := Group{Name: "chem", Jobs: 2, GPUHours: 300.0 / 3600, ContendedGPUHours: 280.0 / 3600, ContendedShare: 280.0 / 660,
		AvgWait: 15, MaxWait: 30, P99Wait: 0.99 * 30, P99Slowdown: 1 + 0.99*0.3}
	none := Group{Name: NoName, Jobs: 1, GPUHours: 10.0 / 3600, AvgWait: 50, MaxWait: 50, P99Wait: 50, P99Slowdown: 6}
	phys := Group{Name: "phys", Jobs: 2, GPUHours: 600.0 / 3600, ContendedGPUHours: 380.0 / 3600, ContendedShare: 380.0 / 660,
		AvgWait: 70, MaxWait: 140, P99Wait: 0.99 * 140, P99Slowdown: 1 + 0.99*1.4}
	ann := Group{Name: "ann", Jobs: 1, GPUHours: 200.0 / 3600, ContendedGPUHours: 180.0 / 3600, ContendedShare: 180.0 / 660,
		P99Slowdown: 1}
	bob := Group{Name: "bob", Jobs: 1, GPUHours: 400.0 / 3600, ContendedGPUHours: 200.0 / 3600, ContendedShare: 200.0 / 660,
		AvgWait: 140, MaxWait: 140, P99Wait: 140, P99Slowdown: 2.4}
	cat := chem
	cat.Name = "cat"
	dan := none
	dan.Name = "dan"
	with := func(g Group, target float64) Group { g.TargetShare = target; return g }
	longest := []WaitingJob{
		{ID: "3", User: "bob", Account: "phys", GPUs: 4, Submit: 10, Wait: 140, RunTime: 100},
		{ID: "5", User: "dan", Account: NoName, GPUs: 1, Submit: 200, Wait: 50, RunTime: 10},
	}
	// Overall: waits 0, 0, 30, 50, 140 and slowdowns 1, 1, 1.3, 2.4, 6;
	// the p99 lies 0.96 of the way from the fourth to the fifth.
	overall := FairnessReport{ContendedSeconds: 190, ContendedGPUHours: 660.0 / 3600, MaxWait: 140,
		P99Wait: 50 + 0.96*90, P99Slowdown: 2.4 + 0.96*3.6}

	// Job 1 preempted once, 60 s of run time in all before its end at 100:
	// taken to wait in [0, 40) and run in [40, 100]. Jobs wait in [0, 150)
	// and [200, 250): 200 s. Job 1 gets 2×60 GPU-seconds then, job 2 2×50;
	// 620 in all, phys 320, chem 300.
	preempted := fairJobs()
	preempted[0].Preemptions, preempted[0].RunTime = 1, 60
	pPhys, pAnn := phys, ann
	pPhys.GPUHours, pPhys.ContendedGPUHours, pPhys.ContendedShare = 520.0/3600, 320.0/3600, 320.0/620
	pPhys.P99Slowdown = 100.0/60 + 0.99*(2.4-100.0/60)
	pAnn.GPUHours, pAnn.ContendedGPUHours, pAnn.ContendedShare, pAnn.P99Slowdown = 120.0/3600, 120.0/3600, 120.0/620, 100.0/60
	pChem, pBob := chem, bob
	pChem.ContendedGPUHours, pChem.ContendedShare, pBob.ContendedShare = 300.0/3600, 300.0/620, 200.0/620
	pCat := pChem
	pCat.Name = "cat"
	pOverall := overall
	pOverall.ContendedSeconds, pOverall.ContendedGPUHours = 200, 620.0/3600

	cases := []struct {
		name   string
		jobs   []row
		shares map[string]float64
		top    int
		want   FairnessReport
	}{
		{"equal targets", fairJobs(), nil, 2, func() FairnessReport {
			f := overall
			f.Targets = TargetsEqual
			f.Accounts = []Group{with(none, 1.0/3), with(chem, 1.0/3), with(phys, 1.0/3)}
			f.Users = []Group{with(ann, 1.0/6), with(bob, 1.0/6), with(cat, 1.0/3), with(dan, 1.0/3)}
			f.Longest = longest
			return f
		}()},
		// bio has no job: the shares are normalized over phys and chem.
		{"shares", fairJobs(), map[string]float64{"phys": 3, "chem": 1, "bio": 4}, 1, func() FairnessReport {
			f := overall
			f.Targets = TargetsShares
			f.Accounts = []Group{with(none, 0), with(chem, 0.25), with(phys, 0.75)}
			f.Users = []Group{with(ann, 0.375), with(bob, 0.375), with(cat, 0.25), with(dan, 0)}
			f.Longest = longest[:1]
			return f
		}()},
		{"preempted", preempted, nil, 0, func() FairnessReport {
			f := pOverall
			f.Targets = TargetsEqual
			f.Accounts = []Group{with(none, 1.0/3), with(pChem, 1.0/3), with(pPhys, 1.0/3)}
			f.Users = []Group{with(pAnn, 1.0/6), with(pBob, 1.0/6), with(pCat, 1.0/3), with(dan, 1.0/3)}
			f.Longest = []WaitingJob{}
			return f
		}()},
		// Nobody waits: nothing is contended and every share is 0.
		{"no contention", fairJobs()[:2], nil, 5, FairnessReport{Targets: TargetsEqual, P99Slowdown: 1,
			Accounts: []Group{
				{Name: "chem", Jobs: 1, GPUHours: 100.0 / 3600, TargetShare: 0.5, P99Slowdown: 1},
				{Name: "phys", Jobs: 1, GPUHours: 200.0 / 3600, TargetShare: 0.5, P99Slowdown: 1}},
			Users: []Group{
				{Name: "ann", Jobs: 1, GPUHours: 200.0 / 3600, TargetShare: 0.5, P99Slowdown: 1},
				{Name: "cat", Jobs: 1, GPUHours: 100.0 / 3600, TargetShare: 0.5, P99Slowdown: 1}},
			Longest: []WaitingJob{
				{ID: "1", User: "ann", Account: "phys", GPUs: 2, RunTime: 100},
				{ID: "2", User: "cat", Account: "chem", GPUs: 2, RunTime: 50}}}},
		{"empty", nil, map[string]float64{}, 3, FairnessReport{Targets: TargetsShares,
			Accounts: []Group{}, Users: []Group{}, Longest: []WaitingJob{}}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := Fairness(resultOf(c.jobs, 4), c.shares, c.top)
			for _, d := range diff("", reflect.ValueOf(got), reflect.ValueOf(c.want)) {
				t.Error(d)
			}
			if _, err := json.Marshal(got); err != nil {
				t.Errorf("JSON: %v", err)
			}
		})
	}
}

// diff lists where got and want differ, floats within 1e-9 (relative)
// counting as equal.
func diff(path string, got, want reflect.Value) []string {
	switch got.Kind() {
	case reflect.Float64:
		g, w := got.Float(), want.Float()
		if math.Abs(g-w) > 1e-9*math.Max(1, math.Abs(w)) {
			return []string{fmt.Sprintf("%s = %v, want %v", path, g, w)}
		}
	case reflect.Struct:
		var out []string
		for i := range got.NumField() {
			out = append(out, diff(path+"."+got.Type().Field(i).Name, got.Field(i), want.Field(i))...)
		}
		return out
	case reflect.Slice:
		if got.Len() != want.Len() {
			return []string{fmt.Sprintf("%s: %d elements, want %d: %+v", path, got.Len(), want.Len(), got.Interface())}
		}
		if got.IsNil() != want.IsNil() {
			return []string{fmt.Sprintf("%s: nil %v, want nil %v", path, got.IsNil(), want.IsNil())}
		}
		var out []string
		for i := range got.Len() {
			out = append(out, diff(fmt.Sprintf("%s[%d]", path, i), got.Index(i), want.Index(i))...)
		}
		return out
	default:
		if !reflect.DeepEqual(got.Interface(), want.Interface()) {
			return []string{fmt.Sprintf("%s = %v, want %v", path, got.Interface(), want.Interface())}
		}
	}
	return nil
}

func TestFairnessLookup(t *testing.T) {
	f := Fairness(resultOf(fairJobs(), 0), nil, 0)
	for _, c := range []struct {
		name, want string
		ok         bool
		get        func(string) (Group, bool)
	}{
		{"phys", "phys", true, f.Account},
		{"", NoName, true, f.Account},
		{NoName, NoName, true, f.Account},
		{"bio", "", false, f.Account},
		{"ann", "", false, f.Account},
		{"cat", "cat", true, f.User},
		{"", "", false, f.User},
	} {
		g, ok := c.get(c.name)
		if ok != c.ok || g.Name != c.want {
			t.Errorf("lookup %q = %q, %v; want %q, %v", c.name, g.Name, ok, c.want, c.ok)
		}
	}
	if g, _ := f.Account("chem"); g.Jobs != 2 {
		t.Errorf("chem: %+v", g)
	}
}

// TestFairnessLongestTies: equal waits in id order, numbers as numbers.
func TestFairnessLongestTies(t *testing.T) {
	var jobs []row
	for _, id := range []string{"10", "9", "12_10", "12_9", "b", "a"} {
		jobs = append(jobs, row{ID: id, JobResult: sim.JobResult{GPUs: 1, Submit: 0, Start: 5, End: 6, RunTime: 1}})
	}
	jobs = append(jobs, row{ID: "99", JobResult: sim.JobResult{GPUs: 1, Submit: 0, Start: 7, End: 8, RunTime: 1}})
	f := Fairness(resultOf(jobs, 0), nil, 6)
	var ids []string
	for _, j := range f.Longest {
		ids = append(ids, j.ID)
	}
	if want := []string{"99", "9", "10", "12_9", "12_10", "a"}; !slices.Equal(ids, want) {
		t.Errorf("longest %v, want %v", ids, want)
	}
}

func TestCompareIDs(t *testing.T) {
	// In order, each strictly before the next.
	ordered := []string{"", "0", "00", "01", "1", "2", "9", "10", "10_1", "10_2", "10_10", "10a", "100", "a", "a2", "a10", "b"}
	for i := range ordered {
		for j := range ordered {
			got := compareIDs(ordered[i], ordered[j])
			want := 0
			if i < j {
				want = -1
			} else if i > j {
				want = 1
			}
			if got != want {
				t.Errorf("compareIDs(%q, %q) = %d, want %d", ordered[i], ordered[j], got, want)
			}
		}
	}
}

// TestFairnessInvariants: on random replays, contended shares sum to 1
// when anything was contended, targets to 1, group jobs to the total, and
// the result does not depend on the order of the jobs.
func TestFairnessInvariants(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 7))
	for trial := range 20 {
		jobs := syntheticResults(rng, 200+trial*10)
		f := Fairness(resultOf(jobs, 0), nil, 10)
		for _, groups := range [][]Group{f.Accounts, f.Users} {
			var cont, target float64
			n := 0
			for _, g := range groups {
				cont += g.ContendedShare
				target += g.TargetShare
				n += g.Jobs
			}
			if math.Abs(cont-1) > 1e-9 || math.Abs(target-1) > 1e-9 || n != len(jobs) {
				t.Fatalf("trial %d: contended %v, target %v, jobs %d of %d", trial, cont, target, n, len(jobs))
			}
		}
		shuffled := slices.Clone(jobs)
		rng.Shuffle(len(shuffled), func(i, j int) { shuffled[i], shuffled[j] = shuffled[j], shuffled[i] })
		g := Fairness(resultOf(shuffled, 0), nil, 10)
		if d := diff("", reflect.ValueOf(g), reflect.ValueOf(f)); len(d) > 0 {
			t.Fatalf("trial %d: order matters: %s", trial, strings.Join(d, "; "))
		}
	}
}

// syntheticResults returns n plausible job results (not a schedule a
// cluster could run; Fairness does not care) in submit order, with 40
// accounts and 400 users.
func syntheticResults(rng *rand.Rand, n int) []row {
	jobs := make([]row, n)
	var submit float64
	for i := range jobs {
		submit += rng.ExpFloat64() * 30
		u := rng.IntN(400)
		run := 1 + rng.ExpFloat64()*3600
		start := submit
		if rng.IntN(3) > 0 {
			start += rng.ExpFloat64() * 600
		}
		j := row{ID: fmt.Sprint(i), User: fmt.Sprintf("u%d", u), Account: fmt.Sprintf("a%d", u%40), JobResult: sim.JobResult{GPUs: 1 << rng.IntN(4), Submit: submit, Start: start, End: start + run, RunTime: run}}
		if rng.IntN(20) == 0 {
			j.Preemptions = 1
			j.End += rng.Float64() * 600
		}
		jobs[i] = j
	}
	return jobs
}

func BenchmarkFairness(b *testing.B) {
	r := resultOf(syntheticResults(rand.New(rand.NewPCG(1, 1)), 100_000), 0)
	b.ReportAllocs()
	for b.Loop() {
		Fairness(r, nil, 10)
	}
}

// row is a job's result with who the job is, for building Results in tests.
type row struct {
	ID, User, Account string
	sim.JobResult
}

// resultOf returns the Result of rows on a cluster of gpus GPUs.
func resultOf(rows []row, gpus int) *sim.Result {
	jobs := make([]job.Job, len(rows))
	res := make([]sim.JobResult, len(rows))
	for i, r := range rows {
		jobs[i] = job.Job{ID: r.ID, User: r.User, Account: r.Account, GPUs: int(r.GPUs), Submit: r.Submit}
		res[i] = r.JobResult
	}
	r, err := sim.NewResult(jobs, res, gpus)
	if err != nil {
		panic(err)
	}
	return r
}
