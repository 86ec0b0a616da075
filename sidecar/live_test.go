//go:build integration

package sidecar

// Fault tests of the running sidecar (Run, interval 1 s) against the real
// Slurm labs (test/slurmlab/lab.sh up VERSION), where the fault is real:
// slurmrestd killed and restarted, slurmctld restarted, a job cancelled
// between the sidecar's read and its write, an expired token; and, through
// an httptest proxy in front of the lab, a 500 with errors[] and a
// malformed body. For each: the sidecar keeps running, logs the incident
// once, counts it in its metrics, recovers within two cycles of the fault's
// end, never writes to a job it did not last read as pending, and stops
// cleanly.
//
//	bash test/slurmlab/lab.sh up 22.05
//	SLURMLAB_LABS=22.05 go test -tags integration -count=1 -run Live -v ./sidecar/
//
// The labs come from SLURMLAB_LABS (default all three); a lab that is not
// up skips its tests, except under CI=true, where slurmlab.Require fails
// them.

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/rs/zerolog"

	"github.com/asrpt/asrpt/slurmclient"
	"github.com/asrpt/asrpt/slurmconf"
	"github.com/asrpt/asrpt/test/slurmlab"
)

// liveLabs returns the labs to test: SLURMLAB_LABS, or all of them.
func liveLabs() []string {
	if s := strings.Fields(os.Getenv("SLURMLAB_LABS")); len(s) > 0 {
		return s
	}
	return slurmlab.Versions
}

// forLabsParallel runs f as a subtest for every lab of liveLabs, the labs
// at the same time.
func forLabsParallel(t *testing.T, f func(t *testing.T, lab *slurmlab.Lab)) {
	for _, v := range liveLabs() {
		t.Run(v, func(t *testing.T) {
			lab := slurmlab.Require(t, v)
			t.Parallel()
			f(t, lab)
		})
	}
}

// live is a sidecar running against one lab.
type live struct {
	t         *testing.T
	lab       *slurmlab.Lab
	tokenFile string
	probe     *probe
	s         *Sidecar
	log       *syncBuffer
	cancel    context.CancelFunc
	done      chan error
	jobs      []string
}

const liveInterval = time.Second

