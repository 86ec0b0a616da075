// Package multifactor is Slurm's priority model as asrpt replays it and
// writes into: the multifactor formula (age, fair share, job size,
// partition), fair share by Fair Tree or the classic formula, and the site
// factor that asrpt's factor mode adds to a job's priority. It has its own
// parameter type, Params; reading slurm.conf into it is package
// slurmconf's job, running jobs by it package policy's. Times are seconds,
// usage GPU-seconds.
package multifactor

// Params are the settings of priority/multifactor, as slurm.conf gives
// them (package slurmconf reads them): the factor weights, the age and
// usage time constants, and each partition's PriorityJobFactor and
// PriorityTier. Times are seconds.
type Params struct {
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
	Partitions []Partition `json:"partitions,omitempty"`
}

// Partition is one partition's share in the multifactor priority.
type Partition struct {
	Name      string `json:"name"`
	JobFactor uint32 `json:"job_factor"`
	Tier      uint32 `json:"tier"`
	// Default marks the partition jobs go to when they name none.
	Default bool `json:"default,omitempty"`
}

// WeightSum is the sum of the factor weights: the largest priority the
// multifactor formula can give a job (before a site factor and nice).
func (p Params) WeightSum() uint64 {
	return uint64(p.WeightAge) + uint64(p.WeightFairshare) + uint64(p.WeightJobSize) +
		uint64(p.WeightPartition) + uint64(p.WeightQOS)
}

// Default is Slurm's own default: priority/basic, every weight 0,
// PriorityMaxAge and PriorityDecayHalfLife 7 days, PriorityCalcPeriod 5
// minutes, Fair Tree.
func Default() Params {
	return Params{Type: "priority/basic", MaxAge: 7 * 86400, DecayHalfLife: 7 * 86400,
		CalcPeriod: 300, FairTree: true}
}
