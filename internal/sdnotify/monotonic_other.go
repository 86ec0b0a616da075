//go:build !linux

package sdnotify

// monotonicUsec is 0 where systemd does not run.
func monotonicUsec() int64 { return 0 }
