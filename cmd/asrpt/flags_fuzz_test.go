package main

import (
	"strings"
	"testing"
	"time"

	"github.com/asrpt/asrpt/cluster"
	"github.com/asrpt/asrpt/internal/fuzzbound"
	"github.com/asrpt/asrpt/policy"
)

// FuzzHistoryWindow: --until (RFC 3339, as runHistory reads it) and
// --since (parseSince). A duration or a number of days is accepted only
// when positive, and the window then ends at --until and starts before it.
func FuzzHistoryWindow(f *testing.F) {
	for _, s := range []string{"30d", "12h", "90m", "0.5d", "-1d", "0d", "NaNd", "Infd", "1e300d", "2026-01-01T00:00:00Z", "2026-01-01T00:00:00+25:00", "x"} {
		f.Add(s, "2026-03-01T12:00:00Z")
	}
	f.Add("30d", "")
	f.Fuzz(func(t *testing.T, since, until string) {
		fuzzbound.Within(t, time.Second, func() {
			to := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
			if until != "" {
				u, err := time.Parse(time.RFC3339, until)
				if err != nil {
					return
				}
				to = u
			}
			from, err := parseSince(since, to)
			if err != nil {
				if !from.IsZero() {
					t.Fatalf("%q: %v with error %v", since, from, err)
				}
				return
			}
			if _, rfc := time.Parse(time.RFC3339, since); rfc == nil {
				return // an absolute time: taken as given
			}
			if !from.Before(to) {
				t.Fatalf("--since %q --until %q: window %v – %v", since, until, from, to)
			}
		})
	})
}

// FuzzGenStart: --start of gen is Unix seconds or RFC 3339, and an RFC
// 3339 start reads back from its Unix seconds.
func FuzzGenStart(f *testing.F) {
	for _, s := range []string{"0", "1793577600", "-5", "2026-11-02T00:00:00Z", "2026-11-02T00:00:00.5+01:00", "9223372036854775807", "1e9", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		fuzzbound.Within(t, time.Second, func() {
			v, err := genParseStart(s)
			if err != nil {
				if v != 0 || !strings.Contains(err.Error(), "neither RFC 3339 nor Unix seconds") {
					t.Fatalf("%q: %v, %v", s, v, err)
				}
				return
			}
			if tm, err := time.Parse(time.RFC3339, s); err == nil && float64(tm.Unix()) != v {
				t.Fatalf("%q: %v, want %v", s, v, tm.Unix())
			}
		})
	})
}

// FuzzPolicies: --policies is split into trimmed, non-empty names without
// commas, no more than the commas allow, that split again to themselves; a
// name is a policy exactly when it is a registered name, with or without
// -oracle.
func FuzzPolicies(f *testing.F) {
	f.Add(strings.Join(defaultPolicies, ","))
	f.Add(" asrpt , fifo-oracle,,las-oracle-oracle, ")
	f.Add("-oracle")
	f.Fuzz(func(t *testing.T, s string) {
		fuzzbound.Within(t, time.Second, func() {
			names := splitList(s)
			if len(names) > strings.Count(s, ",")+1 {
				t.Fatalf("%d names from %q", len(names), s)
			}
			for _, n := range names {
				if n == "" || n != strings.TrimSpace(n) || strings.Contains(n, ",") {
					t.Fatalf("name %q from %q", n, s)
				}
			}
			if again := splitList(strings.Join(names, ",")); strings.Join(again, ",") != strings.Join(names, ",") {
				t.Fatalf("%q splits to %q, then %q", s, names, again)
			}
			env := policy.NewEnv(cluster.Uniform(1, 8), policy.DefaultParams())
			for _, n := range names {
				base, _ := policy.Split(n)
				known := false
				for _, k := range policy.Names {
					known = known || k == base
				}
				if _, err := policy.New(n, env); (err == nil) != known {
					t.Fatalf("policy %q: %v", n, err)
				}
			}
		})
	})
}

// FuzzSeeds: --seeds (parseSeeds). Accepted lists hold distinct integers,
// at most maxSeeds, in the order given; an empty list is the default seed.
func FuzzSeeds(f *testing.F) {
	f.Add("1,2,3")
	f.Add(" 7 ,, -3 ")
	f.Add("1,1")
	f.Add("9223372036854775808")
	f.Add(strings.Repeat("5,", 20))
	f.Fuzz(func(t *testing.T, s string) {
		fuzzbound.Within(t, time.Second, func() {
			seeds, err := parseSeeds(s, 42)
			if err != nil {
				return
			}
			if len(seeds) == 0 || len(seeds) > maxSeeds {
				t.Fatalf("%q gives %d seeds", s, len(seeds))
			}
			if len(splitList(s)) == 0 && (len(seeds) != 1 || seeds[0] != 42) {
				t.Fatalf("empty %q gives %v, want the default", s, seeds)
			}
			seen := map[int64]bool{}
			for _, v := range seeds {
				if seen[v] {
					t.Fatalf("%q gives %d twice", s, v)
				}
				seen[v] = true
			}
		})
	})
}
