package trace

import (
	"context"
	"errors"
	"fmt"
	"math"
	"reflect"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"
	"unsafe"

	"github.com/asrpt/asrpt/cluster"
	"github.com/asrpt/asrpt/job"
	"github.com/asrpt/asrpt/placement"
)

func TestGenerateDeterministic(t *testing.T) {
	cfg := DefaultGenConfig()
	cfg.Jobs = 5000
	a, err := Generate(cfg)
	if err != nil {
		t.Fatal(err)
	}
	b, err := Generate(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(a, b) {
		t.Fatal("same config, different jobs")
	}
	cfg.Seed++
	c, err := Generate(cfg)
	if err != nil {
		t.Fatal(err)
	}
	same := 0
	for i := range a {
		if a[i].Submit == c[i].Submit && a[i].RunTime == c[i].RunTime && a[i].User == c[i].User {
			same++
		}
	}
	if same > len(a)/100 {
		t.Fatalf("seeds %d and %d agree on %d of %d jobs", cfg.Seed-1, cfg.Seed, same, len(a))
	}
}

func TestGenerateBadConfig(t *testing.T) {
	tests := []struct {
		name string
		mod  func(*GenConfig)
	}{
		{"no jobs", func(c *GenConfig) { c.Jobs = 0 }},
		{"negative jobs", func(c *GenConfig) { c.Jobs = -1 }},
		{"no GPUs", func(c *GenConfig) { c.ClusterGPUs = 0 }},
		{"GPUs not whole nodes", func(c *GenConfig) { c.ClusterGPUs = 12 }},
		{"GPUs per node zero", func(c *GenConfig) { c.GPUsPerNode = 0 }},
		{"GPUs per node above 64", func(c *GenConfig) { c.GPUsPerNode, c.ClusterGPUs = 128, 256 }},
		{"zero load", func(c *GenConfig) { c.Load = 0 }},
		{"NaN load", func(c *GenConfig) { c.Load = math.NaN() }},
		{"profiled share above 1", func(c *GenConfig) { c.ProfiledShare = 1.5 }},
		{"negative users", func(c *GenConfig) { c.Users = -3 }},
		{"zero median", func(c *GenConfig) { c.MedianRunTime = 0 }},
		{"failed+cancelled above 1", func(c *GenConfig) { c.FailedShare, c.CancelledShare = 0.7, 0.5 }},
		{"diurnal 1", func(c *GenConfig) { c.Diurnal = 1 }},
		{"weekend 0", func(c *GenConfig) { c.Weekend = 0 }},
		{"infinite start", func(c *GenConfig) { c.Start = math.Inf(1) }},
		{"mix with no fitting entry", func(c *GenConfig) { c.GPUMix = []GPUShare{{512, 1}} }},
		{"mix with zero GPUs", func(c *GenConfig) { c.GPUMix = []GPUShare{{0, 1}} }},
		{"array share above 1", func(c *GenConfig) { c.ArrayShare = 1.01 }},
		{"negative array task spread", func(c *GenConfig) { c.ArrayTaskSpread = -0.1 }},
	}
	for _, tc := range tests {
		cfg := DefaultGenConfig()
		tc.mod(&cfg)
		if _, err := Generate(cfg); !errors.Is(err, ErrConfig) {
			t.Errorf("%s: error %v, want ErrConfig", tc.name, err)
		}
	}
}

// summary holds the shape statistics of a generated workload.
type summary struct {
	jobs                              int
	gpuShare                          map[int]float64
	p50, p90, p99, max                float64 // run time quantiles, s
	states                            map[string]float64
	noLimit, profiledOfMulti          float64
	load                              float64 // realised offered load
	meanRate                          float64 // mean arrival-rate factor over the span
	spanDays                          float64
	peakToTrough, weekendToWeekday    float64
	users, groups, recurringJobsShare float64
}

func summarise(jobs []job.Job, clusterGPUs int) summary {
	s := summary{jobs: len(jobs), gpuShare: map[int]float64{}, states: map[string]float64{}}
	n := float64(len(jobs))
	rts := make([]float64, len(jobs))
	work, multi, profiled := 0.0, 0, 0
	var hour [24]float64
	var weekday, weekend float64
	users := map[string]bool{}
	groups := map[[2]string]int{}
	for i, j := range jobs {
		s.gpuShare[j.GPUs] += 1 / n
		s.states[j.State] += 1 / n
		rts[i] = j.RunTime
		work += float64(j.GPUs) * j.RunTime
		if j.TimeLimit == 0 {
			s.noLimit += 1 / n
		}
		if j.GPUs > 1 {
			multi++
			if j.Profile != "" {
				profiled++
			}
		}
		tm := time.Unix(int64(j.Submit), 0).UTC()
		hour[tm.Hour()]++
		if wd := tm.Weekday(); wd == time.Saturday || wd == time.Sunday {
			weekend++
		} else {
			weekday++
		}
		users[j.User] = true
		groups[[2]string{j.User, normaliseName(j.Name)}]++
	}
	slices.Sort(rts)
	q := func(p float64) float64 { return rts[int(p*float64(len(rts)-1))] }
	s.p50, s.p90, s.p99, s.max = q(0.5), q(0.9), q(0.99), rts[len(rts)-1]
	s.profiledOfMulti = float64(profiled) / float64(max(multi, 1))
	span := jobs[len(jobs)-1].Submit - jobs[0].Submit
	s.load = work / (float64(clusterGPUs) * span)
	s.spanDays = span / 86400
	c := DefaultGenConfig()
	steps := 0
	for t := jobs[0].Submit; t < jobs[len(jobs)-1].Submit; t += 300 {
		s.meanRate += arrivalRate(t, c.Diurnal, c.Weekend)
		steps++
	}
	s.meanRate /= float64(max(steps, 1))
	afternoon := hour[12] + hour[13] + hour[14] + hour[15] + hour[16] + hour[17]
	night := hour[0] + hour[1] + hour[2] + hour[3] + hour[4] + hour[5]
	s.peakToTrough = afternoon / night
	s.weekendToWeekday = (weekend / 2) / (weekday / 5)
	s.users, s.groups = float64(len(users)), float64(len(groups))
	rec := 0
	for _, c := range groups {
		if c > 1 {
			rec += c
		}
	}
	s.recurringJobsShare = float64(rec) / n
	return s
}

var dateRun = regexp.MustCompile(`-\d{4}-\d{2}-\d{2}(-run\d+)?$|-run\d+$`)

// normaliseName strips a trailing date and run number, the way a
// predictor groups recurring jobs.
func normaliseName(s string) string { return dateRun.ReplaceAllString(s, "") }

func (s summary) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%d jobs, %.0f users, %.0f (user, normalised name) groups, %.1f%% of jobs in recurring groups\n", s.jobs, s.users, s.groups, 100*s.recurringJobsShare)
	var gs []int
	for g := range s.gpuShare {
		gs = append(gs, g)
	}
	sort.Ints(gs)
	b.WriteString("GPU mix:")
	for _, g := range gs {
		fmt.Fprintf(&b, " %d:%.1f%%", g, 100*s.gpuShare[g])
	}
	fmt.Fprintf(&b, "\nrun time: p50 %.0f s, p90 %.0f s, p99 %.0f s, max %.0f s\nstates:", s.p50, s.p90, s.p99, s.max)
	var st []string
	for k := range s.states {
		st = append(st, k)
	}
	sort.Strings(st)
	for _, k := range st {
		fmt.Fprintf(&b, " %s %.1f%%", k, 100*s.states[k])
	}
	fmt.Fprintf(&b, "\nno time limit %.1f%%; profiled %.1f%% of multi-GPU jobs; span %.1f days; realised load %.3f (rate factor over the span %.3f); arrivals 12-18h/0-6h UTC %.2f; weekend/weekday day %.2f",
		100*s.noLimit, 100*s.profiledOfMulti, s.spanDays, s.load, s.meanRate, s.peakToTrough, s.weekendToWeekday)
	return b.String()
}

