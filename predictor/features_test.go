package predictor

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"

	"github.com/asrpt/asrpt/job"
)

func TestFamily(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"train-bert-2024-11-01-run3", "train-bert"},
		{"train-bert-2024-11-02-run7", "train-bert"},
		{"Train_BERT_20241103_run12", "train-bert"},
		{"resnet50-imagenet-seed42", "resnet50-imagenet"},
		{"resnet101-imagenet-seed42", "resnet101-imagenet"},
		{"sweep[17]", "sweep"},
		{"eval_ckpt_3f9a2c1d", "eval-ckpt"},
		{"job-550e8400-e29b-41d4-a716-446655440000", "job"},
		{"gpt2-finetune-2024-11-01T10:30:00", "gpt2-finetune"},
		{"nightly 10:30 build", "nightly-build"},
		{"debug-yolov5-run1", "debug-yolov5"},
		{"pretrain-vgg16-i8-2026-11-02-run1", "pretrain-vgg16-i8"},
		{"lr0.001-bs64", "lr0-bs64"},
		{"12345", ""},
		{"", ""},
		{"café-run2", "café"},
	} {
		if got := Family(tc.in); got != tc.want {
			t.Errorf("Family(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

// recurring returns n jobs of a few users each re-running a few named
// families; some runs fail early. Times are deterministic in seed.
func recurring(n int, seed uint64) []job.Job {
	rng := rand.New(rand.NewPCG(seed, 3))
	type fam struct {
		user, name, part string
		med, limit       float64
		gpus             int
	}
	var fams []fam
	for u := 0; u < 8; u++ {
		for f := 0; f < 4; f++ {
			fams = append(fams, fam{
				user: fmt.Sprintf("u%d", u), name: fmt.Sprintf("train-m%d", f), part: []string{"gpu", "debug"}[f%2],
				med: 60 * math.Exp(3*rng.Float64()), limit: 86400, gpus: 1 << (f % 4),
			})
		}
	}
	jobs := make([]job.Job, n)
	tm := 1.7e9
	for i := range jobs {
		tm += rng.ExpFloat64() * 300
		f := fams[rng.IntN(len(fams))]
		rt := f.med * math.Exp(0.2*rng.NormFloat64())
		state := "COMPLETED"
		if rng.Float64() < 0.2 {
			state, rt = "FAILED", rt*rng.Float64()*0.1+1
		}
		jobs[i] = job.Job{
			ID: fmt.Sprint(i + 1), Submit: math.Round(tm), User: f.user, Partition: f.part, Account: "lab",
			Name: fmt.Sprintf("%s-2024-11-%02d-run%d", f.name, 1+i%28, i), GPUs: f.gpus, Nodes: 1,
			RunTime: math.Round(rt), TimeLimit: f.limit, State: state,
		}
	}
	return jobs
}

func TestBuildRowsNoLeakage(t *testing.T) {
	jobs := recurring(600, 1)
	full := BuildRows(jobs)
	// The features of the first k jobs must not change when the later jobs
	// are added to the history (they finish after those jobs' submits).
	for _, k := range []int{1, 50, 300, 599} {
		part := BuildRows(jobs[:k])
		for i := 0; i < k; i++ {
			if !sameRow(part[i], full[i]) {
				t.Fatalf("k=%d: job %d's features changed when later jobs were added:\n%+v\n%+v", k, i, part[i], full[i])
			}
		}
	}
	// A job's features ignore its own run time and every job that ended at
	// or after its submit time: change those and nothing moves.
	i := 400
	mod := append([]job.Job{}, jobs...)
	mod[i].RunTime *= 7
	mod[i].State = "FAILED"
	for k := range mod {
		if End(&jobs[k]) >= jobs[i].Submit && k != i {
			mod[k].RunTime += 1e6
		}
	}
	if got := BuildRows(mod)[i]; !sameRow(got, full[i]) {
		t.Fatalf("job %d's features depend on its own outcome or on jobs ending after its submit", i)
	}
}

func sameRow(a, b Row) bool {
	if a.Cat != b.Cat || len(a.Num) != len(b.Num) {
		return false
	}
	for k := range a.Num {
		if a.Num[k] != b.Num[k] && !(math.IsNaN(a.Num[k]) && math.IsNaN(b.Num[k])) {
			return false
		}
	}
	return true
}

func TestExtractStats(t *testing.T) {
	h := NewHistory()
	mk := func(name string, rt float64, state string) *job.Job {
		return &job.Job{User: "alice", Name: name, Partition: "gpu", RunTime: rt, State: state, TimeLimit: 3600}
	}
	h.Add(mk("bert-run1", 100, "COMPLETED"), 1000)
	h.Add(mk("bert-run2", 300, "COMPLETED"), 3000)
	h.Add(mk("bert-run3", 10, "FAILED"), 2000)
	h.Add(mk("gpt-run1", 1000, "COMPLETED"), 4000)
	j := &job.Job{User: "alice", Name: "bert-run4", Partition: "gpu", Submit: 5000, GPUs: 2, TimeLimit: 3600}
	r := Extract(j, h)
	names := FeatureNames()
	num := func(name string) float64 {
		for k, n := range names[NumCat:] {
			if n == name {
				return r.Num[k]
			}
		}
		t.Fatalf("no feature %q", name)
		return 0
	}
	ln := math.Log
	for _, tc := range []struct {
		name string
		want float64
	}{
		{"gpus", 2}, {"nodes", math.NaN()}, {"log_limit", ln(3600)},
		{"grp_count", math.Log1p(3)}, {"grp_last", ln(300)}, {"grp_median", ln(100)},
		{"grp_mean", (ln(100) + ln(300) + ln(10)) / 3}, {"grp_since", math.Log1p(2000)},
		{"grp_fail_share", 1.0 / 3}, {"grp_ok_median", (ln(100) + ln(300)) / 2},
		{"grp_p90", ln(100) + 0.8*(ln(300)-ln(100))},
		{"user_count", math.Log1p(4)}, {"user_last", ln(1000)}, {"user_since", math.Log1p(1000)},
		{"part_median", (ln(100) + ln(300)) / 2},
	} {
		got := num(tc.name)
		if !(math.Abs(got-tc.want) < 1e-9 || math.IsNaN(got) && math.IsNaN(tc.want)) {
			t.Errorf("%s = %g, want %g", tc.name, got, tc.want)
		}
	}
	if r.Cat[CatFamily] != "bert" || r.Cat[CatUser] != "alice" {
		t.Errorf("categorical features %q", r.Cat)
	}
	// An unseen group has NaN statistics and a zero count.
	r = Extract(&job.Job{User: "bob", Name: "x"}, h)
	if r.Group.Count != 0 || !math.IsNaN(r.Num[6]) || r.Num[5] != 0 {
		t.Errorf("unseen group: %+v", r.Num)
	}
}

func TestWindowMatchesSort(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 1))
	var w window
	var all []float64
	for i := 0; i < 500; i++ {
		x := math.Round(rng.NormFloat64() * 10)
		w.add(x)
		all = append(all, x)
		last := append([]float64{}, all[max(0, len(all)-Window):]...)
		sortFloats(last)
		if !reflect.DeepEqual(last, w.sorted) {
			t.Fatalf("after %d adds the window is %v, want %v", i+1, w.sorted, last)
		}
	}
}

func sortFloats(s []float64) {
	for i := 1; i < len(s); i++ {
		for k := i; k > 0 && s[k] < s[k-1]; k-- {
			s[k], s[k-1] = s[k-1], s[k]
		}
	}
}

func TestEncoderUnseen(t *testing.T) {
	rows := make([]Row, 10)
	y := make([]float64, 10)
	for i := range rows {
		rows[i].Cat[CatUser] = []string{"a", "b"}[i%2]
		rows[i].Num = make([]float64, NumNum)
		y[i] = float64(i % 2) // b is slower
	}
	rows[0].Cat[CatUser] = "rare"
	e := FitEncoder(rows, y)
	if !reflect.DeepEqual(e.Vocab[CatUser], []string{"a", "b"}) {
		t.Fatalf("vocab %q, want [a b] (rare dropped, ordered by mean target)", e.Vocab[CatUser])
	}
	for _, tc := range []struct {
		v    string
		want float64
	}{{"a", 0}, {"b", 1}, {"rare", math.NaN()}, {"never", math.NaN()}} {
		r := Row{Num: make([]float64, NumNum)}
		r.Cat[CatUser] = tc.v
		got := e.Encode(nil, &r)[CatUser]
		if got != tc.want && !(math.IsNaN(got) && math.IsNaN(tc.want)) {
			t.Errorf("encode %q = %g, want %g", tc.v, got, tc.want)
		}
	}
}

func TestValidate(t *testing.T) {
	ok := job.Job{ID: "1", Submit: 10, RunTime: 5, GPUs: 1}
	for _, tc := range []struct {
		name string
		jobs []job.Job
		want error
		msg  string
	}{
		{"empty", nil, ErrEmptyHistory, ""},
		{"NaN run time", []job.Job{ok, {ID: "2", RunTime: math.NaN()}}, ErrBadJob, `job 2 (id "2"): RunTime is NaN`},
		{"infinite submit", []job.Job{{ID: "3", Submit: math.Inf(1)}}, ErrBadJob, "Submit is infinite"},
		{"negative run time", []job.Job{{ID: "4", RunTime: -3}}, ErrBadJob, "RunTime is negative (-3)"},
		{"negative limit", []job.Job{{ID: "5", TimeLimit: -1}}, ErrBadJob, "TimeLimit is negative"},
		{"negative GPUs", []job.Job{{ID: "6", GPUs: -1}}, ErrBadJob, "GPUs is negative"},
		{"duplicate id", []job.Job{ok, {ID: "7"}, ok}, ErrBadJob, `job 3 (id "1"): id already used by job 1`},
		{"missing strings are fine", []job.Job{{ID: "8", Submit: 1, RunTime: 2}, {Submit: 1}, {Submit: 2}}, nil, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := Validate(tc.jobs)
			if !errors.Is(err, tc.want) || (tc.want == nil) != (err == nil) {
				t.Fatalf("Validate = %v, want %v", err, tc.want)
			}
			if tc.msg != "" && !strings.Contains(err.Error(), tc.msg) {
				t.Errorf("error %q does not say %q", err, tc.msg)
			}
		})
	}
}

