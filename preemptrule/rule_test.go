package preemptrule

import (
	"strings"
	"testing"
	"time"

	"github.com/asrpt/asrpt/internal/fuzzbound"
	"github.com/asrpt/asrpt/job"
)

func TestParse(t *testing.T) {
	cases := []struct {
		in      string
		want    string // String() of the rule, "" when an error is wanted
		wantErr string
	}{
		{"none", "none", ""},
		{"all", "all", ""},
		{"comment", "comment", ""},
		{"comment:x", "", "want none, all"},
		{"longest:0.2", "longest:0.2", ""},
		{"longest:1", "longest:1", ""},
		{"accounts:ml,vision", "accounts:ml,vision", ""},
		{"", "", "want none, all"},
		{"none:1", "", "want none, all"},
		{"all:", "", "want none, all"},
		{"longest", "", "want none, all"},
		{"longest:0", "", "share in (0, 1]"},
		{"longest:1.5", "", "share in (0, 1]"},
		{"longest:NaN", "", "share in (0, 1]"},
		{"longest:-0.1", "", "share in (0, 1]"},
		{"longest:x", "", "share in (0, 1]"},
		{"families:train-llm-2024-11-01,Eval_3", "families:train-llm,eval", ""},
		{"families:", "", "has no family"},
		{"families:a,20241101", "", "has no family"},
		{"accounts:", "", "empty name"},
		{"accounts:a,,b", "", "empty name"},
		{"accounts:" + strings.Repeat("a,", MaxAccounts) + "a", "", "at most 256"},
		{"random:0.5", "", "want none, all"},
	}
	for _, c := range cases {
		r, err := Parse(c.in)
		if c.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), c.wantErr) {
				t.Errorf("Parse(%q) = %v, %v; want an error with %q", c.in, r, err, c.wantErr)
			}
			continue
		}
		if err != nil || r.String() != c.want {
			t.Errorf("Parse(%q) = %q, %v; want %q", c.in, r.String(), err, c.want)
		}
	}
}

func TestSelector(t *testing.T) {
	// Families (user, name): a/long runs 10000 s, b/mid 1000 s, c/short
	// 10 s; four jobs each but c, which has two.
	var jobs jobSlice
	add := func(user, name, account string, n int, run float64) {
		for range n {
			jobs = append(jobs, job.Job{User: user, Name: name, Account: account, GPUs: 1, RunTime: run})
		}
	}
	add("a", "long", "ml", 4, 10000)
	jobs[0].Preemptible = true // its comment opted it in
	add("b", "mid", "ml", 4, 1000)
	add("c", "short", "web", 2, 10)
	chosen := func(rule string) string {
		r, err := Parse(rule)
		if err != nil {
			t.Fatal(err)
		}
		sel := r.Selector(jobs)
		var out []string
		seen := map[string]bool{}
		for i := range jobs {
			if sel != nil && sel(&jobs[i]) && !seen[jobs[i].Name] {
				seen[jobs[i].Name] = true
				out = append(out, jobs[i].Name)
			}
		}
		return strings.Join(out, ",")
	}
	cases := []struct{ rule, want string }{
		{"none", ""},
		{"all", "long,mid,short"},
		{"longest:0.1", "long"},      // one family covers 4 of 10 jobs ≥ 1
		{"longest:0.4", "long"},      // exactly 4 of 10
		{"longest:0.41", "long,mid"}, // the next family is taken whole
		{"longest:1", "long,mid,short"},
		{"accounts:web", "short"},
		{"comment", "long"},
		{"accounts:ml,nobody", "long,mid"},
		{"families:mid,nobody", "mid"},
	}
	for _, c := range cases {
		if got := chosen(c.rule); got != c.want {
			t.Errorf("%s: chose %q, want %q", c.rule, got, c.want)
		}
	}
}

// FuzzParse: a rule either parses to one that prints back to an equal
// rule, or errors naming the rule; a share is in (0, 1] and no account
// name is empty.
func FuzzParse(f *testing.F) {
	for _, s := range []string{"none", "all", "comment", "longest:0.2", "accounts:a,b", "families:train-llm,x", "longest:1e-9", "accounts:,", "longest:+Inf"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		fuzzbound.Within(t, time.Second, func() {
			r, err := Parse(s)
			if err != nil {
				if !strings.Contains(err.Error(), "preemptible rule") {
					t.Fatalf("error %q does not name the rule", err)
				}
				return
			}
			if r.Kind == Longest && !(r.Share > 0 && r.Share <= 1) {
				t.Fatalf("%q: share %v", s, r.Share)
			}
			if len(r.Accounts) > MaxAccounts {
				t.Fatalf("%q: %d accounts", s, len(r.Accounts))
			}
			for _, a := range r.Accounts {
				if a == "" {
					t.Fatalf("%q: an empty account", s)
				}
			}
			again, err := Parse(r.String())
			if err != nil || again.String() != r.String() {
				t.Fatalf("%q prints as %q, which parses to %q, %v", s, r.String(), again.String(), err)
			}
		})
	})
}

// jobSlice is a slice of jobs as Jobs.
type jobSlice []job.Job

func (s jobSlice) Len() int          { return len(s) }
func (s jobSlice) Job(i int) job.Job { return s[i] }
