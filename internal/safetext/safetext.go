// Package safetext makes text that others wrote (Slurm users' job names,
// comments and accounts, a trace's user names, slurmrestd's reasons) safe
// to print on a terminal: it can neither move the cursor, rewrite a line,
// set the terminal's title nor reorder what follows it.
package safetext

import (
	"strconv"
	"strings"
	"unicode/utf8"
)

// MaxLen is the most runes Escape keeps of its result (a table cell); the
// rest is cut and "…" put in its place.
const MaxLen = 256

// Escape returns s with every rune a terminal could act on shown as an
// escape, in strconv.Quote's spelling but without the quotes: C0 controls
// and DEL as \x1b (\n, \r, \t as such), invalid UTF-8 bytes as \xff, and
// the runes strconv.IsPrint refuses (C1 controls, bidi embeddings,
// overrides and isolates U+202A–U+202E and U+2066–U+2069, zero-width and
// line separators, spaces other than U+0020) as \u202e. Printable text is
// returned as it is, so Escape is idempotent; a backslash is not escaped
// (a name may contain "\x1b" spelled out). The result is cut to MaxLen
// runes and "…" (EscapeN bounds it otherwise); an escape is never cut.
func Escape(s string) string { return EscapeN(s, MaxLen) }

// EscapeN is Escape with a bound of n runes (n <= 0: no bound).
func EscapeN(s string, n int) string {
	if safe(s) && (n <= 0 || len(s) <= n) {
		return s // the common case: no allocation
	}
	var b strings.Builder
	b.Grow(min(len(s), 4*max(n, 16)))
	kept := 0
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		var piece string
		switch {
		case r == utf8.RuneError && size == 1:
			piece = `\x` + hex2(s[i])
		case r == '\n':
			piece = `\n`
		case r == '\r':
			piece = `\r`
		case r == '\t':
			piece = `\t`
		case r < 0x20 || r == 0x7f:
			piece = `\x` + hex2(byte(r))
		case r == ' ' || strconv.IsPrint(r):
			piece = s[i : i+size]
		case r < 0x10000:
			piece = `\u` + hex(uint32(r), 4)
		default:
			piece = `\U` + hex(uint32(r), 8)
		}
		i += size
		pr := utf8.RuneCountInString(piece)
		if n > 0 && kept+pr > n {
			b.WriteString("…")
			return b.String()
		}
		b.WriteString(piece)
		kept += pr
	}
	return b.String()
}

// safe reports whether s is valid UTF-8 made of printable runes only.
func safe(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < 0x20 || c == 0x7f {
			return false
		}
		if c >= 0x80 {
			return safeUnicode(s[i:])
		}
	}
	return true
}

func safeUnicode(s string) bool {
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 || r != ' ' && !strconv.IsPrint(r) {
			return false
		}
		i += size
	}
	return true
}

const digits = "0123456789abcdef"

func hex2(c byte) string { return string([]byte{digits[c>>4], digits[c&15]}) }

func hex(v uint32, width int) string {
	b := make([]byte, width)
	for i := width - 1; i >= 0; i-- {
		b[i] = digits[v&15]
		v >>= 4
	}
	return string(b)
}