// TestGenerateShape generates the default workload (and a large one),
// logs its statistics and checks the documented shape.
func TestGenerateShape(t *testing.T) {
	for _, jobsN := range []int{DefaultGenConfig().Jobs, 200000} {
		t.Run(strconv.Itoa(jobsN), func(t *testing.T) {
			cfg := DefaultGenConfig()
			cfg.Jobs = jobsN
			jobs, err := Generate(cfg)
			if err != nil {
				t.Fatal(err)
			}
			if len(jobs) != cfg.Jobs {
				t.Fatalf("%d jobs, want %d", len(jobs), cfg.Jobs)
			}
			checkJobs(t, jobs)
			pl := placement.NewPlacer(cluster.Uniform(cfg.ClusterGPUs/cfg.GPUsPerNode, cfg.GPUsPerNode))
			for i := range jobs {
				j := &jobs[i]
				if j.ID != strconv.Itoa(i+1) {
					t.Fatalf("job %d has id %q", i, j.ID)
				}
				if j.GPUs > cfg.ClusterGPUs {
					t.Fatalf("job %s asks for %d GPUs on a %d-GPU cluster", j.ID, j.GPUs, cfg.ClusterGPUs)
				}
				if j.GPUs > cfg.GPUsPerNode && (j.GPUs%cfg.GPUsPerNode != 0 || j.Nodes != j.GPUs/cfg.GPUsPerNode) || j.GPUs <= cfg.GPUsPerNode && j.Nodes != 1 {
					t.Fatalf("job %s: %d GPUs on %d nodes of %d GPUs", j.ID, j.GPUs, j.Nodes, cfg.GPUsPerNode)
				}
				if j.TimeLimit > 0 && j.RunTime > j.TimeLimit {
					t.Fatalf("job %s runs %v s past its limit %v s", j.ID, j.RunTime, j.TimeLimit)
				}
				if j.Profile != "" {
					if !j.Profiled() || j.Iterations != math.Trunc(j.Iterations) {
						t.Fatalf("job %s: profile %q with iterations %v", j.ID, j.Profile, j.Iterations)
					}
					p, err := placement.Lookup(j.Profile, j.GPUs)
					if err != nil {
						t.Fatalf("job %s: %v", j.ID, err)
					}
					amin, _ := pl.Bounds(p)
					if j.RunTime != j.Iterations*amin {
						t.Fatalf("job %s: run time %v, want iterations %v · α_min %v", j.ID, j.RunTime, j.Iterations, amin)
					}
				}
				if strings.Contains(j.Name, "-run") && dateRun.MatchString(j.Name) && strings.Count(j.Name, "-20") > 0 {
					date := time.Unix(int64(j.Submit), 0).UTC().Format(time.DateOnly)
					if !strings.Contains(j.Name, date) {
						t.Fatalf("job %s named %q, submitted on %s", j.ID, j.Name, date)
					}
				}
			}
			s := summarise(jobs, cfg.ClusterGPUs)
			t.Logf("default generator, seed %d, %d GPUs (%d per node), load %.2f:\n%v", cfg.Seed, cfg.ClusterGPUs, cfg.GPUsPerNode, cfg.Load, s)
			checks := []struct {
				what string
				ok   bool
			}{
				{"1 GPU is the most common size (≥ 45%)", s.gpuShare[1] >= 0.45 && s.gpuShare[1] == maxShare(s.gpuShare)},
				{"8 GPUs is the second most common size", s.gpuShare[8] >= s.gpuShare[2] && s.gpuShare[8] >= s.gpuShare[4]},
				{"jobs of 16 GPUs and more exist", s.gpuShare[16]+s.gpuShare[32]+s.gpuShare[64]+s.gpuShare[128] > 0.01},
				{"median run time between 1 min and 1 h", s.p50 >= 60 && s.p50 <= 3600},
				{"heavy tail: p99 ≥ 20 × median", s.p99 >= 20*s.p50},
				{"failed share 5–25%", s.states["FAILED"] >= 0.05 && s.states["FAILED"] <= 0.25},
				{"cancelled share 3–20%", s.states["CANCELLED"] >= 0.03 && s.states["CANCELLED"] <= 0.20},
				{"some jobs time out", s.states["TIMEOUT"] > 0},
				{"some jobs have no time limit, most have one", s.noLimit > 0 && s.noLimit < 0.5},
				{"profiled share of multi-GPU jobs within a factor 2 of ProfiledShare", s.profiledOfMulti >= cfg.ProfiledShare/2 && s.profiledOfMulti <= 2*cfg.ProfiledShare},
				// Over whole weeks the mean rate factor is 1; a shorter span
				// sees its own mean (weekdays only: 7/6).
				{"realised load within 10% of Load × mean rate factor", math.Abs(s.load-cfg.Load*s.meanRate) <= 0.1*cfg.Load*s.meanRate},
				{"diurnal: afternoon arrivals ≥ 2 × night arrivals", s.peakToTrough >= 2},
				{"weekly: weekend days quieter than weekdays", s.spanDays < 14 || s.weekendToWeekday < 0.8},
				{"most jobs recur (same user and normalised name)", s.recurringJobsShare > 0.6 && s.recurringJobsShare < 0.98},
			}
			for _, c := range checks {
				if !c.ok {
					t.Errorf("shape check failed: %s", c.what)
				}
			}
		})
	}
}

