package slurmconf

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/asrpt/asrpt/internal/slurmtime"
	"github.com/asrpt/asrpt/multifactor"
)

// Priority reads the multifactor settings of c. Unset keys keep Slurm's
// defaults (multifactor.Default). A value Slurm would refuse is an error
// naming the file, line and key.
func (c *SlurmConf) Priority() (multifactor.Params, error) {
	p := multifactor.Default()
	if c.PriorityType != "" {
		p.Type = c.PriorityType
	}
	var ps Problems
	for _, s := range c.Settings {
		bad := func(format string, args ...any) { ps.add(s.File, s.Line, s.Key, format, args...) }
		switch strings.ToLower(s.Key) {
		case "priorityweightage":
			p.WeightAge = parseWeight(s.Value, bad)
		case "priorityweightfairshare":
			p.WeightFairshare = parseWeight(s.Value, bad)
		case "priorityweightjobsize":
			p.WeightJobSize = parseWeight(s.Value, bad)
		case "priorityweightpartition":
			p.WeightPartition = parseWeight(s.Value, bad)
		case "priorityweightqos":
			p.WeightQOS = parseWeight(s.Value, bad)
		case "prioritymaxage":
			if t, err := duration(s.Value); err != nil {
				bad("%v", err)
			} else {
				p.MaxAge = t
			}
		case "prioritydecayhalflife":
			if t, err := duration(s.Value); err != nil {
				bad("%v", err)
			} else {
				p.DecayHalfLife = t
			}
		case "prioritycalcperiod":
			if t, err := duration(s.Value); err != nil {
				bad("%v", err)
			} else if t <= 0 {
				bad("%q: want a positive time", s.Value)
			} else {
				p.CalcPeriod = t
			}
		case "priorityfavorsmall":
			switch strings.ToLower(s.Value) {
			case "yes":
				p.FavorSmall = true
			case "no":
				p.FavorSmall = false
			default:
				bad("%q: want YES or NO", s.Value)
			}
		case "priorityflags":
			p.FairTree = true
			for _, f := range strings.Split(s.Value, ",") {
				if strings.EqualFold(strings.TrimSpace(f), "NO_FAIR_TREE") {
					p.FairTree = false
				}
			}
		}
	}
	for _, part := range c.Partitions {
		pp := multifactor.Partition{Name: part.Name, JobFactor: 1, Tier: 1, Default: part.Default}
		bad := func(key string) func(string, ...any) {
			return func(format string, args ...any) { ps.add(part.File, part.Line, key, format, args...) }
		}
		if v, ok := part.Attrs["priorityjobfactor"]; ok {
			pp.JobFactor = parseUint16(v, bad("PriorityJobFactor"))
		} else if v, ok := part.Attrs["priority"]; ok {
			// Priority= sets both the job factor and the tier.
			pp.JobFactor = parseUint16(v, bad("Priority"))
		}
		if part.PriorityTier > 0 {
			pp.Tier = uint32(part.PriorityTier)
		} else if v, ok := part.Attrs["priority"]; ok {
			pp.Tier = parseUint16(v, bad("Priority"))
		}
		p.Partitions = append(p.Partitions, pp)
	}
	return p, ps.Err()
}

// parseWeight reads a PriorityWeight* value: an unsigned 32-bit integer.
func parseWeight(v string, bad func(string, ...any)) uint32 {
	n, err := strconv.ParseUint(strings.TrimSpace(v), 10, 32)
	if err != nil {
		bad("%q: want an integer in 0..%d", v, uint32(math.MaxUint32))
		return 0
	}
	return uint32(n)
}

// parseUint16 reads a partition's PriorityJobFactor or PriorityTier: 0..65533.
func parseUint16(v string, bad func(string, ...any)) uint32 {
	n, err := strconv.ParseUint(strings.TrimSpace(v), 10, 16)
	if err != nil || n > 65533 {
		bad("%q: want an integer in 0..65533", v)
		return 1
	}
	return uint32(n)
}

// duration reads a priority time setting: Slurm's time syntax, a bare
// number being minutes; UNLIMITED is refused.
func duration(v string) (float64, error) {
	secs, unlimited, err := slurmtime.Parse(strings.TrimSpace(v), true)
	if err != nil {
		return 0, err
	}
	if unlimited {
		return 0, fmt.Errorf("%q: want a finite time", v)
	}
	return secs, nil
}
