package slurmconf

import (
	"strings"
	"testing"

	"github.com/asrpt/asrpt/multifactor"
)

func TestPriority(t *testing.T) {
	tests := []struct {
		name string
		conf string
		want func(p multifactor.Params) bool
		err  string // substring of the error, "" for none
	}{
		{"defaults", "ClusterName=c\n", func(p multifactor.Params) bool {
			return p.Type == "priority/basic" && p.WeightSum() == 0 && p.MaxAge == 7*86400 &&
				p.DecayHalfLife == 7*86400 && p.CalcPeriod == 300 && p.FairTree && !p.FavorSmall
		}, ""},
		{"weights and times", `PriorityType=priority/multifactor
PriorityWeightAge=1000
PriorityWeightFairshare=10000
PriorityWeightJobSize=1000
PriorityWeightPartition=1000
PriorityWeightQOS=0
PriorityMaxAge=1-0
PriorityDecayHalfLife=14-0
PriorityCalcPeriod=1
PriorityFavorSmall=YES
PriorityFlags=SMALL_RELATIVE_TO_TIME,NO_FAIR_TREE
`, func(p multifactor.Params) bool {
			return p.Type == "priority/multifactor" && p.WeightAge == 1000 && p.WeightFairshare == 10000 &&
				p.WeightSum() == 13000 && p.MaxAge == 86400 && p.DecayHalfLife == 14*86400 &&
				p.CalcPeriod == 60 && p.FavorSmall && !p.FairTree
		}, ""},
		{"partitions", `NodeName=n[1-2] CPUs=4
PartitionName=gpu Nodes=ALL Default=YES PriorityJobFactor=10 PriorityTier=2
PartitionName=low Nodes=n1
PartitionName=old Nodes=n2 Priority=5
`, func(p multifactor.Params) bool {
			want := []multifactor.Partition{{Name: "gpu", JobFactor: 10, Tier: 2, Default: true}, {Name: "low", JobFactor: 1, Tier: 1}, {Name: "old", JobFactor: 5, Tier: 5}}
			if len(p.Partitions) != len(want) {
				return false
			}
			for i := range want {
				if p.Partitions[i] != want[i] {
					return false
				}
			}
			return true
		}, ""},
		{"bad weight", "PriorityWeightAge=-3\n", nil, "slurm.conf:1: PriorityWeightAge"},
		{"bad age", "\nPriorityMaxAge=soon\n", nil, "slurm.conf:2: PriorityMaxAge"},
		{"unlimited half-life", "PriorityDecayHalfLife=UNLIMITED\n", nil, "PriorityDecayHalfLife"},
		{"zero calc period", "PriorityCalcPeriod=0\n", nil, "PriorityCalcPeriod"},
		{"bad favor small", "PriorityFavorSmall=maybe\n", nil, "PriorityFavorSmall"},
		{"bad job factor", "NodeName=n1\nPartitionName=p Nodes=n1 PriorityJobFactor=70000\n", nil, "slurm.conf:2: PriorityJobFactor"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c, ps := ParseSlurmConf(strings.NewReader(tc.conf), "slurm.conf", nil)
			if err := ps.Err(); err != nil {
				t.Fatalf("parse: %v", err)
			}
			p, err := c.Priority()
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("err = %v, want one containing %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !tc.want(p) {
				t.Errorf("got %+v", p)
			}
		})
	}
}
