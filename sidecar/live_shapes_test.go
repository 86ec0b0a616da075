//go:build integration

package sidecar

// The shapes of a real queue under the running sidecar, on each real Slurm
// lab: a job array with a throttle, a heterogeneous job, a job of the
// second partition only and one submitted to both, plain jobs, a
// dependency, a CPU-only job and a held job that is released, all mixed.
// Everything is asserted from Slurm's own records: accounting (no RESIZING
// record, the throttle kept, every job ran, the array's tasks spread over
// nodes), slurmctld's log of each update (no priority or node list set on
// a running array task, no node list on an array or heterogeneous job, no
// job pinned outside its partitions) and scontrol after a giveback.
//
//	SLURMLAB_LABS=22.05 go test -tags integration -count=1 -run TestLiveShapes -v ./sidecar/

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/asrpt/asrpt/decision"
	"github.com/asrpt/asrpt/test/slurmlab"
)

// shapeRun is the sidecar running against one lab for the shape tests.
type shapeRun struct {
	*live
	logFile string
	logFrom int64
}

// newShapes makes the sidecar (interval 1 s, every partition in scope,
// giveback on shutdown) against lab, and starts nothing; the lab's queue is
// the test's own.
func newShapes(t *testing.T, lab *slurmlab.Lab) *shapeRun {
	t.Helper()
	l := newLive(t, lab, "", func(c *Config) { c.GivebackOnShutdown = true })
	r := &shapeRun{live: l, logFile: filepath.Join(lab.LogDir, "slurmctld.log")}
	if st, err := os.Stat(r.logFile); err == nil {
		r.logFrom = st.Size()
	}
	return r
}

// startShapes is newShapes with the sidecar's Run started.
func startShapes(t *testing.T, lab *slurmlab.Lab) *shapeRun {
	t.Helper()
	r := newShapes(t, lab)
	r.start()
	return r
}

// sbatch submits as user with the given options and a sleep, and returns
// the job id (for a heterogeneous job, the leader's).
func (r *shapeRun) sbatch(user string, seconds int, opts ...string) string {
	r.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	args := append([]string{"sbatch", "--parsable", "-D", "/tmp", "-o", "/dev/null", "-t", "10", "-J", "asrpt-shape"}, opts...)
	args = append(args, "--wrap", fmt.Sprintf("sleep %d", seconds))
	out, err := r.lab.RunAs(ctx, user, args...)
	if err != nil {
		r.t.Fatalf("sbatch %v: %v", opts, err)
	}
	id, _, _ := strings.Cut(strings.TrimSpace(out), ";")
	if _, err := strconv.Atoi(id); err != nil {
		r.t.Fatalf("sbatch %v: %q", opts, out)
	}
	r.jobs = append(r.jobs, id)
	return id
}

func (r *shapeRun) run(args ...string) string {
	r.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	out, err := r.lab.Run(ctx, args...)
	if err != nil {
		r.t.Fatalf("%v: %v", args, err)
	}
	return out
}

// acctRow is one accounting record of the test's jobs.
type acctRow struct {
	id, state, nodes string
	start, end       time.Time
}

// accounting returns every record (duplicates included: a resized job
// shows there as RESIZING) of the jobs the test submitted.
func (r *shapeRun) accounting() []acctRow {
	r.t.Helper()
	// By job id: a window (-S) can miss a job whose eligible time a hold
	// reset.
	out := r.run("sacct", "-a", "-X", "-D", "-n", "-P", "-j", strings.Join(r.jobs, ","),
		"-o", "JobID,State,NodeList,Start,End")
	var rows []acctRow
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		f := strings.Split(line, "|")
		if len(f) != 5 {
			continue
		}
		row := acctRow{id: f[0], state: f[1], nodes: f[2]}
		row.start, _ = time.ParseInLocation("2006-01-02T15:04:05", f[3], time.Local)
		row.end, _ = time.ParseInLocation("2006-01-02T15:04:05", f[4], time.Local)
		rows = append(rows, row)
	}
	return rows
}

// ctldLog returns slurmctld's log lines written since the test began.
func (r *shapeRun) ctldLog() []string {
	r.t.Helper()
	b, err := os.ReadFile(r.logFile)
	if err != nil {
		r.t.Fatalf("slurmctld log: %v", err)
	}
	if int64(len(b)) < r.logFrom {
		r.logFrom = 0
	}
	return strings.Split(string(b[r.logFrom:]), "\n")
}

