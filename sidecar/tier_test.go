package sidecar

import (
	"slices"
	"testing"
	"time"

	"github.com/asrpt/asrpt/slurmclient"
)

// TestNodeListsRespectTiers: a job of the gpu partition (tier 1) is never
// pinned to a node of the urgent partition (tier 2) while an urgent job
// waits, since Slurm would give the node to that job first; with no urgent
// job waiting (or one held back by a dependency) the node is used again.
func TestNodeListsRespectTiers(t *testing.T) {
	h := newHarness(t, 2, 4, false, nil)
	h.fake.EditNode("node0002", func(n *slurmclient.Node) { n.Partitions = []string{"gpu", "urgent"} })
	h.tiers = map[string]int{"gpu": 1, "urgent": 2}
	h.s = h.newSidecar()
	// Node 1 is half busy: only node 2 has room for a 4-GPU job.
	h.fake.EditNode("node0001", func(n *slurmclient.Node) { n.GPUsUsed, n.State = 2, "MIXED" })
	urgent := pend("9", "long", 4, t0)
	urgent.Partition = "urgent" // out of the sidecar's scope: left alone, but it waits
	h.fake.Submit(urgent)
	h.fake.Submit(pend("1", "short", 4, t0.Add(time.Second)))
	h.fake.Submit(pend("2", "mid", 2, t0.Add(2*time.Second)))
	h.cycle(t0.Add(time.Minute))
	if j, _ := h.fake.Job("1"); len(j.RequiredNodes) != 0 {
		t.Errorf("4-GPU gpu job pinned to %v while an urgent job waits for node0002", j.RequiredNodes)
	}
	if j, _ := h.fake.Job("2"); !slices.Equal(j.RequiredNodes, []string{"node0001"}) {
		t.Errorf("2-GPU gpu job pinned to %v; want node0001", j.RequiredNodes)
	}
	// The urgent job now waits for a dependency: it claims nothing, and
	// the 4-GPU job gets node 2.
	h.fake.Edit("9", func(j *slurmclient.Job) { j.Reason = "Dependency" })
	h.cycle(t0.Add(2 * time.Minute))
	if j, _ := h.fake.Job("1"); !slices.Equal(j.RequiredNodes, []string{"node0002"}) {
		t.Errorf("4-GPU gpu job pinned to %v with no urgent job able to start; want node0002", j.RequiredNodes)
	}
}
