//go:build integration

package slurmclient

// Live tests against the project's Slurm labs (test/slurmlab/lab.sh up
// VERSION), found through package test/slurmlab: a lab that is not up skips
// its tests, except under CI=true, where slurmlab.Require fails them.
//
//	go test -tags integration -run Live ./slurmclient/

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/asrpt/asrpt/job"
	"github.com/asrpt/asrpt/test/slurmlab"
	"github.com/asrpt/asrpt/trace"
)

// lab is one running Slurm lab with the helpers these tests need.
type lab struct {
	*slurmlab.Lab
}

// liveCtx bounds the client calls of one live test; generous, because the
// three labs share a small, busy machine.
func liveCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	t.Cleanup(cancel)
	return ctx
}

// cmdTimeout bounds one Slurm client command (sbatch, scontrol, sacct).
const cmdTimeout = time.Minute

// run runs a Slurm client command as root in the lab and returns its
// trimmed standard output; a failure ends the test.
func (l *lab) run(t *testing.T, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), cmdTimeout)
	defer cancel()
	out, err := l.Run(ctx, args...)
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimSpace(out)
}

// runAs is run as user.
func (l *lab) runAs(t *testing.T, user string, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), cmdTimeout)
	defer cancel()
	out, err := l.RunAs(ctx, user, args...)
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimSpace(out)
}

// token writes a JWT for user, signed with the lab's key and valid for ttl
// from now (negative: already expired), and returns the file's path.
func (l *lab) token(t *testing.T, user string, ttl time.Duration) string {
	t.Helper()
	tok, err := l.MintToken(user, time.Now().Add(-time.Minute), ttl+time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(t.TempDir(), "jwt-"+user)
	if err := os.WriteFile(p, []byte(tok), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func (l *lab) client(t *testing.T, user string) Client {
	t.Helper()
	c, err := New(liveCtx(t), Config{URL: l.URL, TokenFile: l.token(t, user, time.Hour)})
	if err != nil {
		t.Fatalf("lab %s: %v", l.Version, err)
	}
	return c
}

// submit submits a batch job as user and returns its id; the job sleeps for
// sleep seconds and is cancelled when the test ends. extra are sbatch
// options.
func (l *lab) submit(t *testing.T, user string, sleep int, extra ...string) string {
	t.Helper()
	args := append([]string{"sbatch", "--parsable", "-p", l.Partition, "-t", "10",
		"-o", "/dev/null", "-J", "asrpt-it"}, extra...)
	args = append(args, "--wrap", fmt.Sprintf("sleep %d", sleep))
	id := l.runAs(t, user, args...)
	id, _, _ = strings.Cut(id, ";")
	if _, err := strconv.Atoi(id); err != nil {
		t.Fatalf("sbatch: %q", id)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), cmdTimeout)
		defer cancel()
		l.Run(ctx, "scancel", id)
	})
	return id
}

// show returns `scontrol show job -o ID` as key → value.
func (l *lab) show(t *testing.T, id string) map[string]string {
	t.Helper()
	return parseShow(l.run(t, "scontrol", "show", "job", "-o", id))
}

var (
	showKV   = regexp.MustCompile(`(\w+)=(\S*)`)
	showNext = regexp.MustCompile(` \w+=`)
)

// parseShow splits one line of `scontrol show job -o` into key → value;
// the first occurrence of a key wins, and Comment keeps its spaces.
func parseShow(out string) map[string]string {
	m := map[string]string{}
	for _, kv := range showKV.FindAllStringSubmatch(out, -1) {
		if _, dup := m[kv[1]]; !dup {
			m[kv[1]] = kv[2]
		}
	}
	if i := strings.Index(out, " Comment="); i >= 0 {
		c := out[i+len(" Comment="):]
		if j := showNext.FindStringIndex(c); j != nil {
			c = c[:j[0]]
		}
		m["Comment"] = strings.TrimSpace(c)
	}
	return m
}

// waitState polls until the job reaches state.
func (l *lab) waitState(t *testing.T, id, state string, within time.Duration) map[string]string {
	t.Helper()
	deadline := time.Now().Add(within)
	for {
		m := l.show(t, id)
		if m["JobState"] == state {
			return m
		}
		if time.Now().After(deadline) {
			t.Fatalf("job %s: state %s (reason %s) after %v, want %s", id, m["JobState"], m["Reason"], within, state)
		}
		time.Sleep(time.Second)
	}
}

