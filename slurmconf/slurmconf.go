// Package slurmconf reads the parts of Slurm's slurm.conf, gres.conf and
// topology.conf that asrpt uses, the way Slurm reads them, and builds the
// cluster model (cluster.Cluster) from them.
//
// The Parse functions are pure: they read one io.Reader and follow Include
// directives only through a Source. Load reads the files of a directory.
// Every problem is collected with its file and line; nothing stops at the
// first one.
//
// What is interpreted (and checked strictly) in slurm.conf: NodeName lines
// (hostlists, NodeName=DEFAULT, Gres, CPUs, RealMemory, Features, Weight,
// State), PartitionName lines (Nodes incl. ALL and NodeSet names, Default,
// PriorityTier, State), NodeSet lines, ClusterName, SchedulerType,
// PriorityType, SelectType, GresTypes and TopologyPlugin. Every other key
// is kept as an opaque Setting. Syntax follows Slurm's parse_config.c:
// keys are case-insensitive, '#' starts a comment ("\#" is a literal '#'),
// a trailing backslash continues a line, values may be "double quoted",
// and "Include FILE" (relative to the including file's directory, or
// absolute, or a glob pattern; "%c" is the ClusterName) includes a file
// in place.
package slurmconf

import (
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"
)

// Setting is a key=value that asrpt does not interpret, kept as written.
type Setting struct {
	Key   string `json:"key"`
	Value string `json:"value"`
	File  string `json:"file"`
	Line  int    `json:"line"`
}

// GresSpec is one element of a NodeName line's Gres= list, e.g.
// "gpu:a100:8".
type GresSpec struct {
	Name string `json:"name"`
	// Type is the GRES type ("a100"); empty when untyped.
	Type string `json:"type,omitempty"`
	// Count is the number of units (GPUs for name "gpu").
	Count     int64 `json:"count"`
	NoConsume bool  `json:"no_consume,omitempty"`
}

// NodeDef is one node of slurm.conf after hostlist expansion and
// NodeName=DEFAULT inheritance.
type NodeDef struct {
	Name string
	File string
	Line int
	// CPUs is the CPU count (CPUs=, or Boards·Sockets·Cores·Threads, or 1).
	CPUs int
	// RealMemory is in megabytes (Slurm's unit); 1 when not given.
	RealMemory int64
	Features   []string
	Weight     int64
	State      string
	Gres       []GresSpec
	// Attrs holds the line's other keys with lower-case names.
	Attrs map[string]string
}

// GPUs returns the node's GPU count and its GPU types (in Gres order,
// without duplicates) from Gres entries named "gpu".
func (n *NodeDef) GPUs() (int64, []string) {
	var total int64
	var types []string
	for _, g := range n.Gres {
		if !strings.EqualFold(g.Name, "gpu") {
			continue
		}
		total += g.Count
		if g.Type != "" && !contains(types, g.Type) {
			types = append(types, g.Type)
		}
	}
	return total, types
}

// NodeSet is a NodeSet= line: a named set of nodes usable in a partition's
// Nodes=.
type NodeSet struct {
	Name    string
	Nodes   string // hostlist as written, may be empty
	Feature string // may be empty
	File    string
	Line    int
}

// Partition is one PartitionName line after PartitionName=DEFAULT
// inheritance.
type Partition struct {
	Name string `json:"name"`
	// NodesExpr is Nodes= as written.
	NodesExpr string `json:"-"`
	// Nodes are the member node names in slurm.conf order, resolved by Load
	// (ALL, NodeSet names and hostlists).
	Nodes        []string          `json:"nodes"`
	Default      bool              `json:"default"`
	PriorityTier int               `json:"priority_tier"`
	State        string            `json:"state,omitempty"`
	Attrs        map[string]string `json:"-"`
	File         string            `json:"-"`
	Line         int               `json:"-"`
}

// SlurmConf is what asrpt reads from slurm.conf.
type SlurmConf struct {
	File           string
	ClusterName    string
	SchedulerType  string
	PriorityType   string
	SelectType     string
	TopologyPlugin string
	GresTypes      []string
	Nodes          []NodeDef
	NodeSets       []NodeSet
	Partitions     []Partition
	// Settings are all other keys in file order; DownNodes, FrontendName
	// and other block lines appear as one Setting per pair.
	Settings []Setting
}

