package trace

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"sort"
	"strconv"
	"time"

	"github.com/asrpt/asrpt/job"
)

// GPUShare is one entry of a GPU-count mix: the relative weight of job
// families that use GPUs GPUs.
type GPUShare struct {
	GPUs   int
	Weight float64
}

// DefaultGPUMix is the family GPU-count mix of DefaultGenConfig, shaped
// after the public Helios and Philly traces (GENERATOR.md): mostly 1 GPU,
// then 8, 2, 4, 16, 32 and a few larger jobs.
var DefaultGPUMix = []GPUShare{
	{1, 0.62}, {2, 0.08}, {4, 0.07}, {8, 0.14}, {16, 0.05}, {32, 0.025}, {64, 0.01}, {128, 0.005},
}

// GenConfig sets the synthetic workload. GENERATOR.md describes the model;
// DefaultGenConfig gives the documented defaults. Times are seconds.
type GenConfig struct {
	// Seed selects the pseudo-random stream; the same config gives the same
	// jobs.
	Seed int64
	// Jobs is the number of jobs to generate, ≥ 1.
	Jobs int
	// ClusterGPUs is G, the cluster's GPU count; no job asks for more. It
	// must be a multiple of GPUsPerNode.
	ClusterGPUs int
	// GPUsPerNode is the GPUs of one node; jobs larger than a node ask for
	// whole nodes.
	GPUsPerNode int
	// Load is the offered load: total GPU-seconds of the jobs divided by
	// ClusterGPUs times the expected submission span, > 0. Values near 1
	// make jobs queue at the daily peaks; above 1 the queue grows.
	Load float64
	// Start is the Unix time of the beginning of the submission period
	// (arrivals follow the UTC hour of day and day of week from here).
	Start float64
	// ProfiledShare is the share, in [0, 1], of multi-GPU job families whose
	// jobs carry a placement catalogue profile (Profile, Iterations, and
	// RunTime = Iterations · α_min).
	ProfiledShare float64
	// Users is the number of users; 0 picks round(1.2·√Jobs), at least 4.
	Users int
	// MedianRunTime is the median over families of their median run time,
	// seconds, > 0.
	MedianRunTime float64
	// RunTimeSpread is the standard deviation of the natural log of the
	// families' median run times, ≥ 0.
	RunTimeSpread float64
	// FailedShare and CancelledShare are the mean shares of jobs that end
	// FAILED (early, after a fraction of their run) or CANCELLED; each in
	// [0, 1], sum ≤ 1.
	FailedShare, CancelledShare float64
	// NoLimitShare is the share of users, in [0, 1], who set no time limit
	// (TimeLimit 0).
	NoLimitShare float64
	// Diurnal is the amplitude, in [0, 1), of the daily arrival cycle: the
	// rate peaks at 15:00 UTC at 1+Diurnal times the daily mean.
	Diurnal float64
	// Weekend is the arrival rate on Saturdays and Sundays relative to
	// weekdays, > 0.
	Weekend float64
	// GPUMix is the family GPU-count mix; nil means DefaultGPUMix. Entries
	// larger than ClusterGPUs are dropped; counts above GPUsPerNode are
	// rounded up to whole nodes.
	GPUMix []GPUShare
	// ArrayShare is the share of submissions, in [0, 1], that are job
	// arrays (a hyper-parameter sweep: one name, one submit time, 2 to
	// ArrayMaxTasks tasks with consecutive ids and one ArrayJobID). 0, the
	// default, makes no array and leaves every other job as it was.
	ArrayShare float64
	// ArrayTaskSpread is the log-standard deviation of an array's task run
	// times as a fraction, in [0, 1], of their family's σ: the array draws
	// one median for its tasks from the family, and each task varies around
	// it by ArrayTaskSpread·σ. 0 makes the tasks of an array alike but for
	// their failures; 1 makes them as different as any runs of the family.
	ArrayTaskSpread float64
	// Commands is the number of argument sets of each family (a script
	// run with one of several configurations: epochs, model sizes): each
	// job runs one, drawn uniformly, and carries the Command of its
	// family's script with that set (job.CommandKey of a per-user
	// directory and an sbatch line). 0, the default, gives no commands and
	// leaves every other field of every job as it was.
	Commands int
	// CommandSpread is the share, in [0, 1], of a family's log run-time
	// variance σ² that its argument sets explain: set c moves the log
	// median by σ·√CommandSpread·z_c (z_c standard normal, one per set)
	// and leaves σ·√(1−CommandSpread) to the job, so that a family's runs
	// are spread as much as without commands. Read only with Commands > 0.
	CommandSpread float64
}

