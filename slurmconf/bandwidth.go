package slurmconf

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/BurntSushi/toml"

	"github.com/asrpt/asrpt/cluster"
	"github.com/asrpt/asrpt/internal/tomlbound"
)

// BandwidthConf holds the bandwidths that Slurm's files do not give. It is
// read from the optional asrpt bandwidth file, a TOML file such as
//
//	[bandwidth]
//	nvlink = "300 GB/s"          # one NVLink-connected GPU pair, all links
//	pcie = "24 GB/s"             # two GPUs of one node without NVLink
//	inter = "25 GB/s"            # between two nodes
//	link_speed_unit = "1 Gb/s"   # what one unit of topology.conf LinkSpeed is
//
//	[[node]]                     # per-node GPU-to-GPU bandwidth without NVLink
//	names = "pcie[01-04]"
//	intra = "16 GB/s"
//
// Values are a number and a unit: B/s, KB/s, MB/s, GB/s, TB/s (bytes,
// powers of 1000), b/s, Kb/s, Mb/s, Gb/s, Tb/s or Gbps (bits); a bare
// number is bytes/s. Defaults are cluster.DefaultNVLink (300 GB/s),
// cluster.DefaultPCIe (24 GB/s) and cluster.DefaultInter (25 GB/s). Without
// link_speed_unit, topology.conf LinkSpeed values (whose unit Slurm leaves
// open) are not used and every switch gets the inter-node bandwidth.
type BandwidthConf struct {
	// BW holds the defaults in bytes/s.
	BW cluster.Bandwidth
	// LinkSpeedUnit is bytes/s per unit of LinkSpeed; 0 means LinkSpeed
	// is ignored.
	LinkSpeedUnit float64
	// Intra maps node names to their GPU-to-GPU bandwidth in bytes/s.
	Intra map[string]float64
}

// DefaultBandwidthConf returns the documented defaults.
func DefaultBandwidthConf() BandwidthConf {
	return BandwidthConf{BW: cluster.DefaultBandwidth(), Intra: map[string]float64{}}
}

type bandwidthFile struct {
	Bandwidth struct {
		NVLink        string `toml:"nvlink"`
		PCIe          string `toml:"pcie"`
		Inter         string `toml:"inter"`
		LinkSpeedUnit string `toml:"link_speed_unit"`
	} `toml:"bandwidth"`
	Node []struct {
		Names string `toml:"names"`
		Intra string `toml:"intra"`
	} `toml:"node"`
}

// ParseBandwidthConf parses the bandwidth TOML from r. Unknown keys are
// problems (the file is small and a misspelt key would silently keep a
// default). A file larger than tomlbound.MaxSize (1 MiB) or nested deeper
// than tomlbound.MaxDepth (16 levels) is one problem, found before decoding.
func ParseBandwidthConf(r io.Reader, name string) (BandwidthConf, Problems) {
	var ps Problems
	bc := DefaultBandwidthConf()
	data, err := io.ReadAll(io.LimitReader(r, tomlbound.MaxSize+1))
	if err != nil {
		ps.add(name, 0, "", "read: %v", err)
		return bc, ps
	}
	// The decoder's work grows with the square of the nesting depth:
	// refuse large and deep files before decoding.
	if line, err := tomlbound.Check(data); err != nil {
		ps.add(name, line, "", "%v", err)
		return bc, ps
	}
	var f bandwidthFile
	md, err := toml.NewDecoder(bytes.NewReader(data)).Decode(&f)
	if err != nil {
		var pe toml.ParseError
		if errors.As(err, &pe) {
			ps.add(name, pe.Position.Line, "", "%s", pe.Message)
		} else {
			ps.add(name, 0, "", "%v", err)
		}
		return bc, ps
	}
	for _, k := range md.Undecoded() {
		ps.add(name, 0, k.String(), "unknown key (known: bandwidth.nvlink, bandwidth.pcie, bandwidth.inter, bandwidth.link_speed_unit, node.names, node.intra)")
	}
	set := func(field, v string, dst *float64) {
		if v == "" {
			return
		}
		b, err := ParseBandwidth(v)
		if err != nil {
			ps.add(name, 0, field, "%v", err)
			return
		}
		*dst = b
	}
	set("bandwidth.nvlink", f.Bandwidth.NVLink, &bc.BW.NVLink)
	set("bandwidth.pcie", f.Bandwidth.PCIe, &bc.BW.Intra)
	set("bandwidth.inter", f.Bandwidth.Inter, &bc.BW.Inter)
	set("bandwidth.link_speed_unit", f.Bandwidth.LinkSpeedUnit, &bc.LinkSpeedUnit)
	hb := newHostBudget()
	for i, n := range f.Node {
		field := fmt.Sprintf("node[%d]", i)
		names, err := hb.expand(n.Names)
		if err != nil || len(names) == 0 {
			ps.add(name, 0, field+".names", "%q: want a non-empty hostlist (%v)", n.Names, err)
			continue
		}
		var bw float64
		set(field+".intra", n.Intra, &bw)
		if bw == 0 {
			ps.add(name, 0, field+".intra", "missing")
			continue
		}
		for _, h := range names {
			bc.Intra[h] = bw
		}
	}
	return bc, ps
}

// ParseBandwidth parses "300 GB/s", "200Gb/s", "100 Gbps" or a bare number
// of bytes/s, returning bytes/s (> 0).
func ParseBandwidth(s string) (float64, error) {
	t := strings.TrimSpace(s)
	i := 0
	for i < len(t) && (isDigit(t[i]) || t[i] == '.' || t[i] == 'e' || t[i] == 'E' || t[i] == '+' || t[i] == '-') {
		i++
	}
	num, err := strconv.ParseFloat(t[:i], 64)
	if err != nil || num <= 0 || num > 1e18 {
		return 0, fmt.Errorf("bandwidth %q: want a positive number and a unit such as GB/s", s)
	}
	unit := strings.TrimSpace(t[i:])
	if unit == "" {
		return num, nil
	}
	bits := false
	switch {
	case strings.HasSuffix(unit, "bps"):
		bits = true
		unit = strings.TrimSuffix(unit, "bps")
	case strings.HasSuffix(unit, "b/s"):
		bits = true
		unit = strings.TrimSuffix(unit, "b/s")
	case strings.HasSuffix(unit, "B/s"):
		unit = strings.TrimSuffix(unit, "B/s")
	default:
		return 0, fmt.Errorf("bandwidth %q: unknown unit (want B/s, KB/s, MB/s, GB/s, TB/s, b/s, Kb/s, Mb/s, Gb/s, Tb/s or Gbps)", s)
	}
	mult := 1.0
	switch strings.ToUpper(unit) {
	case "":
	case "K":
		mult = 1e3
	case "M":
		mult = 1e6
	case "G":
		mult = 1e9
	case "T":
		mult = 1e12
	default:
		return 0, fmt.Errorf("bandwidth %q: unknown prefix %q", s, unit)
	}
	v := num * mult
	if bits {
		v /= 8
	}
	return v, nil
}
