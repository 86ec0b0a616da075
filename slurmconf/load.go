package slurmconf

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"sort"
	"strings"

	"github.com/asrpt/asrpt/cluster"
)

// NodeLinks is a GPU link matrix for one node from another source than
// gres.conf, such as an `asrpt topo` JSON file (topo.ReadJSON).
type NodeLinks struct {
	Node string
	// Links is GPUs×GPUs NVLink counts, -1 on the diagonal.
	Links [][]int
	// Source names where the matrix came from, for problems.
	Source string
}

// Options tune Load. The zero value reads only the Slurm files and uses the
// default bandwidths.
type Options struct {
	// BandwidthFile is the optional asrpt bandwidth TOML (BandwidthConf).
	BandwidthFile string
	// Links override gres.conf Links= for the nodes they name.
	Links []NodeLinks
	// Source reads the files; nil means the local file system.
	Source Source
}

// Config is the result of Load: what each file said, the cluster model
// built from them, and every problem found.
type Config struct {
	Dir string
	// Slurm is never nil after Load returns; its fields are empty when
	// slurm.conf could not be read.
	Slurm *SlurmConf
	// Gres and Topology are nil when the file is absent.
	Gres      *GresConf
	Topology  *TopologyConf
	Bandwidth BandwidthConf
	// Cluster is the model: nodes in slurm.conf order with GPU counts,
	// types, leaf switches and link matrices; switches in topology.conf
	// order; bandwidths.
	Cluster *cluster.Cluster
	// Partitions are slurm.conf's partitions with member nodes resolved.
	Partitions []Partition
	// Problems are all problems found, errors and warnings, ordered by
	// file and line.
	Problems Problems
}

// LoadCluster loads the Slurm configuration in dir with default options
// and returns the cluster model, or an error joining every problem that is
// not a warning. It is what `asrpt replay --slurm-conf DIR` uses.
func LoadCluster(dir string) (*cluster.Cluster, error) {
	cfg, err := Load(dir, Options{})
	if err != nil {
		return nil, err
	}
	return cfg.Cluster, nil
}

// Load reads slurm.conf (required), gres.conf and topology.conf
// (optional) from dir, plus the bandwidth file if Options names one, and
// builds the cluster model. It always returns a Config (with as much of the
// model as could be built); the error joins every problem that is not a
// warning, each a Problem naming file and line, and is nil when there is
// none.
func Load(dir string, opt Options) (*Config, error) {
	src := opt.Source
	if src == nil {
		src = OSSource{}
	}
	cfg := &Config{Dir: dir, Slurm: &SlurmConf{}, Bandwidth: DefaultBandwidthConf()}
	var ps Problems

	read := func(base string, required bool) ([]byte, string, bool) {
		path := filepath.Join(dir, base)
		data, err := src.ReadFile(path)
		if err != nil {
			if !required && errors.Is(err, fs.ErrNotExist) {
				return nil, path, false
			}
			ps.add(path, 0, "", "%v", err)
			return nil, path, false
		}
		return data, path, true
	}

	if data, path, ok := read("slurm.conf", true); ok {
		c, p := ParseSlurmConf(bytes.NewReader(data), path, src)
		cfg.Slurm = c
		ps = append(ps, p...)
	}
	if data, path, ok := read("gres.conf", false); ok {
		g, p := ParseGresConf(bytes.NewReader(data), path, src)
		cfg.Gres = g
		ps = append(ps, p...)
	}
	if data, path, ok := read("topology.conf", false); ok {
		t, p := ParseTopologyConf(bytes.NewReader(data), path, src)
		cfg.Topology = t
		ps = append(ps, p...)
	}
	if opt.BandwidthFile != "" {
		data, err := src.ReadFile(opt.BandwidthFile)
		if err != nil {
			ps.add(opt.BandwidthFile, 0, "", "%v", err)
		} else {
			b, p := ParseBandwidthConf(bytes.NewReader(data), opt.BandwidthFile)
			cfg.Bandwidth = b
			ps = append(ps, p...)
		}
	}

	cfg.build(opt, &ps)
	ps.Sort()
	cfg.Problems = ps
	return cfg, ps.Err()
}

