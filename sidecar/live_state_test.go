//go:build integration

package sidecar

// The state never forgets a write, on a real Slurm: a job list answered
// empty for two cycles in the middle of a run (what a restarting
// slurmctld can answer) neither renumbers nor drops the jobs asrpt wrote
// to, and a giveback afterwards restores every one of them, checked from
// Slurm's own records (sprio's SITE column in factor mode, 24.11 and
// 26.05; the priority outside asrpt's bands in priority mode, 22.05); and
// with the state directory full (a small tmpfs), no write reaches Slurm
// until the state can be saved again, and a giveback afterwards restores
// every job (TestLiveFullDisk; it mounts a tmpfs, so it needs root, as the
// labs do).
//
//	SLURMLAB_LABS="22.05 24.11 26.05" go test -tags integration -count=1 -run 'TestLive(EmptyList|FullDisk)' -v ./sidecar/

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/asrpt/asrpt/decision"
	"github.com/asrpt/asrpt/test/slurmlab"
)

func TestLiveEmptyList(t *testing.T) {
	forLabsParallel(t, func(t *testing.T, lab *slurmlab.Lab) {
		mode := WriteFactor
		if lab.Version == "22.05" {
			mode = WritePriority
		}
		px := newFaultProxy(t, lab.URL)
		l := newLive(t, lab, px.URL, func(c *Config) { c.WriteMode, c.Scope.Partitions = mode, []string{lab.Partition} })
		var blockers []string
		for range lab.Nodes {
			blockers = append(blockers, l.submitNow("alice", "asrpt-empty-blocker", lab.GPUsPerNode, 300))
		}
		l.waitRunning("the blockers running", blockers)
		var pending []string
		for _, g := range []int{1, 2, 4, 2, 1} {
			pending = append(pending, l.submitNow("bob", "asrpt-empty", g, 60))
		}
		l.start()
		l.waitFor("writes to every pending job but the tail", 30*time.Second, func() bool {
			n := 0
			for _, id := range pending {
				if l.probe.writesTo(id) > 0 {
					n++
				}
			}
			return n >= len(pending)-1 // the tail's factor is 0, Slurm's default
		})
		// The sequence numbers from the state file (the sidecar runs).
		seq := map[string]int{}
		l.waitFor("every pending job in the state file", 10*time.Second, func() bool {
			st, err := readState(l.s.cfg.StateFile)
			if err != nil {
				return false
			}
			for _, j := range st.Jobs {
				seq[j.Job.ID] = j.Seq
			}
			for _, id := range pending {
				if _, ok := seq[id]; !ok {
					return false
				}
			}
			return true
		})
		// Two empty lists, then the real one again.
		px.empties.Store(2)
		px.mode.Store("empty list")
		l.waitFor("the empty lists served", 20*time.Second, func() bool { return px.mode.Load().(string) == "" })
		time.Sleep(3 * liveInterval)
		l.stop()
		if n := testutil.ToFloat64(l.s.m.suspectLists); n < 1 {
			t.Errorf("lab %s: %v suspect job lists counted, want the empty ones; log:\n%s", lab.Version, n, l.log.String())
		}
		for _, id := range pending {
			e := l.s.state.Entries[id]
			if e == nil || e.Seq != seq[id] {
				t.Errorf("lab %s: job %s after the empty lists: %+v (sequence number was %d)", lab.Version, id, e, seq[id])
			}
		}
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		rep, err := l.s.Giveback(ctx)
		if err != nil {
			t.Fatalf("lab %s: giveback: %v (%+v)", lab.Version, err, rep)
		}
		if mode == WriteFactor {
			out, err := lab.Run(ctx, "sprio", "-h", "-o", "%i %S")
			if err != nil {
				t.Fatal(err)
			}
			seen := 0
			for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
				f := strings.Fields(line)
				if len(f) != 2 || !slices.Contains(pending, f[0]) {
					continue
				}
				seen++
				if f[1] != "0" {
					t.Errorf("lab %s: job %s keeps SITE %s after giveback", lab.Version, f[0], f[1])
				}
			}
			if seen < len(pending)-1 {
				t.Errorf("lab %s: sprio lists %d of the pending jobs %v:\n%s", lab.Version, seen, pending, out)
			}
		} else {
			for _, id := range pending {
				p, _ := strconv.ParseUint(recField(l.show(id), "Priority"), 10, 32)
				if decision.HighBand.Contains(uint32(p)) || decision.LowBand.Contains(uint32(p)) {
					t.Errorf("lab %s: job %s keeps asrpt's priority %d after giveback", lab.Version, id, p)
				}
			}
		}
		t.Logf("lab %s (%s mode): %d jobs kept through two empty lists, %d handed back: %s", lab.Version, mode,
			len(pending), len(rep.Returned), strings.Join(rep.Returned, " "))
	})
}

