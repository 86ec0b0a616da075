package sidecar

import (
	"net/http"
	"sync/atomic"
	"time"

	"github.com/asrpt/asrpt/internal/buildinfo"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// metrics are the sidecar's Prometheus metrics, on a registry of its own.
type metrics struct {
	reg      *prometheus.Registry
	cycle    prometheus.Histogram
	cycles   *prometheus.CounterVec
	jobs     *prometheus.GaugeVec
	writes   *prometheus.CounterVec
	requests *prometheus.CounterVec
	retries  *prometheus.CounterVec
	// appliedDespite counts writes Slurm answered with an error but
	// applied (22.05 on an array's pending tasks).
	appliedDespite *prometheus.CounterVec
	failures       *prometheus.CounterVec
	deferred       prometheus.Counter
	errors         *prometheus.CounterVec
	predRatio      prometheus.Histogram
	predAbs        prometheus.Histogram
	virtual        prometheus.Gauge
	released       prometheus.Gauge
	lastSuccess    prometheus.Gauge
	replaced       prometheus.Counter
	stateErrors    prometheus.Counter
	deadlines      prometheus.Counter
	// suspectLists counts job lists taken for suspect (absence.go);
	// writesHeld counts cycles whose writes were held back because the
	// state could not be saved first.
	suspectLists prometheus.Counter
	writesHeld   prometheus.Counter
	// skippedRecords counts job records the client could not use.
	skippedRecords prometheus.Counter
	// profileProblems counts job profiles refused (a bad comment word, a
	// GPU count the model does not accept), by kind.
	profileProblems *prometheus.CounterVec
	// profiles counts the jobs that entered the policy, by the source of
	// their profile (comment, rule, default).
	profiles *prometheus.CounterVec
	// placementErrors counts placements that failed for another reason
	// than a lack of free GPUs.
	placementErrors prometheus.Counter
	// reloads counts configuration reloads by outcome (ok, refused).
	reloads *prometheus.CounterVec
	// slurmUp is 1 while slurmrestd answers the cycle's reads.
	slurmUp prometheus.Gauge
	// tokenExpiry is the token's exp claim, Unix seconds.
	tokenExpiry prometheus.Gauge
	// handsOff counts jobs whose priority an admin set.
	handsOff prometheus.Gauge
	// writeMode is 1 for the write mode in use (factor, priority);
	// fallback is 1 when priority mode stands in for factor mode.
	writeMode *prometheus.GaugeVec
	fallback  prometheus.Gauge
	// preemptions counts preemptions by outcome; signals the stop
	// signals sent.
	preemptions *prometheus.CounterVec
	signals     prometheus.Counter
	// own lists the asrpt_* collectors above.
	own []prometheus.Collector
}

func newMetrics() *metrics {
	m := &metrics{
		reg: prometheus.NewRegistry(),
		cycle: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name: "asrpt_cycle_duration_seconds", Help: "Duration of one sidecar cycle (read, decision.Decide, write).",
			Buckets: prometheus.ExponentialBuckets(0.005, 2, 14)}),
		cycles: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "asrpt_cycles_total", Help: "Cycles run, by outcome (ok, error)."}, []string{"outcome"}),
		jobs: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "asrpt_jobs", Help: "Jobs seen in the last cycle, by state."}, []string{"state"}),
		writes: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "asrpt_writes_total", Help: "Successful job updates, by kind (priority, site_factor, nodes, hold, release)."}, []string{"kind"}),
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "asrpt_write_requests_total", Help: "Job updates sent to Slurm (successful, failed and retried), by kind."}, []string{"kind"}),
		retries: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "asrpt_write_retries_total", Help: "Job updates sent again after the last one of the same kind to the same job failed, by kind."}, []string{"kind"}),
		appliedDespite: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "asrpt_writes_applied_despite_error_total", Help: "Job updates Slurm answered with an error but applied (re-read shows the value), by kind; counted in asrpt_writes_total too."}, []string{"kind"}),
		failures: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "asrpt_write_failures_total", Help: "Failed job updates, by kind and reason."}, []string{"kind", "reason"}),
		deferred: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "asrpt_writes_deferred_total", Help: "Job updates postponed to a later cycle by the per-cycle write limit."}),
		errors: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "asrpt_read_errors_total", Help: "Failed reads from Slurm, by operation and reason."}, []string{"op", "reason"}),
		predRatio: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name: "asrpt_prediction_ratio", Help: "Predicted over actual run time of finished managed jobs.",
			Buckets: []float64{0.125, 0.25, 0.5, 0.8, 1.25, 2, 4, 8}}),
		predAbs: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name: "asrpt_prediction_abs_error_seconds", Help: "Absolute prediction error of finished managed jobs, seconds.",
			Buckets: prometheus.ExponentialBuckets(10, 3, 10)}),
		virtual: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "asrpt_virtual_queue_length", Help: "Jobs on A-SRPT's virtual machine (not yet released)."}),
		released: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "asrpt_release_queue_length", Help: "Managed jobs whose turn has come (released or dispatched) and that still wait."}),
		lastSuccess: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "asrpt_last_success_timestamp_seconds", Help: "Unix time of the last cycle that completed."}),
		replaced: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "asrpt_replacements_total", Help: "Dispatched jobs given new nodes because Slurm had not started them on the old ones."}),
		deadlines: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "asrpt_cycle_deadline_total", Help: "Cycles whose writes were ended by the cycle deadline (twice the interval, at least a minute); the rest went out in later cycles."}),
		profileProblems: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "asrpt_profile_problems_total", Help: "Job profiles refused (the job then has the next source's), by kind: comment (a bad asrpt: word or an unknown model), gpus (a GPU count the model does not accept)."}, []string{"kind"}),
		profiles: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "asrpt_profiles_total", Help: "Jobs that entered the policy, by the source of their communication profile (comment, rule, default)."}, []string{"source"}),
		placementErrors: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "asrpt_placement_errors_total", Help: "Placements that failed for another reason than a lack of free GPUs (the cluster model and Slurm disagree, or a bug); the job waits unplaced."}),
		reloads: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "asrpt_config_reloads_total", Help: "Configuration reloads (SIGHUP), by outcome: ok, refused (the file had problems; the running configuration was kept)."}, []string{"outcome"}),
		slurmUp: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "asrpt_slurmrestd_up", Help: "1 when the last cycle read the nodes and jobs from slurmrestd, 0 when it could not."}),
		tokenExpiry: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "asrpt_token_expiry_timestamp_seconds", Help: "Expiry (exp claim) of the JWT in slurm.token_file, Unix seconds; absent for tokens without one."}),
		handsOff: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "asrpt_hands_off_jobs", Help: "Jobs asrpt leaves alone for good because someone else set their priority."}),
		writeMode: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "asrpt_write_mode", Help: "1 for the write mode in use: factor (site factors) or priority (absolute priorities)."}, []string{"mode"}),
		fallback: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "asrpt_write_mode_fallback", Help: "1 when the sidecar writes priorities because factor mode was asked of a REST API that cannot write site factors (sidecar.priority_fallback)."}),
		suspectLists: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "asrpt_suspect_job_lists_total", Help: "Job lists that showed fewer than half of the tracked jobs (a restarting slurmctld can answer an empty list): the cycle changed nothing and wrote nothing."}),
		skippedRecords: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "asrpt_job_records_skipped_total", Help: "Job records of a job list skipped because a field could not be used (out of range, malformed); the rest of the list was used and the job got no writes."}),
		writesHeld: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "asrpt_writes_held_total", Help: "Cycles that sent no writes to Slurm because the state file, which records every value before it is written, could not be saved."}),
		preemptions: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "asrpt_preemptions_total", Help: "Preemptions of jobs that opted in, by outcome: requeued (the job requeued itself), finished (it ended within its grace), ignored (still running after its grace), failed (the signal was not sent)."}, []string{"outcome"}),
		signals: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "asrpt_preemption_signals_total", Help: "Stop signals sent to running jobs that opted in to preemption (policy asrpt-preempt)."}),
		stateErrors: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "asrpt_state_errors_total", Help: "State file problems (unreadable or corrupt file, failed save)."}),
	}
	bi := buildinfo.Get()
	build := prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "asrpt_build_info", Help: "The running build: 1, labelled by version, VCS revision and Go release."},
		[]string{"version", "revision", "go_version"})
	build.WithLabelValues(bi.Version, bi.Revision, bi.GoVersion).Set(1)
	m.own = []prometheus.Collector{build, m.cycle, m.cycles, m.jobs, m.writes, m.requests, m.retries, m.appliedDespite,
		m.failures, m.deferred, m.errors, m.predRatio, m.predAbs, m.virtual, m.released, m.lastSuccess, m.replaced,
		m.stateErrors, m.deadlines, m.suspectLists, m.writesHeld, m.skippedRecords, m.profileProblems, m.profiles, m.placementErrors, m.reloads, m.slurmUp,
		m.tokenExpiry, m.handsOff, m.writeMode, m.fallback, m.preemptions, m.signals}
	m.reg.MustRegister(m.own...)
	m.reg.MustRegister(prometheus.NewGoCollector(), prometheus.NewProcessCollector(prometheus.ProcessCollectorOpts{}))
	return m
}

