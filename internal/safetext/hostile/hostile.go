// Package hostile holds names a Slurm user or a trace could hold, with
// the characters safetext escapes, for the golden tests of the commands
// that print such names, and the check that their output is clean. It is
// a helper for tests only; no production code imports it.
package hostile

import (
	"strings"
	"testing"
	"unicode/utf8"
)

// Names returns names with a terminal title sequence, a carriage return
// that would rewrite the line, a newline that would forge a row, a tab,
// DEL, a C1 CSI, bidi overrides and isolates, and invalid UTF-8.
func Names() []string {
	return []string{
		"title\x1b]0;pwned\x07",
		"fake\rroot 1 ok",
		"two\nlines",
		"tab\tcol",
		"del\x7f",
		"c1\u009b2J",
		"rlo\u202egnp.exe",
		"iso\u2066x\u2069",
		"bad\xff\xfeutf8",
	}
}

// CheckClean fails t if out holds a control character other than a
// newline, a C1 control, a bidi embedding, override or isolate, or
// invalid UTF-8.
func CheckClean(t testing.TB, out string) {
	t.Helper()
	if !utf8.ValidString(out) {
		t.Errorf("output is not valid UTF-8:\n%q", out)
	}
	for i, r := range out {
		if r < 0x20 && r != '\n' || r == 0x7f || r >= 0x80 && r < 0xa0 ||
			r >= 0x202a && r <= 0x202e || r >= 0x2066 && r <= 0x2069 {
			t.Errorf("output keeps %U at byte %d: %q", r, i, out[max(0, i-20):min(len(out), i+20)])
			return
		}
	}
	if strings.Contains(out, "\ntwo\n") || strings.Contains(out, "lines\t") {
		t.Errorf("a name's newline reached the output")
	}
}
