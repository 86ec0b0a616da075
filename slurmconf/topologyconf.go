package slurmconf

import (
	"io"
	"strings"
)

// SwitchDef is one SwitchName line of topology.conf.
type SwitchDef struct {
	Name string
	File string
	Line int
	// NodesExpr and SwitchesExpr are Nodes= and Switches= as written;
	// Nodes and Switches are them expanded as hostlists.
	NodesExpr    string
	Nodes        []string
	SwitchesExpr string
	Switches     []string
	// LinkSpeed is LinkSpeed= in Slurm's arbitrary units (Slurm itself
	// does not use it); the bandwidth file's link_speed_unit converts it to
	// bytes/s. 0 when not given.
	LinkSpeed int64
}

// TopologyConf is what asrpt reads from topology.conf (the topology/tree
// plugin's file).
type TopologyConf struct {
	File     string
	Switches []SwitchDef
}

// ParseTopologyConf parses topology.conf from r (see ParseSlurmConf for
// name and src). It checks each line on its own; Load checks the tree
// (unknown names, cycles, nodes under two leaves).
func ParseTopologyConf(r io.Reader, name string, src Source) (*TopologyConf, Problems) {
	var ps Problems
	lines := lex(r, name, src, &ps)
	tc := &TopologyConf{File: name}
	seen := map[string]int{}
	hb := newHostBudget()
	for li := range lines {
		ln := &lines[li]
		first := ln.Pairs[0]
		switch strings.ToLower(first.Key) {
		case "switchname":
		case "blockname", "blocksizes":
			ps.warn(ln.File, ln.Line, first.Key, "topology/block lines are not modeled; ignored")
			continue
		default:
			ps.add(ln.File, ln.Line, first.Key, "unknown topology.conf line (want SwitchName=)")
			continue
		}
		s := SwitchDef{Name: first.Value, File: ln.File, Line: ln.Line}
		if s.Name == "" || strings.ContainsAny(s.Name, "[],") {
			ps.add(ln.File, ln.Line, first.Key, "%q: want one switch name", s.Name)
			continue
		}
		ok := true
		for _, p := range ln.Pairs[1:] {
			if p.Op != "" {
				ps.add(ln.File, ln.Line, p.Key, "operator %q= not allowed in topology.conf", p.Op)
				continue
			}
			switch strings.ToLower(p.Key) {
			case "nodes":
				s.NodesExpr = p.Value
				nodes, err := hb.expand(p.Value)
				if err != nil {
					ps.add(ln.File, ln.Line, p.Key, "%v", err)
					ok = false
				}
				s.Nodes = nodes
			case "switches":
				s.SwitchesExpr = p.Value
				sw, err := hb.expand(p.Value)
				if err != nil {
					ps.add(ln.File, ln.Line, p.Key, "%v", err)
					ok = false
				}
				s.Switches = sw
			case "linkspeed":
				s.LinkSpeed = positiveInt(ln, p, 0, 1<<53, &ps)
			default:
				ps.add(ln.File, ln.Line, p.Key, "unknown topology.conf key (want Nodes, Switches or LinkSpeed)")
			}
		}
		if !ok {
			continue
		}
		if prev, dup := seen[s.Name]; dup {
			d := &tc.Switches[prev]
			ps.add(ln.File, ln.Line, first.Key, "switch %s already defined at %s:%d", s.Name, d.File, d.Line)
			continue
		}
		seen[s.Name] = len(tc.Switches)
		tc.Switches = append(tc.Switches, s)
	}
	return tc, ps
}
