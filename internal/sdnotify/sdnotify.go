// Package sdnotify tells systemd about the service's state (sd_notify(3)):
// readiness, reloading, stopping and watchdog keep-alives, over the
// datagram socket systemd names in NOTIFY_SOCKET. Outside systemd (no
// NOTIFY_SOCKET) every call does nothing.
package sdnotify

import (
	"fmt"
	"net"
	"os"
	"strconv"
	"time"
)

// Messages of sd_notify(3).
const (
	Ready    = "READY=1"
	Stopping = "STOPPING=1"
	Watchdog = "WATCHDOG=1"
)

// Reloading is the message that starts a reload (with the monotonic time
// systemd wants since version 253); send Ready when it is done.
func Reloading() string {
	return fmt.Sprintf("RELOADING=1\nMONOTONIC_USEC=%d", monotonicUsec())
}

// Status is a free-form status line systemctl status shows.
func Status(s string) string { return "STATUS=" + s }

// Notify sends state to systemd. It reports whether a socket was
// configured; an error is returned only when sending failed.
func Notify(state string) (bool, error) {
	addr := os.Getenv("NOTIFY_SOCKET")
	if addr == "" {
		return false, nil
	}
	if addr[0] == '@' {
		addr = "\x00" + addr[1:] // abstract namespace
	}
	conn, err := net.DialUnix("unixgram", nil, &net.UnixAddr{Name: addr, Net: "unixgram"})
	if err != nil {
		return true, fmt.Errorf("sd_notify: %w", err)
	}
	defer conn.Close()
	if _, err := conn.Write([]byte(state)); err != nil {
		return true, fmt.Errorf("sd_notify: %w", err)
	}
	return true, nil
}

// WatchdogInterval returns how often to send Watchdog: half the
// WatchdogSec systemd set for this process (WATCHDOG_USEC, and
// WATCHDOG_PID naming this process when set), or 0 when there is no
// watchdog.
func WatchdogInterval() time.Duration {
	usec, err := strconv.ParseInt(os.Getenv("WATCHDOG_USEC"), 10, 64)
	if err != nil || usec <= 0 {
		return 0
	}
	if p := os.Getenv("WATCHDOG_PID"); p != "" {
		if pid, err := strconv.Atoi(p); err != nil || pid != os.Getpid() {
			return 0
		}
	}
	return time.Duration(usec) * time.Microsecond / 2
}
