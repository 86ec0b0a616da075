package safetext

import (
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/asrpt/asrpt/internal/fuzzbound"
)

func TestEscape(t *testing.T) {
	cases := []struct{ in, want string }{
		{"bert-ft", "bert-ft"},
		{"name with spaces", "name with spaces"},
		{"café 日本", "café 日本"},
		{"\x1b]0;owned\x07", `\x1b]0;owned\x07`},
		{"job\r17 root ok", `job\r17 root ok`},
		{"a\nb\tc", `a\nb\tc`},
		{"del\x7f", `del\x7f`},
		{"bad\xffutf8", `bad\xffutf8`},
		{"c1\u009bcsi", `c1\u009bcsi`},
		{"rlo\u202Etxt.exe", `rlo\u202etxt.exe`},
		{"iso\u2066x\u2069", `iso\u2066x\u2069`},
		{"lre\u202A pdf\u202C", `lre\u202a pdf\u202c`},
		{"ls\u2028ps\u2029", `ls\u2028ps\u2029`},
		{"zw\u200bj", `zw\u200bj`},
		{`back\slash\x1b`, `back\slash\x1b`},
		{"", ""},
	}
	for _, c := range cases {
		if got := Escape(c.in); got != c.want {
			t.Errorf("Escape(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

func TestEscapeBound(t *testing.T) {
	cases := []struct {
		in   string
		n    int
		want string
	}{
		{"abcdef", 6, "abcdef"},
		{"abcdefg", 6, "abcdef…"},
		{"ab\x1bcd", 4, "ab…"}, // an escape is never cut
		{"ab\x1bcd", 6, `ab\x1b…`},
		{"日本語です", 3, "日本語…"},
		{strings.Repeat("x", 1000), 0, strings.Repeat("x", 1000)},
	}
	for _, c := range cases {
		if got := EscapeN(c.in, c.n); got != c.want {
			t.Errorf("EscapeN(%q, %d) = %q, want %q", c.in, c.n, got, c.want)
		}
	}
	if got := Escape(strings.Repeat("\x1b", 1000)); utf8.RuneCountInString(got) > MaxLen+1 {
		t.Errorf("Escape of 1000 ESC: %d runes, more than MaxLen+1", utf8.RuneCountInString(got))
	}
}

// FuzzEscape: whatever the input, the result is valid UTF-8 with no rune a
// terminal acts on, at most MaxLen runes and "…", and escaping it again
// changes nothing.
func FuzzEscape(f *testing.F) {
	for _, s := range []string{"", "ok", "\x1b[2J", "a\u202eb", "\xff\xfe", "\r\n", strings.Repeat("é\x00", 300)} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		fuzzbound.Within(t, time.Second, func() {
			got := Escape(s)
			if !utf8.ValidString(got) {
				t.Fatalf("Escape(%q) = %q: not valid UTF-8", s, got)
			}
			for _, r := range got {
				if r < 0x20 || r == 0x7f || r >= 0x80 && r < 0xa0 || r >= 0x202a && r <= 0x202e || r >= 0x2066 && r <= 0x2069 {
					t.Fatalf("Escape(%q) = %q keeps %U", s, got, r)
				}
			}
			if n := utf8.RuneCountInString(got); n > MaxLen+1 {
				t.Fatalf("Escape(%q): %d runes", s, n)
			}
			if again := Escape(got); again != got {
				t.Fatalf("Escape not idempotent: %q -> %q -> %q", s, got, again)
			}
		})
	})
}

func BenchmarkEscapeSafe(b *testing.B) {
	for b.Loop() {
		_ = Escape("an-ordinary-job-name_42")
	}
}
