package predictor

import "math"

// Estimator selection (predictor "select"): the online forest keeps, for
// each (user, family) group, the recent error of two candidates on the
// group's finished jobs — the forest's own prediction and the group's
// window statistics (the mean and median of its last Window runs, what
// predictor "mean" gives) — and predicts a job of the group with the one
// whose error is lower. An error is the absolute difference of log run
// times between the candidate's median made when the job was submitted
// and the run time (prequential: each job is scored by predictions made
// before it finished, never by ones that saw it), averaged with
// exponential weight selectAlpha. A group with fewer than selectMinScored
// scored jobs borrows its user's errors, then those of every group: a new
// group starts with what has worked for its user. After Park et al.
// (3Sigma, EuroSys 2018), who choose among predictors per group by their
// recent error.

// selectAlpha is the weight of the newest error in a candidate's running
// error.
const selectAlpha = 0.125

// selectMinScored is how many scored jobs a group (or user) needs before
// its own errors choose.
const selectMinScored = 3

// candidate names the estimators selection chooses between.
type candidate uint8

const (
	candForest candidate = iota
	candGroup
	numCandidates
)

// candidateNames are the names the estimators are reported by.
var candidateNames = [numCandidates]string{"forest", "group"}

// String returns the candidate's name.
func (c candidate) String() string { return candidateNames[c] }

// candErrors is the running error of each candidate over scored jobs.
type candErrors struct {
	n   int
	err [numCandidates]float64
}

func (e *candErrors) add(errs [numCandidates]float64) {
	if e.n == 0 {
		e.err = errs
	} else {
		for i := range errs {
			e.err[i] += selectAlpha * (errs[i] - e.err[i])
		}
	}
	e.n++
}

// best returns the candidate with the lowest running error (the forest on
// a tie).
func (e *candErrors) best() candidate {
	b := candForest
	for c := candidate(1); c < numCandidates; c++ {
		if e.err[c] < e.err[b] {
			b = c
		}
	}
	return b
}

// selector holds the candidates' errors by group, by user and overall, and
// each predicted job's candidate medians until it finishes. Memory: one
// entry per group and user seen finishing, and one per predicted
// unfinished job.
type selector struct {
	groups map[string]*candErrors // by GroupKey
	users  map[string]*candErrors
	all    candErrors
	// made holds, by job id, the log medians each candidate predicted
	// at submit.
	made map[string][numCandidates]float64
	// picks counts the predictions each candidate gave.
	picks [numCandidates]int
}

func newSelector() *selector {
	return &selector{groups: map[string]*candErrors{}, users: map[string]*candErrors{}, made: map[string][numCandidates]float64{}}
}

// choose returns the candidate for a job of user's group key.
func (s *selector) choose(key, user string) candidate {
	if e := s.groups[key]; e != nil && e.n >= selectMinScored {
		return e.best()
	}
	if e := s.users[user]; e != nil && e.n >= selectMinScored {
		return e.best()
	}
	return s.all.best()
}

// score records the errors of the candidates' predictions for job id of
// user's group key, which ran run seconds; a job not predicted is not
// scored.
func (s *selector) score(id, key, user string, run float64) {
	made, ok := s.made[id]
	if !ok {
		return
	}
	delete(s.made, id)
	y := logRun(run)
	var errs [numCandidates]float64
	for c := range errs {
		errs[c] = math.Abs(made[c] - y)
	}
	g := s.groups[key]
	if g == nil {
		g = &candErrors{}
		s.groups[key] = g
	}
	g.add(errs)
	u := s.users[user]
	if u == nil {
		u = &candErrors{}
		s.users[user] = u
	}
	u.add(errs)
	s.all.add(errs)
}

// medianOf returns an estimate's median, or its expected value when it has
// one number only.
func medianOf(e Estimate) float64 {
	if e.Median > 0 {
		return e.Median
	}
	return e.Seconds
}