// squeue returns the test's active jobs as id → "STATE REASON".
func (r *shapeRun) squeue() map[string]string {
	out := r.run("squeue", "-h", "-n", "asrpt-shape", "-o", "%i %T %r")
	m := map[string]string{}
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		if f := strings.Fields(line); len(f) == 3 {
			m[f[0]] = f[1] + " " + f[2]
		}
	}
	return m
}

// maxOverlap returns the most records of rows running at one time.
func maxOverlap(rows []acctRow) int {
	best := 0
	for _, a := range rows {
		n := 0
		for _, b := range rows {
			if !b.start.After(a.start) && b.end.After(a.start) {
				n++
			}
		}
		best = max(best, n)
	}
	return best
}

// TestLiveShapes runs the mixed queue on every lab at once.
func TestLiveShapes(t *testing.T) {
	forLabsParallel(t, func(t *testing.T, lab *slurmlab.Lab) {
		t.Run("mixed queue", func(t *testing.T) { liveMixedQueue(t, lab) })
		t.Run("giveback", func(t *testing.T) { liveShapesGiveback(t, lab) })
	})
}

func liveMixedQueue(t *testing.T, lab *slurmlab.Lab) {
	r := startShapes(t, lab)
	// Every GPU busy for a while, so that the rest queues and asrpt orders
	// it: then arrays, a het job, partitions, plain jobs, a dependency, a
	// CPU-only job and a held job.
	blocker := r.sbatch("alice", 12, "-N", fmt.Sprint(lab.Nodes), fmt.Sprintf("--gres=gpu:%d", lab.GPUsPerNode), "--exclusive")
	const throttle = 4
	arr := r.sbatch("bob", 6, fmt.Sprintf("--array=1-8%%%d", throttle), "--gres=gpu:2")
	het := r.sbatch("alice", 5, "--gres=gpu:1", ":", "--gres=gpu:2")
	urgent := r.sbatch("bob", 5, "-p", lab.Partition2, fmt.Sprintf("--gres=gpu:%d", lab.GPUsPerNode))
	multi := r.sbatch("alice", 5, "-p", lab.Partition+","+lab.Partition2, "--gres=gpu:2")
	plain := []string{r.sbatch("bob", 4, "--gres=gpu:1"), r.sbatch("alice", 4, "--gres=gpu:3"), r.sbatch("bob", 4, "--gres=gpu:4")}
	dep := r.sbatch("alice", 2, "--gres=gpu:1", "--dependency=afterok:"+plain[0])
	cpu := r.sbatch("bob", 3, "-n", "1")
	held := r.sbatch("bob", 3, "--gres=gpu:1", "--hold")
	// The held job is counted as held, then released.
	r.waitFor("the held job counted", 30*time.Second, func() bool {
		return testutil.ToFloat64(r.s.m.jobs.WithLabelValues("held")) >= 1
	})
	r.waitFor("asrpt's writes to the queue", 30*time.Second, func() bool { return r.probe.writesTo(arr) > 0 })
	r.run("scontrol", "release", held)
	// Until the whole queue has run (nothing of the test left in squeue).
	r.waitFor("the queue to drain", 4*time.Minute, func() bool {
		time.Sleep(time.Second)
		return len(r.squeue()) == 0
	})
	if g := testutil.ToFloat64(r.s.m.jobs.WithLabelValues("held")); g != 0 {
		t.Errorf("asrpt_jobs{state=held} = %v after the release", g)
	}
	r.stop()

	rows := r.accounting()
	byJob := map[string][]acctRow{}
	var tasks []acctRow
	for _, row := range rows {
		if row.state == "RESIZING" {
			t.Errorf("lab %s: RESIZING record in accounting: %+v", lab.Version, row)
		}
		base, _, _ := strings.Cut(row.id, "_")
		base, _, _ = strings.Cut(base, "+")
		byJob[base] = append(byJob[base], row)
		if strings.HasPrefix(row.id, arr+"_") {
			tasks = append(tasks, row)
		}
	}
	for _, id := range append([]string{blocker, arr, het, urgent, multi, dep, held}, plain...) {
		if len(byJob[id]) == 0 {
			t.Errorf("lab %s: job %s never ran; accounting: %+v", lab.Version, id, rows)
		}
		for _, row := range byJob[id] {
			if row.state != "COMPLETED" {
				t.Errorf("lab %s: job %s ended %s", lab.Version, row.id, row.state)
			}
		}
	}
	if len(tasks) != 8 {
		t.Errorf("lab %s: %d array task records, want 8: %+v", lab.Version, len(tasks), tasks)
	}
	if n := maxOverlap(tasks); n > throttle {
		t.Errorf("lab %s: %d array tasks ran at once, throttle %d", lab.Version, n, throttle)
	}
	nodes := map[string]bool{}
	for _, task := range tasks {
		nodes[task.nodes] = true
	}
	if len(nodes) < 2 {
		t.Errorf("lab %s: every array task ran on %v: pinned to one node", lab.Version, nodes)
	}
	for _, row := range byJob[urgent] {
		if row.nodes != "node3" && row.nodes != "node4" {
			t.Errorf("lab %s: urgent job ran on %s", lab.Version, row.nodes)
		}
	}
	// The CPU-only job keeps its standing (a priority or site factor at
	// its place in Slurm's own order, standing.go), never a node list.
	r.probe.mu.Lock()
	pins := r.probe.pins[cpu]
	r.probe.mu.Unlock()
	if pins != 0 {
		t.Errorf("lab %s: %d node lists sent to the CPU-only job", lab.Version, pins)
	}

	// slurmctld's own record of every update.
	// A task split off the array has a job id of its own, JobId=ARR_K(ID);
	// the array's record keeps the array's id, also when only its last
	// task is left pending (JobId=ARR_K(ARR)): that is the remainder.
	taskWrite := regexp.MustCompile(`JobId=` + arr + `_\d+\((\d+)\)`)
	hetWrite := regexp.MustCompile(`JobId=` + het + `\+`)
	setNodes := regexp.MustCompile(`setting (req_)?nodes to (\S+) for JobId=(\S+)`)
	var prios int
	for _, line := range r.ctldLog() {
		if !strings.Contains(line, "_update_job") {
			continue
		}
		if strings.Contains(line, "set priority") && strings.Contains(line, "JobId="+arr+"_") {
			prios++
		}
		if m := taskWrite.FindStringSubmatch(line); m != nil && m[1] != arr {
			t.Errorf("lab %s: update of a single array task: %s", lab.Version, line)
		}
		m := setNodes.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		if strings.HasPrefix(m[3], arr+"_") || hetWrite.MatchString(line) {
			t.Errorf("lab %s: node list set on an array or het job: %s", lab.Version, line)
		}
		if strings.HasPrefix(m[3], urgent) {
			for _, n := range strings.Split(m[2], ",") {
				if n != "node3" && n != "node4" && !strings.HasPrefix(n, "node[3") {
					t.Errorf("lab %s: urgent job pinned outside its partition: %s", lab.Version, line)
				}
			}
		}
	}
	if prios == 0 {
		t.Errorf("lab %s: slurmctld logged no priority set on the array", lab.Version)
	}

	// Every request is a write that changed a value, or a counted failure
	// of a race (the job started or ended between read and write).
	var req, writes, fails float64
	for _, k := range []string{"priority", "nodes"} {
		req += testutil.ToFloat64(r.s.m.requests.WithLabelValues(k))
		writes += testutil.ToFloat64(r.s.m.writes.WithLabelValues(k))
	}
	for _, line := range gathered(r.live, "asrpt_write_failures_total") {
		f := strings.Fields(line)
		x, _ := strconv.ParseFloat(f[len(f)-1], 64)
		fails += x
		if !strings.Contains(line, "reason=job_gone") && !strings.Contains(line, "reason=not_pending") {
			t.Errorf("lab %s: write failure other than a race: %s", lab.Version, line)
		}
	}
	if req != writes+fails || fails > 5 {
		t.Errorf("lab %s: %v requests, %v writes, %v failures", lab.Version, req, writes, fails)
	}
	r.probe.mu.Lock()
	bad, same := slices.Clone(r.probe.badWrites), slices.Clone(r.probe.redundant)
	r.probe.mu.Unlock()
	if len(bad) > 0 {
		t.Errorf("lab %s: writes to jobs not last read as pending: %v", lab.Version, bad)
	}
	if len(same) > 0 {
		t.Errorf("lab %s: writes of values the jobs already had: %v", lab.Version, same)
	}
	t.Logf("lab %s: %v write requests (%v writes, %v failed races), array tasks on %d nodes, %d at once at most",
		lab.Version, req, writes, fails, len(nodes), maxOverlap(tasks))
}

