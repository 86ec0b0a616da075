package predictor

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
	"unsafe"

	"github.com/asrpt/asrpt/job"
)

// withCommands is a history in which one user runs one script ("train")
// with six argument sets: the command (its key) sets the run time
// (600 s · 2^k, ±10 %), which the name alone cannot tell.
func withCommands(n int, seed uint64) []job.Job {
	rng := rand.New(rand.NewPCG(seed, 5))
	jobs := make([]job.Job, n)
	tm := 1.7e9
	for i := range jobs {
		tm += rng.ExpFloat64() * 600
		k := rng.IntN(6)
		jobs[i] = job.Job{ID: fmt.Sprint(i), Submit: tm, User: "ann", Name: "train", Partition: "gpu", GPUs: 4, Nodes: 1,
			RunTime: 600 * math.Exp2(float64(k)) * (0.9 + 0.2*rng.Float64()), TimeLimit: 86400, State: "COMPLETED",
			Command: job.CommandKey("/home/ann", fmt.Sprintf("sbatch train.sh --epochs %d", 10<<k))}
	}
	return jobs
}

// TestOptionalFeaturesLearnCommand: trained on a history that carries
// commands, the model encodes their histories and predicts held-out jobs
// at least three times closer than the same model trained without them.
func TestOptionalFeaturesLearnCommand(t *testing.T) {
	train, test := withCommands(1500, 1), withCommands(400, 2)
	strip := func(jobs []job.Job) []job.Job {
		out := slices.Clone(jobs)
		for i := range out {
			out[i].Command = 0
		}
		return out
	}
	cfg := DefaultTrainConfig()
	cfg.Forest.Trees = 20
	mae := func(jobs []job.Job) (float64, *Model) {
		m, err := Train(jobs[:len(train)], cfg)
		if err != nil {
			t.Fatal(err)
		}
		rows := BuildRows(jobs) // the test jobs see the training jobs as history
		sum := 0.0
		for i := len(train); i < len(jobs); i++ {
			sum += math.Abs(m.Predict(&rows[i]) - jobs[i].RunTime)
		}
		return sum / float64(len(jobs)-len(train)), m
	}
	all := append(slices.Clone(train), test...)
	for i := range test {
		all[len(train)+i].Submit += train[len(train)-1].Submit - test[0].Submit + 3600
	}
	with, m := mae(all)
	without, m0 := mae(strip(all))
	if want := append(FeatureNames(), "cmd_count", "cmd_last", "cmd_median"); !slices.Equal(m.Encoder.Names(), want) {
		t.Errorf("features %v, want %v", m.Encoder.Names(), want)
	}
	if !slices.Equal(m0.Encoder.Names(), FeatureNames()) || m0.Encoder.NumFeatures() != NumCat+NumNum {
		t.Errorf("without optional data the features are %v, want schema 1's", m0.Encoder.Names())
	}
	if with*3 > without {
		t.Errorf("mean absolute error %.0f s with commands, %.0f s without: want at most a third", with, without)
	}
	t.Logf("MAE %.0f s with the optional features, %.0f s without", with, without)
}

