// Package quality is the suite of traces scheduling changes are decided
// on: a fixed set of named replays (generated workloads at two loads and
// three seeds, the public SenseTime Helios and Microsoft Philly traces at
// three cluster sizes each, generated sacct histories read back through the
// sacct reader), every policy replayed on each against the lower bound, and
// geometric means across the cases of the candidate's total JCT over the
// others'. One trace's total JCT moves by ±20% on small changes; the
// geometric means over the suite are what a change is judged by
// (README.md).
package quality

import (
	"bytes"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/asrpt/asrpt/job"
	"github.com/asrpt/asrpt/trace"
)

// Case is one named replay of the suite: a workload on a uniform cluster.
type Case struct {
	// Name identifies the case in tables, JSON and --cases (short, no
	// spaces, unique in a suite).
	Name string
	// Source says where the jobs come from, in words.
	Source string
	// Nodes and GPUsPerNode give the uniform cluster replayed on.
	Nodes, GPUsPerNode int
	// Jobs returns the case's jobs sorted by submit time; it is called once
	// per run and must be deterministic.
	Jobs func() ([]job.Job, error)
}

// The built-in workload of `asrpt replay` without --trace: a generated
// trace on 32 nodes × 8 GPUs, 5,000 jobs.
const (
	BuiltinNodes       = 32
	BuiltinGPUsPerNode = 8
	BuiltinJobs        = 5000
)

// Paths of the trace excerpts under the --traces directory; both are read
// with format helios.
const (
	HeliosPath = "helios-15k-excerpt/helios_data_training.csv"
	PhillyPath = "philly-15k-excerpt/philly_data_training.csv"
)

// Cluster sizes of the trace-file cases, nodes of 8 GPUs. Helios: 16, 64
// and 128 nodes. Philly (whose excerpt asks for 554 GPUs on average over its
// 58 days, and about 1,500 in its busiest week): 48, 96 and 192 nodes,
// offered loads 1.44, 0.72 and 0.36, from heavy queueing to light (192
// nodes just hold the busiest week).
var (
	HeliosNodes = []int{16, 64, 128}
	PhillyNodes = []int{48, 96, 192}
)

// GeneratedCase is the built-in generated workload (trace.DefaultGenConfig
// with BuiltinJobs jobs on BuiltinNodes × BuiltinGPUsPerNode) at offered
// load and seed, as `asrpt replay --load load --seed seed` replays it.
func GeneratedCase(load float64, seed int64) Case {
	cfg := trace.DefaultGenConfig()
	cfg.Jobs, cfg.Seed, cfg.Load = BuiltinJobs, seed, load
	cfg.GPUsPerNode, cfg.ClusterGPUs = BuiltinGPUsPerNode, BuiltinNodes*BuiltinGPUsPerNode
	return Case{
		Name:        fmt.Sprintf("gen-%g-s%d", load, seed),
		Source:      fmt.Sprintf("generated, load %g, seed %d", load, seed),
		Nodes:       BuiltinNodes,
		GPUsPerNode: BuiltinGPUsPerNode,
		Jobs:        func() ([]job.Job, error) { return trace.Generate(cfg) },
	}
}

// GenCase is a generated workload on the cluster cfg describes
// (cfg.ClusterGPUs/cfg.GPUsPerNode nodes of cfg.GPUsPerNode GPUs).
func GenCase(name, source string, cfg trace.GenConfig) Case {
	return Case{
		Name: name, Source: source,
		Nodes: cfg.ClusterGPUs / max(1, cfg.GPUsPerNode), GPUsPerNode: cfg.GPUsPerNode,
		Jobs: func() ([]job.Job, error) { return trace.Generate(cfg) },
	}
}

// SacctCase is a generated workload written out as `sacct -P` text
// (trace.WriteSacct) and read back through the sacct reader, so that the
// replay sees what an admin's accounting history gives: whole seconds, no
// placement profiles.
func SacctCase(name, source string, cfg trace.GenConfig) Case {
	c := GenCase(name, source, cfg)
	c.Jobs = func() ([]job.Job, error) {
		jobs, err := trace.Generate(cfg)
		if err != nil {
			return nil, err
		}
		var buf bytes.Buffer
		if err := trace.WriteSacct(&buf, jobs); err != nil {
			return nil, err
		}
		jobs, _, err = trace.ReadStats(&buf, name+".sacct", trace.Sacct, trace.Options{})
		return jobs, err
	}
	return c
}

// FileCase is a trace file read in format on nodes × gpusPerNode.
func FileCase(name, source, path string, format trace.Format, nodes, gpusPerNode int) Case {
	return Case{
		Name: name, Source: source, Nodes: nodes, GPUsPerNode: gpusPerNode,
		Jobs: func() ([]job.Job, error) {
			jobs, _, err := trace.ReadFileStats(path, format, trace.Options{})
			return jobs, err
		},
	}
}