func maxShare(m map[int]float64) float64 {
	x := 0.0
	for _, v := range m {
		x = max(x, v)
	}
	return x
}

// TestGenerateSmallClusters checks that no job exceeds the cluster and that
// multi-node jobs take whole nodes on odd node sizes.
func TestGenerateSmallClusters(t *testing.T) {
	for _, shape := range [][2]int{{1, 4}, {4, 4}, {6, 2}, {3, 6}, {2, 1}} {
		cfg := DefaultGenConfig()
		cfg.Jobs, cfg.ClusterGPUs, cfg.GPUsPerNode = 3000, shape[0]*shape[1], shape[1]
		jobs, err := Generate(cfg)
		if err != nil {
			t.Fatalf("%v: %v", shape, err)
		}
		checkJobs(t, jobs)
		for _, j := range jobs {
			if j.GPUs > cfg.ClusterGPUs || j.GPUs > cfg.GPUsPerNode && j.GPUs%cfg.GPUsPerNode != 0 {
				t.Fatalf("%d nodes × %d GPUs: job %s asks for %d GPUs", shape[0], shape[1], j.ID, j.GPUs)
			}
		}
	}
}

func TestGenerateNoProfiles(t *testing.T) {
	cfg := DefaultGenConfig()
	cfg.Jobs, cfg.ProfiledShare = 3000, 0
	jobs, err := Generate(cfg)
	if err != nil {
		t.Fatal(err)
	}
	for _, j := range jobs {
		if j.Profile != "" || j.RunTime != math.Trunc(j.RunTime) {
			t.Fatalf("job %s: profile %q, run time %v; want plain jobs with whole seconds", j.ID, j.Profile, j.RunTime)
		}
	}
}