// TestModelFileOptional: a model that uses optional features saves and
// loads to the same predictions; a file naming an optional feature out of
// order, or one this build does not know, is refused as another schema.
func TestModelFileOptional(t *testing.T) {
	cfg := DefaultTrainConfig()
	cfg.Forest.Trees = 6
	jobs := withCommands(300, 3)
	jobs[0].Command = 0 // a row without a command: the feature is still used
	m, err := Train(jobs, cfg)
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if _, err := m.WriteTo(&buf); err != nil {
		t.Fatal(err)
	}
	got, err := DecodeModel(buf.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	if got.Encoder.Use != m.Encoder.Use {
		t.Errorf("encoder uses %v, want %v", got.Encoder.Use, m.Encoder.Use)
	}
	rows := BuildRows(withCommands(100, 4))
	if a, b := m.PredictRows(rows), got.PredictRows(rows); !slices.Equal(a, b) {
		t.Error("predictions differ after a save and a load")
	}
	cmd := []string{"cmd_count", "cmd_last", "cmd_median"}
	for _, tc := range []struct {
		name     string
		features []string
	}{
		{"out of order", append(FeatureNames(), "cmd_last", "cmd_count", "cmd_median")},
		{"unknown", append(FeatureNames(), "gpu_hours")},
		{"twice", append(FeatureNames(), "cmd_count", "cmd_last", "cmd_median", "cmd_count")},
		{"part of a feature", append(FeatureNames(), "cmd_count", "cmd_median")},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := fileHeader{SchemaVersion: SchemaVersion, Features: tc.features, Vocab: make([][]string, NumCat)}
			if _, err := checkSchema(&h); !errors.Is(err, ErrSchema) {
				t.Errorf("%v: %v, want ErrSchema", tc.features, err)
			}
		})
	}
	h := fileHeader{SchemaVersion: SchemaVersion, Features: append(FeatureNames(), cmd...), Vocab: make([][]string, NumCat)}
	if use, err := checkSchema(&h); err != nil || use != [NumOpt]bool{OptCommand: true} {
		t.Errorf("the command's columns: %v, %v", use, err)
	}
}

// TestCommandBaseline: from MinCommandRuns finished runs of its command in
// its (user, family) group on, a job's baseline is their median rather
// than the group's; a command never pools across groups (the same command
// under another name counts nothing).
func TestCommandBaseline(t *testing.T) {
	long, short := job.CommandKey("/home/ann", "sbatch train.sh --epochs 90"), job.CommandKey("/home/ann", "sbatch train.sh --epochs 1")
	var jobs []job.Job
	for i, rt := range []float64{1000, 1200, 800} {
		jobs = append(jobs, job.Job{ID: fmt.Sprint(i), Submit: float64(i * 10000), User: "ann", Name: "train",
			GPUs: 1, RunTime: rt, State: "COMPLETED", Command: long})
	}
	for i := range 3 {
		jobs = append(jobs, job.Job{ID: fmt.Sprint("s", i), Submit: float64(1 + i), User: "ann", Name: "train",
			GPUs: 1, RunTime: 50, State: "COMPLETED", Command: short})
	}
	for _, tc := range []struct {
		name     string
		runs     int    // of the long command, finished before the new job
		jobName  string // the new job's
		cmdRuns  int
		baseline float64 // seconds; 0: the group's median
	}{
		{"three runs", 3, "train", 3, 1000},
		{"two runs", 2, "train", 2, 0},
		{"another name", 3, "renamed", 0, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			hist := append(slices.Clone(jobs[:tc.runs]), jobs[3:]...)
			hist = append(hist, job.Job{ID: "new", Submit: 40000, User: "ann", Name: tc.jobName, GPUs: 1, RunTime: 1, Command: long})
			rows := BuildRows(hist)
			r := &rows[len(rows)-1]
			if r.Opt.Cmd.Count != tc.cmdRuns {
				t.Fatalf("command %d runs, want %d", r.Opt.Cmd.Count, tc.cmdRuns)
			}
			want := tc.baseline
			if want == 0 {
				want = math.Exp(r.Group.Median)
				if r.Group.Count == 0 {
					want = math.Exp(r.User.Median)
				}
			}
			if got := math.Exp(Offset(r)); math.Abs(got-want) > 1e-6 {
				t.Errorf("baseline %g s, want %g s", got, want)
			}
		})
	}
}

// TestTrainRowInline: a trainRow stays within the 128 bytes a Go map keeps
// inline (Forest.rows holds one per waiting job; a larger value is
// allocated on its own).
func TestTrainRowInline(t *testing.T) {
	if n := unsafe.Sizeof(trainRow{}); n > 128 {
		t.Errorf("trainRow is %d bytes, want at most 128", n)
	}
}
