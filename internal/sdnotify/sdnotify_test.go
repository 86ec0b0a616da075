package sdnotify

import (
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

func TestNotify(t *testing.T) {
	t.Setenv("NOTIFY_SOCKET", "")
	if ok, err := Notify(Ready); ok || err != nil {
		t.Fatalf("without NOTIFY_SOCKET: %v %v", ok, err)
	}
	sock := filepath.Join(t.TempDir(), "notify")
	conn, err := net.ListenUnixgram("unixgram", &net.UnixAddr{Name: sock, Net: "unixgram"})
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	t.Setenv("NOTIFY_SOCKET", sock)
	for _, msg := range []string{Ready, Reloading(), Status("3 jobs"), Stopping} {
		if ok, err := Notify(msg); !ok || err != nil {
			t.Fatalf("Notify(%q): %v %v", msg, ok, err)
		}
		buf := make([]byte, 256)
		_ = conn.SetReadDeadline(time.Now().Add(5 * time.Second))
		n, err := conn.Read(buf)
		if err != nil || string(buf[:n]) != msg {
			t.Fatalf("received %q (%v), want %q", buf[:n], err, msg)
		}
	}
	if !strings.HasPrefix(Reloading(), "RELOADING=1\nMONOTONIC_USEC=") || strings.HasSuffix(Reloading(), "=0") {
		t.Errorf("Reloading() = %q", Reloading())
	}
	t.Setenv("NOTIFY_SOCKET", filepath.Join(t.TempDir(), "none"))
	if ok, err := Notify(Ready); !ok || err == nil {
		t.Errorf("to a missing socket: %v %v", ok, err)
	}
}

func TestWatchdogInterval(t *testing.T) {
	for _, tc := range []struct {
		usec, pid string
		want      time.Duration
	}{
		{"", "", 0},
		{"x", "", 0},
		{"10000000", "", 5 * time.Second},
		{"10000000", strconv.Itoa(os.Getpid()), 5 * time.Second},
		{"10000000", "1", 0},
	} {
		t.Setenv("WATCHDOG_USEC", tc.usec)
		t.Setenv("WATCHDOG_PID", tc.pid)
		if got := WatchdogInterval(); got != tc.want {
			t.Errorf("USEC %q PID %q: %v, want %v", tc.usec, tc.pid, got, tc.want)
		}
	}
}