// setWriteMode exports the write mode in use.
func (m *metrics) setWriteMode(mode WriteMode, fallback bool) {
	for _, w := range []WriteMode{WriteFactor, WritePriority} {
		v := 0.0
		if w == mode {
			v = 1
		}
		m.writeMode.WithLabelValues(string(w)).Set(v)
	}
	m.fallback.Set(0)
	if fallback {
		m.fallback.Set(1)
	}
}

// Registry returns the registry holding the sidecar's metrics.
func (s *Sidecar) Registry() *prometheus.Registry { return s.m.reg }

// Handler serves /metrics, /status and /healthz. /healthz answers 200
// while the last successful cycle is at most three intervals old (or the
// first cycle has not had time to run) and the state file was saved, 503
// with the reason otherwise.
func (s *Sidecar) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.Handle("/metrics", promhttp.HandlerFor(s.m.reg, promhttp.HandlerOpts{}))
	mux.HandleFunc("/status", s.serveStatus)
	mux.HandleFunc("/plan", s.servePlan)
	mux.HandleFunc("/healthz", func(w http.ResponseWriter, _ *http.Request) {
		last := time.Unix(0, s.lastOK.Load())
		if s.lastOK.Load() == 0 {
			last = time.Unix(0, s.started.Load())
		}
		if time.Since(last) > 3*s.interval() {
			http.Error(w, "no successful cycle since "+last.UTC().Format(time.RFC3339), http.StatusServiceUnavailable)
			return
		}
		if why, _ := s.stateBroken.Load().(string); why != "" {
			// The sidecar runs, but a restart would lose what it knows.
			http.Error(w, "the state file cannot be saved: "+why, http.StatusServiceUnavailable)
			return
		}
		_, _ = w.Write([]byte("ok\n"))
	})
	return mux
}

