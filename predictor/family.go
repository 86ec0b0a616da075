package predictor

import (
	"regexp"
	"strings"
)

// Name normalisation rules (documented in README.md, "Job-name families"):
//
//  1. lower-case;
//  2. remove UUIDs, dates and timestamps (2024-11-01, 20241101, 2024_11_01T10:30:00, 10:30:00);
//  3. split into tokens at any character that is not a letter or a digit;
//  4. drop tokens that are all digits (array indices, counters, ports),
//     hex hashes (≥ 7 hex characters with at least one digit and one letter, or
//     ≥ 12 hex digits), and run counters (run3, trial12, seed42, rep2, attempt1,
//     try4, iter5, job17, step100, r2 — a counter word followed by digits);
//  5. join the remaining tokens with "-".
//
// Tokens that mix letters and digits in other ways (resnet50, gpt2, bs64) are
// kept: they usually name a model or a shape, which changes the run time.
var (
	reUUID = regexp.MustCompile(`[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}`)
	// reDate matches dates with an optional time of day: 2024-11-01,
	// 2024_11_01, 20241101, 2024-11-01t10:30:00, 20241101-103000.
	reDate = regexp.MustCompile(`(19|20)\d\d[-_./]?[01]\d[-_./]?[0-3]\d([t_\- ]?[0-2]\d[:\-_.]?[0-5]\d([:\-_.]?[0-5]\d)?)?`)
	// reClock matches a bare time of day: 10:30 or 10:30:00.
	reClock = regexp.MustCompile(`\b[0-2]?\d:[0-5]\d(:[0-5]\d)?\b`)
)

// counterWords are the words that, followed by digits only, make a token a
// run counter (rule 4).
var counterWords = []string{"run", "trial", "seed", "rep", "attempt", "try", "iter", "job", "step", "epoch", "part", "shard", "idx", "no", "r"}

// Family returns the normalised name family of a job name, so that runs of
// the same job share it: Family("train-bert-2024-11-01-run3") ==
// Family("train-bert-2024-11-02-run7") == "train-bert". The empty name, and a
// name made only of numbers, dates and hashes, give "".
func Family(name string) string {
	if name == "" {
		return ""
	}
	s := strings.ToLower(name)
	// Each pattern runs only where it could match (a UUID has four '-', a
	// date starts with 19 or 20, a clock has ':'): the regular expressions
	// dominate the cost, and replays call Family for every job.
	if strings.Count(s, "-") >= 4 {
		s = reUUID.ReplaceAllString(s, " ")
	}
	if strings.Contains(s, "19") || strings.Contains(s, "20") {
		s = reDate.ReplaceAllString(s, " ")
	}
	if strings.IndexByte(s, ':') >= 0 {
		s = reClock.ReplaceAllString(s, " ")
	}
	toks := strings.FieldsFunc(s, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r > 127)
	})
	out := toks[:0]
	for _, t := range toks {
		if dropToken(t) {
			continue
		}
		out = append(out, t)
	}
	return strings.Join(out, "-")
}

// dropToken reports whether a name token is a number, hash or run counter.
func dropToken(t string) bool {
	digits, letters, hex := 0, 0, 0
	for i := 0; i < len(t); i++ {
		switch c := t[i]; {
		case c >= '0' && c <= '9':
			digits++
			hex++
		case c >= 'a' && c <= 'z':
			letters++
			if c <= 'f' {
				hex++
			}
		}
	}
	switch {
	case digits == len(t):
		return true
	case isCounter(t):
		return true
	case hex == len(t) && (len(t) >= 12 || len(t) >= 7 && digits > 0 && letters > 0):
		return true
	}
	return false
}

// isCounter reports whether t is a counter word followed by one or more
// digits and nothing else (run3, seed42).
func isCounter(t string) bool {
	for _, w := range counterWords {
		if len(t) > len(w) && t[:len(w)] == w && allDigits(t[len(w):]) {
			return true
		}
	}
	return false
}

func allDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}