// Job arrays of the generator: an array has 2 + ⌊Exp(1)·(ArrayMeanTasks−2)⌋
// tasks, at most ArrayMaxTasks.
const (
	ArrayMeanTasks = 8
	ArrayMaxTasks  = 64
)

// DefaultStart is 2026-11-02T00:00:00Z, a Monday: the default Start.
const DefaultStart = 1793577600

// DefaultGenConfig returns the documented default workload: 10,000 jobs on
// 32 nodes × 8 GPUs at offered load 0.9, seed 1.
func DefaultGenConfig() GenConfig {
	return GenConfig{
		Seed:           1,
		Jobs:           10000,
		ClusterGPUs:    256,
		GPUsPerNode:    8,
		Load:           0.9,
		Start:          DefaultStart,
		ProfiledShare:  0.1,
		MedianRunTime:  600,
		RunTimeSpread:  1.5,
		FailedShare:    0.12,
		CancelledShare: 0.08,
		NoLimitShare:   0.1,
		Diurnal:        0.6,
		Weekend:        0.5,

		ArrayTaskSpread: 0.25,
		CommandSpread:   0.5,
	}
}

// ErrConfig is wrapped by Generate's errors about the configuration.
var ErrConfig = errors.New("trace: bad generator config")

// Bounds of GenConfig that callers check their own flags against.
const (
	// MaxGenJobs bounds GenConfig.Jobs: 2^24 (16,777,216) jobs. The job
	// slice is allocated up front at 208 bytes a job (job.Job), some 253
	// bytes with the ids, names and the generator's own arrays: 4.2 GB
	// at the bound; `asrpt replay --jobs` then holds some 410 bytes a job
	// (10M jobs: 4.1 GB), 6.9 GB at the bound (figures measured at 200
	// bytes a job and scaled by the 8 bytes of Command). 2^28 jobs asked 47 GB of
	// the generator alone (`replay --jobs 100000000` died allocating 17.6
	// GB); 2^24 leaves a 16 GB machine room for the replay. Larger traces
	// can be written by several runs with other seeds and starts.
	MaxGenJobs = 1 << 24
	// MaxGenCommands bounds GenConfig.Commands, the argument sets of one
	// family.
	MaxGenCommands = 1000
	// MaxGenLoad bounds GenConfig.Load: an offered load of 100 times the
	// cluster.
	MaxGenLoad = 100
)