// newLive makes a sidecar against lab at url (the lab's own when empty)
// with the live tests' configuration (interval 1 s, mean predictor, an
// hour of history, a state file of its own), changed by mod; it starts
// nothing. The jobs the test submits through it are cancelled at the end.
func newLive(t *testing.T, lab *slurmlab.Lab, url string, mod func(*Config)) *live {
	t.Helper()
	l := &live{t: t, lab: lab, log: &syncBuffer{}, done: make(chan error, 1)}
	t.Cleanup(l.cleanupJobs)
	tok, err := lab.Token()
	if err != nil {
		t.Fatal(err)
	}
	l.tokenFile = filepath.Join(t.TempDir(), "slurm.jwt")
	if err := os.WriteFile(l.tokenFile, []byte(tok), 0o600); err != nil {
		t.Fatal(err)
	}
	if url == "" {
		url = lab.URL
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cl, err := slurmclient.New(ctx, slurmclient.Config{URL: url, TokenFile: l.tokenFile,
		Timeout: 5 * time.Second, RetryBackoff: 100 * time.Millisecond})
	if err != nil {
		t.Fatalf("lab %s: client: %v", lab.Version, err)
	}
	sc, err := slurmconf.Load(lab.ConfDir, slurmconf.Options{})
	if err != nil {
		t.Fatal(err)
	}
	c := sc.Cluster
	// The partitions' tiers, as asrpt sidecar reads them from slurm.conf.
	tiers := map[string]int{}
	for _, p := range sc.Partitions {
		tiers[p.Name] = max(p.PriorityTier, 1)
	}
	cfg := DefaultConfig()
	cfg.Slurm.URL, cfg.Slurm.TokenFile = url, l.tokenFile
	cfg.Interval = liveInterval
	cfg.StateFile = filepath.Join(t.TempDir(), "state.json")
	cfg.UsePredictor("mean") // ranked by its median, as a file naming mean gets
	cfg.History = time.Hour
	// The live tests written before factor mode check priorities (and run
	// on 22.05 too); live_factor_test.go sets factor mode.
	cfg.WriteMode = WritePriority
	if mod != nil {
		mod(&cfg)
	}
	l.probe = newProbe(cl)
	l.s, err = New(cfg, Options{Cluster: c, PartitionTiers: tiers, Slurm: l.probe, Log: zerolog.New(l.log).With().Timestamp().Logger()})
	if err != nil {
		t.Fatal(err)
	}
	return l
}

// start runs the sidecar's Run until the test ends (or stop).
func (l *live) start() {
	rctx, rcancel := context.WithCancel(context.Background())
	l.cancel = rcancel
	go func() { l.done <- l.s.Run(rctx) }()
	l.t.Cleanup(func() { l.stop() })
}

// startLive submits the background load (the cluster filled by long jobs
// of alice, and pending jobs of bob that asrpt manages) and starts the
// sidecar's Run against url (the lab's own when empty), its scope the
// lab's default partition.
func startLive(t *testing.T, lab *slurmlab.Lab, url string) *live {
	t.Helper()
	l := newLive(t, lab, url, func(c *Config) { c.Scope.Partitions = []string{lab.Partition} })
	// Fill every GPU, then queue four jobs asrpt will order.
	for range lab.Nodes {
		l.submit("alice", "asrpt-fault-blocker", lab.GPUsPerNode, 600)
	}
	for i, g := range []int{1, 2, 4, 2} {
		l.submit("bob", fmt.Sprintf("asrpt-fault-%d", i%2), g, 600)
	}
	l.start()
	// Running, and the pending jobs ordered by asrpt.
	l.waitFor("the first cycle's writes", 20*time.Second, func() bool {
		return l.probe.writesTo(l.jobs[len(l.jobs)-1]) > 0
	})
	return l
}

// submit queues a sleep job and remembers it for the cleanup. Jobs of bob
// begin in an hour: they stay pending, and the backfill scheduler does not
// plan nodes for them (lab.sh up, which the tests use to restart daemons,
// waits for every node to be idle, mixed or allocated, not planned).
func (l *live) submit(user, name string, gpus, seconds int, extra ...string) string {
	l.t.Helper()
	return l.sbatch(user == "bob", user, name, gpus, seconds, extra...)
}

// submitNow is submit without a begin time, for bob too: the job may start
// as soon as Slurm finds room for it.
func (l *live) submitNow(user, name string, gpus, seconds int, extra ...string) string {
	l.t.Helper()
	return l.sbatch(false, user, name, gpus, seconds, extra...)
}

func (l *live) sbatch(later bool, user, name string, gpus, seconds int, extra ...string) string {
	l.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	// The GPUs go with the first component; extra may add more (":" …).
	args := []string{"sbatch", "--parsable", "-D", "/tmp", "-o", "/dev/null", "-t", "20", "-J", name, "-p", l.lab.Partition}
	if gpus > 0 {
		args = append(args, fmt.Sprintf("--gres=gpu:%d", gpus))
	}
	if later {
		args = append(args, "--begin=now+3600")
	}
	args = append(args, extra...)
	args = append(args, "--wrap", fmt.Sprintf("sleep %d", seconds))
	out, err := l.lab.RunAs(ctx, user, args...)
	if err != nil {
		l.t.Fatal(err)
	}
	id, _, _ := strings.Cut(strings.TrimSpace(out), ";")
	l.jobs = append(l.jobs, id)
	return id
}

func (l *live) scancel(ids ...string) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if _, err := l.lab.Run(ctx, append([]string{"scancel"}, ids...)...); err != nil {
		l.t.Logf("scancel: %v", err)
	}
}

func (l *live) cleanupJobs() {
	if len(l.jobs) > 0 {
		l.scancel(l.jobs...)
	}
}

// stop ends Run and checks that it returned normally.
func (l *live) stop() {
	if l.cancel == nil {
		return
	}
	l.cancel()
	l.cancel = nil
	select {
	case err := <-l.done:
		if err != nil {
			l.t.Errorf("Run returned %v", err)
		}
	case <-time.After(45 * time.Second):
		l.t.Errorf("Run did not return after its context ended")
	}
}

// alive fails the test when Run has returned.
func (l *live) alive() {
	l.t.Helper()
	select {
	case err := <-l.done:
		l.cancel = nil
		l.t.Fatalf("the sidecar stopped during the fault: %v", err)
	default:
	}
}