// build assembles the cluster model and cross-checks the files.
func (cfg *Config) build(opt Options, ps *Problems) {
	sc := cfg.Slurm
	cl := &cluster.Cluster{BW: cfg.Bandwidth.BW}
	cfg.Cluster = cl
	index := make(map[string]int, len(sc.Nodes))
	for i := range sc.Nodes {
		index[sc.Nodes[i].Name] = i
	}
	if sc.File != "" && len(sc.Nodes) == 0 {
		ps.add(sc.File, 0, "NodeName", "no nodes defined")
	}
	for i := range sc.Nodes {
		nd := &sc.Nodes[i]
		gpus, types := nd.GPUs()
		if gpus > cluster.MaxGPUsPerNode {
			ps.add(nd.File, nd.Line, "Gres", "node %s: %d GPUs, asrpt supports at most %d per node", nd.Name, gpus, cluster.MaxGPUsPerNode)
			gpus = cluster.MaxGPUsPerNode
		}
		if len(types) > 1 {
			ps.warn(nd.File, nd.Line, "Gres", "node %s has GPU types %s; asrpt models one type per node and records them joined", nd.Name, strings.Join(types, ","))
		}
		cl.Nodes = append(cl.Nodes, cluster.Node{
			Name:    nd.Name,
			GPUs:    int(gpus),
			GPUType: strings.Join(types, ","),
			IntraBW: cfg.Bandwidth.Intra[nd.Name],
		})
	}
	var strangers []string
	for name := range cfg.Bandwidth.Intra {
		if _, ok := index[name]; !ok {
			strangers = append(strangers, name)
		}
	}
	if len(strangers) > 0 {
		ps.warn(opt.BandwidthFile, 0, "node.names", "nodes not in slurm.conf: %s", CompressHostlist(strangers))
	}
	cfg.checkGres(index, ps)
	for _, l := range opt.Links {
		i, ok := index[l.Node]
		if !ok {
			ps.add(l.Source, 0, "node", "node %q is not in slurm.conf", l.Node)
			continue
		}
		n := &cl.Nodes[i]
		if err := checkMatrix(l.Links, n.GPUs); err != nil {
			ps.add(l.Source, 0, "links", "node %s: %v", l.Node, err)
			continue
		}
		n.Links = l.Links
	}
	cfg.buildTree(index, ps)
	cfg.resolvePartitions(index, ps)
	// An empty node list is already reported above.
	if err := cl.Validate(); err != nil && len(cl.Nodes) > 0 {
		for _, e := range unwrapJoined(err) {
			ps.add(sc.File, 0, "", "cluster model: %v", e)
		}
	}
}

// checkGres cross-checks slurm.conf Gres= against gres.conf and builds
// link matrices from Links=.
func (cfg *Config) checkGres(index map[string]int, ps *Problems) {
	gc := cfg.Gres
	sc := cfg.Slurm
	if gc == nil {
		return
	}
	for li := range gc.Lines {
		g := &gc.Lines[li]
		if g.NodeName == "" {
			continue
		}
		known := false
		for _, n := range g.Nodes {
			if _, ok := index[n]; ok {
				known = true
				break
			}
		}
		if !known {
			ps.warn(g.File, g.Line, "NodeName", "%s: no such node in slurm.conf; line ignored", g.NodeName)
		}
	}
	for i := range sc.Nodes {
		nd := &sc.Nodes[i]
		node := &cfg.Cluster.Nodes[i]
		want, _ := nd.GPUs()
		autodetect := gc.AutoDetect
		var lines []*GresLine
		for li := range gc.Lines {
			g := &gc.Lines[li]
			if !g.appliesTo(nd.Name) {
				continue
			}
			if g.Name == "" {
				if g.NodeName != "" {
					autodetect = g.AutoDetect
				}
				continue
			}
			if strings.EqualFold(g.Name, "gpu") {
				lines = append(lines, g)
			}
		}
		if len(lines) == 0 {
			if want > 0 && (autodetect == "" || autodetect == "off") {
				ps.warn(nd.File, nd.Line, "Gres", "node %s: Gres has %d GPUs but gres.conf has no gpu line for it and AutoDetect is off: Slurm binds no device files", nd.Name, want)
			}
			continue
		}
		var have int64
		byType := map[string]int64{}
		var where []string
		devSeen := map[string]string{}
		for _, g := range lines {
			have += g.Count
			byType[g.Type] += g.Count
			where = append(where, fmt.Sprintf("%s:%d", g.File, g.Line))
			for _, f := range g.Files {
				at := fmt.Sprintf("%s:%d", g.File, g.Line)
				if prev, dup := devSeen[f]; dup {
					ps.add(g.File, g.Line, "File", "node %s: device %s already given at %s", nd.Name, f, prev)
				}
				devSeen[f] = at
			}
		}
		if have != want {
			ps.add(nd.File, nd.Line, "Gres", "node %s: Gres has %d GPUs but gres.conf gives %d (%s)", nd.Name, want, have, strings.Join(where, ", "))
		} else {
			for _, spec := range nd.Gres {
				if !strings.EqualFold(spec.Name, "gpu") || spec.Type == "" {
					continue
				}
				if got := sumTypeFold(byType, spec.Type); got != spec.Count {
					ps.add(nd.File, nd.Line, "Gres", "node %s: Gres has %d GPUs of type %s but gres.conf gives %d of that type (%s)", nd.Name, spec.Count, spec.Type, got, strings.Join(where, ", "))
				}
			}
		}
		if node.GPUType == "" {
			var types []string
			for _, g := range lines {
				if g.Type != "" && !contains(types, g.Type) {
					types = append(types, g.Type)
				}
			}
			node.GPUType = strings.Join(types, ",")
		}
		cfg.linksFromGres(nd, node, lines, int(have), ps)
	}
}

