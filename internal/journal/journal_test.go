package journal

import (
	"bytes"
	"fmt"
	"os"
	"strings"
	"syscall"
	"testing"

	"github.com/rs/zerolog"
)

func TestWriterPrefixesPriority(t *testing.T) {
	var buf bytes.Buffer
	log := zerolog.New(Writer{W: &buf})
	log.Debug().Msg("d")
	log.Info().Msg("i")
	log.Warn().Msg("w")
	log.Error().Msg("e")
	log.Log().Msg("n")
	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	want := []string{"<7>{", "<6>{", "<4>{", "<3>{", "<6>{"}
	if len(lines) != len(want) {
		t.Fatalf("lines %q", lines)
	}
	for i, l := range lines {
		if !strings.HasPrefix(l, want[i]) {
			t.Errorf("line %d %q, want prefix %q", i, l, want[i])
		}
	}
}

func TestIsJournal(t *testing.T) {
	f, err := os.CreateTemp(t.TempDir(), "stream")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var st syscall.Stat_t
	if err := syscall.Fstat(int(f.Fd()), &st); err != nil {
		t.Fatal(err)
	}
	for env, want := range map[string]bool{
		"":                                     false,
		"garbage":                              false,
		fmt.Sprintf("%d:%d", st.Dev, st.Ino):   true,
		fmt.Sprintf("%d:%d", st.Dev, st.Ino+1): false,
	} {
		t.Setenv("JOURNAL_STREAM", env)
		if got := IsJournal(f); got != want {
			t.Errorf("JOURNAL_STREAM=%q: %v, want %v", env, got, want)
		}
	}
}
