package predictor

import (
	"regexp"
	"testing"
	"time"

	"github.com/asrpt/asrpt/internal/fuzzbound"
)

// The token rules as regular expressions: dropToken's hand-written
// matchers must agree with them.
var (
	refCounter = regexp.MustCompile(`^(run|trial|seed|rep|attempt|try|iter|job|step|epoch|part|shard|idx|no|r)\d+$`)
	refHex     = regexp.MustCompile(`^[0-9a-f]+$`)
)

func refDropToken(t string) bool {
	digits, letters := 0, 0
	for i := 0; i < len(t); i++ {
		switch c := t[i]; {
		case c >= '0' && c <= '9':
			digits++
		case c >= 'a' && c <= 'z':
			letters++
		}
	}
	return digits == len(t) || refCounter.MatchString(t) ||
		refHex.MatchString(t) && (len(t) >= 12 || len(t) >= 7 && digits > 0 && letters > 0)
}

func TestDropTokenMatchesRules(t *testing.T) {
	for _, tc := range []struct {
		tok  string
		drop bool
	}{
		{"123", true}, {"run3", true}, {"r2", true}, {"run", false}, {"runx3", false}, {"seed42", true},
		{"trial12a", false}, {"no7", true}, {"node7", false}, {"deadbeef1", true}, {"deadbeef", false},
		{"abcdef012345", true}, {"abc123", false}, {"resnet50", false}, {"gpt2", false}, {"bs64", false},
		{"é1", false}, {"ab12cd3", true}, {"ab12cg3", false}, {"epoch3", true}, {"rr2", false},
	} {
		if got := dropToken(tc.tok); got != tc.drop || got != refDropToken(tc.tok) {
			t.Errorf("dropToken(%q) = %v, want %v (regexp rules: %v)", tc.tok, got, tc.drop, refDropToken(tc.tok))
		}
	}
}

func FuzzDropToken(f *testing.F) {
	for _, s := range []string{"run3", "deadbeef1", "123", "resnet50", "r", "", "no", "abcdef012345"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, tok string) {
		fuzzbound.Within(t, time.Second, func() {
			if tok == "" {
				return // FieldsFunc never yields an empty token
			}
			if got, want := dropToken(tok), refDropToken(tok); got != want {
				t.Fatalf("dropToken(%q) = %v, regexp rules say %v", tok, got, want)
			}
		})
	})
}
