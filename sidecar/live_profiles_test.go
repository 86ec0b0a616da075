//go:build integration

package sidecar

// Live job profiles against the real Slurm labs: a two-node job that names
// its model in its comment gets the node list Heavy-Edge chose for that
// model (asrpt plan and scontrol show job agree) and runs there; a plain
// job gets the default data-parallel profile.
//
//	SLURMLAB_LABS=22.05 go test -tags integration -count=1 -run TestLiveProfiles -v ./sidecar/

import (
	"context"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/asrpt/asrpt/placement"
	"github.com/asrpt/asrpt/test/slurmlab"
)

func TestLiveProfiles(t *testing.T) {
	forLabsParallel(t, liveProfiles)
}

// hostnames expands a Slurm hostlist with scontrol.
func (r *shapeRun) hostnames(list string) []string {
	r.t.Helper()
	return strings.Fields(r.run("scontrol", "show", "hostnames", list))
}

func liveProfiles(t *testing.T, lab *slurmlab.Lab) {
	r := newShapes(t, lab) // cycles are driven here
	r.waitFor("an empty queue", time.Minute, func() bool {
		time.Sleep(200 * time.Millisecond)
		return strings.TrimSpace(r.run("squeue", "-h", "-o", "%i")) == ""
	})
	g := lab.GPUsPerNode
	// CPU-only jobs hold most of every node's memory, which asrpt's model
	// does not know: the GPU jobs stay pending for resources while asrpt
	// dispatches them onto the idle GPUs and writes the named job's node
	// list. (A job that waits for a begin time would be held back, never
	// dispatched.)
	var blockers []string
	for i := 1; i <= lab.Nodes; i++ {
		blockers = append(blockers, r.sbatch("alice", 600, "-p", lab.Partition, "-w", fmt.Sprintf("node%d", i), "--mem=60000"))
	}
	r.waitFor("the memory blockers running", time.Minute, func() bool {
		time.Sleep(200 * time.Millisecond)
		return len(strings.Fields(r.run(append([]string{"squeue", "-h", "-t", "R", "-o", "%i", "-j"}, strings.Join(blockers, ","))...))) == len(blockers)
	})
	named := r.sbatch("bob", 20, "-N", "2", fmt.Sprintf("--gres=gpu:%d", g), "--mem=8000", "--comment", "asrpt:model=gpt2-1.5b")
	plain := r.sbatch("bob", 20, "--gres=gpu:1", "--mem=8000")
	ctx := context.Background()
	r.waitFor("the named job's node list", time.Minute, func() bool {
		if _, err := r.s.RunOnce(ctx, time.Now()); err != nil {
			t.Logf("cycle: %v", err)
		}
		time.Sleep(500 * time.Millisecond)
		return !strings.Contains(r.run("scontrol", "show", "job", "-o", named), "ReqNodeList=(null)")
	})
	rep, err := r.s.Plan(ctx, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	row := planRow(t, rep, named)
	if row.Profile != "gpt2-1.5b" || row.ProfileSource != "comment" || row.Stage != "dispatched" || len(row.Nodes) != 2 || row.Alpha <= 0 {
		t.Fatalf("lab %s: named job's plan row %+v", lab.Version, row)
	}
	if p := planRow(t, rep, plain); p.Profile != placement.DataParallelModel || p.ProfileSource != "default" {
		t.Errorf("lab %s: plain job's plan row %+v", lab.Version, p)
	}
	show := r.run("scontrol", "show", "job", "-o", named)
	m := regexp.MustCompile(`ReqNodeList=(\S+)`).FindStringSubmatch(show)
	if m == nil || !slices.Equal(r.hostnames(m[1]), row.Nodes) {
		t.Fatalf("lab %s: scontrol shows %v, the plan %v", lab.Version, m, row.Nodes)
	}
	t.Logf("lab %s: job %s (gpt2-1.5b, %d GPUs): nodes %v, α %.4f s (α_min %.4f s)", lab.Version, named, 2*g, row.Nodes, row.Alpha, row.AlphaMin)

	// With the memory free, it runs on those nodes.
	r.run(append([]string{"scancel"}, blockers...)...)
	var nodes string
	r.waitFor("the named job running", time.Minute, func() bool {
		time.Sleep(500 * time.Millisecond)
		out := strings.Fields(r.run("squeue", "-h", "-j", named, "-o", "%T %N"))
		if len(out) == 2 && out[0] == "RUNNING" {
			nodes = out[1]
			return true
		}
		return false
	})
	if got := r.hostnames(nodes); !slices.Equal(got, row.Nodes) {
		t.Errorf("lab %s: the named job runs on %v, asrpt chose %v", lab.Version, got, row.Nodes)
	}
}