// Validate checks the configuration; errors wrap ErrConfig.
func (c *GenConfig) Validate() error {
	bad := func(format string, a ...any) error {
		return fmt.Errorf("%w: %s", ErrConfig, fmt.Sprintf(format, a...))
	}
	share := func(x float64) bool { return x >= 0 && x <= 1 }
	switch {
	case c.Jobs < 1 || c.Jobs > MaxGenJobs:
		return bad("jobs %d, want 1..%d", c.Jobs, MaxGenJobs)
	case c.GPUsPerNode < 1 || c.GPUsPerNode > 64:
		return bad("GPUs per node %d, want 1..64", c.GPUsPerNode)
	case c.ClusterGPUs < 1 || c.ClusterGPUs > MaxGPUs || c.ClusterGPUs%c.GPUsPerNode != 0:
		return bad("cluster GPUs %d, want a positive multiple of GPUs per node %d", c.ClusterGPUs, c.GPUsPerNode)
	case !(c.Load > 0) || c.Load > MaxGenLoad || !finite(c.Load):
		return bad("load %v, want > 0 (and ≤ %d)", c.Load, MaxGenLoad)
	case !finite(c.Start):
		return bad("start %v", c.Start)
	case !share(c.ProfiledShare):
		return bad("profiled share %v, want 0..1", c.ProfiledShare)
	case c.Users < 0:
		return bad("users %d, want ≥ 0", c.Users)
	case !(c.MedianRunTime > 0) || !finite(c.MedianRunTime):
		return bad("median run time %v s, want > 0", c.MedianRunTime)
	case !(c.RunTimeSpread >= 0) || c.RunTimeSpread > 10:
		return bad("run-time spread %v, want 0..10", c.RunTimeSpread)
	case !share(c.FailedShare) || !share(c.CancelledShare) || c.FailedShare+c.CancelledShare > 1:
		return bad("failed %v + cancelled %v shares, want each in 0..1 and sum ≤ 1", c.FailedShare, c.CancelledShare)
	case !share(c.NoLimitShare):
		return bad("no-limit share %v, want 0..1", c.NoLimitShare)
	case !(c.Diurnal >= 0) || c.Diurnal >= 1:
		return bad("diurnal amplitude %v, want 0 ≤ a < 1", c.Diurnal)
	case !(c.Weekend > 0) || c.Weekend > 100:
		return bad("weekend factor %v, want > 0", c.Weekend)
	case !share(c.ArrayShare):
		return bad("array share %v, want 0..1", c.ArrayShare)
	case !share(c.ArrayTaskSpread):
		return bad("array task spread %v, want 0..1", c.ArrayTaskSpread)
	case c.Commands < 0 || c.Commands > MaxGenCommands:
		return bad("commands %d per family, want 0..%d", c.Commands, MaxGenCommands)
	case !share(c.CommandSpread):
		return bad("command spread %v, want 0..1", c.CommandSpread)
	}
	for _, m := range c.GPUMix {
		if m.GPUs < 1 || !(m.Weight >= 0) || !finite(m.Weight) {
			return bad("GPU mix entry %d GPUs weight %v", m.GPUs, m.Weight)
		}
	}
	if len(c.gpuMix()) == 0 {
		return bad("no GPU-mix entry fits in %d GPUs", c.ClusterGPUs)
	}
	return nil
}

// gpuMix returns the usable mix: entries rounded to whole nodes, capped at
// ClusterGPUs, merged and sorted by GPU count, zero weights dropped.
func (c *GenConfig) gpuMix() []GPUShare {
	src := c.GPUMix
	if src == nil {
		src = DefaultGPUMix
	}
	var out []GPUShare
	for _, m := range src {
		g := m.GPUs
		if g > c.ClusterGPUs || m.Weight <= 0 {
			continue
		}
		if g > c.GPUsPerNode {
			g = (g + c.GPUsPerNode - 1) / c.GPUsPerNode * c.GPUsPerNode
			g = min(g, c.ClusterGPUs)
		}
		if i := slices.IndexFunc(out, func(s GPUShare) bool { return s.GPUs == g }); i >= 0 {
			out[i].Weight += m.Weight
		} else {
			out = append(out, GPUShare{g, m.Weight})
		}
	}
	slices.SortFunc(out, func(a, b GPUShare) int { return a.GPUs - b.GPUs })
	return out
}

// Limit styles: how a user sets time limits.
const (
	limitTight    = iota // 1.3 × the family's p90, rounded up to 15 min
	limitGenerous        // next round value ≥ 2 × p95 (1 h, 2 h, 4 h, ... 7 d)
	limitMax             // always the partition maximum
	limitNone            // no limit
)

const (
	maxLimit    = 3 * 86400  // partition "gpu" maximum time limit, s
	debugLimit  = 3600       // partition "debug" maximum time limit, s
	maxRunTime  = 30 * 86400 // cap on any run time, s
	tailProb    = 0.03       // share of runs with a Pareto-tailed length
	tailAlpha   = 1.2        // Pareto shape of the tail multiplier
	tailMaxMult = 100        // cap on the tail multiplier
	hangProb    = 0.02       // share of runs that hang and run into their time limit
)

// roundLimits are the values "generous" users pick from, seconds.
var roundLimits = []float64{3600, 2 * 3600, 4 * 3600, 8 * 3600, 12 * 3600, 86400, 2 * 86400, 3 * 86400, 7 * 86400}

type verb struct {
	name   string
	weight float64
	// median multiplies the family median run time.
	median float64
}

var verbs = []verb{
	{"train", 0.45, 1}, {"finetune", 0.15, 0.5}, {"eval", 0.10, 0.1}, {"pretrain", 0.05, 4},
	{"sweep", 0.07, 0.3}, {"infer", 0.08, 0.1}, {"debug", 0.10, 0.05},
}