// scheduler switches the lab to sched/<name> and back to backfill (the
// labs' default) when the test ends.
func (l *lab) scheduler(t *testing.T, name string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if err := l.SetScheduler(ctx, name); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		if err := l.SetScheduler(ctx, "backfill"); err != nil {
			t.Errorf("restoring sched/backfill: %v", err)
		}
	})
}

// forLabs runs f as a subtest for every lab version, one lab at a time.
func forLabs(t *testing.T, f func(t *testing.T, l *lab)) {
	for _, v := range slurmlab.Versions {
		t.Run(v, func(t *testing.T) { f(t, &lab{slurmlab.Require(t, v)}) })
	}
}

// forLabsParallel is forLabs with the labs' subtests run at the same time,
// for slow tests that touch nothing shared between labs.
func forLabsParallel(t *testing.T, f func(t *testing.T, l *lab)) {
	for _, v := range slurmlab.Versions {
		t.Run(v, func(t *testing.T) {
			l := &lab{slurmlab.Require(t, v)}
			t.Parallel()
			f(t, l)
		})
	}
}

func TestLivePingProbe(t *testing.T) {
	forLabs(t, func(t *testing.T, l *lab) {
		c := l.client(t, "slurmrest")
		v, err := c.Ping(liveCtx(t))
		if err != nil {
			t.Fatal(err)
		}
		if v.Release != l.Release {
			t.Errorf("release %q, lab says %q", v.Release, l.Release)
		}
		if !slices.Contains(l.APIVersions, v.API) {
			t.Errorf("API %s not among the lab's %s", v.API, l.APIVersions)
		}
		// Every adapter the lab serves works when forced.
		for _, api := range l.APIVersions {
			if _, err := adapter(api, nil); err != nil {
				continue
			}
			c, err := New(liveCtx(t), Config{URL: l.URL, TokenFile: l.token(t, "slurmrest", time.Hour), API: api})
			if err != nil {
				t.Errorf("forced %s: %v", api, err)
				continue
			}
			if _, err := c.Nodes(liveCtx(t)); err != nil {
				t.Errorf("forced %s: nodes: %v", api, err)
			}
		}
	})
}

func TestLiveNodes(t *testing.T) {
	forLabs(t, func(t *testing.T, l *lab) {
		ns, err := l.client(t, "slurmrest").Nodes(liveCtx(t))
		if err != nil {
			t.Fatal(err)
		}
		if len(ns) != l.Nodes {
			t.Fatalf("%d nodes, want %d", len(ns), l.Nodes)
		}
		for _, n := range ns {
			if n.GPUs != l.GPUsPerNode || n.GPUType != l.GPUType {
				t.Errorf("node %+v: want %d GPUs of type %s", n, l.GPUsPerNode, l.GPUType)
			}
		}
	})
}