// sacctConfigs are the generated sacct histories: other users, cluster
// shapes and seeds than the built-in workload, at load 1.1.
func sacctConfigs() []struct {
	name, source string
	cfg          trace.GenConfig
} {
	many := trace.DefaultGenConfig()
	many.Jobs, many.Seed, many.Load, many.Users = 8000, 11, 1.1, 400
	many.GPUsPerNode, many.ClusterGPUs = 8, 48*8
	small := trace.DefaultGenConfig()
	small.Jobs, small.Seed, small.Load = 3000, 12, 1.1
	small.GPUsPerNode, small.ClusterGPUs = 4, 24*4
	return []struct {
		name, source string
		cfg          trace.GenConfig
	}{
		{"sacct-users400", "generated → sacct -P, 8000 jobs, 400 users, load 1.1, seed 11", many},
		{"sacct-4gpu", "generated → sacct -P, 3000 jobs on 4-GPU nodes, load 1.1, seed 12", small},
	}
}

// Suite returns the fixed trace set in its display order. The trace-file
// cases (Helios, Philly) read their files under tracesDir; with tracesDir
// empty they are left out and named in skipped.
func Suite(tracesDir string) (cases []Case, skipped []string) {
	for _, load := range []float64{0.9, 1.3} {
		for seed := int64(1); seed <= 3; seed++ {
			cases = append(cases, GeneratedCase(load, seed))
		}
	}
	files := []struct {
		prefix, source, path string
		nodes                []int
	}{
		{"helios", "the public SenseTime Helios trace (15,000-job excerpt)", HeliosPath, HeliosNodes},
		{"philly", "the public Microsoft Philly trace (15,000-job excerpt)", PhillyPath, PhillyNodes},
	}
	for _, f := range files {
		for _, n := range f.nodes {
			name := fmt.Sprintf("%s-%dn", f.prefix, n)
			if tracesDir == "" {
				skipped = append(skipped, name)
				continue
			}
			cases = append(cases, FileCase(name, f.source, filepath.Join(tracesDir, f.path), trace.Helios, n, 8))
		}
	}
	for _, s := range sacctConfigs() {
		cases = append(cases, SacctCase(s.name, s.source, s.cfg))
	}
	return cases, skipped
}

// The held-out cases' workload seeds, drawn once from /dev/urandom on
// 2026-12-06 and written down here: no change is to be tuned on them
// (HeldOut).
const (
	heldOutSeed4GPU  = 2037235745
	heldOutSeedGen   = 1216633080
	heldOutSeedSacct = 1998719658
)

// HeldOut returns the held-out cases, apart from the suite: generated
// workloads with seeds drawn once (above), for checking a change decided on
// the suite against workloads it was not tuned to (`asrpt quality
// --held-out`), above all the run's predictor against the family median.
// They are never part of the suite's means.
func HeldOut() []Case {
	gpu4 := trace.DefaultGenConfig()
	gpu4.Jobs, gpu4.Seed, gpu4.Load, gpu4.Users = 4000, heldOutSeed4GPU, 1.2, 150
	gpu4.GPUsPerNode, gpu4.ClusterGPUs = 4, 32*4
	gen := trace.DefaultGenConfig()
	gen.Jobs, gen.Seed, gen.Load = BuiltinJobs, heldOutSeedGen, 1.1
	gen.GPUsPerNode, gen.ClusterGPUs = BuiltinGPUsPerNode, BuiltinNodes*BuiltinGPUsPerNode
	sacct := trace.DefaultGenConfig()
	sacct.Jobs, sacct.Seed, sacct.Load, sacct.Users = 6000, heldOutSeedSacct, 1.0, 300
	sacct.GPUsPerNode, sacct.ClusterGPUs = 8, 48*8
	return []Case{
		SacctCase("heldout-4gpu", fmt.Sprintf("held out: generated → sacct -P, 4000 jobs, 150 users, 32×4 GPUs, load 1.2, seed %d", heldOutSeed4GPU), gpu4),
		GenCase("heldout-gen", fmt.Sprintf("held out: generated, 5000 jobs, load 1.1, seed %d", heldOutSeedGen), gen),
		SacctCase("heldout-sacct", fmt.Sprintf("held out: generated → sacct -P, 6000 jobs, 300 users, load 1.0, seed %d", heldOutSeedSacct), sacct),
	}
}

// Select returns the cases whose name contains one of the substrings
// (all cases when there is none), in their order.
func Select(cases []Case, substrings []string) []Case {
	if len(substrings) == 0 {
		return cases
	}
	var out []Case
	for _, c := range cases {
		for _, s := range substrings {
			if strings.Contains(c.Name, s) {
				out = append(out, c)
				break
			}
		}
	}
	return out
}