// modelNames are the names plain (unprofiled) families train.
var modelNames = []string{
	"bert-base", "bert-large", "resnet50", "resnet101", "vgg16", "inception3", "gpt2", "gpt2-xl",
	"t5-large", "vit-b16", "llama-7b", "yolov5", "unet", "wav2vec2", "whisper-small", "sd-unet",
	"ppo-atari", "gnn-ogb", "mae-vit", "clip-b32",
}

// family is a recurring job of one user.
type family struct {
	stem      string
	template  int // 0: stem-DATE-runN, 1: stem-runN, 2: stem, 3: stem-XXXXXX (random hex)
	user      int
	gpus      int
	nodes     int
	partition string
	mu, sigma float64 // log-normal run-time parameters (log seconds)
	failP     float64
	cancelP   float64
	limit     float64 // seconds, 0 = none
	profile   string  // catalogue model, "" for a plain family
	alpha     float64 // α_min of the profile, seconds per iteration
	runs      int     // runs generated so far
	// commands holds z_c of each argument set (GenConfig.Commands), drawn
	// at the family's first run; nil without commands.
	commands []float64
}

type user struct {
	name, account string
	limitStyle    int
	families      []int     // indices into gen.families
	cum           []float64 // cumulative family weights
}

// Generate returns cfg.Jobs synthetic jobs sorted by submit time, with ids
// "1", "2", ... in submit order. The same cfg gives the same jobs; the
// model is described in GENERATOR.md. Errors wrap ErrConfig. A job never
// asks for more than cfg.ClusterGPUs GPUs.
func Generate(cfg GenConfig) ([]job.Job, error) {
	return GenerateContext(context.Background(), cfg)
}

// genCheckEvery is how many jobs each of the generator's passes makes
// between two looks at its context (a few milliseconds of work).
const genCheckEvery = 1 << 14

// GenerateContext is Generate stopping with ctx's error soon (within
// genCheckEvery jobs of a pass) after ctx is done.
func GenerateContext(ctx context.Context, cfg GenConfig) ([]job.Job, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("trace: generate: %w", err)
	}
	g := &gen{ctx: ctx, cfg: cfg, rng: rand.New(rand.NewPCG(uint64(cfg.Seed), 0x5eed_a5b7_0000_0001))}
	if cfg.ProfiledShare > 0 {
		src, err := newProfileSource(cfg.ClusterGPUs/cfg.GPUsPerNode, cfg.GPUsPerNode)
		if err != nil {
			return nil, err
		}
		g.profiles = src
	}
	if cfg.Commands > 0 {
		g.cmdRNG = rand.New(rand.NewPCG(uint64(cfg.Seed), 0x5eed_a5b7_0000_0002))
	}
	g.makeUsers()
	jobs := make([]job.Job, cfg.Jobs)
	fam := make([]int32, cfg.Jobs)
	runs := make([]int32, cfg.Jobs)
	var head []int32 // the index of the first task of k's array, or k; nil without arrays
	if cfg.ArrayShare > 0 {
		head = make([]int32, cfg.Jobs)
	}
	work := 0.0
	submissions := 0
	for k := 0; k < len(jobs); submissions++ {
		if g.stopped(submissions) {
			return nil, fmt.Errorf("trace: generate: %w", ctx.Err())
		}
		u := &g.users[pick(g.rng, g.userCum)]
		f := u.families[pick(g.rng, u.cum)]
		fm := &g.families[f]
		tasks, mu, sigma := 1, fm.mu, fm.sigma
		var command uint64
		if g.cmdRNG != nil {
			var shift float64
			command, shift = g.command(fm)
			mu, sigma = mu+fm.sigma*math.Sqrt(cfg.CommandSpread)*shift, sigma*math.Sqrt(1-cfg.CommandSpread)
		}
		if head != nil && g.rng.Float64() < cfg.ArrayShare {
			tasks = min(2+int(g.rng.ExpFloat64()*(ArrayMeanTasks-2)), ArrayMaxTasks, len(jobs)-k)
			mu, sigma = fm.mu+fm.sigma*g.rng.NormFloat64(), fm.sigma*cfg.ArrayTaskSpread
		}
		fm.runs++
		for i := k; i < k+tasks; i++ {
			fam[i], runs[i] = int32(f), int32(fm.runs)
			if head != nil {
				head[i] = int32(k)
			}
			g.shape(&jobs[i], fm, mu, sigma)
			jobs[i].Command = command
			work += float64(jobs[i].GPUs) * jobs[i].RunTime
		}
		k += tasks
	}
	// Arrivals: a non-homogeneous Poisson process of submissions (an array
	// is one) with rate λ0·f(t), f the daily and weekly pattern with mean 1
	// over a week, λ0 chosen so that the expected span T = submissions/λ0
	// carries the offered load: work = Load · ClusterGPUs · T.
	lambda0 := cfg.Load * float64(cfg.ClusterGPUs) * float64(submissions) / work
	g.arrivals(jobs, head, lambda0)
	g.names(jobs, head, fam, runs)
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("trace: generate: %w", err)
	}
	return jobs, nil
}

