package main

import (
	"context"
	"errors"
	"fmt"
	"github.com/asrpt/asrpt/internal/atomicfile"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/mattn/go-isatty"

	"github.com/asrpt/asrpt/cluster"
	"github.com/asrpt/asrpt/job"
	"github.com/asrpt/asrpt/loop"
	"github.com/asrpt/asrpt/policy"
	"github.com/asrpt/asrpt/predictor"
	"github.com/asrpt/asrpt/preemptrule"
	"github.com/asrpt/asrpt/replay"
	"github.com/asrpt/asrpt/report"
	"github.com/asrpt/asrpt/sim"
	"github.com/asrpt/asrpt/trace"
)

func init() {
	register("replay", "replay a trace (or the built-in workload) through the policies against the lower bound", runReplay)
}

// defaultAgainst is the baseline of the paired comparison when it is
// replayed and --against does not name another: what a site runs today.
const defaultAgainst = "multifactor"

// defaultPolicies is the policy list of a replay without --policies.
var defaultPolicies = append(append([]string(nil), policy.Names...), "asrpt"+policy.OracleSuffix)

// replayGCPercent is the garbage collector's GOGC during a replay, unless
// the GOGC environment variable sets it: most of a large replay's live
// heap (the job table, the results) holds no pointers and costs the
// collector nothing to mark, so collecting at 50% growth instead of Go's
// 100% lowers the peak memory by about a sixth for 2–3% more CPU (1M
// jobs, make bench's trace).
const replayGCPercent = 50

// Built-in workload: a generated trace on a cluster small enough that jobs
// queue, replayed in seconds.
const (
	defaultNodes       = 32
	defaultGPUsPerNode = 8
	defaultJobs        = 5000
)

type replayFlags struct {
	tracePath, format string
	nodes, gpn        int
	slurmConf         string
	site              *siteOptions
	policies          string
	predictor         string
	seed              int64
	jobs              int
	load              float64
	jsonPath, csvPath string
	asJSON            bool
	plotDir           string
	params            policy.Params
	parallel          int
	retrainEvery      float64
	progress          string
	frozen            bool
	preemptible       preemptrule.Rule
	why               string
	against           string
	// Fairness: the accounts' shares file (sacctmgr show assoc -P), and
	// how many accounts, users and longest waits to show per policy.
	sharesPath                 string
	topAccounts, topUsers, top int
	// sidecar is the site's sidecar configuration (--sidecar-config).
	sidecar *loop.Site
}