// Setting returns the value of the last occurrence of key
// (case-insensitive) among the uninterpreted settings, as Slurm uses the
// last value of a repeated key.
func (c *SlurmConf) Setting(key string) (string, bool) {
	for i := len(c.Settings) - 1; i >= 0; i-- {
		if strings.EqualFold(c.Settings[i].Key, key) {
			return c.Settings[i].Value, true
		}
	}
	return "", false
}

// Known values of the plugin keys; other values draw a warning.
var (
	knownSchedulers = []string{"sched/backfill", "sched/builtin"}
	knownPriority   = []string{"priority/basic", "priority/multifactor"}
	knownSelect     = []string{"select/cons_tres", "select/cons_res", "select/linear", "select/cray_aries"}
	knownTopology   = []string{"topology/tree", "topology/none", "topology/default", "topology/block", "topology/3d_torus", "topology/flat"}
	knownNodeStates = []string{"CLOUD", "DOWN", "DRAIN", "FAIL", "FAILING", "FUTURE", "IDLE", "UNKNOWN", "EXTERNAL"}
)

// nodeKeys are the keys a NodeName line may hold (Slurm 22.05 to 25.05).
var nodeKeys = keySet("NodeName", "NodeHostname", "NodeAddr", "BcastAddr", "Boards", "CoreSpecCount",
	"CoresPerSocket", "CpuBind", "CPUs", "CPUSpecList", "Features", "Feature", "Gres", "MemSpecLimit",
	"Port", "Procs", "RealMemory", "Reason", "Sockets", "SocketsPerBoard", "State", "ThreadsPerCore",
	"TmpDisk", "Weight", "RestrictedCoresPerGPU", "Parameters", "Topology", "ActiveFeatures", "Arch")

// partitionKeys are the keys a PartitionName line may hold.
var partitionKeys = keySet("PartitionName", "AllocNodes", "AllowAccounts", "AllowGroups", "AllowQos",
	"Alternate", "CpuBind", "Default", "DefaultTime", "DefCpuPerGPU", "DefMemPerCPU", "DefMemPerGPU",
	"DefMemPerNode", "DenyAccounts", "DenyQos", "DisableRootJobs", "ExclusiveUser", "ExclusiveTopo",
	"GraceTime", "Hidden", "LLN", "MaxCPUsPerNode", "MaxCPUsPerSocket", "MaxMemPerCPU", "MaxMemPerNode",
	"MaxNodes", "MaxTime", "MinNodes", "Nodes", "OverSubscribe", "Shared", "OverTimeLimit",
	"PowerDownOnIdle", "PreemptMode", "Priority", "PriorityJobFactor", "PriorityTier", "QOS", "ReqResv",
	"ResumeTimeout", "RootOnly", "SelectTypeParameters", "State", "SuspendTime", "SuspendTimeout",
	"TRESBillingWeights", "Topology", "MaxCPUsPerGPU", "DefCPUPerGPU")

func keySet(keys ...string) map[string]bool {
	m := make(map[string]bool, len(keys))
	for _, k := range keys {
		m[strings.ToLower(k)] = true
	}
	return m
}

// ParseSlurmConf parses slurm.conf from r; name is used in problems and to
// resolve relative Include paths through src (nil: Includes are reported,
// not followed). Node names in partitions are resolved by Load, not here.
// It returns everything it could read and every problem found.
func ParseSlurmConf(r io.Reader, name string, src Source) (*SlurmConf, Problems) {
	var ps Problems
	lines := lex(r, name, src, &ps)
	c := &SlurmConf{File: name}
	nodeDefaults := map[string]KV{}
	partDefaults := map[string]KV{}
	seenNode := map[string]int{}
	seenPart := map[string]int{}
	hb := newHostBudget()
	for li := range lines {
		ln := &lines[li]
		first := strings.ToLower(ln.Pairs[0].Key)
		switch first {
		case "nodename":
			c.nodeLine(ln, nodeDefaults, seenNode, hb, &ps)
			continue
		case "partitionname":
			c.partitionLine(ln, partDefaults, seenPart, &ps)
			continue
		case "nodeset":
			c.nodeSetLine(ln, &ps)
			continue
		case "downnodes", "frontendname", "slurmctldhost", "controlmachine":
			// Block lines asrpt does not model: keep every pair.
			for _, p := range ln.Pairs {
				c.Settings = append(c.Settings, Setting{Key: p.Key, Value: p.Value, File: ln.File, Line: ln.Line})
			}
			continue
		}
		for _, p := range ln.Pairs {
			c.scalar(ln, p, &ps)
		}
	}
	c.check(&ps)
	return c, ps
}