// health is the part of the sidecar's state read by /healthz from another
// goroutine.
type health struct {
	lastOK  atomic.Int64 // Unix nanoseconds of the last successful cycle
	started atomic.Int64 // Unix nanoseconds of New
	// loop is the Unix nanoseconds at which Run's loop last went round
	// (a cycle ended, or a reload was applied).
	loop atomic.Int64
	// intervalNs is cfg.Interval, readable from other goroutines (a
	// reload changes it).
	intervalNs atomic.Int64
	// stateBroken is why the state file could not be saved by the last
	// cycle that tried ("" when it was saved).
	stateBroken atomic.Value
}

// interval is the cycle interval, safe from any goroutine.
func (h *health) interval() time.Duration { return time.Duration(h.intervalNs.Load()) }

// Alive reports whether Run's loop went round recently enough at now: a
// cycle may take its deadline, then waits an interval; a loop silent for
// longer than both and a minute more is stuck. Safe from any goroutine
// (the systemd watchdog keep-alive asks it).
func (s *Sidecar) Alive(now time.Time) bool {
	last := s.loop.Load()
	if last == 0 {
		last = s.started.Load()
	}
	iv := s.interval()
	return now.Sub(time.Unix(0, last)) <= max(2*iv, time.Minute)+iv+time.Minute
}