func sumTypeFold(byType map[string]int64, t string) int64 {
	var n int64
	for k, v := range byType {
		if strings.EqualFold(k, t) {
			n += v
		}
	}
	return n
}

// linksFromGres builds the node's link matrix from the Links= of its
// gres.conf gpu lines (one device per line, in gres.conf order).
func (cfg *Config) linksFromGres(nd *NodeDef, node *cluster.Node, lines []*GresLine, total int, ps *Problems) {
	any := false
	for _, g := range lines {
		if g.Links != nil {
			any = true
		}
	}
	if !any {
		return
	}
	var rows [][]int
	ok := true
	for _, g := range lines {
		if g.Links == nil {
			ps.add(g.File, g.Line, "Links", "node %s: other GPUs of this node have Links= but this line has none", nd.Name)
			ok = false
			continue
		}
		self := len(rows)
		if len(g.Links) != total {
			ps.add(g.File, g.Line, "Links", "node %s: %d entries for %d GPUs", nd.Name, len(g.Links), total)
			ok = false
		} else if g.Links[self] != -1 {
			ps.add(g.File, g.Line, "Links", "node %s: entry %d (this device, by gres.conf order) is %d, want -1", nd.Name, self, g.Links[self])
			ok = false
		} else {
			for j, v := range g.Links {
				if j != self && v < 0 {
					ps.add(g.File, g.Line, "Links", "node %s: entry %d is -1 but only the device itself may be", nd.Name, j)
					ok = false
				}
			}
		}
		rows = append(rows, g.Links)
	}
	if !ok || len(rows) != node.GPUs {
		return
	}
	for i := range rows {
		for j := range rows {
			if rows[i][j] != rows[j][i] {
				g := lines[i]
				ps.warn(g.File, g.Line, "Links", "node %s: GPU %d has %d links to GPU %d but GPU %d has %d back", nd.Name, i, rows[i][j], j, j, rows[j][i])
			}
		}
	}
	m := make([][]int, len(rows))
	for i := range rows {
		m[i] = append([]int(nil), rows[i]...)
	}
	node.Links = m
}

// checkMatrix checks a GPUs×GPUs link matrix.
func checkMatrix(m [][]int, gpus int) error {
	if len(m) != gpus {
		return fmt.Errorf("link matrix has %d rows for %d GPUs", len(m), gpus)
	}
	for i, row := range m {
		if len(row) != gpus {
			return fmt.Errorf("row %d has %d entries for %d GPUs", i, len(row), gpus)
		}
		if row[i] != -1 {
			return fmt.Errorf("diagonal entry %d is %d, want -1", i, row[i])
		}
		for j, v := range row {
			if j != i && v < 0 {
				return fmt.Errorf("entry [%d][%d] is %d, want ≥ 0", i, j, v)
			}
		}
	}
	return nil
}

