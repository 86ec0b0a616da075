package slurmconf

import (
	"math"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/asrpt/asrpt/internal/fuzzbound"
)

// FuzzParseBandwidthConf: the bandwidth TOML gives positive finite
// bandwidths or keeps the defaults, names no more nodes than the hostlist
// bound allows, and locates every problem in the file.
func FuzzParseBandwidthConf(f *testing.F) {
	for _, s := range seedFiles(f, "bandwidth.toml") {
		f.Add(s)
	}
	f.Add("[bandwidth]\nnvlink = \"300 GB/s\"\npcie = \"24GB/s\"\ninter = \"100 Gbps\"\nlink_speed_unit = \"1 Gb/s\"\n[[node]]\nnames = \"pcie[01-04]\"\nintra = \"16 GB/s\"\n")
	f.Add("[bandwidth]\nnvlink = \"-1 GB/s\"\nx = 1\n[[node]]\nnames = \"n[1-999999]\"\nintra = \"1e18 TB/s\"\n")
	f.Add("a = [[[[[[[[[[[[[[[[[[[[1]]]]]]]]]]]]]]]]]]]]\n")
	f.Fuzz(func(t *testing.T, s string) {
		fuzzbound.Within(t, time.Second, func() {
			bc, ps := ParseBandwidthConf(strings.NewReader(s), "bw.toml")
			for _, v := range []float64{bc.BW.NVLink, bc.BW.Intra, bc.BW.Inter} {
				if !(v > 0) || math.IsInf(v, 0) {
					t.Fatalf("bandwidth %v from %q", v, s)
				}
			}
			if !(bc.LinkSpeedUnit >= 0) || math.IsInf(bc.LinkSpeedUnit, 0) {
				t.Fatalf("link speed unit %v", bc.LinkSpeedUnit)
			}
			if len(bc.Intra) > MaxHosts {
				t.Fatalf("%d nodes", len(bc.Intra))
			}
			for n, v := range bc.Intra {
				if n == "" || !(v > 0) || math.IsInf(v, 0) {
					t.Fatalf("node %q: %v", n, v)
				}
			}
			for _, p := range ps {
				if p.File != "bw.toml" || p.Msg == "" || p.Warning {
					t.Fatalf("problem %+v", p)
				}
			}
		})
	})
}

// FuzzParseBandwidth: a value is accepted only as a positive finite number
// of bytes/s, and the same number with the unit B/s reads back the same
// (up to 1e18, the largest number accepted).
func FuzzParseBandwidth(f *testing.F) {
	for _, s := range []string{"300 GB/s", "200Gb/s", "100 Gbps", "5", " 1e3 kB/s ", "1.5 TB/s", "-1 GB/s", "NaN", "Inf GB/s", "1e18 Tb/s", "x"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		fuzzbound.Within(t, time.Second, func() {
			v, err := ParseBandwidth(s)
			if err != nil {
				if v != 0 {
					t.Fatalf("%q: %v with error %v", s, v, err)
				}
				return
			}
			if !(v > 0) || math.IsInf(v, 0) {
				t.Fatalf("%q: %v", s, v)
			}
			if v > 1e18 { // a number above 1e18 is refused, whatever the unit
				return
			}
			back, err := ParseBandwidth(strconv.FormatFloat(v, 'g', -1, 64) + " B/s")
			if err != nil || back != v {
				t.Fatalf("%q = %v; written back: %v, %v", s, v, back, err)
			}
		})
	})
}
