package predictor

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/asrpt/asrpt/internal/fuzzbound"
	"github.com/asrpt/asrpt/trace"
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

// refFamily is Family as first written, with regular expressions: the
// hand-written matchers must give the same families.
func refFamily(name string) string {
	if name == "" {
		return ""
	}
	s := strings.ToLower(name)
	// Each expression runs only where it could match, as before.
	if strings.Count(s, "-") >= 4 {
		s = refUUID.ReplaceAllString(s, " ")
	}
	if strings.Contains(s, "19") || strings.Contains(s, "20") {
		s = refDate.ReplaceAllString(s, " ")
	}
	if strings.IndexByte(s, ':') >= 0 {
		s = refClock.ReplaceAllString(s, " ")
	}
	toks := strings.FieldsFunc(s, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r > 127)
	})
	out := toks[:0]
	for _, t := range toks {
		if !refDropToken(t) {
			out = append(out, t)
		}
	}
	return strings.Join(out, "-")
}

var (
	refUUID  = regexp.MustCompile(`[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}`)
	refDate  = regexp.MustCompile(`(19|20)\d\d[-_./]?[01]\d[-_./]?[0-3]\d([t_\- ]?[0-2]\d[:\-_.]?[0-5]\d([:\-_.]?[0-5]\d)?)?`)
	refClock = regexp.MustCompile(`\b[0-2]?\d:[0-5]\d(:[0-5]\d)?\b`)
)

// familyCases are names that exercise every matcher near its edges: each
// separator, the optional parts, word boundaries, matches next to each
// other, and truncated matches at the end of the name.
var familyCases = []string{
	"train-bert-2024-11-01-run3", "Train_BERT_20241103_run12", "gpt2-finetune-2024-11-01T10:30:00",
	"x-2024-11-01t10:30", "x-2024-11-01t10", "x-20241101-103000", "x-20241101-1030", "x-2024/11/01 23:59:59",
	"x-2024.11.01_10.30.00", "x-1999-12-31", "x-2099-19-01", "x-2024-11-41", "x-202411-01", "x-2024-1101",
	"20241101", "2024110", "19", "20", "x20241101y", "x-2024-11-01-2024-11-02", "2024-11-0120241102",
	"x-2024-11-01t25:00", "x-2024-11-01t10:60", "x-2024-11-01t10:30:60", "x-2024-11-01t10:30:5",
	"x-2024-11-01 10:3", "x-2024-11-01-10-30-00-run1", "x-2024-11-01__10:30",
	"nightly 10:30 build", "10:30", "1:30", "01:30:00", "21:30:59", "31:30", "9:5", "10:30:00x", "x10:30", "_10:30",
	"10:30_", "10:30:00:00", "10:3010:30", "a 1:30:00 b", "0:00 0:00", "110:30", "10:30é", "é10:30", "10::30",
	"2:30:61", "12:30:6", "job-550e8400-e29b-41d4-a716-446655440000", "550e8400-e29b-41d4-a716-44665544000",
	"550e8400-e29b-41d4-a716-4466554400001", "550E8400-E29B-41D4-A716-446655440000-x", "550e8400-e29b-41d4-a716-44665544000g",
	"a-b-c-d-e", "550e8400-e29b-41d4-a716-446655440000550e8400-e29b-41d4-a716-446655440000",
	"uuid-550e8400-e29b-41d4-a716-446655440000-2024-11-01T10:30:00", "resnet50-imagenet-seed42", "sweep[17]",
	"eval_ckpt_3f9a2c1d", "lr0.001-bs64", "12345", "", "café-run2", "Kelvin-\u212a-20241101", "x\xff2024-11-01",
	"\xff\xfe", "ÉCOLE-10:30", "--a--b--", "a", "-", "run3", "train-gpt2-1.5b-b5-173ee7",
}

func TestFamilyMatchesRegexp(t *testing.T) {
	names := slices.Clone(familyCases)
	for i := range 500 {
		names = append(names, fmt.Sprintf("job-%04d-%02d-%02dT%02d:%02d:%02d-run%d", 1900+i%230, i%14, i%35, i%27, i%63, i%61, i))
	}
	cfg := trace.DefaultGenConfig()
	cfg.Jobs = 20000
	jobs, err := trace.Generate(cfg)
	if err != nil {
		t.Fatal(err)
	}
	for _, j := range jobs {
		names = append(names, j.Name)
	}
	for _, n := range names {
		if got, want := Family(n), refFamily(n); got != want {
			t.Errorf("Family(%q) = %q, regular expressions give %q", n, got, want)
		}
	}
}

func FuzzFamily(f *testing.F) {
	for _, s := range familyCases {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, name string) {
		fuzzbound.Within(t, time.Second, func() {
			if got, want := Family(name), refFamily(name); got != want {
				t.Fatalf("Family(%q) = %q, regular expressions give %q", name, got, want)
			}
		})
	})
}

// BenchmarkFamily reports the cost of one Family call over the names of
// a generated workload, and of the regular-expression version it
// replaced (regexp), for the ratio.
func BenchmarkFamily(b *testing.B) {
	cfg := trace.DefaultGenConfig()
	cfg.Jobs = 4096
	jobs, err := trace.Generate(cfg)
	if err != nil {
		b.Fatal(err)
	}
	for _, v := range []struct {
		name string
		f    func(string) string
	}{{"hand", Family}, {"regexp", refFamily}} {
		b.Run(v.name, func(b *testing.B) {
			b.ReportAllocs()
			for i := 0; b.Loop(); i++ {
				v.f(jobs[i%len(jobs)].Name)
			}
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "names/s")
		})
	}
}
