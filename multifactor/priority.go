package multifactor

import "math"

// Example is the configuration of the example in Slurm's multifactor
// documentation: priority/multifactor, PriorityWeightFairshare=10000,
// PriorityWeightAge, JobSize and Partition 1000, QOS 0,
// PriorityDecayHalfLife and PriorityMaxAge 14 days, PriorityFavorSmall=NO,
// Fair Tree, a 5-minute PriorityCalcPeriod, no partitions.
func Example() Params {
	p := Default()
	p.Type = "priority/multifactor"
	p.WeightAge, p.WeightFairshare, p.WeightJobSize, p.WeightPartition, p.WeightQOS = 1000, 10000, 1000, 1000, 0
	p.DecayHalfLife, p.MaxAge = 14*86400, 14*86400
	return p
}

// Factors are a job's multifactor factors, each in [0, 1].
type Factors struct {
	// Age is the job's wait over PriorityMaxAge, at most 1.
	Age float64
	// FairShare is its association's fair-share factor (FairShare).
	FairShare float64
	// JobSize is the job's size factor (JobSize).
	JobSize float64
	// Partition is its partition's job factor (PartitionFactor).
	Partition float64
}

// AgeFactor is the age factor of a job that has waited wait seconds:
// wait/MaxAge, clamped to [0, 1]; 1 when MaxAge is 0.
func (p *Params) AgeFactor(wait float64) float64 {
	if p.MaxAge <= 0 {
		return 1
	}
	return math.Min(math.Max(wait, 0), p.MaxAge) / p.MaxAge
}

// JobSize is the job-size factor of a job on nodes of clusterNodes nodes
// and gpus of clusterGPUs GPUs: the mean of its two shares, at most 1,
// turned round (1 − x) under PriorityFavorSmall; the GPUs stand for
// Slurm's CPU count. A cluster of no nodes or GPUs gives 0 (1 when
// favouring small jobs).
func (p *Params) JobSize(nodes, clusterNodes, gpus, clusterGPUs int) float64 {
	js := 0.0
	if clusterNodes > 0 && clusterGPUs > 0 {
		js = math.Min((float64(nodes)/float64(clusterNodes)+float64(gpus)/float64(clusterGPUs))/2, 1)
	}
	if p.FavorSmall {
		js = 1 - js
	}
	return js
}

// Priority is Slurm's multifactor priority of a job with factors f,
// without the site factor: Σ weight·factor over age, fair share, job size
// and partition, truncated to an integer, in [1, 2^32−1]. The QOS factor
// is 0: QOS priorities live in the accounting database, not in slurm.conf.
func (p *Params) Priority(f Factors) float64 {
	prio := float64(p.WeightAge)*f.Age + float64(p.WeightFairshare)*f.FairShare +
		float64(p.WeightJobSize)*f.JobSize + float64(p.WeightPartition)*f.Partition
	return math.Min(math.Max(math.Floor(prio), 1), math.MaxUint32)
}

// PartitionFactor returns the job factor (normalised by the largest of
// the partitions') and the tier of partition name: the named partition,
// else the default one, else the first, else factor 1 and tier 1 (a site
// without partitions in slurm.conf).
func (p *Params) PartitionFactor(name string) (factor float64, tier uint32) {
	ps := p.Partitions
	if len(ps) == 0 {
		return 1, 1
	}
	var top uint32
	for _, q := range ps {
		top = max(top, q.JobFactor)
	}
	pick := ps[0]
	for _, q := range ps {
		if q.Default {
			pick = q
			break
		}
	}
	for _, q := range ps {
		if q.Name == name {
			pick = q
			break
		}
	}
	if top == 0 {
		return 0, pick.Tier
	}
	return float64(pick.JobFactor) / float64(top), pick.Tier
}
