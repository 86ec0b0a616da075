package trace

import "testing"

// TestStatsString: the counts, then the heterogeneous components and the
// preemption words only when there are any.
func TestStatsString(t *testing.T) {
	for _, tc := range []struct {
		s    Stats
		want string
	}{
		{Stats{Rows: 3, Jobs: 2}, "3 rows, 2 jobs; skipped: 0 job steps, 0 without GPUs, 0 unfinished, 0 never ran, 0 duplicates"},
		{Stats{Rows: 3, Jobs: 2, HetComponents: 1},
			"3 rows, 2 jobs; skipped: 0 job steps, 0 without GPUs, 0 unfinished, 0 never ran, 0 duplicates; heterogeneous job components merged into their jobs: 1"},
		{Stats{Rows: 4, Jobs: 4, Preemptible: 2, BadPreemptWords: 1},
			"4 rows, 4 jobs; skipped: 0 job steps, 0 without GPUs, 0 unfinished, 0 never ran, 0 duplicates; 2 opted in to preemption by their comment, 1 with a bad asrpt:preempt= word"},
	} {
		if got := tc.s.String(); got != tc.want {
			t.Errorf("%+v:\n got %q\nwant %q", tc.s, got, tc.want)
		}
	}
}