func TestLiveFullDisk(t *testing.T) {
	forLabsParallel(t, liveFullDisk)
}

// liveFullDisk: with the state directory full (a 64 KiB tmpfs, filled), no
// write reaches Slurm (a new job gets none), and once there is room again
// the writes resume; a giveback afterwards restores every job asrpt wrote
// to, checked from Slurm's records.
func liveFullDisk(t *testing.T, lab *slurmlab.Lab) {
	mode := WriteFactor
	if lab.Version == "22.05" {
		mode = WritePriority
	}
	dir := filepath.Join(t.TempDir(), "state")
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size=64k,mode=0700", "asrpt-full-disk", dir).CombinedOutput(); err != nil {
		t.Fatalf("mount a small tmpfs (root is needed): %v: %s", err, out)
	}
	t.Cleanup(func() {
		if out, err := exec.Command("umount", dir).CombinedOutput(); err != nil {
			t.Errorf("umount %s: %v: %s", dir, err, out)
		}
	})
	l := newLive(t, lab, "", func(c *Config) {
		c.WriteMode, c.Scope.Partitions = mode, []string{lab.Partition}
		c.StateFile = filepath.Join(dir, "state.json")
	})
	var blockers []string
	for range lab.Nodes {
		blockers = append(blockers, l.submitNow("alice", "asrpt-disk-blocker", lab.GPUsPerNode, 300))
	}
	l.waitRunning("the blockers running", blockers)
	first := []string{l.submitNow("bob", "asrpt-disk", 1, 60), l.submitNow("bob", "asrpt-disk", 2, 60)}
	l.start()
	l.waitFor("the first writes", 30*time.Second, func() bool { return l.probe.writesTo(first[0])+l.probe.writesTo(first[1]) > 0 })
	// Fill the state directory.
	filler := filepath.Join(dir, "filler")
	f, err := os.Create(filler)
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := f.Write(make([]byte, 4096)); err != nil {
			break
		}
	}
	f.Close()
	late := l.submitNow("bob", "asrpt-disk-late", 1, 60)
	l.waitFor("writes held while the state cannot be saved", 30*time.Second, func() bool {
		return testutil.ToFloat64(l.s.m.writesHeld) >= 2
	})
	if n := l.probe.writesTo(late); n != 0 {
		t.Errorf("lab %s: %d writes reached job %s while the state could not be saved", lab.Version, n, late)
	}
	// Room again: the writes resume.
	if err := os.Remove(filler); err != nil {
		t.Fatal(err)
	}
	l.waitFor("writes to the late job", 30*time.Second, func() bool { return l.probe.writesTo(late) > 0 })
	l.stop()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	rep, err := l.s.Giveback(ctx)
	if err != nil {
		t.Fatalf("lab %s: giveback: %v (%+v)", lab.Version, err, rep)
	}
	pending := append(first, late)
	for _, id := range pending {
		show := l.show(id)
		p, _ := strconv.ParseUint(recField(show, "Priority"), 10, 32)
		if decision.HighBand.Contains(uint32(p)) || decision.LowBand.Contains(uint32(p)) {
			t.Errorf("lab %s: job %s keeps asrpt's priority %d after giveback", lab.Version, id, p)
		}
	}
	if mode == WriteFactor {
		out, err := lab.Run(ctx, "sprio", "-h", "-o", "%i %S")
		if err != nil {
			t.Fatal(err)
		}
		for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
			if f := strings.Fields(line); len(f) == 2 && slices.Contains(pending, f[0]) && f[1] != "0" {
				t.Errorf("lab %s: job %s keeps SITE %s after giveback", lab.Version, f[0], f[1])
			}
		}
	}
	t.Logf("lab %s (%s mode): %v cycles held their writes while the state directory was full; %d jobs handed back",
		lab.Version, mode, testutil.ToFloat64(l.s.m.writesHeld), len(rep.Returned))
}