// stopped reports, every genCheckEvery jobs k, whether the context is
// done.
func (g *gen) stopped(k int) bool { return k%genCheckEvery == 0 && g.ctx.Err() != nil }

type gen struct {
	ctx context.Context
	cfg GenConfig
	rng *rand.Rand
	// cmdRNG draws the argument sets (GenConfig.Commands), a stream of its
	// own so that the other draws are those of a workload without them;
	// nil without commands.
	cmdRNG   *rand.Rand
	users    []user
	userCum  []float64
	families []family
	profiles *profileSource
}

// command draws one of f's argument sets: the job's Command and the set's
// z_c.
func (g *gen) command(f *family) (uint64, float64) {
	r := g.cmdRNG
	if f.commands == nil {
		f.commands = make([]float64, g.cfg.Commands)
		for i := range f.commands {
			f.commands[i] = r.NormFloat64()
		}
	}
	c := r.IntN(len(f.commands))
	u := g.users[f.user].name
	return job.CommandKey("/home/"+u+"/"+f.stem, "sbatch "+f.stem+".sh --config "+strconv.Itoa(c)), f.commands[c]
}

// pick draws an index with probability proportional to the increments of
// the cumulative weights cum.
func pick(r *rand.Rand, cum []float64) int {
	x := r.Float64() * cum[len(cum)-1]
	i := sort.SearchFloat64s(cum, x)
	if i < len(cum) && cum[i] == x { // SearchFloat64s finds the first ≥ x
		i++
	}
	return min(i, len(cum)-1)
}

func cumulative(w []float64) []float64 {
	c := make([]float64, len(w))
	s := 0.0
	for i, x := range w {
		s += x
		c[i] = s
	}
	return c
}

// makeUsers creates the users with Zipf activity (weight 1/rank^1.1) and
// their families.
func (g *gen) makeUsers() {
	c := &g.cfg
	n := c.Users
	if n == 0 {
		n = max(4, int(math.Round(1.2*math.Sqrt(float64(c.Jobs)))))
	}
	width := len(strconv.Itoa(n))
	accounts := max(1, (n+7)/8)
	mix := c.gpuMix()
	mixW := make([]float64, len(mix))
	for i, m := range mix {
		mixW[i] = m.Weight
	}
	mixCum := cumulative(mixW)
	verbW := make([]float64, len(verbs))
	for i, v := range verbs {
		verbW[i] = v.weight
	}
	verbCum := cumulative(verbW)
	g.users = make([]user, n)
	w := make([]float64, n)
	for i := range g.users {
		w[i] = 1 / math.Pow(float64(i+1), 1.1)
	}
	g.userCum = cumulative(w)
	r := g.rng
	for i := range g.users {
		u := &g.users[i]
		u.name = "user" + pad(i+1, width)
		u.account = "lab" + pad(r.IntN(accounts)+1, len(strconv.Itoa(accounts)))
		switch x := r.Float64(); {
		case x < c.NoLimitShare:
			u.limitStyle = limitNone
		case x < c.NoLimitShare+(1-c.NoLimitShare)*0.33:
			u.limitStyle = limitTight
		case x < c.NoLimitShare+(1-c.NoLimitShare)*0.78:
			u.limitStyle = limitGenerous
		default:
			u.limitStyle = limitMax
		}
		// Heavier users run more families.
		k := 1 + int(r.ExpFloat64()*3) + int(6*w[i]/w[0])
		k = min(k, 30)
		fw := make([]float64, k)
		for f := range k {
			u.families = append(u.families, len(g.families))
			g.families = append(g.families, g.makeFamily(i, u.limitStyle, mix[pick(r, mixCum)].GPUs, verbs[pick(r, verbCum)]))
			fw[f] = 1 / float64(f+1)
		}
		u.cum = cumulative(fw)
	}
}