// buildTree turns topology.conf into cluster switches and leaf switches of
// nodes, reporting unknown names, switches with two parents, cycles and
// nodes under two leaves.
func (cfg *Config) buildTree(index map[string]int, ps *Problems) {
	tc := cfg.Topology
	sc := cfg.Slurm
	cl := cfg.Cluster
	plugin := strings.ToLower(sc.TopologyPlugin)
	if tc == nil {
		if plugin == "topology/tree" {
			ps.add(sc.File, 0, "TopologyPlugin", "topology/tree needs topology.conf in %s", cfg.Dir)
		}
		return
	}
	if plugin != "topology/tree" && len(tc.Switches) > 0 {
		ps.warn(tc.File, 0, "", "TopologyPlugin is %q, so Slurm ignores this file; asrpt uses the switch tree anyway", sc.TopologyPlugin)
	}
	swIndex := make(map[string]int, len(tc.Switches))
	for i := range tc.Switches {
		swIndex[tc.Switches[i].Name] = i
	}
	parent := make([]int, len(tc.Switches))
	for i := range parent {
		parent[i] = -1
	}
	leafOf := make(map[string]int)
	for i := range tc.Switches {
		s := &tc.Switches[i]
		if len(s.Nodes) == 0 && len(s.Switches) == 0 {
			ps.warn(s.File, s.Line, "SwitchName", "switch %s has neither Nodes nor Switches", s.Name)
		}
		if len(s.Nodes) > 0 && len(s.Switches) > 0 {
			ps.warn(s.File, s.Line, "SwitchName", "switch %s has both Nodes and Switches", s.Name)
		}
		for _, child := range s.Switches {
			c, ok := swIndex[child]
			if !ok {
				ps.add(s.File, s.Line, "Switches", "switch %s: child switch %s is not defined", s.Name, child)
				continue
			}
			if c == i {
				ps.add(s.File, s.Line, "Switches", "switch %s lists itself", s.Name)
				continue
			}
			if parent[c] >= 0 && parent[c] != i {
				p := &tc.Switches[parent[c]]
				ps.add(s.File, s.Line, "Switches", "switch %s already has parent %s (%s:%d)", child, p.Name, p.File, p.Line)
				continue
			}
			parent[c] = i
		}
		var unknown []string
		for _, n := range s.Nodes {
			if _, ok := index[n]; !ok {
				unknown = append(unknown, n)
				continue
			}
			if prev, dup := leafOf[n]; dup && prev != i {
				p := &tc.Switches[prev]
				ps.add(s.File, s.Line, "Nodes", "node %s is already under switch %s (%s:%d)", n, p.Name, p.File, p.Line)
				continue
			}
			leafOf[n] = i
		}
		if len(unknown) > 0 {
			ps.add(s.File, s.Line, "Nodes", "switch %s: nodes not in slurm.conf: %s", s.Name, CompressHostlist(unknown))
		}
	}
	// Levels by depth-first search, detecting cycles.
	level := make([]int, len(tc.Switches))
	state := make([]uint8, len(tc.Switches)) // 0 new, 1 on stack, 2 done
	children := make([][]int, len(tc.Switches))
	for c, p := range parent {
		if p >= 0 {
			children[p] = append(children[p], c)
		}
	}
	var visit func(i int) bool
	visit = func(i int) bool {
		switch state[i] {
		case 1:
			return false
		case 2:
			return true
		}
		state[i] = 1
		lv := 0
		if len(children[i]) > 0 {
			for _, c := range children[i] {
				if !visit(c) {
					return false
				}
				lv = max(lv, level[c]+1)
			}
		}
		level[i] = lv
		state[i] = 2
		return true
	}
	cyclic := false
	for i := range tc.Switches {
		if !visit(i) {
			s := &tc.Switches[i]
			ps.add(s.File, s.Line, "Switches", "switch %s is part of a cycle", s.Name)
			cyclic = true
			break
		}
	}
	roots := 0
	for i := range tc.Switches {
		s := &tc.Switches[i]
		sw := cluster.Switch{Name: s.Name, Level: level[i]}
		if parent[i] >= 0 && !cyclic {
			sw.Parent = tc.Switches[parent[i]].Name
		}
		if parent[i] < 0 {
			roots++
		}
		if s.LinkSpeed > 0 && cfg.Bandwidth.LinkSpeedUnit > 0 {
			sw.LinkSpeed = float64(s.LinkSpeed) * cfg.Bandwidth.LinkSpeedUnit
		}
		cl.Switches = append(cl.Switches, sw)
	}
	if roots > 1 && !cyclic {
		ps.warn(tc.File, 0, "", "%d switches have no parent: no switch reaches all nodes", roots)
	}
	var orphans []string
	for i := range cl.Nodes {
		if li, ok := leafOf[cl.Nodes[i].Name]; ok {
			cl.Nodes[i].Switch = tc.Switches[li].Name
		} else {
			orphans = append(orphans, cl.Nodes[i].Name)
		}
	}
	if len(orphans) > 0 && len(tc.Switches) > 0 {
		ps.warn(tc.File, 0, "Nodes", "nodes under no switch: %s", CompressHostlist(orphans))
	}
}