// liveShapesGiveback: with the cluster full, asrpt ranks an array with a
// running task and a het job; the giveback on shutdown returns both to
// Slurm's own priority, releases them, and leaves no node list.
func liveShapesGiveback(t *testing.T, lab *slurmlab.Lab) {
	r := newShapes(t, lab)
	// The queue is set up before the sidecar starts, each step once the
	// one before has run: jobs of the test before may still be completing,
	// and a blocker that waited would leave more than one GPU free.
	r.waitFor("an empty queue", time.Minute, func() bool {
		time.Sleep(200 * time.Millisecond)
		return strings.TrimSpace(r.run("squeue", "-h", "-o", "%i")) == ""
	})
	var blockers []string
	for range lab.Nodes - 1 {
		blockers = append(blockers, r.sbatch("alice", 300, fmt.Sprintf("--gres=gpu:%d", lab.GPUsPerNode)))
	}
	// One GPU left: one task runs, the rest of the array waits behind it.
	blockers = append(blockers, r.sbatch("alice", 300, fmt.Sprintf("--gres=gpu:%d", lab.GPUsPerNode-1)))
	r.waitFor("the blockers running", time.Minute, func() bool {
		time.Sleep(200 * time.Millisecond)
		q := r.squeue()
		for _, id := range blockers {
			if !strings.HasPrefix(q[id], "RUNNING") {
				return false
			}
		}
		return true
	})
	arr := r.sbatch("bob", 300, "--array=1-4", "--gres=gpu:1")
	r.waitFor("a task of the array running", time.Minute, func() bool {
		time.Sleep(200 * time.Millisecond)
		return strings.Contains(r.run("squeue", "-h", "-t", "R", "-o", "%i"), arr+"_")
	})
	r.start()
	het := r.sbatch("bob", 300, "--gres=gpu:1", ":", "--gres=gpu:1")
	r.waitFor("priorities on the array and the het job", time.Minute, func() bool {
		return r.probe.writesTo(arr) > 0 && r.probe.writesTo(het) > 0
	})
	r.stop()
	if n := r.logged("jobs handed back to Slurm"); n != 1 {
		t.Fatalf("giveback logged %d times; log:\n%s", n, r.log.String())
	}
	out := r.run("squeue", "-h", "-n", "asrpt-shape", "-t", "PD", "-o", "%A|%Q|%r")
	pending := 0
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		f := strings.Split(line, "|")
		if len(f) != 3 {
			continue
		}
		pending++
		p, _ := strconv.ParseUint(f[1], 10, 32)
		if decision.HighBand.Contains(uint32(p)) || decision.LowBand.Contains(uint32(p)) || strings.HasPrefix(f[2], "JobHeld") {
			t.Errorf("lab %s: after giveback job %s has priority %s, reason %s", lab.Version, f[0], f[1], f[2])
		}
		show := r.run("scontrol", "show", "job", "-o", f[0])
		if m := regexp.MustCompile(`ReqNodeList=(\S+)`).FindStringSubmatch(show); m != nil && m[1] != "(null)" {
			t.Errorf("lab %s: after giveback job %s keeps ReqNodeList=%s; sidecar log:\n%s", lab.Version, f[0], m[1], r.log.String())
		}
	}
	if pending < 3 {
		t.Errorf("lab %s: %d pending records after giveback, want the array's and both het components:\n%s", lab.Version, pending, out)
	}
}

