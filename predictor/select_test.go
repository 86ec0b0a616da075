package predictor

import (
	"fmt"
	"math"
	"testing"

	"github.com/asrpt/asrpt/job"
)

// TestSelectorChooses: the candidate with the lower running error is
// chosen, by the group's own errors once it has selectMinScored scored
// jobs, else by its user's, else by every group's; a job not predicted is
// not scored.
func TestSelectorChooses(t *testing.T) {
	// made predicts run times e^forest and e^group; the job ran e^y.
	type scored struct {
		key, user     string
		forest, group float64
		y             float64
	}
	good := func(key, user string) scored { return scored{key, user, 5, 3, 3} } // the group is right
	bad := func(key, user string) scored { return scored{key, user, 3, 5, 3} }  // the forest is right
	for _, tc := range []struct {
		name      string
		scores    []scored
		key, user string
		want      candidate
	}{
		{"nothing scored: forest", nil, "u\x00a", "u", candForest},
		{"group's own errors", []scored{good("u\x00a", "u"), good("u\x00a", "u"), good("u\x00a", "u")}, "u\x00a", "u", candGroup},
		{"too few in the group: the user's", []scored{bad("u\x00b", "u"), bad("u\x00b", "u"), bad("u\x00b", "u"), good("u\x00a", "u")}, "u\x00a", "u", candForest},
		{"new user: every group's", []scored{good("v\x00a", "v"), good("v\x00a", "v"), good("w\x00a", "w")}, "u\x00a", "u", candGroup},
		{"the newest errors weigh most", []scored{bad("u\x00a", "u"), bad("u\x00a", "u"), bad("u\x00a", "u"), good("u\x00a", "u"), good("u\x00a", "u"),
			good("u\x00a", "u"), good("u\x00a", "u"), good("u\x00a", "u"), good("u\x00a", "u"), good("u\x00a", "u"), good("u\x00a", "u")}, "u\x00a", "u", candGroup},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := newSelector()
			for i, sc := range tc.scores {
				id := fmt.Sprint(i)
				s.made[id] = [numCandidates]float64{candForest: sc.forest, candGroup: sc.group}
				s.score(id, sc.key, sc.user, math.Exp(sc.y))
			}
			s.score("never-predicted", tc.key, tc.user, 1)
			if got := s.choose(tc.key, tc.user); got != tc.want {
				t.Errorf("chose %v, want %v", got, tc.want)
			}
			if len(s.made) != 0 {
				t.Errorf("%d predictions kept after scoring", len(s.made))
			}
		})
	}
}

// TestSelectPredictor: "select" is the forest with selection; it trains,
// counts each prediction made after its first training under the
// candidate that gave it, keeps the candidates' predictions only for jobs
// not yet finished, and the plain forest reports no picks.
func TestSelectPredictor(t *testing.T) {
	p, err := ByName("select", Config{MinTrainJobs: 20, RetrainEvery: 3600})
	if err != nil {
		t.Fatal(err)
	}
	f := Unwrap(p).(*Forest)
	if f.Name() != "select" {
		t.Fatalf("name %q", f.Name())
	}
	at := 0.0
	n := 0
	for i := range 400 {
		j := job.Job{ID: fmt.Sprint(i), User: fmt.Sprintf("u%d", i%4), Name: "train", GPUs: 1, TimeLimit: 86400, Submit: at, State: "COMPLETED"}
		j.RunTime = 100 * math.Pow(10, float64(i%4)/2) // each user's own run time
		e := f.Predict(&j)
		n++
		if !(e.Seconds > 0) {
			t.Fatalf("job %d: estimate %+v", i, e)
		}
		at += 60
		f.Observe(&j, at+j.RunTime)
	}
	if f.Trainings() == 0 {
		t.Fatal("never trained")
	}
	total := 0
	for _, k := range f.Picks() {
		total += k
	}
	if total == 0 || total > n {
		t.Errorf("picks %v for %d predictions", f.Picks(), n)
	}
	if len(f.sel.made) > 8 {
		t.Errorf("%d candidate predictions kept for finished jobs", len(f.sel.made))
	}
	if plain, _ := ByName("forest", Config{}); Unwrap(plain).(*Forest).Picks() != nil {
		t.Error("the plain forest reports picks")
	}
}
