package sidecar

import (
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/rs/zerolog"

	"github.com/asrpt/asrpt/cluster"
	"github.com/asrpt/asrpt/decision"
	"github.com/asrpt/asrpt/internal/ownedpath"
	"github.com/asrpt/asrpt/predictor"
)

// Sidecar drives Slurm with a policy: every cycle it reads the queue,
// brings the policy up to date, and writes priorities and node lists.
// RunOnce and Run must not be called concurrently; Handler may be served
// from other goroutines.
type Sidecar struct {
	cfg   Config
	slurm Slurm
	log   zerolog.Logger
	m     *metrics
	health

	// state is the decide step's state (package decision).
	state *decision.State
	// headless: nothing reads /status and /plan (Options.Headless).
	headless bool

	acctFrom time.Time                // start of the next accounting query
	active   map[string]*openIncident // open incidents by key
	seen     map[string]bool
	// sent are the cycle's writes, until account counts and logs them.
	sent []sent

	// givenBack is set once the sidecar handed its jobs back: no stop
	// signal goes out after that.
	givenBack atomic.Bool
	// reloads delivers new configurations to Run (nil: none).
	reloads <-chan Reload
	// status is the last published Status (/status).
	status atomic.Pointer[Status]
	// lastPlan is the last successful cycle's plan (/plan).
	lastPlan atomic.Pointer[ServedPlan]
}

// Options are the sidecar's collaborators.
type Options struct {
	// Cluster is the cluster model (slurmconf.LoadCluster).
	Cluster *cluster.Cluster
	// Slurm is the REST client or a fake.
	Slurm Slurm
	// Predictor predicts run times; nil builds cfg.Predictor.
	Predictor predictor.Predictor
	// Log receives the sidecar's log lines.
	Log zerolog.Logger
	// Reload, when not nil, delivers configurations read again (SIGHUP in
	// asrpt sidecar), which Run applies between cycles.
	Reload <-chan Reload
	// SlurmVersion names the Slurm behind Slurm in messages, e.g. "Slurm
	// 22.05.8, REST API v0.0.38" (optional).
	SlurmVersion string
	// PartitionTiers maps each partition to its PriorityTier (slurm.conf):
	// a node list never points a job at nodes that pending jobs of a
	// partition of a higher tier wait for, since Slurm starts those first
	// whatever the priorities. Nil: tiers unknown, not checked.
	PartitionTiers map[string]int
	// Headless says that nothing reads the status or the plan a cycle
	// publishes for /status and /plan (the closed-loop replay): cycles
	// then build neither, nor the gauges that go with the status
	// (asrpt_slurmrestd_up, the hands-off count, the token's expiry).
	// RunOnce's report is the same.
	Headless bool
}

// ErrNoSiteFactor is New's refusal to run in factor mode on a REST API
// that cannot write a job's site factor, without priority_fallback.
var ErrNoSiteFactor = errors.New("the REST API cannot write a job's site factor")

// writeMode returns the write mode to run in: cfg's, or priority mode when
// factor mode is asked of a Slurm that cannot write site factors and
// cfg.PriorityFallback allows it (fallback true); otherwise an error
// naming the release and the settings that would do.
func writeMode(cfg Config, c Slurm, version string) (mode WriteMode, fallback bool, err error) {
	if cfg.WriteMode != WriteFactor || c.SupportsSiteFactor() {
		return cfg.WriteMode, false, nil
	}
	if cfg.PriorityFallback {
		return WritePriority, true, nil
	}
	if version == "" {
		version = "this slurmrestd"
	}
	return "", false, fmt.Errorf("sidecar.write_mode = \"factor\": %s: %w (Slurm 22.05–23.11 have none; 24.11 and later do): "+
		"set sidecar.priority_fallback = true to write priorities instead, or sidecar.write_mode = \"priority\"", version, ErrNoSiteFactor)
}

// Reload is a configuration file read again: Config when it loaded
// without problems, else Err (the problems), and the running
// configuration stays.
type Reload struct {
	Path   string
	Config Config
	Err    error
}

// New returns a sidecar for cfg. It loads the state file (a missing file
// is an empty state; an unreadable or corrupt one is logged, counted,
// moved aside and rebuilt from Slurm, never fatal).
func New(cfg Config, o Options) (*Sidecar, error) {
	if o.Cluster == nil || o.Slurm == nil {
		return nil, errors.New("sidecar: cluster and Slurm client are required")
	}
	if err := o.Cluster.Validate(); err != nil {
		return nil, fmt.Errorf("sidecar: cluster model: %w", err)
	}
	mode, fallback, err := writeMode(cfg, o.Slurm, o.SlurmVersion)
	if err != nil {
		return nil, fmt.Errorf("sidecar: %w", err)
	}
	pred := o.Predictor
	if pred == nil {
		if pred, err = predictor.ByName(cfg.Predictor, cfg.PredictorConfig()); err != nil {
			return nil, fmt.Errorf("sidecar: %w", err)
		}
	}
	s := &Sidecar{
		cfg: cfg, slurm: o.Slurm, log: o.Log, m: newMetrics(),
		active: map[string]*openIncident{}, seen: map[string]bool{}, reloads: o.Reload, headless: o.Headless,
	}
	if s.state, err = decision.NewState(cfg.Settings(), o.Cluster, pred, mode, o.PartitionTiers, o.Slurm.SupportsDelivery, &s.givenBack); err != nil {
		return nil, fmt.Errorf("sidecar: %w", err)
	}
	s.m.setWriteMode(mode, fallback)
	if fallback {
		s.log.Warn().Str("slurm", o.SlurmVersion).Str("write_mode", string(mode)).
			Msg("the REST API cannot write site factors; writing priorities instead (sidecar.priority_fallback)")
	}
	s.intervalNs.Store(int64(cfg.Interval))
	s.started.Store(time.Now().UnixNano())
	if cfg.StateFile != "" {
		st, err := readState(cfg.StateFile)
		switch {
		case err == nil:
			if err := s.state.Restore(st); err != nil {
				s.stateProblem(err)
			}
			s.record(s.state.TakeEvents())
		case errors.Is(err, errNoState):
		case errors.Is(err, ownedpath.ErrUntrusted):
			// Another user could have written it: neither used nor moved.
			return nil, err
		default:
			s.stateProblem(err)
		}
	}
	return s, nil
}

// stateProblem reports an unusable state file, moves it aside (unless in a
// dry run) and starts from an empty state.
func (s *Sidecar) stateProblem(err error) {
	s.m.stateErrors.Inc()
	ev := s.log.Error().Err(err).Str("file", s.cfg.StateFile)
	if !s.cfg.DryRun {
		if moved, merr := moveAside(s.cfg.StateFile); merr == nil {
			ev = ev.Str("moved_to", moved)
		}
	}
	ev.Msg("state file unusable; rebuilding the state from Slurm")
	s.state.Reset()
}