func runReplay(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("replay", stderr)
	var f replayFlags
	f.params = policy.DefaultParams()
	fs.StringVar(&f.tracePath, "trace", "", "trace `file` to replay (default: a generated workload)")
	fs.StringVar(&f.format, "format", "native", "trace format: native, sacct or helios")
	fs.IntVar(&f.nodes, "nodes", defaultNodes, "number of nodes of the replayed cluster")
	fs.IntVar(&f.gpn, "gpus-per-node", defaultGPUsPerNode, "GPUs per node of the replayed cluster")
	fs.StringVar(&f.slurmConf, "slurm-conf", "", "take the cluster, and multifactor's priority settings, from Slurm's configuration `dir` (slurm.conf, gres.conf, topology.conf)")
	f.site = siteFlags(fs)
	fs.StringVar(&f.policies, "policies", strings.Join(defaultPolicies, ","), "comma-separated policies (any with -oracle for perfect predictions)")
	fs.StringVar(&f.predictor, "predictor", predictor.Default, "run-time predictor: oracle, limit, mean, mean-gpus, mean-gpus-running, forest or select")
	fs.Int64Var(&f.seed, "seed", 1, "seed of the generated workload and of the predictor")
	fs.IntVar(&f.jobs, "jobs", defaultJobs, "jobs in the generated workload (without --trace)")
	fs.Float64Var(&f.load, "load", trace.DefaultGenConfig().Load, "offered load of the generated workload, as a share of the cluster's GPUs")
	fs.StringVar(&f.jsonPath, "out", "", "write the results as JSON to `file` (all or nothing)")
	fs.BoolVar(&f.asJSON, "json", false, "print the results as JSON on stdout instead of the table")
	fs.StringVar(&f.csvPath, "csv", "", "write the results as CSV to `file`")
	fs.StringVar(&f.plotDir, "plots", "", "write jct-cdf.svg, queue.svg and, with a baseline (--against), jct-diff-cdf.svg into `dir`")
	fs.StringVar(&f.sharesPath, "shares", "", "the accounts' shares, from `file` (the output of sacctmgr show assoc -P; default: equal shares): the fairness report's targets and multifactor's fair share")
	fs.IntVar(&f.topAccounts, "top-accounts", 5, "accounts with the most GPU-hours listed per policy in the table (the JSON has all)")
	fs.IntVar(&f.topUsers, "top-users", 0, "users with the most GPU-hours listed per policy in the table (the JSON has all)")
	fs.IntVar(&f.top, "longest", 5, "longest-waiting jobs listed per policy, in the table and the JSON")
	readParams := policyFlags(fs, &f.params)
	preemptFlag(fs, &f.preemptible)
	fs.StringVar(&f.against, "against", "", "compare every policy job by job with `POLICY` (who would wait longer, by how much, whose jobs; replayed too when not in --policies); none: no comparison (default: multifactor, when it is among --policies)")
	fs.StringVar(&f.why, "why", "", "tell the story of job `ID` under each policy: when it waited and why (virtual_queue, no_room, blocked), its place in the waiting order, when it started")
	fs.BoolVar(&f.frozen, "frozen", false, "keep every prediction made at submit (no re-prediction of waiting jobs)")
	f.retrainEvery = predictor.DefaultConfig().RetrainEvery
	fs.Var(secondsFlag{p: &f.retrainEvery}, "retrain-every", "simulated time between two trainings of the online forest: seconds, or a duration (24h, 30d)")
	fs.IntVar(&f.parallel, "parallel", min(runtime.GOMAXPROCS(0), maxParallel), "policies replayed at once")
	fs.StringVar(&f.progress, "progress", "auto", "progress bar on stderr: auto (when a terminal), always or never")
	readSidecar := sidecarConfigFlag(fs)
	prof := addProfileFlags(fs)
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	var err error
	if f.sidecar, err = readSidecar(); err != nil {
		return err
	}
	if err := readParams(f.predictor); err != nil {
		return err
	}
	if err := f.validate(); err != nil {
		return err
	}
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(replayGCPercent)
	}
	stop, err := prof.start()
	if err != nil {
		return err
	}
	err = replayWorkload(ctx, f, stdout, stderr)
	return errors.Join(err, stop())
}

func (f *replayFlags) cluster() (*cluster.Cluster, error) {
	if f.slurmConf != "" {
		return loadSlurmCluster(f.slurmConf)
	}
	if f.nodes <= 0 || f.gpn <= 0 || f.gpn > cluster.MaxGPUsPerNode {
		return nil, fmt.Errorf("%w: --nodes %d --gpus-per-node %d: want nodes > 0 and 1..%d GPUs per node",
			errUsage, f.nodes, f.gpn, cluster.MaxGPUsPerNode)
	}
	return cluster.Uniform(f.nodes, f.gpn), nil
}

// workload returns the jobs to replay as a compact table: the trace,
// read as a stream, or the generated workload.
func (f *replayFlags) workload(ctx context.Context, c *cluster.Cluster, stderr io.Writer) (*job.Table, error) {
	if f.tracePath == "" {
		cfg := trace.DefaultGenConfig()
		cfg.Jobs, cfg.Seed, cfg.Load = f.jobs, f.seed, f.load
		// The generator wants whole nodes of equal size: on a mixed cluster,
		// size jobs by the largest node and round the total down to whole
		// nodes of that size.
		cfg.GPUsPerNode = c.MaxNodeGPUs()
		cfg.ClusterGPUs = max(cfg.GPUsPerNode, c.TotalGPUs()/cfg.GPUsPerNode*cfg.GPUsPerNode)
		jobs, err := trace.Generate(cfg)
		if err != nil {
			return nil, err
		}
		return job.TableOf(jobs)
	}
	format, err := trace.ParseFormat(f.format)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", errUsage, err)
	}
	jobs, stats, err := trace.ReadTableFile(ctx, f.tracePath, format, trace.Options{})
	if err != nil {
		return nil, err
	}
	if stats.Skipped() > 0 {
		fmt.Fprintf(stderr, "asrpt replay: %s: %s\n", f.tracePath, stats)
	}
	return jobs, nil
}