// scalar handles one key=value outside a NodeName/PartitionName line.
func (c *SlurmConf) scalar(ln *Line, p KV, ps *Problems) {
	v := p.Value
	switch strings.ToLower(p.Key) {
	case "clustername":
		c.ClusterName = v
	case "schedulertype":
		c.SchedulerType = v
		knownPlugin(ln, p, knownSchedulers, ps)
	case "prioritytype":
		c.PriorityType = v
		knownPlugin(ln, p, knownPriority, ps)
	case "selecttype":
		c.SelectType = v
		knownPlugin(ln, p, knownSelect, ps)
	case "topologyplugin":
		c.TopologyPlugin = v
		knownPlugin(ln, p, knownTopology, ps)
	case "grestypes":
		c.GresTypes = nil
		for _, t := range strings.Split(v, ",") {
			if t = strings.TrimSpace(t); t != "" {
				c.GresTypes = append(c.GresTypes, t)
			}
		}
	case "nodename", "partitionname", "nodeset":
		ps.add(ln.File, ln.Line, p.Key, "must start its own line")
	default:
		c.Settings = append(c.Settings, Setting{Key: p.Key, Value: v, File: ln.File, Line: ln.Line})
	}
}

func knownPlugin(ln *Line, p KV, known []string, ps *Problems) {
	for _, k := range known {
		if strings.EqualFold(k, p.Value) {
			return
		}
	}
	ps.warn(ln.File, ln.Line, p.Key, "unknown plugin %q (known: %s)", p.Value, strings.Join(known, ", "))
}

// merged returns the line's pairs over the defaults, keyed by lower-case
// key, reporting unknown keys and "+=" operators (which Slurm allows only
// on a few keys asrpt does not interpret).
func merged(ln *Line, defaults map[string]KV, known map[string]bool, what string, ps *Problems) map[string]KV {
	m := make(map[string]KV, len(defaults)+len(ln.Pairs))
	for k, v := range defaults {
		m[k] = v
	}
	for _, p := range ln.Pairs[1:] {
		k := strings.ToLower(p.Key)
		if !known[k] {
			ps.warn(ln.File, ln.Line, p.Key, "unknown %s key; kept but not interpreted (Slurm may reject it)", what)
		}
		if p.Op != "" {
			ps.add(ln.File, ln.Line, p.Key, "operator %q= not allowed here", p.Op)
			continue
		}
		m[k] = p
	}
	return m
}

func (c *SlurmConf) nodeLine(ln *Line, defaults map[string]KV, seen map[string]int, hb *hostBudget, ps *Problems) {
	nameExpr := ln.Pairs[0].Value
	if strings.EqualFold(nameExpr, "DEFAULT") {
		for k, v := range merged(ln, nil, nodeKeys, "NodeName", ps) {
			defaults[k] = v
		}
		return
	}
	if nameExpr == "" {
		ps.add(ln.File, ln.Line, "NodeName", "empty node name")
		return
	}
	names, err := hb.expand(nameExpr)
	if err != nil {
		ps.add(ln.File, ln.Line, "NodeName", "%v", err)
		return
	}
	m := merged(ln, defaults, nodeKeys, "NodeName", ps)
	proto := NodeDef{File: ln.File, Line: ln.Line, RealMemory: 1, Weight: 1, CPUs: 1, Attrs: map[string]string{}}
	field := func(k string) (KV, bool) { p, ok := m[k]; return p, ok }
	if p, ok := field("cpus"); ok {
		proto.CPUs = int(positiveInt(ln, p, 1, 1<<20, ps))
	} else if p, ok := field("procs"); ok {
		proto.CPUs = int(positiveInt(ln, p, 1, 1<<20, ps))
	} else {
		prod := int64(1)
		any := false
		for _, k := range []string{"boards", "sockets", "corespersocket", "threadspercore"} {
			if p, ok := field(k); ok {
				prod *= positiveInt(ln, p, 1, 1<<12, ps)
				any = true
			}
		}
		if any {
			proto.CPUs = int(prod)
		}
	}
	if p, ok := field("realmemory"); ok {
		proto.RealMemory = positiveInt(ln, p, 0, 1<<50, ps)
	}
	if p, ok := field("weight"); ok {
		proto.Weight = positiveInt(ln, p, 0, 1<<32-1, ps)
	}
	for _, k := range []string{"features", "feature"} {
		if p, ok := field(k); ok {
			for _, f := range strings.Split(p.Value, ",") {
				if f = strings.TrimSpace(f); f != "" {
					proto.Features = append(proto.Features, f)
				}
			}
		}
	}
	if p, ok := field("state"); ok {
		proto.State = strings.ToUpper(p.Value)
		for _, s := range strings.Split(proto.State, "+") {
			if !contains(knownNodeStates, s) {
				ps.add(ln.File, ln.Line, p.Key, "unknown node state %q (known: %s)", p.Value, strings.Join(knownNodeStates, ", "))
				break
			}
		}
	}
	if p, ok := field("gres"); ok {
		g, err := ParseGresSpecs(p.Value)
		if err != nil {
			ps.add(ln.File, ln.Line, p.Key, "%v", err)
		}
		proto.Gres = g
	}
	for k, p := range m {
		switch k {
		case "cpus", "procs", "realmemory", "weight", "features", "feature", "state", "gres":
		default:
			proto.Attrs[k] = p.Value
		}
	}
	for _, n := range names {
		if prev, dup := seen[n]; dup {
			d := &c.Nodes[prev]
			ps.add(ln.File, ln.Line, "NodeName", "node %s already defined at %s:%d", n, d.File, d.Line)
			continue
		}
		nd := proto
		nd.Name = n
		nd.Attrs = proto.Attrs // shared read-only map
		seen[n] = len(c.Nodes)
		c.Nodes = append(c.Nodes, nd)
	}
}