func TestLiveJobsAndUpdate(t *testing.T) {
	forLabs(t, func(t *testing.T, l *lab) {
		c := l.client(t, "slurmrest")
		ctx := liveCtx(t)
		id := l.submit(t, "alice", 60, "--gres=gpu:1", "--begin=now+3600")
		j, err := c.Job(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		if j.State != "PENDING" || j.User != "alice" || j.GPUs.PerNode != 1 || j.GPUs.Total != 1 {
			t.Fatalf("fresh job: %+v", j)
		}
		jobs, err := c.Jobs(ctx)
		if err != nil {
			t.Fatal(err)
		}
		found := false
		for _, x := range jobs {
			found = found || x.ID == id
		}
		if !found {
			t.Fatalf("job %s not in Jobs()", id)
		}
		u := JobUpdate{RequiredNodes: []string{"node3"}, GPUsPerNode: ptr(2),
			Comment: ptr("asrpt live"), Nice: ptr(7)}
		if err := c.UpdateJob(ctx, id, u); err != nil {
			t.Fatal(err)
		}
		if err := c.UpdateJob(ctx, id, JobUpdate{Priority: ptr(uint32(4242))}); err != nil {
			t.Fatal(err)
		}
		s := l.show(t, id)
		if s["Priority"] != "4242" || s["ReqNodeList"] != "node3" || !strings.HasSuffix(s["TresPerNode"], "gpu:2") ||
			s["Nice"] != "0" || s["Comment"] != "asrpt live" {
			t.Errorf("scontrol after update: Priority=%s ReqNodeList=%s TresPerNode=%s Nice=%s Comment=%q",
				s["Priority"], s["ReqNodeList"], s["TresPerNode"], s["Nice"], s["Comment"])
		}
		// Nice was 7 until the explicit priority reset it to 0 (checked
		// above); the client refuses the two in one update.
		if err := c.UpdateJob(ctx, id, JobUpdate{Nice: ptr(1), Priority: ptr(uint32(1))}); !errors.Is(err, ErrInvalid) {
			t.Errorf("nice with priority: %v", err)
		}
		// Hold, then release with a priority: the release recomputes the
		// priority, so the client sends the priority after it.
		if err := c.UpdateJob(ctx, id, JobUpdate{Hold: ptr(true)}); err != nil {
			t.Fatal(err)
		}
		if s := l.show(t, id); s["Priority"] != "0" || !strings.HasPrefix(s["Reason"], "JobHeld") {
			t.Errorf("after hold: Priority=%s Reason=%s", s["Priority"], s["Reason"])
		}
		if err := c.UpdateJob(ctx, id, JobUpdate{Hold: ptr(false), Priority: ptr(uint32(4243))}); err != nil {
			t.Fatal(err)
		}
		if s := l.show(t, id); s["Priority"] != "4243" || strings.HasPrefix(s["Reason"], "JobHeld") {
			t.Errorf("after release: Priority=%s Reason=%s", s["Priority"], s["Reason"])
		}
	})
}

// TestLiveSiteFactor: a site factor written through v0.0.42/44 is what the
// priority plugin adds (the labs' weights are 0, so it is the whole
// priority, and sprio's SITE column shows it); an explicit priority masks
// it until a release, which drops the explicit priority; a guarded node
// list without a priority keeps it. v0.0.38 refuses it before sending
// anything.
func TestLiveSiteFactor(t *testing.T) {
	forLabs(t, func(t *testing.T, l *lab) {
		c := l.client(t, "slurmrest")
		ctx := liveCtx(t)
		// Pending for resources (sprio shows it): node1 taken by a blocker.
		blocker := l.submit(t, "bob", 300, "-w", "node1", "--exclusive")
		l.waitState(t, blocker, "RUNNING", 90*time.Second)
		id := l.submit(t, "alice", 60, "--gres=gpu:1", "-w", "node1")
		prio := func() uint32 {
			t.Helper()
			j, err := c.Job(ctx, id)
			if err != nil {
				t.Fatal(err)
			}
			return j.Priority
		}
		before := prio()
		if !c.SupportsSiteFactor() {
			err := c.UpdateJob(ctx, id, JobUpdate{SiteFactor: ptr(uint32(1234))})
			if !errors.Is(err, ErrUnsupported) || prio() != before {
				t.Errorf("v0.0.38 site factor: %v, priority %d (was %d)", err, prio(), before)
			}
			return
		}
		steps := []struct {
			name string
			u    JobUpdate
			want uint32
		}{
			{"site factor", JobUpdate{SiteFactor: ptr(uint32(1234))}, 1234},
			{"explicit priority", JobUpdate{Priority: ptr(uint32(77))}, 77},
			{"site factor under an explicit priority", JobUpdate{SiteFactor: ptr(uint32(500))}, 77},
			{"release of a job not held", JobUpdate{Hold: ptr(false)}, 500},
			{"guarded node list with a site factor", JobUpdate{RequiredNodes: []string{"node1"}, SiteFactor: ptr(uint32(600)), Guard: true}, 600},
			{"site factor 0", JobUpdate{SiteFactor: ptr(uint32(0))}, 1},
		}
		for _, st := range steps {
			if err := c.UpdateJob(ctx, id, st.u); err != nil {
				t.Fatalf("%s: %v", st.name, err)
			}
			if got := prio(); got != st.want {
				t.Errorf("%s: priority %d, want %d", st.name, got, st.want)
			}
			if st.name == "site factor" {
				if out := l.run(t, "sprio", "-h", "-j", id, "-o", "%S"); out != "1234" {
					t.Errorf("sprio SITE %q, want 1234", out)
				}
			}
		}
		if s := l.show(t, id); s["JobState"] != "PENDING" || s["ReqNodeList"] != "node1" || strings.HasPrefix(s["Reason"], "JobHeld") {
			t.Errorf("after the guarded write: %s %s %s", s["JobState"], s["ReqNodeList"], s["Reason"])
		}
	})
}

func TestLiveRequiredNodesRunThere(t *testing.T) {
	forLabs(t, func(t *testing.T, l *lab) {
		c := l.client(t, "slurmrest")
		ctx := liveCtx(t)
		id := l.submit(t, "alice", 30, "--gres=gpu:1", "--hold")
		if err := c.UpdateJob(ctx, id, JobUpdate{RequiredNodes: []string{"node3"}, GPUsPerNode: ptr(2)}); err != nil {
			t.Fatal(err)
		}
		if err := c.UpdateJob(ctx, id, JobUpdate{Hold: ptr(false)}); err != nil {
			t.Fatal(err)
		}
		s := l.waitState(t, id, "RUNNING", 90*time.Second)
		if s["NodeList"] != "node3" {
			t.Errorf("job ran on %s, want node3", s["NodeList"])
		}
		j, err := c.Job(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		if len(j.Nodes) != 1 || j.Nodes[0] != "node3" || len(j.GPUIndices["node3"]) != 2 {
			t.Errorf("running job: nodes %v GPU indices %v", j.Nodes, j.GPUIndices)
		}
		// A running job's node list cannot change.
		err = c.UpdateJob(ctx, id, JobUpdate{RequiredNodes: []string{"node2"}})
		if !errors.Is(err, ErrInvalid) && !errors.Is(err, ErrNotPending) {
			t.Errorf("required nodes of a running job: %v", err)
		}
	})
}

func TestLiveRefusals(t *testing.T) {
	forLabs(t, func(t *testing.T, l *lab) {
		ctx := liveCtx(t)
		op := l.client(t, "slurmrest")
		alice := l.client(t, "alice")
		bob := l.client(t, "bob")
		id := l.submit(t, "alice", 60, "--gres=gpu:1", "--begin=now+3600")
		if _, err := op.Job(ctx, "99999999"); !errors.Is(err, ErrJobGone) {
			t.Errorf("unknown job: %v", err)
		}
		if err := alice.UpdateJob(ctx, id, JobUpdate{Priority: ptr(uint32(1 << 30))}); !errors.Is(err, ErrPermission) {
			t.Errorf("owner raising priority: %v", err)
		}
		if err := bob.UpdateJob(ctx, id, JobUpdate{Comment: ptr("bob")}); !errors.Is(err, ErrPermission) {
			t.Errorf("other user's job: %v", err)
		}
		if err := op.UpdateJob(ctx, id, JobUpdate{Priority: ptr(uint32(100))}); err != nil {
			t.Fatal(err)
		}
		if err := alice.UpdateJob(ctx, id, JobUpdate{Priority: ptr(uint32(50))}); !errors.Is(err, ErrNotPersistent) {
			t.Errorf("owner lowering priority: %v", err)
		}
		// Held by an operator: the owner may not release it.
		if err := op.UpdateJob(ctx, id, JobUpdate{Hold: ptr(true)}); err != nil {
			t.Fatal(err)
		}
		if err := alice.UpdateJob(ctx, id, JobUpdate{Hold: ptr(false)}); !errors.Is(err, ErrPermission) {
			t.Errorf("owner releasing an admin hold: %v", err)
		}
		// Unknown key: 22.05 answers 200 + errors[], 24.11+ 200 + warnings[].
		r := restOf(op)
		p, _ := prefixes(op.APIVersion())
		err := r.call(ctx, "POST", p+"/job/"+id, nil, map[string]any{"no_such_key": 1}, []string{"no_such_key"}, nil)
		if !errors.Is(err, ErrIgnoredField) {
			t.Errorf("unknown key: %v", err)
		}
		// A GRES value Slurm refuses is caught; the job keeps its GPUs.
		bad := map[string]any{"tres_per_node": "gpu:1"}
		if op.APIVersion() == "v0.0.38" {
			bad = map[string]any{"gpus_per_node": "nosuchtype:3"}
		}
		if err := op.UpdateJob(ctx, id, JobUpdate{Hold: ptr(false)}); err != nil {
			t.Fatal(err)
		}
		err = r.call(ctx, "POST", p+"/job/"+id, nil, bad, nil, nil)
		if !errors.Is(err, ErrInvalid) {
			t.Errorf("bad GRES %v: %v", bad, err)
		}
		if j, err := op.Job(ctx, id); err != nil || j.GPUs.Total == 0 {
			t.Logf("job after rejected GRES update: %+v %v (26.05 bug: GPU request dropped)", j.GPUs, err)
		}
	})
}

func TestLiveAuth(t *testing.T) {
	forLabs(t, func(t *testing.T, l *lab) {
		ctx := liveCtx(t)
		for name, cfg := range map[string]Config{
			"expired":   {TokenFile: l.token(t, "slurmrest", -time.Hour)},
			"wrong key": {TokenFile: testToken(t, "slurmrest")},
			"user≠sun":  {TokenFile: l.token(t, "alice", time.Hour), User: "bob"},
		} {
			cfg.URL = l.URL
			cfg.API = ""
			_, err := New(ctx, cfg)
			if !errors.Is(err, ErrAuth) {
				t.Errorf("%s token: %v, want ErrAuth", name, err)
			}
		}
		// The token file is re-read when it changes.
		tf := l.token(t, "slurmrest", -time.Hour)
		tr, err := newTransport(Config{URL: l.URL, TokenFile: tf})
		if err != nil {
			t.Fatal(err)
		}
		c, _ := adapter(apiOf(t, l), tr)
		if _, err := c.Ping(ctx); !errors.Is(err, ErrAuth) {
			t.Fatalf("expired: %v", err)
		}
		good, _ := os.ReadFile(l.token(t, "slurmrest", time.Hour))
		if err := os.WriteFile(tf, good, 0o600); err != nil {
			t.Fatal(err)
		}
		// Both tokens have the same size: make the change visible through
		// the modification time whatever the file system's resolution.
		if err := os.Chtimes(tf, time.Time{}, time.Now().Add(time.Minute)); err != nil {
			t.Fatal(err)
		}
		if _, err := c.Ping(ctx); err != nil {
			t.Errorf("after token rotation: %v", err)
		}
		// Local auth over the unix socket, as the operator slurmrestd runs as.
		uc, err := New(ctx, Config{URL: "unix://" + l.Socket})
		if err != nil {
			t.Fatalf("unix socket: %v", err)
		}
		id := l.submit(t, "alice", 60, "--begin=now+3600")
		if err := uc.UpdateJob(ctx, id, JobUpdate{Priority: ptr(uint32(777))}); err != nil {
			t.Errorf("priority over unix socket: %v", err)
		}
		if s := l.show(t, id); s["Priority"] != "777" {
			t.Errorf("Priority=%s after unix-socket update", s["Priority"])
		}
	})
}

func apiOf(t *testing.T, l *lab) string {
	return l.client(t, "slurmrest").APIVersion()
}

// TestLiveAccountingMatchesSacct runs short jobs, and a job array of two
// tasks, and compares the client's accounting records with `sacct -P` for
// the same jobs (the array id with the ARRAY of sacct's JobID ARRAY_TASK).
func TestLiveAccountingMatchesSacct(t *testing.T) {
	forLabs(t, func(t *testing.T, l *lab) {
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
		defer cancel()
		c := l.client(t, "slurmrest")
		from := time.Now().Add(-2 * time.Second).Truncate(time.Second)
		ids := []string{
			l.submit(t, "alice", 1, "--gres=gpu:1"),
			l.submit(t, "bob", 2, "--gres=gpu:2", "-N", "1"),
			l.submit(t, "alice", 1, "--gres=gpu:4", "-N", "2"),
		}
		array := l.submit(t, "bob", 1, "--gres=gpu:1", "--array=0-1")
		for _, id := range ids {
			l.waitState(t, id, "COMPLETED", 90*time.Second)
		}
		// slurmdbd receives the end records asynchronously.
		var got map[string]bool
		deadline := time.Now().Add(60 * time.Second)
		to := time.Now().Add(2 * time.Second)
		var recs map[string]map[string]string
		for {
			js, err := c.AccountingJobs(ctx, from, to)
			if err != nil {
				t.Fatal(err)
			}
			got = map[string]bool{}
			recs = map[string]map[string]string{}
			tasks := 0
			for _, j := range js {
				got[j.ID] = true
				if j.ArrayJobID == array {
					tasks++
				}
				recs[j.ID] = map[string]string{
					"JobName": j.Name, "User": j.User, "Account": j.Account, "Partition": j.Partition,
					"Submit": strconv.FormatInt(int64(j.Submit), 10), "ElapsedRaw": strconv.FormatInt(int64(j.RunTime), 10),
					"State": j.State, "GPUs": strconv.Itoa(j.GPUs), "NNodes": strconv.Itoa(j.Nodes),
					"ArrayJobID": j.ArrayJobID,
				}
			}
			if got[ids[0]] && got[ids[1]] && got[ids[2]] && tasks == 2 {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("accounting has %v, want %v", got, ids)
			}
			time.Sleep(2 * time.Second)
		}
		out := l.run(t, "sacct", "-X", "-P", "-n", "-j", strings.Join(append(ids, array), ","),
			"-o", "JobIDRaw,JobName,User,Account,Partition,Submit,ElapsedRaw,State,AllocTRES,NNodes,JobID")
		lines := strings.Split(out, "\n")
		if len(lines) != len(ids)+2 {
			t.Fatalf("sacct printed %d lines, want %d jobs and 2 array tasks:\n%s", len(lines), len(ids), out)
		}
		for _, line := range lines {
			f := strings.Split(line, "|")
			if len(f) != 11 {
				t.Fatalf("sacct line %q", line)
			}
			r := recs[f[0]]
			if r == nil {
				t.Errorf("sacct job %s missing from the client's records", f[0])
				continue
			}
			gpus := "0"
			if m := regexp.MustCompile(`gres/gpu=(\d+)`).FindStringSubmatch(f[8]); m != nil {
				gpus = m[1]
			}
			submit, err := time.ParseInLocation("2006-01-02T15:04:05", f[5], time.Local)
			if err != nil {
				t.Fatal(err)
			}
			want := map[string]string{"JobName": f[1], "User": f[2], "Account": f[3], "Partition": f[4],
				"Submit": strconv.FormatInt(submit.Unix(), 10), "ElapsedRaw": f[6],
				"State": strings.Fields(f[7])[0], "GPUs": gpus, "NNodes": f[9]}
			want["ArrayJobID"], _, _ = strings.Cut(f[10], "_")
			if !strings.Contains(f[10], "_") {
				want["ArrayJobID"] = ""
			}
			for k, v := range want {
				if r[k] != v {
					t.Errorf("job %s %s: client %q, sacct %q", f[0], k, r[k], v)
				}
			}
		}
	})
}

// TestLiveCommandMatchesAccounting: a job's command key as the job list
// shows it while it waits is what accounting reports of it once it ended, on every release: the predictor is trained on the one and
// reads the other. Where the release reports submit lines on both sides
// (26.05, v0.0.44) the key is not empty and two jobs with other submit
// lines get other keys; elsewhere no job has one.
func TestLiveCommandMatchesAccounting(t *testing.T) {
	forLabs(t, func(t *testing.T, l *lab) {
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
		defer cancel()
		c := l.client(t, "slurmrest")
		from := time.Now().Add(-2 * time.Second).Truncate(time.Second)
		ids := []string{
			l.submit(t, "alice", 1, "--gres=gpu:1", "--begin=now+3600"),
			l.submit(t, "alice", 2, "--gres=gpu:1", "--begin=now+3600"),
		}
		pending := map[string]uint64{} // job id → command key
		for _, id := range ids {
			j, err := c.Job(ctx, id)
			if err != nil {
				t.Fatal(err)
			}
			if j.State != "PENDING" || (j.Command != 0) != (l.Version >= "25.11") {
				t.Fatalf("job %s waiting on %s: state %s, command %x; want PENDING, a key from 25.11 on", id, l.Version, j.State, j.Command)
			}
			pending[id] = j.Command
			l.run(t, "scontrol", "update", "jobid="+id, "starttime=now")
		}
		if l.Version >= "25.11" && pending[ids[0]] == pending[ids[1]] {
			t.Errorf("two submit lines (sleep 1, sleep 2) give one key on %s", l.Version)
		}
		for _, id := range ids {
			l.waitState(t, id, "COMPLETED", 90*time.Second)
		}
		deadline := time.Now().Add(60 * time.Second)
		var ended map[string]uint64
		for {
			js, err := c.AccountingJobs(ctx, from, time.Now().Add(2*time.Second))
			if err != nil {
				t.Fatal(err)
			}
			ended = map[string]uint64{}
			for _, j := range js {
				if _, ok := pending[j.ID]; ok {
					ended[j.ID] = j.Command
				}
			}
			if len(ended) == len(ids) {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("accounting has %d of %v", len(ended), ids)
			}
			time.Sleep(2 * time.Second)
		}
		for id, want := range pending {
			if got := ended[id]; got != want {
				t.Errorf("job %s: accounting command %x, job list %x", id, got, want)
			}
		}
	})
}

// TestLiveHetAccountingMatchesSacct runs a heterogeneous job (1 GPU : 2
// GPUs) on every lab and reads it back from slurmdbd through the client and
// from sacct through the trace reader: both give one job under the
// leader's id with the 3 GPUs the sidecar ranked it by, and agree on every
// field they share.
func TestLiveHetAccountingMatchesSacct(t *testing.T) {
	forLabs(t, func(t *testing.T, l *lab) {
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
		defer cancel()
		c := l.client(t, "slurmrest")
		from := time.Now().Add(-2 * time.Second).Truncate(time.Second)
		leader := l.submit(t, "alice", 1, "--gres=gpu:1", ":", "--gres=gpu:2")
		var got job.Job
		deadline := time.Now().Add(150 * time.Second)
		for got.GPUs != 3 {
			if time.Now().After(deadline) {
				t.Fatalf("accounting has no job %s with 3 GPUs (last %+v)", leader, got)
			}
			time.Sleep(2 * time.Second)
			js, err := c.AccountingJobs(ctx, from, time.Now().Add(2*time.Second))
			if err != nil {
				t.Fatal(err)
			}
			for _, j := range js {
				if j.ID == leader {
					got = j
				}
			}
		}
		_, fields, _ := strings.Cut(trace.RecommendedSacct, "-o ")
		out := l.run(t, "sacct", "-X", "-P", "-j", leader, "-o", fields)
		if n := strings.Count(out, "\n"); n != 2 {
			t.Fatalf("sacct printed %d lines after the header, want the 2 components:\n%s", n, out)
		}
		jobs, _, err := trace.ReadStats(strings.NewReader(out), "sacct", trace.Sacct, trace.Options{Location: time.Local})
		if err != nil {
			t.Fatal(err)
		}
		if len(jobs) != 1 {
			t.Fatalf("the trace reader made %d jobs of\n%s", len(jobs), out)
		}
		want := jobs[0]
		if l.Version < "25.11" {
			want.Command = 0 // this version's job list has no submit line: neither has the client
		}
		if got != want {
			t.Errorf("lab %s: client\n%+v\nsacct\n%+v", l.Version, got, want)
		}
	})
}

// TestLiveAccountingEmptyWindow asks every lab for windows without jobs:
// one before the lab existed and one in the future. 22.05 answers HTTP 200
// with error 9003 "Nothing found", v0.0.42+ 200 with a warning; both are
// zero jobs.
func TestLiveAccountingEmptyWindow(t *testing.T) {
	forLabs(t, func(t *testing.T, l *lab) {
		c := l.client(t, "slurmrest")
		future := time.Now().Add(24 * time.Hour).Truncate(time.Second)
		for _, w := range [][2]time.Time{
			{emptyFrom, emptyFrom.Add(24 * time.Hour)},
			{future, future.Add(time.Hour)},
		} {
			js, err := c.AccountingJobs(liveCtx(t), w[0], w[1])
			if err != nil || js == nil || len(js) != 0 {
				t.Errorf("window %v–%v: %d jobs (nil: %t), err %v; want an empty list", w[0], w[1], len(js), js == nil, err)
			}
		}
	})
}

// restOf returns the request helper of an adapter, for raw requests.
func restOf(c Client) *rest {
	switch c := c.(type) {
	case *v0038:
		return &c.rest
	case *v0042:
		return &c.rest
	case *v0044:
		return &c.rest
	}
	panic(fmt.Sprintf("unknown adapter %T", c))
}

// TestLivePriorityOrder checks that priorities set through the client decide
// the start order under sched/builtin (strict priority order). A running
// whole-cluster job holds every node while three whole-cluster jobs are
// released with priorities 10, 30 and 20, so none can start before all
// three are set; then the blocker is cancelled. Each job needs every GPU, so
// they run one at a time, and at every poll no job may have started while a
// job of higher priority is still pending. The labs run this at the same
// time (each switches only its own slurmctld).
func TestLivePriorityOrder(t *testing.T) {
	forLabsParallel(t, func(t *testing.T, l *lab) {
		l.scheduler(t, "builtin")
		ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
		defer cancel()
		c := l.client(t, "slurmrest")
		whole := []string{"-N", strconv.Itoa(l.Nodes), "--gres=gpu:" + strconv.Itoa(l.GPUsPerNode), "--exclusive"}
		blocker := l.submit(t, "bob", 600, whole...)
		l.waitState(t, blocker, "RUNNING", 90*time.Second)

		prio := []uint32{10, 30, 20}
		ids := make([]string, len(prio))
		for i := range prio {
			ids[i] = l.submit(t, "alice", 2, append([]string{"--hold"}, whole...)...)
		}
		for i, id := range ids {
			if err := c.UpdateJob(ctx, id, JobUpdate{Hold: ptr(false), Priority: ptr(prio[i])}); err != nil {
				t.Fatal(err)
			}
		}
		for i, id := range ids {
			if s := l.show(t, id); s["JobState"] != "PENDING" || s["Priority"] != strconv.Itoa(int(prio[i])) {
				t.Fatalf("job %s before the blocker ends: state %s priority %s, want PENDING %d",
					id, s["JobState"], s["Priority"], prio[i])
			}
		}
		// Highest priority first.
		order := slices.Clone(ids)
		slices.SortFunc(order, func(a, b string) int {
			return int(prio[slices.Index(ids, b)]) - int(prio[slices.Index(ids, a)])
		})
		l.run(t, "scancel", blocker)

		deadline := time.Now().Add(3 * time.Minute)
		var shows []map[string]string
		for {
			shows = shows[:0]
			done := 0
			for _, id := range order {
				s := l.show(t, id)
				shows = append(shows, s)
				if s["JobState"] == "COMPLETED" {
					done++
				}
			}
			if err := startOrderViolation(order, shows); err != "" {
				t.Fatalf("sched/builtin, priorities %v of jobs %v: %s", prio, ids, err)
			}
			if done == len(order) {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("jobs %v not all COMPLETED within 3 minutes: %v", order, states(shows))
			}
			time.Sleep(500 * time.Millisecond)
		}
		// Completed, so the start times are final: strictly increasing.
		var prev time.Time
		for i, s := range shows {
			st, err := time.ParseInLocation("2006-01-02T15:04:05", s["StartTime"], time.Local)
			if err != nil {
				t.Fatalf("job %s StartTime %q: %v", order[i], s["StartTime"], err)
			}
			if i > 0 && !st.After(prev) {
				t.Errorf("job %s (priority %d) started %v, not after the higher-priority job before it (%v)",
					order[i], prio[slices.Index(ids, order[i])], st, prev)
			}
			prev = st
		}
	})
}

// startOrderViolation checks one observation of jobs listed highest
// priority first (shows[i] is `scontrol show job` of order[i]): a job that
// has left PENDING while a higher-priority one is still PENDING breaks
// strict priority order. It returns a description, or "".
func startOrderViolation(order []string, shows []map[string]string) string {
	for i := range order {
		if shows[i]["JobState"] == "PENDING" {
			continue
		}
		for h := 0; h < i; h++ {
			if shows[h]["JobState"] == "PENDING" {
				return fmt.Sprintf("job %s is %s while higher-priority job %s is PENDING (reason %s)",
					order[i], shows[i]["JobState"], order[h], shows[h]["Reason"])
			}
		}
	}
	return ""
}

func states(shows []map[string]string) []string {
	out := make([]string, len(shows))
	for i, s := range shows {
		out[i] = s["JobState"] + "/" + s["Reason"]
	}
	return out
}

func TestStartOrderViolation(t *testing.T) {
	st := func(states ...string) []map[string]string {
		var out []map[string]string
		for _, s := range states {
			out = append(out, map[string]string{"JobState": s})
		}
		return out
	}
	order := []string{"3", "1", "2"}
	tests := []struct {
		name  string
		shows []map[string]string
		bad   string // the job reported, "" for none
	}{
		{"all pending", st("PENDING", "PENDING", "PENDING"), ""},
		{"highest running", st("RUNNING", "PENDING", "PENDING"), ""},
		{"in order", st("COMPLETED", "COMPLETED", "RUNNING"), ""},
		{"all done", st("COMPLETED", "COMPLETED", "COMPLETED"), ""},
		{"lowest first", st("PENDING", "PENDING", "RUNNING"), "job 2 "},
		{"middle before highest", st("PENDING", "COMPLETED", "PENDING"), "job 1 "},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := startOrderViolation(order, tc.shows)
			if (tc.bad == "") != (got == "") || !strings.Contains(got, tc.bad) {
				t.Errorf("startOrderViolation = %q, want one naming %q", got, tc.bad)
			}
		})
	}
}