// BenchmarkGenerate measures the generator; the 1M case is the issue's
// "a few seconds at most" figure.
func BenchmarkGenerate(b *testing.B) {
	for _, n := range []int{100000, 1000000} {
		b.Run(strconv.Itoa(n), func(b *testing.B) {
			cfg := DefaultGenConfig()
			cfg.Jobs, cfg.ClusterGPUs = n, 8000
			b.ReportAllocs()
			for b.Loop() {
				if _, err := Generate(cfg); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(n), "ns/job")
		})
	}
}

// countdown is a context that is done after its Err has been asked n
// times: a SIGINT arriving in the middle of a pass.
type countdown struct {
	context.Context
	n int
}

func (c *countdown) Err() error {
	if c.n--; c.n < 0 {
		return context.Canceled
	}
	return nil
}

// TestGenerateContext: the generator stops with the context's error once
// the context is done, within genCheckEvery jobs of each pass, in every
// pass (shapes, arrivals, names).
func TestGenerateContext(t *testing.T) {
	cfg := DefaultGenConfig()
	cfg.Jobs = 4 * genCheckEvery
	passes := cfg.Jobs / genCheckEvery // looks at the context per pass
	for _, c := range []struct {
		name string
		n    int
	}{
		{"done before", 0},
		{"during the shapes", 2},
		{"during the arrivals", passes + 3},
		{"during the names", 2*passes + 3},
		{"after the last pass", 3*passes + 1},
	} {
		t.Run(c.name, func(t *testing.T) {
			jobs, err := GenerateContext(&countdown{context.Background(), c.n}, cfg)
			if !errors.Is(err, context.Canceled) || jobs != nil {
				t.Fatalf("%d jobs, %v; want context.Canceled and none", len(jobs), err)
			}
		})
	}
	if jobs, err := GenerateContext(&countdown{context.Background(), 1 << 30}, cfg); err != nil || len(jobs) != cfg.Jobs {
		t.Fatalf("not interrupted: %d jobs, %v", len(jobs), err)
	}
}

