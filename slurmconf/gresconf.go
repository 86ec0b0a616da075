package slurmconf

import (
	"io"
	"strconv"
	"strings"
)

// GresLine is one record of gres.conf.
type GresLine struct {
	File string
	Line int
	// NodeName is the hostlist as written; empty for a line that applies
	// to every node.
	NodeName string
	// Nodes is NodeName expanded; nil when NodeName is empty.
	Nodes []string
	Name  string
	Type  string
	// Files are the device files, File= expanded as a hostlist
	// ("/dev/nvidia[0-3]" is four files).
	Files []string
	// Count is Count= (K/M/G suffixes applied), or len(Files) when only
	// File= is given; 0 when neither is.
	Count int64
	// CountSet tells whether Count= was given.
	CountSet bool
	// Cores is Cores= (or the obsolete CPUs=) as written.
	Cores string
	// Links is Links= for a single device: its NVLink count to each GPU
	// of the node by position, -1 for itself. Nil when not given.
	Links      []int
	AutoDetect string
	Flags      string
	// Attrs are other keys with lower-case names.
	Attrs map[string]string
}

// GresConf is what asrpt reads from gres.conf.
type GresConf struct {
	File string
	// AutoDetect is the global AutoDetect= (a line without NodeName and
	// Name), lower-cased; empty when not set.
	AutoDetect string
	Lines      []GresLine
}

var gresKeys = keySet("NodeName", "Name", "Type", "File", "Count", "Cores", "CPUs", "Links",
	"AutoDetect", "Flags", "MultipleFiles")

var knownAutoDetect = []string{"nvml", "nvidia", "rsmi", "oneapi", "nrt", "off"}

// ParseGresConf parses gres.conf from r (see ParseSlurmConf for name and
// src). Lines for nodes that slurm.conf does not define are kept; Load
// checks them against slurm.conf.
func ParseGresConf(r io.Reader, name string, src Source) (*GresConf, Problems) {
	var ps Problems
	lines := lex(r, name, src, &ps)
	gc := &GresConf{File: name}
	hb := newHostBudget()
	for li := range lines {
		ln := &lines[li]
		g := GresLine{File: ln.File, Line: ln.Line, Attrs: map[string]string{}}
		var fileExpr string
		for _, p := range ln.Pairs {
			k := strings.ToLower(p.Key)
			if !gresKeys[k] {
				ps.warn(ln.File, ln.Line, p.Key, "unknown gres.conf key; ignored")
				continue
			}
			if p.Op != "" {
				ps.add(ln.File, ln.Line, p.Key, "operator %q= not allowed in gres.conf", p.Op)
				continue
			}
			switch k {
			case "nodename":
				g.NodeName = p.Value
			case "name":
				g.Name = p.Value
			case "type":
				g.Type = p.Value
			case "file":
				fileExpr = p.Value
			case "count":
				n, err := parseCount(p.Value)
				if err != nil {
					ps.add(ln.File, ln.Line, p.Key, "%v", err)
					continue
				}
				g.Count, g.CountSet = n, true
			case "cores", "cpus":
				if err := checkIntList(p.Value); err != nil {
					ps.add(ln.File, ln.Line, p.Key, "%q: %v", p.Value, err)
				}
				g.Cores = p.Value
			case "links":
				links, err := parseLinks(p.Value)
				if err != nil {
					ps.add(ln.File, ln.Line, p.Key, "%q: %v", p.Value, err)
					continue
				}
				g.Links = links
			case "autodetect":
				g.AutoDetect = strings.ToLower(p.Value)
				if !contains(knownAutoDetect, g.AutoDetect) {
					ps.warn(ln.File, ln.Line, p.Key, "unknown AutoDetect %q (known: %s)", p.Value, strings.Join(knownAutoDetect, ", "))
				}
			case "flags":
				g.Flags = p.Value
			default:
				g.Attrs[k] = p.Value
			}
		}
		if g.NodeName != "" {
			nodes, err := hb.expand(g.NodeName)
			if err != nil {
				ps.add(ln.File, ln.Line, "NodeName", "%v", err)
				continue
			}
			g.Nodes = nodes
		}
		if fileExpr != "" {
			files, err := hb.expand(fileExpr)
			if err != nil {
				ps.add(ln.File, ln.Line, "File", "%v", err)
			}
			g.Files = files
		}
		if g.Name == "" {
			if g.AutoDetect != "" && len(g.Files) == 0 && g.Type == "" && !g.CountSet && g.Links == nil && g.Cores == "" {
				if g.NodeName == "" {
					gc.AutoDetect = g.AutoDetect
				}
				gc.Lines = append(gc.Lines, g)
				continue
			}
			ps.add(ln.File, ln.Line, "Name", "missing (every gres.conf record needs Name=, or only AutoDetect=)")
			continue
		}
		if len(g.Files) > 0 {
			if g.CountSet && g.Count != int64(len(g.Files)) {
				ps.add(ln.File, ln.Line, "Count", "Count=%d but File= names %d devices", g.Count, len(g.Files))
			}
			g.Count = int64(len(g.Files))
		} else if !g.CountSet {
			if g.AutoDetect == "" || g.AutoDetect == "off" {
				g.Count = 1
			}
		}
		if g.Links != nil {
			if len(g.Files) != 1 {
				ps.add(ln.File, ln.Line, "Links", "Links= describes one device, but File= names %d", len(g.Files))
				g.Links = nil
			}
		}
		gc.Lines = append(gc.Lines, g)
	}
	return gc, ps
}

// appliesTo reports whether the line is for node (a line without NodeName
// applies to every node).
func (g *GresLine) appliesTo(node string) bool {
	if g.NodeName == "" {
		return true
	}
	for _, n := range g.Nodes {
		if n == node {
			return true
		}
	}
	return false
}

// parseLinks parses Links=: comma-separated integers, each -1 or more.
func parseLinks(s string) ([]int, error) {
	parts := strings.Split(s, ",")
	if len(parts) > 1024 {
		return nil, errTooLong
	}
	out := make([]int, len(parts))
	for i, p := range parts {
		n, err := strconv.Atoi(strings.TrimSpace(p))
		if err != nil || n < -1 || n > 1<<16 {
			return nil, errBadLink
		}
		out[i] = n
	}
	return out, nil
}

// checkIntList validates a CPU/core list such as "0-15,32-47".
func checkIntList(s string) error {
	for _, part := range strings.Split(s, ",") {
		lo, hi, isRange := strings.Cut(part, "-")
		if !isDigits(lo) || (isRange && !isDigits(hi)) {
			return errBadList
		}
		if isRange {
			a, errA := strconv.Atoi(lo)
			b, errB := strconv.Atoi(hi)
			if errA != nil || errB != nil || a > b {
				return errBadList
			}
		}
	}
	return nil
}

type constErr string

func (e constErr) Error() string { return string(e) }

const (
	errTooLong = constErr("more than 1024 entries")
	errBadLink = constErr("want comma-separated link counts, each -1 (this device) or ≥ 0")
	errBadList = constErr("want a list of integers and ranges such as 0-15,32-47")
)