func pad(n, width int) string {
	s := strconv.Itoa(n)
	for len(s) < width {
		s = "0" + s
	}
	return s
}

// makeFamily draws one family of user u.
func (g *gen) makeFamily(u, style, gpus int, v verb) family {
	c := &g.cfg
	r := g.rng
	f := family{user: u, gpus: gpus, partition: "gpu"}
	f.nodes = 1
	if gpus > c.GPUsPerNode {
		f.nodes = gpus / c.GPUsPerNode
	}
	model := modelNames[r.IntN(len(modelNames))]
	if gpus > 1 && g.profiles != nil && r.Float64() < c.ProfiledShare {
		if m, a, ok := g.profiles.pick(r, gpus); ok {
			f.profile, f.alpha, model = m, a, m
		}
	}
	f.stem = v.name + "-" + model
	if r.IntN(3) == 0 { // a user-specific variant of the experiment
		f.stem += "-" + string(rune('a'+r.IntN(26))) + strconv.Itoa(r.IntN(10))
	}
	switch x := r.Float64(); {
	case x < 0.45:
		f.template = 0
	case x < 0.7:
		f.template = 1
	case x < 0.9:
		f.template = 2
	default:
		f.template = 3
	}
	// Median run time: log-normal over families, longer for bigger jobs
	// and for the verb's kind of work.
	med := c.MedianRunTime * v.median * math.Pow(float64(gpus), 0.25) * math.Exp(c.RunTimeSpread*r.NormFloat64())
	med = math.Min(math.Max(med, 20), 5*86400)
	f.mu = math.Log(med)
	f.sigma = 0.3 + 0.7*r.Float64()
	f.failP = c.FailedShare * 2 * r.Float64()
	f.cancelP = c.CancelledShare * 2 * r.Float64()
	partMax := float64(maxLimit)
	if v.name == "debug" {
		f.partition = "debug"
		partMax = debugLimit
		f.failP = math.Min(2*f.failP, 0.8)
	}
	if f.failP+f.cancelP > 1 {
		s := f.failP + f.cancelP
		f.failP, f.cancelP = f.failP/s, f.cancelP/s
	}
	p90 := med * math.Exp(1.2816*f.sigma)
	p95 := med * math.Exp(1.645*f.sigma)
	switch style {
	case limitTight:
		f.limit = math.Ceil(1.3*p90/900) * 900
	case limitGenerous:
		f.limit = roundLimits[len(roundLimits)-1]
		for _, l := range roundLimits {
			if l >= 2*p95 {
				f.limit = l
				break
			}
		}
	case limitMax:
		f.limit = partMax
	case limitNone:
		f.limit = 0
	}
	if f.limit > partMax {
		f.limit = partMax
	}
	return f
}

// shape draws one run of family f: GPUs, run time, state, limit, profile.
// Its log run time is drawn from N(mu, sigma): the family's (f.mu,
// f.sigma), or an array's.
func (g *gen) shape(j *job.Job, f *family, mu, sigma float64) {
	r := g.rng
	u := &g.users[f.user]
	j.User, j.Account, j.Partition, j.QOS = u.name, u.account, f.partition, "normal"
	j.GPUs, j.Nodes, j.TimeLimit = f.gpus, f.nodes, f.limit
	d := math.Exp(mu + sigma*r.NormFloat64())
	if r.Float64() < tailProb {
		d *= math.Min(math.Pow(1-r.Float64(), -1/tailAlpha), tailMaxMult)
	}
	j.State = "COMPLETED"
	switch x := r.Float64(); {
	case x < f.failP:
		j.State = "FAILED"
		d *= r.Float64() * r.Float64() // failures come early
	case x < f.failP+f.cancelP:
		j.State = "CANCELLED"
		d *= r.Float64()
	}
	if j.State == "COMPLETED" && f.limit > 0 && r.Float64() < hangProb {
		d = f.limit // a hung or diverging run, killed at its limit
	}
	d = math.Min(d, maxRunTime)
	if f.limit > 0 && d >= f.limit {
		j.State = "TIMEOUT"
		d = f.limit
	}
	if f.profile != "" {
		it := math.Max(1, math.Round(d/f.alpha))
		if f.limit > 0 && it*f.alpha > f.limit {
			it = math.Max(1, math.Floor(f.limit/f.alpha))
		}
		j.Profile, j.Iterations, j.RunTime = f.profile, it, it*f.alpha
		return
	}
	j.RunTime = math.Max(1, math.Round(d))
}