func replayWorkload(ctx context.Context, f replayFlags, stdout, stderr io.Writer) error {
	c, err := f.cluster()
	if err != nil {
		return err
	}
	names := splitList(f.policies)
	if len(names) == 0 {
		return fmt.Errorf("%w: --policies is empty", errUsage)
	}
	// The baseline of the paired comparison, replayed first.
	base := -1
	switch f.against {
	case "none":
	case "":
		base = slices.Index(names, defaultAgainst)
	default:
		if base = slices.Index(names, f.against); base < 0 {
			names = append(names, f.against)
			base = len(names) - 1
		}
	}
	env := policy.NewEnv(c, f.params)
	if env.Site, err = f.site.site(f.slurmConf); err != nil {
		return err
	}
	for _, n := range names {
		if err := policy.Validate(n, env); err != nil {
			return fmt.Errorf("%w: %w", errUsage, err)
		}
	}
	if _, err := newPredictor(f.predictor, f.seed, f.retrainEvery); err != nil {
		return fmt.Errorf("%w: %w", errUsage, err)
	}
	var shares map[string]float64
	if f.sharesPath != "" {
		if shares, err = report.ReadSharesFile(f.sharesPath); err != nil {
			return fmt.Errorf("--shares: %w", err)
		}
		// The multifactor model's fair share: the same accounts' shares,
		// equal shares among each account's users.
		env.Site.Shares.Accounts = shares
	}
	jobs, err := f.workload(ctx, c, stderr)
	if err != nil {
		return err
	}
	w, err := sim.Prepare(jobs, env)
	if err != nil {
		return err
	}
	if w.Jobs.Len() == 0 {
		return fmt.Errorf("no job fits the cluster (%d jobs, %d larger than its %d GPUs)", w.Excluded, w.Excluded, env.G)
	}
	lb := w.LowerBound()
	rep := report.New(w.Jobs.Len(), w.Excluded, env.G, lb)
	rep.Workload = f.describe(c)
	rep.SharesFile, rep.TableAccounts, rep.TableUsers = f.sharesPath, f.topAccounts, f.topUsers
	rep.WhyJob = f.why
	if shares != nil && !hasShare(w.Jobs, shares) {
		fmt.Fprintf(stderr, "asrpt replay: --shares %s: no account of the workload has a share there; every target share is 0\n", f.sharesPath)
	}
	if w.Excluded > 0 {
		fmt.Fprintf(stderr, "asrpt replay: %d jobs larger than the cluster's %d GPUs excluded\n", w.Excluded, env.G)
	}

	optIn := f.preemptible.Selector(w.Jobs)
	bar := newProgress(stderr, f.progress, len(names))
	keep := f.plotDir != ""
	specs := make([]replay.Spec, len(names))
	for i, name := range names {
		specs[i] = replay.Spec{Workload: w, LowerBound: lb.Total, Policy: name, Seed: f.seed,
			Preemptible: optIn, Progress: bar.update(i, name)}
	}
	cfg := replay.Config{
		NewPredictor: func(seed int64) (predictor.Predictor, error) { return newPredictor(f.predictor, seed, f.retrainEvery) },
		Frozen:       f.frozen, Why: f.why, Parallel: max(1, f.parallel), Keep: keep, Shares: shares, Longest: f.top,
		Sidecar: f.sidecar}
	outcomes, err := replayAgainst(ctx, specs, base, cfg)
	bar.done()
	if err != nil {
		return err
	}
	rep.Against = names[max(base, 0)]
	if base < 0 {
		rep.Against = ""
	}
	summaries := make([]report.Summary, len(outcomes))
	results := make([]*sim.Result, len(outcomes))
	for i := range outcomes {
		summaries[i], results[i] = outcomes[i].Summary, outcomes[i].Result
	}
	rep.Policies = summaries
	show := rep.WriteTable
	if f.asJSON {
		show = rep.WriteJSON
	}
	if err := show(stdout); err != nil {
		return err
	}
	// The output files are written all or nothing: a failure in any of
	// them leaves none of them, and every path as it was.
	var out atomicfile.Set
	if f.jsonPath != "" {
		if err := out.Add(f.jsonPath, rep.WriteJSON); err != nil {
			return err
		}
	}
	if f.csvPath != "" {
		if err := out.Add(f.csvPath, rep.WriteCSV); err != nil {
			return err
		}
	}
	if keep {
		if err := os.MkdirAll(f.plotDir, 0o755); err != nil {
			out.Abort()
			return fmt.Errorf("plots: %w", err)
		}
		for _, p := range []struct {
			name   string
			writer func(string, []*sim.Result) (func(io.Writer) error, error)
		}{{"jct-cdf.svg", report.JCTCDFWriter}, {"queue.svg", report.QueueWriter}, {"jct-diff-cdf.svg", pairedWriter(base, results)}} {
			if p.writer == nil {
				continue
			}
			path := filepath.Join(f.plotDir, p.name)
			w, err := p.writer(path, results)
			if err == nil {
				err = out.Add(path, w)
			}
			if err != nil {
				out.Abort()
				return err
			}
		}
	}
	return out.Commit()
}