// resolvePartitions expands each partition's Nodes= (ALL, NodeSet names
// and hostlists) against slurm.conf's nodes.
func (cfg *Config) resolvePartitions(index map[string]int, ps *Problems) {
	sc := cfg.Slurm
	// Every name and every node looked at is charged to one budget, so
	// the work is bounded however many partitions, ALLs and NodeSets the
	// file names.
	pb := &hostBudget{left: MaxPartitionMembers, total: MaxPartitionMembers, what: "node memberships in all partitions"}
	overBudget := func(file string, line int) {
		ps.add(file, line, "Nodes", "%v (limit %d %s)", ErrTooManyHosts, pb.total, pb.what)
	}
	sets := map[string]*NodeSet{}
	for i := range sc.NodeSets {
		sets[sc.NodeSets[i].Name] = &sc.NodeSets[i]
	}
	setNodes := func(s *NodeSet) []string {
		var out []string
		if s.Nodes != "" {
			if strings.EqualFold(s.Nodes, "ALL") {
				if !pb.take(len(sc.Nodes)) {
					overBudget(s.File, s.Line)
					return nil
				}
				for i := range sc.Nodes {
					out = append(out, sc.Nodes[i].Name)
				}
			} else {
				names, err := pb.expand(s.Nodes)
				if err != nil {
					ps.add(s.File, s.Line, "Nodes", "%v", err)
				}
				out = append(out, names...)
			}
		}
		if s.Feature != "" {
			if !pb.take(len(sc.Nodes)) {
				overBudget(s.File, s.Line)
				return out
			}
			for i := range sc.Nodes {
				if containsFold(sc.Nodes[i].Features, s.Feature) {
					out = append(out, sc.Nodes[i].Name)
				}
			}
		}
		return out
	}
	cfg.Partitions = nil
	for _, p := range sc.Partitions {
		p.Nodes = nil
		seen := map[string]bool{}
		addNode := func(n string) {
			if !seen[n] {
				seen[n] = true
				p.Nodes = append(p.Nodes, n)
			}
		}
		var unknown []string
		names, err := pb.expand(p.NodesExpr)
		if err != nil {
			ps.add(p.File, p.Line, "Nodes", "%v", err)
		}
		usedSet := map[string]bool{} // ALL and each NodeSet resolved once
		for _, n := range names {
			switch {
			case strings.EqualFold(n, "ALL"):
				if usedSet["ALL"] {
					continue
				}
				usedSet["ALL"] = true
				if !pb.take(len(sc.Nodes)) {
					overBudget(p.File, p.Line)
					continue
				}
				for i := range sc.Nodes {
					addNode(sc.Nodes[i].Name)
				}
			case sets[n] != nil:
				if usedSet[n] {
					continue
				}
				usedSet[n] = true
				for _, m := range setNodes(sets[n]) {
					if _, ok := index[m]; ok {
						addNode(m)
					}
				}
			default:
				if _, ok := index[n]; !ok {
					unknown = append(unknown, n)
					continue
				}
				addNode(n)
			}
		}
		if len(unknown) > 0 {
			ps.add(p.File, p.Line, "Nodes", "partition %s: nodes not in slurm.conf: %s", p.Name, CompressHostlist(unknown))
		}
		// Member order follows slurm.conf, as Slurm keeps partitions as
		// node bitmaps.
		sort.SliceStable(p.Nodes, func(a, b int) bool { return index[p.Nodes[a]] < index[p.Nodes[b]] })
		cfg.Partitions = append(cfg.Partitions, p)
	}
}

func unwrapJoined(err error) []error {
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		return j.Unwrap()
	}
	return []error{err}
}
