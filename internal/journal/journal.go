// Package journal lets journald file each log line at its severity: when
// standard error is the journal's stream, every line starts with a syslog
// priority prefix ("<4>" for a warning), which journald reads and strips,
// so that journalctl -p warning shows the warnings and errors.
package journal

import (
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"syscall"

	"github.com/rs/zerolog"
)

// IsJournal reports whether f is the stream systemd connected to the
// journal for this service (JOURNAL_STREAM names its device and inode).
func IsJournal(f *os.File) bool {
	dev, ino, ok := strings.Cut(os.Getenv("JOURNAL_STREAM"), ":")
	if !ok {
		return false
	}
	d, err1 := strconv.ParseUint(dev, 10, 64)
	i, err2 := strconv.ParseUint(ino, 10, 64)
	if err1 != nil || err2 != nil {
		return false
	}
	var st syscall.Stat_t
	if err := syscall.Fstat(int(f.Fd()), &st); err != nil {
		return false
	}
	return uint64(st.Dev) == d && uint64(st.Ino) == i
}

// Priority is the syslog priority of a zerolog level (sd-daemon(3)).
func Priority(l zerolog.Level) int {
	switch l {
	case zerolog.TraceLevel, zerolog.DebugLevel:
		return 7
	case zerolog.WarnLevel:
		return 4
	case zerolog.ErrorLevel:
		return 3
	case zerolog.FatalLevel:
		return 2
	case zerolog.PanicLevel:
		return 0
	}
	return 6 // info, and lines without a level
}

// Writer prefixes each zerolog line with its syslog priority.
type Writer struct{ W io.Writer }

// Write writes a line without a level (priority info).
func (w Writer) Write(p []byte) (int, error) { return w.WriteLevel(zerolog.NoLevel, p) }

// WriteLevel implements zerolog.LevelWriter: the line, prefixed, in one
// write, so that lines of concurrent writers do not mix.
func (w Writer) WriteLevel(l zerolog.Level, p []byte) (int, error) {
	line := append([]byte(fmt.Sprintf("<%d>", Priority(l))), p...)
	if _, err := w.W.Write(line); err != nil {
		return 0, err
	}
	return len(p), nil
}