// TestMaxGenJobsFits: the generator's up-front job slice at MaxGenJobs
// stays under 4 GiB (the bound's reason, see MaxGenJobs).
func TestMaxGenJobsFits(t *testing.T) {
	if b := uint64(unsafe.Sizeof(job.Job{})) * MaxGenJobs; b > 1<<32 {
		t.Errorf("MaxGenJobs × %d bytes = %d bytes, over 4 GiB", unsafe.Sizeof(job.Job{}), b)
	}
	cfg := DefaultGenConfig()
	cfg.Jobs = MaxGenJobs + 1
	if err := cfg.Validate(); !errors.Is(err, ErrConfig) {
		t.Errorf("jobs past MaxGenJobs: %v", err)
	}
}

// TestGenerateArrays: with ArrayShare the tasks of an array are consecutive
// jobs with one submit time, one name and the first task's id as
// ArrayJobID; about ArrayShare of the submissions are arrays; the load is
// still the one asked for; the tasks of an array differ less than the runs
// of their family; and ArrayShare 0 makes no array.
func TestGenerateArrays(t *testing.T) {
	cfg := DefaultGenConfig()
	cfg.Jobs, cfg.ArrayShare = 20000, 0.2
	jobs, err := Generate(cfg)
	if err != nil {
		t.Fatal(err)
	}
	checkJobs(t, jobs)
	submissions, arrays, tasks := 0, 0, 0
	var within, across []float64 // |log run time − first task's|, completed runs only
	lastOfGroup := map[[2]string]float64{}
	for i := 0; i < len(jobs); {
		n := 1
		for i+n < len(jobs) && jobs[i+n].ArrayJobID != "" && jobs[i+n].ArrayJobID == jobs[i].ArrayJobID {
			n++
		}
		submissions++
		first := &jobs[i]
		if n > 1 {
			arrays++
			tasks += n
			if first.ArrayJobID != first.ID || n > ArrayMaxTasks {
				t.Fatalf("array at job %s: ArrayJobID %q, %d tasks", first.ID, first.ArrayJobID, n)
			}
		} else if first.ArrayJobID != "" {
			t.Fatalf("job %s: ArrayJobID %q on a lone job", first.ID, first.ArrayJobID)
		}
		for _, j := range jobs[i+1 : i+n] {
			if j.Submit != first.Submit || j.Name != first.Name || j.User != first.User || j.GPUs != first.GPUs {
				t.Fatalf("task %s differs from its array's first task %s", j.ID, first.ID)
			}
			if j.State == "COMPLETED" && first.State == "COMPLETED" {
				within = append(within, math.Abs(math.Log(j.RunTime/first.RunTime)))
			}
		}
		key := [2]string{first.User, normaliseName(first.Name)}
		if last, ok := lastOfGroup[key]; ok && first.State == "COMPLETED" {
			across = append(across, math.Abs(math.Log(first.RunTime/last)))
		}
		if first.State == "COMPLETED" {
			lastOfGroup[key] = first.RunTime
		}
		i += n
	}
	share := float64(arrays) / float64(submissions)
	if math.Abs(share-cfg.ArrayShare) > 0.03 {
		t.Errorf("%.3f of the submissions are arrays, want %.2f", share, cfg.ArrayShare)
	}
	if mean := float64(tasks) / float64(arrays); mean < ArrayMeanTasks-1.5 || mean > ArrayMeanTasks+1.5 {
		t.Errorf("%.2f tasks an array, want about %d", mean, ArrayMeanTasks)
	}
	s := summarise(jobs, cfg.ClusterGPUs)
	if math.Abs(s.load-cfg.Load*s.meanRate) > 0.1*cfg.Load*s.meanRate {
		t.Errorf("realised load %.3f, want %.3f within 10%%", s.load, cfg.Load*s.meanRate)
	}
	slices.Sort(within)
	slices.Sort(across)
	mw, ma := within[len(within)/2], across[len(across)/2]
	if !(mw < 0.5*ma) {
		t.Errorf("median |Δ log run time| within arrays %.3f, across the runs of a group %.3f: tasks not more alike", mw, ma)
	}
	t.Logf("%d submissions, %d arrays of %d tasks; median |Δ log run time| within arrays %.3f, between runs of a group %.3f",
		submissions, arrays, tasks, mw, ma)

	cfg.ArrayShare = 0
	plain, err := Generate(cfg)
	if err != nil {
		t.Fatal(err)
	}
	for i := range plain {
		if plain[i].ArrayJobID != "" {
			t.Fatalf("job %s: ArrayJobID %q with ArrayShare 0", plain[i].ID, plain[i].ArrayJobID)
		}
	}
}