// arrivalRate returns f(t), the arrival-rate factor at Unix time t: a
// daily cosine of amplitude diurnal peaking at 15:00 UTC, times weekend on
// Saturdays and Sundays, scaled so that its mean over a week is 1.
func arrivalRate(t, diurnal, weekend float64) float64 {
	const day = 86400
	h := math.Mod(t, day) / 3600
	if h < 0 {
		h += 24
	}
	// Unix day 0 (1970-01-01) was a Thursday: weekday 0 = Sunday.
	wd := (int(math.Floor(t/day))%7 + 7 + 4) % 7
	week := 7 / (5 + 2*weekend)
	if wd == 0 || wd == 6 {
		week *= weekend
	}
	return (1 + diurnal*math.Cos(2*math.Pi*(h-15)/24)) * week
}

// arrivals sets the submit times by thinning a Poisson process of rate
// λ0·max f: each candidate is kept with probability f(t)/max f. Submit
// times are whole seconds. The tasks of an array (head[k] < k; head nil
// without arrays) are submitted with their first task.
func (g *gen) arrivals(jobs []job.Job, head []int32, lambda0 float64) {
	week := 7 / (5 + 2*g.cfg.Weekend)
	fmax := (1 + g.cfg.Diurnal) * week * math.Max(1, g.cfg.Weekend)
	top := lambda0 * fmax
	t := g.cfg.Start
	for k := range jobs {
		if g.stopped(k) {
			return // GenerateContext returns the context's error
		}
		if head != nil && int(head[k]) != k {
			jobs[k].Submit = jobs[head[k]].Submit
			continue
		}
		for {
			t += g.rng.ExpFloat64() / top
			if g.rng.Float64()*fmax <= arrivalRate(t, g.cfg.Diurnal, g.cfg.Weekend) {
				break
			}
		}
		jobs[k].Submit = math.Floor(t)
	}
}

// names sets ids and job names. Names follow the family template:
// "train-bert-large-2026-11-02-run3" (stem, submit date in UTC, run
// number), "train-bert-large-run3", the bare stem, or a one-off
// "train-bert-large-3f9a2c" (six random hex digits per run). The tasks of
// an array share its first task's name, and its id as ArrayJobID.
func (g *gen) names(jobs []job.Job, head, fam, runs []int32) {
	var (
		buf     []byte
		day     = math.Inf(-1)
		dateStr string
	)
	for k := range jobs {
		if g.stopped(k) {
			return // GenerateContext returns the context's error
		}
		j := &jobs[k]
		j.ID = strconv.Itoa(k + 1)
		if head != nil {
			switch h := int(head[k]); {
			case h != k:
				j.Name, j.ArrayJobID = jobs[h].Name, jobs[h].ID
				continue
			case k+1 < len(jobs) && int(head[k+1]) == k:
				j.ArrayJobID = j.ID
			}
		}
		f := &g.families[fam[k]]
		switch f.template {
		case 2:
			j.Name = f.stem
			continue
		case 3:
			buf = append(append(buf[:0], f.stem...), '-')
			buf = strconv.AppendUint(buf, g.rng.Uint64()&0xffffff|0x1000000, 16)
			buf = append(buf[:len(buf)-7], buf[len(buf)-6:]...) // six hex digits
			j.Name = string(buf)
			continue
		}
		buf = append(buf[:0], f.stem...)
		if f.template == 0 {
			if d := math.Floor(j.Submit / 86400); d != day {
				day, dateStr = d, civilDate(int64(d))
			}
			buf = append(buf, '-')
			buf = append(buf, dateStr...)
		}
		buf = append(buf, "-run"...)
		buf = strconv.AppendInt(buf, int64(runs[k]), 10)
		j.Name = string(buf)
	}
}

// civilDate formats Unix day number d as YYYY-MM-DD (UTC).
func civilDate(d int64) string { return time.Unix(d*86400, 0).UTC().Format(time.DateOnly) }
