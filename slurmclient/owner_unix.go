//go:build unix

package slurmclient

import (
	"os"
	"syscall"
)

// fileOwner returns the uid owning the file of st, when the system says.
func fileOwner(st os.FileInfo) (int, bool) {
	if s, ok := st.Sys().(*syscall.Stat_t); ok {
		return int(s.Uid), true
	}
	return 0, false
}
