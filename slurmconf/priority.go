package slurmconf

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/asrpt/asrpt/internal/slurmtime"
)

// PriorityConf is what priority/multifactor reads from slurm.conf: the
// factor weights, the age and usage time constants, and each partition's
// PriorityJobFactor and PriorityTier. Times are seconds.
type PriorityConf struct {
	// Type is PriorityType ("priority/basic" when not set, as in Slurm).
	Type string `json:"type"`
	// Weights of the factors (PriorityWeightAge, ...Fairshare, ...JobSize,
	// ...Partition, ...QOS); each factor is in [0, 1] and the job's
	// priority is Σ weight·factor (Slurm's default weights are 0).
	WeightAge       uint32 `json:"weight_age"`
	WeightFairshare uint32 `json:"weight_fairshare"`
	WeightJobSize   uint32 `json:"weight_job_size"`
	WeightPartition uint32 `json:"weight_partition"`
	WeightQOS       uint32 `json:"weight_qos"`
	// MaxAge is PriorityMaxAge: the wait at which the age factor reaches 1
	// (default 7 days).
	MaxAge float64 `json:"max_age_s"`
	// DecayHalfLife is PriorityDecayHalfLife: the half-life of past usage
	// in the fair-share factor (default 7 days; 0 means no decay).
	DecayHalfLife float64 `json:"decay_half_life_s"`
	// CalcPeriod is PriorityCalcPeriod: how often Slurm decays usage and
	// recomputes pending jobs' priorities (default 5 minutes).
	CalcPeriod float64 `json:"calc_period_s"`
	// FavorSmall is PriorityFavorSmall: the job-size factor favours small
	// jobs instead of large ones.
	FavorSmall bool `json:"favor_small"`
	// FairTree is false when PriorityFlags holds NO_FAIR_TREE (the classic
	// fair-share formula); Fair Tree is Slurm's default since 19.05.
	FairTree bool `json:"fair_tree"`
	// Partitions holds each partition's PriorityJobFactor (default 1) and
	// PriorityTier (default 1), in slurm.conf order.
	Partitions []PartitionPriority `json:"partitions,omitempty"`
}

// PartitionPriority is one partition's share in the multifactor priority.
type PartitionPriority struct {
	Name      string `json:"name"`
	JobFactor uint32 `json:"job_factor"`
	Tier      uint32 `json:"tier"`
	// Default marks the partition jobs go to when they name none.
	Default bool `json:"default,omitempty"`
}

// WeightSum is the sum of the factor weights: the largest priority the
// multifactor formula can give a job (before a site factor and nice).
func (p PriorityConf) WeightSum() uint64 {
	return uint64(p.WeightAge) + uint64(p.WeightFairshare) + uint64(p.WeightJobSize) +
		uint64(p.WeightPartition) + uint64(p.WeightQOS)
}

// DefaultPriorityConf is Slurm's own default: priority/basic, every weight 0,
// PriorityMaxAge and PriorityDecayHalfLife 7 days, PriorityCalcPeriod 5
// minutes, Fair Tree.
func DefaultPriorityConf() PriorityConf {
	return PriorityConf{Type: "priority/basic", MaxAge: 7 * 86400, DecayHalfLife: 7 * 86400,
		CalcPeriod: 300, FairTree: true}
}

// Priority reads the multifactor settings of c. Unset keys keep Slurm's
// defaults (DefaultPriorityConf). A value Slurm would refuse is an error
// naming the file, line and key.
func (c *SlurmConf) Priority() (PriorityConf, error) {
	p := DefaultPriorityConf()
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
		pp := PartitionPriority{Name: part.Name, JobFactor: 1, Tier: 1, Default: part.Default}
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