var soak = flag.Duration("soak", 0, "run TestLiveSoak for this long on each lab in SLURMLAB_LABS (e.g. 10m)")

// TestLiveSoak runs the sidecar against a mixed queue that keeps coming
// (arrays with and without a throttle, heterogeneous jobs, jobs of the
// second partition and of both, plain jobs, dependencies, CPU-only jobs,
// held jobs released later) for -soak on each lab, and reports per cycle
// the write requests against the values that changed; it fails on a
// write of a value the job already had, a write to a job not last read
// as pending, a RESIZING record in accounting, or an array above its
// throttle. Run:
//
//	SLURMLAB_LABS=22.05 go test -tags integration -count=1 ./sidecar/ -run TestLiveSoak -soak=10m -timeout 40m -v
func TestLiveSoak(t *testing.T) {
	if *soak <= 0 {
		t.Skip("-soak not given")
	}
	forLabsParallel(t, func(t *testing.T, lab *slurmlab.Lab) { liveSoak(t, lab, *soak) })
}

func liveSoak(t *testing.T, lab *slurmlab.Lab, d time.Duration) {
	r := newShapes(t, lab) // cycles are driven here, one a second, to see each report
	ctx := context.Background()
	end := time.Now().Add(d)
	var cycles, maxReq int
	var req, changed float64
	var held []string
	nextBatch := time.Now()
	batch := 0
	for time.Now().Before(end) {
		if !time.Now().Before(nextBatch) {
			batch++
			g := lab.GPUsPerNode
			r.sbatch("alice", 20, "--array=1-6%2", "--gres=gpu:1")
			r.sbatch("bob", 12, "--array=1-4", "--gres=gpu:2")
			r.sbatch("alice", 10, "--gres=gpu:1", ":", "--gres=gpu:2")
			r.sbatch("bob", 15, "-p", lab.Partition2, fmt.Sprintf("--gres=gpu:%d", g))
			r.sbatch("alice", 10, "-p", lab.Partition+","+lab.Partition2, "--gres=gpu:2")
			p := r.sbatch("bob", 8, fmt.Sprintf("--gres=gpu:%d", 1+batch%g))
			r.sbatch("alice", 5, "--gres=gpu:1", "--dependency=afterany:"+p)
			r.sbatch("bob", 5, "-n", "1")
			for _, h := range held {
				r.run("scontrol", "release", h)
			}
			held = []string{r.sbatch("alice", 5, "--gres=gpu:1", "--hold")}
			nextBatch = time.Now().Add(40 * time.Second)
		}
		before := testutil.ToFloat64(r.s.m.requests.WithLabelValues("priority")) + testutil.ToFloat64(r.s.m.requests.WithLabelValues("nodes"))
		rep, err := r.s.RunOnce(ctx, time.Now())
		if err != nil {
			t.Logf("cycle: %v", err)
		}
		n := testutil.ToFloat64(r.s.m.requests.WithLabelValues("priority")) + testutil.ToFloat64(r.s.m.requests.WithLabelValues("nodes")) - before
		ch := rep.Deferred + rep.Backoff
		for _, w := range rep.Writes {
			ch += w
		}
		for _, f := range rep.Failed {
			ch += f
		}
		cycles++
		req += n
		changed += float64(ch)
		maxReq = max(maxReq, int(n))
		if int(n) > ch {
			t.Errorf("lab %s: cycle %d sent %v requests for %d changed values", lab.Version, cycles, n, ch)
		}
		time.Sleep(liveInterval)
	}
	for _, h := range held {
		r.run("scontrol", "release", h)
	}
	r.waitFor("the queue to drain", 5*time.Minute, func() bool {
		if _, err := r.s.RunOnce(ctx, time.Now()); err != nil {
			t.Logf("cycle: %v", err)
		}
		time.Sleep(liveInterval)
		return len(r.squeue()) == 0
	})
	rows := r.accounting()
	arrays := map[string][]acctRow{}
	for _, row := range rows {
		if row.state == "RESIZING" {
			t.Errorf("lab %s: RESIZING record: %+v", lab.Version, row)
		}
		if a, _, ok := strings.Cut(row.id, "_"); ok {
			arrays[a] = append(arrays[a], row)
		}
	}
	for a, tasks := range arrays {
		if len(tasks) == 6 && maxOverlap(tasks) > 2 {
			t.Errorf("lab %s: array %s ran %d tasks at once, throttle 2", lab.Version, a, maxOverlap(tasks))
		}
	}
	r.probe.mu.Lock()
	bad, same := len(r.probe.badWrites), slices.Clone(r.probe.redundant)
	r.probe.mu.Unlock()
	if bad > 0 || len(same) > 0 {
		t.Errorf("lab %s: %d writes to jobs not pending, writes of values already in effect: %v", lab.Version, bad, same)
	}
	t.Logf("lab %s: %v in %d cycles: %d batches, %d accounting records, %v write requests for %v changed values "+
		"(at most %d in a cycle), retries %v, failures %s, RESIZING records: see above (none if no error)",
		lab.Version, d, cycles, batch, len(rows), req, changed, maxReq,
		testutil.ToFloat64(r.s.m.retries.WithLabelValues("priority"))+testutil.ToFloat64(r.s.m.retries.WithLabelValues("nodes")),
		strings.Join(gathered(r.live, "asrpt_write_failures_total"), "; "))
}