func TestTrainBadHistory(t *testing.T) {
	for _, tc := range []struct {
		name string
		jobs []job.Job
		want error
	}{
		{"empty", nil, ErrEmptyHistory},
		{"no finished job", []job.Job{{ID: "1", Submit: 1, State: "RUNNING", RunTime: 5}, {ID: "2", Submit: 2}}, ErrNoFinished},
		{"NaN", []job.Job{{ID: "1", Submit: math.NaN(), RunTime: 5}}, ErrBadJob},
	} {
		if _, err := Train(tc.jobs, DefaultTrainConfig()); !errors.Is(err, tc.want) {
			t.Errorf("%s: Train error %v, want %v", tc.name, err, tc.want)
		}
		if _, err := Evaluate(tc.jobs, EvalConfig{}); !errors.Is(err, tc.want) {
			t.Errorf("%s: Evaluate error %v, want %v", tc.name, err, tc.want)
		}
	}
}

func TestFailed(t *testing.T) {
	for s, want := range map[string]bool{"COMPLETED": false, "TIMEOUT": false, "": false, "Pass": false,
		"FAILED": true, "CANCELLED by 0": true, "NODE_FAIL": true, "OUT_OF_MEMORY": true, "Killed": true, "PREEMPTED": true} {
		if Failed(s) != want {
			t.Errorf("Failed(%q) = %v", s, !want)
		}
	}
}