func (c *SlurmConf) partitionLine(ln *Line, defaults map[string]KV, seen map[string]int, ps *Problems) {
	name := ln.Pairs[0].Value
	if strings.EqualFold(name, "DEFAULT") {
		for k, v := range merged(ln, nil, partitionKeys, "PartitionName", ps) {
			defaults[k] = v
		}
		return
	}
	if name == "" {
		ps.add(ln.File, ln.Line, "PartitionName", "empty partition name")
		return
	}
	m := merged(ln, defaults, partitionKeys, "PartitionName", ps)
	p := Partition{Name: name, File: ln.File, Line: ln.Line, Attrs: map[string]string{}}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys) // deterministic problem order
	for _, k := range keys {
		kv := m[k]
		switch k {
		case "nodes":
			p.NodesExpr = kv.Value
		case "default":
			p.Default = yesNo(ln, kv, ps)
		case "prioritytier":
			p.PriorityTier = int(positiveInt(ln, kv, 0, 65533, ps))
		case "state":
			p.State = strings.ToUpper(kv.Value)
			if !contains([]string{"UP", "DOWN", "DRAIN", "INACTIVE"}, p.State) {
				ps.add(ln.File, ln.Line, kv.Key, "unknown partition state %q (known: UP, DOWN, DRAIN, INACTIVE)", kv.Value)
			}
		default:
			p.Attrs[k] = kv.Value
		}
	}
	if prev, dup := seen[strings.ToLower(name)]; dup {
		q := &c.Partitions[prev]
		ps.add(ln.File, ln.Line, "PartitionName", "partition %s already defined at %s:%d", name, q.File, q.Line)
		return
	}
	seen[strings.ToLower(name)] = len(c.Partitions)
	c.Partitions = append(c.Partitions, p)
}

func (c *SlurmConf) nodeSetLine(ln *Line, ps *Problems) {
	s := NodeSet{Name: ln.Pairs[0].Value, File: ln.File, Line: ln.Line}
	for _, p := range ln.Pairs[1:] {
		switch strings.ToLower(p.Key) {
		case "nodes":
			s.Nodes = p.Value
		case "feature":
			s.Feature = p.Value
		default:
			ps.warn(ln.File, ln.Line, p.Key, "unknown NodeSet key; ignored")
		}
	}
	if s.Name == "" {
		ps.add(ln.File, ln.Line, "NodeSet", "empty name")
		return
	}
	c.NodeSets = append(c.NodeSets, s)
}