// replayAgainst runs specs; with base ≥ 0, specs[base] first, kept, and
// every other replay compared with it job by job (replay.Config.Against).
// Outcomes are in the order of specs; a result is kept only with cfg.Keep.
func replayAgainst(ctx context.Context, specs []replay.Spec, base int, cfg replay.Config) ([]replay.Outcome, error) {
	if base < 0 {
		return replay.Run(ctx, specs, cfg)
	}
	first := cfg
	first.Keep = true
	b, err := replay.Run(ctx, specs[base:base+1], first)
	if err != nil {
		return nil, err
	}
	cfg.Against, cfg.AgainstFairness = b[0].Result, b[0].Summary.FairnessReport
	rest := slices.Delete(slices.Clone(specs), base, base+1)
	out, err := replay.Run(ctx, rest, cfg)
	if err != nil {
		return nil, err
	}
	if !cfg.Keep {
		b[0].Result = nil
	}
	return slices.Insert(out, base, b[0]), nil
}

// pairedWriter returns the writer of the paired comparison's plot against
// results[base]; nil without a baseline.
func pairedWriter(base int, results []*sim.Result) func(string, []*sim.Result) (func(io.Writer) error, error) {
	if base < 0 || base >= len(results) || results[base] == nil {
		return nil
	}
	return func(path string, rs []*sim.Result) (func(io.Writer) error, error) {
		return report.PairedCDFWriter(path, rs, results[base])
	}
}

// hasShare reports whether an account of jobs has a share above 0.
func hasShare(jobs *job.Table, shares map[string]float64) bool {
	for i := range jobs.Len() {
		if shares[jobs.Account(i)] > 0 {
			return true
		}
	}
	return false
}

// newPredictor returns a fresh predictor by name, seeded; the online forest
// retrains every retrainEvery simulated seconds.
func newPredictor(name string, seed int64, retrainEvery float64) (predictor.Predictor, error) {
	cfg := predictor.DefaultConfig()
	cfg.Train.Forest.Seed = uint64(seed)
	cfg.RetrainEvery = retrainEvery
	return predictor.ByName(name, cfg)
}

func splitList(s string) []string {
	var out []string
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}

// progress draws one status line on a terminal; it is silent otherwise.
type progress struct {
	mu    sync.Mutex
	w     io.Writer
	on    bool
	state []string
	last  time.Time
}

func newProgress(w io.Writer, mode string, n int) *progress {
	on := mode == "always"
	if mode == "auto" {
		if f, ok := w.(*os.File); ok && isatty.IsTerminal(f.Fd()) {
			on = true
		}
	}
	return &progress{w: w, on: on, state: make([]string, n)}
}

func (p *progress) update(i int, name string) func(done, total int) {
	if !p.on {
		return nil
	}
	return func(done, total int) {
		p.mu.Lock()
		defer p.mu.Unlock()
		p.state[i] = fmt.Sprintf("%s %3d%%", name, done*100/total)
		if time.Since(p.last) < 100*time.Millisecond && done < total {
			return
		}
		p.last = time.Now()
		var parts []string
		for _, s := range p.state {
			if s != "" && !strings.HasSuffix(s, "100%") {
				parts = append(parts, s)
			}
		}
		fmt.Fprintf(p.w, "\r\033[K%s", strings.Join(parts, "  "))
	}
}

func (p *progress) done() {
	if p.on {
		fmt.Fprint(p.w, "\r\033[K")
	}
}

// describe says what the replay runs on, for the report's first line.
func (f *replayFlags) describe(c *cluster.Cluster) string {
	if f.tracePath != "" {
		return fmt.Sprintf("trace %s (format %s) on %d nodes, %d GPUs", f.tracePath, f.format, len(c.Nodes), c.TotalGPUs())
	}
	return fmt.Sprintf("built-in generator: %d jobs, seed %d, load %g, on %d nodes, %d GPUs",
		f.jobs, f.seed, f.load, len(c.Nodes), c.TotalGPUs())
}