// TestGenerateCommands: with argument sets every job carries a command,
// a family runs at most Commands of them, the same config gives the same
// jobs, and the sets explain the share of the run-time spread asked for
// (measured on the completed runs, within the sampling error).
func TestGenerateCommands(t *testing.T) {
	cfg := DefaultGenConfig()
	cfg.Jobs, cfg.ProfiledShare, cfg.Commands, cfg.CommandSpread = 20000, 0, 4, 0.8
	jobs, err := Generate(cfg)
	if err != nil {
		t.Fatal(err)
	}
	again, _ := Generate(cfg)
	if !reflect.DeepEqual(jobs, again) {
		t.Fatal("the same config gave other jobs")
	}
	type acc struct{ n, sum, sq float64 }
	add := func(m map[string]*acc, k string, x float64) {
		a := m[k]
		if a == nil {
			a = &acc{}
			m[k] = a
		}
		a.n, a.sum, a.sq = a.n+1, a.sum+x, a.sq+x*x
	}
	within := func(m map[string]*acc) float64 { // pooled variance within the groups
		var ss, df float64
		for _, a := range m {
			if a.n > 1 {
				ss += a.sq - a.sum*a.sum/a.n
				df += a.n - 1
			}
		}
		return ss / df
	}
	families, commands := map[string]*acc{}, map[string]*acc{}
	perFamily := map[string]map[uint64]bool{}
	for i := range jobs {
		j := &jobs[i]
		if j.Command == 0 {
			t.Fatalf("job %s has no command", j.ID)
		}
		fam := j.User + "\x00" + familyStem(j.Name)
		if perFamily[fam] == nil {
			perFamily[fam] = map[uint64]bool{}
		}
		perFamily[fam][j.Command] = true
		if j.State == "COMPLETED" {
			add(families, fam, math.Log(j.RunTime))
			add(commands, job.FormatCommand(j.Command), math.Log(j.RunTime))
		}
	}
	for fam, cs := range perFamily {
		if len(cs) > cfg.Commands {
			t.Errorf("family %q runs %d commands, want at most %d", fam, len(cs), cfg.Commands)
		}
	}
	// Within a command what is left is 1 − CommandSpread of the family's
	// variance, plus the tails and limits both share.
	if f, c := within(families), within(commands); !(c < 0.5*f) {
		t.Errorf("log run-time variance %.3f within commands, %.3f within families: the commands explain too little", c, f)
	}
	none := cfg
	none.Commands = 0
	plain, _ := Generate(none)
	for i := range plain {
		if plain[i].Command != 0 {
			t.Fatalf("job %s has a command without --commands", plain[i].ID)
		}
	}
}

// familyStem is the generator's family stem of a job name: the name
// without the date, run and one-off suffixes of its templates.
func familyStem(name string) string {
	if i := strings.Index(name, "-2026-"); i >= 0 {
		name = name[:i]
	}
	if i := strings.LastIndex(name, "-run"); i >= 0 {
		name = name[:i]
	}
	if i := strings.LastIndex(name, "-"); i >= 0 && len(name)-i == 7 && strings.Trim(name[i+1:], "0123456789abcdef") == "" {
		name = name[:i] // a one-off's random hex
	}
	return name
}