// check reports problems that need the whole file.
func (c *SlurmConf) check(ps *Problems) {
	for i := range c.Nodes {
		n := &c.Nodes[i]
		for _, g := range n.Gres {
			if !containsFold(c.GresTypes, g.Name) {
				ps.add(n.File, n.Line, "Gres", "node %s: GRES %q is not listed in GresTypes", n.Name, g.Name)
				break
			}
		}
	}
	defaults := 0
	for i := range c.Partitions {
		if c.Partitions[i].Default {
			defaults++
			if defaults == 2 {
				p := &c.Partitions[i]
				ps.warn(p.File, p.Line, "Default", "more than one default partition; Slurm uses the last")
			}
		}
	}
}

// ParseGresSpecs parses a NodeName line's Gres= value: a comma-separated
// list of name[:type][:no_consume][:count[K|M|G|T|P]], where a missing
// count is 1 and a "(S:0-1)" socket suffix is ignored. "(null)" and ""
// mean no GRES.
func ParseGresSpecs(s string) ([]GresSpec, error) {
	if s == "" || strings.EqualFold(s, "(null)") {
		return nil, nil
	}
	var out []GresSpec
	for _, item := range splitOutsideParens(s) {
		if i := strings.IndexByte(item, '('); i >= 0 {
			if !strings.HasSuffix(item, ")") {
				return out, fmt.Errorf("GRES %q: unbalanced '('", item)
			}
			item = item[:i]
		}
		parts := strings.Split(item, ":")
		if parts[0] == "" {
			return out, fmt.Errorf("GRES %q: empty name", item)
		}
		g := GresSpec{Name: parts[0], Count: 1}
		rest := parts[1:]
		if len(rest) > 0 {
			if n, err := parseCount(rest[len(rest)-1]); err == nil {
				g.Count = n
				rest = rest[:len(rest)-1]
			} else if last := rest[len(rest)-1]; last != "" && isDigit(last[0]) {
				return out, fmt.Errorf("GRES %q: %w", item, err)
			}
		}
		for _, r := range rest {
			switch {
			case strings.EqualFold(r, "no_consume"):
				g.NoConsume = true
			case r == "":
				return out, fmt.Errorf("GRES %q: empty field", item)
			case g.Type == "":
				g.Type = r
			default:
				return out, fmt.Errorf("GRES %q: want name[:type][:no_consume][:count]", item)
			}
		}
		out = append(out, g)
	}
	return out, nil
}

func splitOutsideParens(s string) []string {
	var out []string
	depth, start := 0, 0
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '(':
			depth++
		case ')':
			if depth > 0 {
				depth--
			}
		case ',':
			if depth == 0 {
				out = append(out, s[start:i])
				start = i + 1
			}
		}
	}
	return append(out, s[start:])
}

// parseCount parses a GRES count with an optional K, M, G, T or P suffix
// (powers of 1024, as Slurm's gres.c does).
func parseCount(s string) (int64, error) {
	if s == "" {
		return 0, fmt.Errorf("empty count")
	}
	mult := int64(1)
	switch s[len(s)-1] {
	case 'k', 'K':
		mult = 1 << 10
	case 'm', 'M':
		mult = 1 << 20
	case 'g', 'G':
		mult = 1 << 30
	case 't', 'T':
		mult = 1 << 40
	case 'p', 'P':
		mult = 1 << 50
	}
	num := s
	if mult > 1 {
		num = s[:len(s)-1]
	}
	if !isDigits(num) {
		return 0, fmt.Errorf("count %q is not a number", s)
	}
	n, err := strconv.ParseInt(num, 10, 64)
	if err != nil || n > (1<<62)/mult {
		return 0, fmt.Errorf("count %q out of range", s)
	}
	return n * mult, nil
}

// positiveInt parses p's value as an integer in [lo, hi], reporting a
// problem (and returning lo) otherwise.
func positiveInt(ln *Line, p KV, lo, hi int64, ps *Problems) int64 {
	n, err := strconv.ParseInt(p.Value, 10, 64)
	if err != nil || n < lo || n > hi {
		ps.add(ln.File, ln.Line, p.Key, "%q: want an integer in %d..%d", p.Value, lo, hi)
		return lo
	}
	return n
}

func yesNo(ln *Line, p KV, ps *Problems) bool {
	switch strings.ToUpper(p.Value) {
	case "YES", "Y", "TRUE", "1":
		return true
	case "NO", "N", "FALSE", "0":
		return false
	}
	ps.add(ln.File, ln.Line, p.Key, "%q: want YES or NO", p.Value)
	return false
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func containsFold(list []string, s string) bool {
	for _, x := range list {
		if strings.EqualFold(x, s) {
			return true
		}
	}
	return false
}