func (l *live) waitFor(what string, limit time.Duration, ok func() bool) {
	l.t.Helper()
	deadline := time.Now().Add(limit)
	for !ok() {
		l.alive()
		if time.Now().After(deadline) {
			l.t.Fatalf("lab %s: no %s within %v; log:\n%s", l.lab.Version, what, limit, l.log.String())
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// failedCycles returns the number of failed cycles counted in metrics.
func (l *live) failedCycles() float64 {
	return testutil.ToFloat64(l.s.m.cycles.WithLabelValues("error"))
}

// waitFailing waits until at least n cycles have failed.
func (l *live) waitFailing(n int, limit time.Duration) {
	l.t.Helper()
	l.waitFor(fmt.Sprintf("%d failed cycles", n), limit, func() bool { return l.failedCycles() >= float64(n) })
}

// recovered waits for the first successful read started at or after end
// (the fault's end) and checks it came within two cycles.
func (l *live) recovered(end time.Time) int {
	l.t.Helper()
	n := 0
	l.waitFor("successful cycle after the fault", 30*time.Second, func() bool {
		rs := l.probe.readsSince(end)
		for i, r := range rs {
			if r.err == nil {
				n = i + 1
				return true
			}
		}
		return false
	})
	if n > 2 {
		l.t.Errorf("lab %s: recovered on the %d-th cycle after the fault ended, want ≤ 2; reads: %+v",
			l.lab.Version, n, l.probe.readsSince(end))
	}
	return n
}

// logged counts the log lines whose message is msg.
func (l *live) logged(msg string) int {
	return strings.Count(l.log.String(), `"message":"`+msg+`"`)
}

// checkAfter: a job submitted after the fault gets its priority written,
// no write went to a job not last read as pending, and the cycle-failure
// incident was logged once and its recovery once.
func (l *live) checkAfter(wantCycleIncident bool) {
	l.t.Helper()
	id := l.submit("bob", "asrpt-fault-late", 1, 600)
	l.waitFor("write to the job submitted after the fault", 20*time.Second, func() bool { return l.probe.writesTo(id) > 0 })
	l.probe.mu.Lock()
	bad := append([]string(nil), l.probe.badWrites...)
	l.probe.mu.Unlock()
	if len(bad) > 0 {
		l.t.Errorf("writes to jobs not pending: %v", bad)
	}
	if wantCycleIncident {
		if n := l.logged("cycle failed; retrying with backoff"); n != 1 {
			l.t.Errorf("cycle failure logged %d times, want once; log:\n%s", n, l.log.String())
		}
		if n := l.logged("cycles recovered"); n != 1 {
			l.t.Errorf("recovery logged %d times, want once", n)
		}
	}
}

// pidOf returns the pid lab.sh recorded for daemon name (slurmctld,
// slurmrestd-jwt) of lab.
func pidOf(t *testing.T, lab *slurmlab.Lab, name string) int {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("/tmp/slurmlab", lab.Version, "pids", name))
	if err != nil {
		t.Fatalf("lab %s: pid of %s: %v", lab.Version, name, err)
	}
	f := strings.Fields(string(b))
	if len(f) == 0 {
		t.Fatalf("lab %s: empty pid file for %s", lab.Version, name)
	}
	pid, err := strconv.Atoi(f[0])
	if err != nil {
		t.Fatalf("lab %s: pid of %s: %v", lab.Version, name, err)
	}
	return pid
}

// labUp runs lab.sh up VERSION (idempotent: starts what is not running)
// and waits until Slurm answers again.
func labUp(t *testing.T, lab *slurmlab.Lab) {
	t.Helper()
	script := filepath.Join(repoRoot(t), "test", "slurmlab", "lab.sh")
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	out, err := exec.CommandContext(ctx, "bash", script, "up", lab.Version).CombinedOutput()
	if err != nil {
		t.Fatalf("lab.sh up %s: %v\n%s", lab.Version, err, out)
	}
	for {
		if _, err := lab.Run(ctx, "squeue", "-h", "-o", "%i"); err == nil {
			return
		}
		if ctx.Err() != nil {
			t.Fatalf("lab %s: Slurm not answering after up", lab.Version)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

func repoRoot(t *testing.T) string {
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	return filepath.Dir(wd) // the package directory is sidecar/
}

// TestLiveFaults runs every fault on every lab, the labs at the same time
// (each lab's faults one after the other).
func TestLiveFaults(t *testing.T) {
	forLabsParallel(t, func(t *testing.T, lab *slurmlab.Lab) {
		v := lab.Version
		t.Run("slurmrestd killed", func(t *testing.T) {
			l := startLive(t, lab, "")
			pid := pidOf(t, lab, "slurmrestd-jwt")
			if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
				t.Fatalf("kill slurmrestd %d: %v", pid, err)
			}
			l.waitFailing(3, 30*time.Second)
			labUp(t, lab)
			end := time.Now()
			n := l.recovered(end)
			if got := readErrors(l, "nodes") + readErrors(l, "jobs"); got < 1 {
				t.Errorf("read errors counted %v: %s", got, metricDump(l))
			}
			l.checkAfter(true)
			t.Logf("lab %s: slurmrestd down %v cycles failed, recovered on cycle %d after restart", v, l.failedCycles(), n)
		})
		t.Run("slurmctld restarted", func(t *testing.T) {
			l := startLive(t, lab, "")
			pid := pidOf(t, lab, "slurmctld")
			if err := syscall.Kill(pid, syscall.SIGTERM); err != nil {
				t.Fatalf("kill slurmctld %d: %v", pid, err)
			}
			// With slurmctld gone a read can take the client's three
			// attempts of 5 s each, so one failed cycle can take 15 s
			// plus its backoff; two of them on a machine running three
			// labs at once need more than 40 s.
			l.waitFailing(2, 90*time.Second)
			labUp(t, lab)
			end := time.Now()
			n := l.recovered(end)
			l.checkAfter(true)
			t.Logf("lab %s: slurmctld down: %v cycles failed, recovered on cycle %d after restart", v, l.failedCycles(), n)
		})
		t.Run("job cancelled between read and write", func(t *testing.T) {
			l := startLive(t, lab, "")
			// The victim is submitted held (asrpt leaves it alone),
			// then released; the first write to it is preceded by
			// its cancellation.
			id := l.submit("bob", "asrpt-fault-victim", 1, 600, "--hold")
			var once sync.Once
			l.probe.mu.Lock()
			l.probe.beforeWrite = func(w string) {
				if w == id {
					once.Do(func() { l.scancel(id) })
				}
			}
			l.probe.mu.Unlock()
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			_, err := lab.Run(ctx, "scontrol", "release", id)
			cancel()
			if err != nil {
				t.Fatal(err)
			}
			l.waitFor("the failed write to the cancelled job", 20*time.Second, func() bool {
				l.probe.mu.Lock()
				defer l.probe.mu.Unlock()
				return l.probe.failed[id] > 0
			})
			start := time.Now()
			l.waitFor("two cycles after the cancelled write", 10*time.Second, func() bool {
				return len(l.probe.readsSince(start)) >= 2
			})
			l.probe.mu.Lock()
			failed, wrote := l.probe.failed[id], l.probe.writes[id]
			l.probe.mu.Unlock()
			if failed != 1 || wrote != 0 {
				t.Errorf("cancelled job: %d failed writes, %d successful; want 1 and 0", failed, wrote)
			}
			var reasons []string
			// Slurm answers 2084 "Job has already finished" here (2017
			// only once the job is purged, MinJobAge later), with HTTP
			// 500 up to 24.11 and 422 on 26.05; the client maps both to
			// ErrJobGone (job_gone). Any reason is accepted: what counts
			// is one failed write and none after it.
			for _, r := range []string{"job_gone", "not_pending", "server", "invalid", "other"} {
				// The first write is a node list when the job's turn has
				// come at once (GPUs free), else a priority.
				if testutil.ToFloat64(l.s.m.failures.WithLabelValues("priority", r))+
					testutil.ToFloat64(l.s.m.failures.WithLabelValues("nodes", r)) > 0 {
					reasons = append(reasons, r)
				}
			}
			// Other jobs left in the lab by the earlier cases can hit
			// their own races on a loaded machine (a job started or
			// a node not yet responding after the slurmctld restart),
			// so more than one reason may be counted: the metric must
			// count at least one, and the victim's own count (one
			// failed write, none successful) is checked above from
			// the probe.
			if len(reasons) == 0 {
				t.Errorf("no write failure counted; %s", metricDump(l))
			}
			l.checkAfter(false)
			line := ""
			for _, ln := range strings.Split(l.log.String(), "\n") {
				if strings.Contains(ln, `"incident":"write:`) {
					line = ln
					break
				}
			}
			t.Logf("lab %s: write to a job cancelled after the read failed with reason %v: %s", v, reasons, line)
		})
		t.Run("expired token", func(t *testing.T) {
			l := startLive(t, lab, "")
			valid, err := os.ReadFile(l.tokenFile)
			if err != nil {
				t.Fatal(err)
			}
			old, err := lab.MintToken(lab.TokenUser, time.Now().Add(-2*time.Hour), time.Hour)
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(l.tokenFile, []byte(old), 0o600); err != nil {
				t.Fatal(err)
			}
			l.waitFailing(3, 30*time.Second)
			// The cycle reads the nodes first: that read fails, with
			// reason auth on 24.11 and 26.05; 22.05's answer to an
			// expired token on the node list is classified server by
			// the client (reported).
			if got := readErrors(l, "nodes") + readErrors(l, "jobs"); got < 1 {
				t.Errorf("read errors counted %v; %s", got, metricDump(l))
			}
			if v != "22.05" && testutil.ToFloat64(l.s.m.errors.WithLabelValues("nodes", "auth")) < 1 {
				t.Errorf("auth read errors not counted; %s", metricDump(l))
			}
			for _, ln := range strings.Split(l.log.String(), "\n") {
				if strings.Contains(ln, "cycle failed") {
					t.Logf("lab %s: expired token: %s", v, ln)
				}
			}
			if err := os.WriteFile(l.tokenFile, valid, 0o600); err != nil {
				t.Fatal(err)
			}
			n := l.recovered(time.Now())
			l.checkAfter(true)
			t.Logf("lab %s: expired token: recovered on cycle %d after the token was renewed", v, n)
		})
		for _, fault := range []struct{ name, reason string }{
			{"500 with errors[]", "server"},
			{"malformed body", "bad_response"},
		} {
			t.Run(fault.name, func(t *testing.T) {
				px := newFaultProxy(t, lab.URL)
				l := startLive(t, lab, px.URL)
				px.mode.Store(fault.name)
				l.waitFailing(3, 30*time.Second)
				if got := testutil.ToFloat64(l.s.m.errors.WithLabelValues("jobs", fault.reason)); got < 1 {
					t.Errorf("read errors with reason %s: %v; %s", fault.reason, got, metricDump(l))
				}
				px.mode.Store("")
				n := l.recovered(time.Now())
				l.checkAfter(true)
				t.Logf("lab %s: %s: recovered on cycle %d", v, fault.name, n)
			})
		}
	})
}

// faultProxy is an httptest server in front of the lab's slurmrestd that,
// while mode is set, answers the job list itself: "500 with errors[]",
// "malformed body" (a truncated 200) or "empty list" (a 200 with no jobs,
// as a restarting slurmctld can answer, for the next empties lists).
type faultProxy struct {
	*httptest.Server
	mode    atomic.Value
	empties atomic.Int32
}

func newFaultProxy(t *testing.T, target string) *faultProxy {
	t.Helper()
	u, err := url.Parse(target)
	if err != nil {
		t.Fatal(err)
	}
	p := &faultProxy{}
	p.mode.Store("")
	rp := httputil.NewSingleHostReverseProxy(u)
	p.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mode := p.mode.Load().(string)
		if mode == "" || r.Method != http.MethodGet || !strings.HasPrefix(r.URL.Path, "/slurm/") || !strings.HasSuffix(r.URL.Path, "/jobs") {
			rp.ServeHTTP(w, r)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		switch mode {
		case "empty list":
			if p.empties.Add(-1) < 0 {
				p.mode.Store("")
				rp.ServeHTTP(w, r)
				return
			}
			_, _ = io.WriteString(w, `{"jobs":[],"errors":[],"warnings":[]}`)
		case "500 with errors[]":
			w.WriteHeader(http.StatusInternalServerError)
			_, _ = io.WriteString(w, `{"meta":{},"errors":[{"error_number":1011,"error":"Unable to contact slurm controller (connect failure)","description":"injected by the test","source":"slurm_load_jobs"}],"warnings":[]}`)
		default:
			_, _ = io.WriteString(w, `{"meta":{"plugin":{"type":"openapi/v0.0.38"}},"jobs":[{"job_id":12,"job_state":`)
		}
	}))
	t.Cleanup(p.Close)
	return p
}

// readErrors sums the read errors of op over every reason.
func readErrors(l *live, op string) float64 {
	sum := 0.0
	for _, r := range []string{"job_gone", "permission", "auth", "not_pending", "invalid", "ignored_field",
		"not_applied", "held", "not_persistent", "bad_response", "unsupported", "server", "canceled", "timeout", "other"} {
		sum += testutil.ToFloat64(l.s.m.errors.WithLabelValues(op, r))
	}
	return sum
}

func metricDump(l *live) string {
	var b strings.Builder
	for _, name := range []string{"asrpt_read_errors_total", "asrpt_write_failures_total", "asrpt_cycles_total"} {
		fmt.Fprintf(&b, "%s: %v; ", name, gathered(l, name))
	}
	return b.String()
}

func gathered(l *live, name string) []string {
	mfs, err := l.s.m.reg.Gather()
	if err != nil {
		return []string{err.Error()}
	}
	var out []string
	for _, mf := range mfs {
		if mf.GetName() != name {
			continue
		}
		for _, m := range mf.GetMetric() {
			var labels []string
			for _, lp := range m.GetLabel() {
				labels = append(labels, lp.GetName()+"="+lp.GetValue())
			}
			out = append(out, fmt.Sprintf("{%s} %v", strings.Join(labels, ","), m.GetCounter().GetValue()))
		}
	}
	return out
}
