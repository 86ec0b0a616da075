package sidecar

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/BurntSushi/toml"

	"github.com/asrpt/asrpt/decision"
	"github.com/asrpt/asrpt/internal/tomlbound"
	"github.com/asrpt/asrpt/jobprofile"
	"github.com/asrpt/asrpt/multifactor"
	"github.com/asrpt/asrpt/placement"
	"github.com/asrpt/asrpt/policy"
	"github.com/asrpt/asrpt/predictor"
	"github.com/asrpt/asrpt/slurmclient"
)

// Config is the sidecar's configuration, read from a TOML file by
// LoadConfig; contrib/asrpt.toml documents every key and its default.
type Config struct {
	// Slurm says how to reach slurmrestd and where Slurm's configuration
	// lives.
	Slurm SlurmConfig
	// Interval is the time between two cycles (default 30 s).
	Interval time.Duration
	// StateFile is where the sidecar keeps its state between runs.
	StateFile string
	// DryRun computes and logs the plan every cycle and writes nothing to
	// Slurm (nor the state file).
	DryRun bool
	// GivebackOnShutdown hands every managed job back to Slurm when the
	// sidecar stops.
	GivebackOnShutdown bool
	// WriteLimit bounds the job updates sent in one cycle (default 200).
	WriteLimit int
	// DispatchGrace is how long a job whose turn has come may stay pending
	// on the nodes chosen for it before they are chosen again (default
	// 2 min).
	DispatchGrace time.Duration
	// WriteMode is how the policy's order reaches Slurm (default
	// WriteFactor): as each managed job's site factor, which
	// priority/multifactor adds to the priority it computes, or as an
	// absolute priority (WritePriority), which takes the job out of
	// multifactor.
	WriteMode WriteMode
	// SiteFactorMax is the site factor of the head of the order in
	// factor mode, in Slurm priority units (default
	// multifactor.DefaultSiteFactorMax); the last job gets 0.
	SiteFactorMax uint32
	// PriorityFallback, in factor mode, writes priorities instead when the
	// connected release's REST API cannot write a site factor (22.05's
	// v0.0.38); false (the default) refuses to start there.
	PriorityFallback bool
	// RequiredNodes enables writing the Heavy-Edge node list (default true);
	// GPUsPerNode enables writing a per-node GPU count for --gpus=N jobs
	// spread evenly over several nodes (default false).
	RequiredNodes, GPUsPerNode bool
	// Policy is the policy name (asrpt, asrpt-preempt, asrpt-paper, or a
	// non-preemptive baseline) and Params its tunables.
	Policy string
	Params policy.Params
	// Predictor is the predictor name (forest, mean, mean-gpus,
	// mean-gpus-running, limit); Retrain the
	// forest's retraining interval; History how much accounting history is
	// read at start-up to warm it.
	Predictor string
	Retrain   time.Duration
	History   time.Duration
	// Scope limits the jobs asrpt manages.
	Scope Scope
	// MetricsListen is the address of /metrics and /healthz
	// (default 127.0.0.1:9870); empty disables the server.
	MetricsListen string
	// LogLevel is debug, info, warn or error; LogFormat json, console or
	// auto (console on a terminal).
	LogLevel, LogFormat string
	// Profiles decides the communication profile of each job Heavy-Edge
	// places.
	Profiles ProfilesConfig
	// Preemption is the [[preemption.rule]] list: the jobs a site opts in
	// to preemption (with policy.name = "asrpt-preempt").
	Preemption PreemptionConfig
}

// WriteMode is how the sidecar writes the order (decision.WriteMode).
type WriteMode = decision.WriteMode

// The write modes: see decision.WriteFactor and decision.WritePriority.
const (
	WriteFactor   = decision.WriteFactor
	WritePriority = decision.WritePriority
)

// Scope lists the partitions, QOS and accounts whose jobs asrpt manages
// (decision.Scope).
type Scope = decision.Scope

// PreemptionConfig is the [[preemption.rule]] list (decision.PreemptionConfig).
type PreemptionConfig = decision.PreemptionConfig

// PreemptRule is one [[preemption.rule]] (decision.PreemptRule).
type PreemptRule = decision.PreemptRule

// Settings returns what the decide step reads of the configuration.
func (c *Config) Settings() decision.Settings {
	return decision.Settings{
		Policy: c.Policy, Params: c.Params, Scope: c.Scope, Interval: c.Interval, DispatchGrace: c.DispatchGrace,
		SiteFactorMax: c.SiteFactorMax, RequiredNodes: c.RequiredNodes, GPUsPerNode: c.GPUsPerNode,
		Profiles: c.Profiles.Resolver(), Preemption: c.Preemption,
	}
}

// ProfilesConfig is the [profiles] table and its [[profiles.rule]] list:
// a job named no profile in its comment gets the first rule's it matches,
// else the data-parallel default (see package jobprofile).
type ProfilesConfig struct {
	// GradientBytes is the default data-parallel profile's gradient size,
	// bytes (default placement.DefaultGradientBytes, ResNet-50's).
	GradientBytes float64
	// Rules match job-name families (normalised as the predictor does) and
	// accounts to catalogue models, first match first.
	Rules []jobprofile.Rule
}

// maxProfileRules bounds [[profiles.rule]] entries.
const maxProfileRules = 1000

// Resolver returns the profile resolver the configuration describes.
func (p *ProfilesConfig) Resolver() *jobprofile.Resolver {
	return &jobprofile.Resolver{Rules: p.Rules, GradientBytes: p.GradientBytes}
}

// SlurmConfig is the [slurm] table.
type SlurmConfig struct {
	// URL is http(s)://host:port or unix:///path/to/slurmrestd.sock.
	URL string
	// TokenFile holds the JWT (re-read when it changes); required for
	// http(s), unused for unix://.
	TokenFile string
	// User is sent as X-SLURM-USER-NAME (default: the token's user).
	User string
	// CAFile verifies an https server (default: system roots).
	CAFile string
	// API forces a REST API version (default: probe).
	API string
	// Timeout bounds one request (default 30 s).
	Timeout time.Duration
	// ConfDir holds slurm.conf, gres.conf and topology.conf, from which
	// the cluster model is built (default /etc/slurm).
	ConfDir string
}

// DefaultConfig returns the defaults documented in contrib/asrpt.toml.
func DefaultConfig() Config {
	return Config{
		Slurm:         SlurmConfig{Timeout: 30 * time.Second, ConfDir: "/etc/slurm"},
		Interval:      30 * time.Second,
		StateFile:     "/var/lib/asrpt/state.json",
		WriteLimit:    200,
		DispatchGrace: 2 * time.Minute,
		WriteMode:     WriteFactor,
		SiteFactorMax: multifactor.DefaultSiteFactorMax,
		RequiredNodes: true,
		Policy:        "asrpt",
		Params:        factorParams(),
		Predictor:     predictor.Default,
		Retrain:       24 * time.Hour,
		History:       30 * 24 * time.Hour,
		MetricsListen: "127.0.0.1:9870",
		LogLevel:      "info",
		LogFormat:     "auto",
		Profiles:      ProfilesConfig{GradientBytes: placement.DefaultGradientBytes},
	}
}

// factorParams are the policy defaults of the factor mode: DefaultParams
// with the factor mode's wait bound (policy.DefaultFactorWaitScale) and
// cap on the front (policy.DefaultFactorOverdueShare) and its account
// guard (policy.DefaultFactorAccountGuard). A file that sets write_mode =
// "priority" and no wait_scale, overdue_share or account_guard gets none
// of them.
func factorParams() policy.Params {
	p := policy.DefaultParams()
	p.WaitScale = policy.DefaultFactorWaitScale
	p.OverdueShare = policy.DefaultFactorOverdueShare
	p.AccountGuard = policy.DefaultFactorAccountGuard
	p.Rank = policy.RankFor(predictor.Default)
	return p
}

// Problem is one thing wrong with a configuration file.
type Problem struct {
	File string
	// Line is 1-based; 0 when the problem has no line (a missing key).
	Line int
	// Key is the dotted key, e.g. "sidecar.interval"; empty for syntax.
	Key string
	Msg string
}

func (p Problem) Error() string {
	loc := p.File
	if p.Line > 0 {
		loc = fmt.Sprintf("%s:%d", p.File, p.Line)
	}
	if p.Key == "" {
		return loc + ": " + p.Msg
	}
	return loc + ": " + p.Key + ": " + p.Msg
}

// Problems is every problem found in one file, in line order; it is the
// error LoadConfig returns.
type Problems []Problem

func (ps Problems) Error() string {
	s := make([]string, len(ps))
	for i, p := range ps {
		s[i] = p.Error()
	}
	return strings.Join(s, "\n")
}

// field is one key the file may set.
type field struct {
	key string // "section.key"
	set func(v any) error
}

// LoadConfig reads and validates the TOML file at path. Unknown keys,
// wrong types and invalid values are all reported, each with its line, in
// one Problems error. Files named by the configuration (token, CA, Slurm
// configuration directory) are checked by CheckFiles, not here.
func LoadConfig(path string) (Config, error) {
	data, err := tomlbound.ReadFile(path)
	if err != nil {
		return Config{}, fmt.Errorf("config: %w", err)
	}
	return ParseConfig(data, path)
}

// ParseConfig is LoadConfig on data, with name used in problems.
func ParseConfig(data []byte, name string) (Config, error) {
	return parseConfig(data, name, "")
}

// ParseConfigIn is ParseConfig in write mode mode whatever the file's
// sidecar.write_mode says, with that mode's defaults for what the file
// does not set (policy.wait_scale, overdue_share, account_guard): one
// site's file as the closed-loop replay runs it in either mode.
func ParseConfigIn(data []byte, name string, mode WriteMode) (Config, error) {
	return parseConfig(data, name, mode)
}

// parseConfig is ParseConfig with the write mode forced to mode ("": the
// file's).
func parseConfig(data []byte, name string, mode WriteMode) (Config, error) {
	c := DefaultConfig()
	// Bounded before decoding: nesting makes the decoder quadratic.
	if line, err := tomlbound.Check(data); err != nil {
		return c, Problems{{File: name, Line: line, Msg: err.Error()}}
	}
	var raw map[string]any
	if _, err := toml.Decode(string(data), &raw); err != nil {
		var pe toml.ParseError
		if errors.As(err, &pe) {
			return c, Problems{{File: name, Line: pe.Position.Line, Msg: pe.Message}}
		}
		return c, Problems{{File: name, Msg: err.Error()}}
	}
	lines := keyLines(data)
	var ps Problems
	add := func(key, format string, args ...any) {
		ps = append(ps, Problem{File: name, Line: lines[key], Key: key, Msg: fmt.Sprintf(format, args...)})
	}
	unseen, rank := c.Params.Unseen.String(), c.Params.Rank.String()
	fields := c.fields(&unseen, &rank)
	known := map[string]field{}
	sections := map[string]bool{}
	for _, f := range fields {
		known[f.key] = f
		sections[strings.SplitN(f.key, ".", 2)[0]] = true
	}
	sections["preemption"] = true // [[preemption.rule]] only
	for _, sec := range sortedKeys(raw) {
		tbl, ok := raw[sec].(map[string]any)
		if !sections[sec] {
			add(sec, "unknown key")
			continue
		}
		if !ok {
			add(sec, "must be a table ([%s])", sec)
			continue
		}
		for _, k := range sortedKeys(tbl) {
			key := sec + "." + k
			if key == "profiles.rule" {
				ps = append(ps, c.Profiles.parseRules(tbl[k], name, lines)...)
				continue
			}
			if key == "preemption.rule" {
				ps = append(ps, parsePreemptRules(&c.Preemption, tbl[k], name, lines)...)
				continue
			}
			f, ok := known[key]
			if !ok {
				add(key, "unknown key")
				continue
			}
			if err := f.set(tbl[k]); err != nil {
				add(key, "%v", err)
			}
		}
	}
	if u, err := policy.ParseUnseen(unseen); err != nil {
		add("policy.unseen", "%q is not first or fallback", unseen)
	} else {
		c.Params.Unseen = u
	}
	if r, err := policy.ParseRank(rank); err != nil {
		add("policy.rank", "%q is not median or expected", rank)
	} else {
		c.Params.Rank = r
	}
	if _, set := lines["policy.rank"]; !set {
		// The predictor's own ranking (policy.RankFor), as --rank's default.
		c.Params.Rank = policy.RankFor(c.Predictor)
	}
	if mode != "" {
		c.WriteMode = mode
	}
	if _, set := lines["policy.wait_scale"]; !set && c.WriteMode == WritePriority {
		// The priority mode keeps the strict order unless told otherwise
		// (README, "Living with the site's policy").
		c.Params.WaitScale = 0
	}
	if _, set := lines["policy.overdue_share"]; !set && c.WriteMode == WritePriority {
		c.Params.OverdueShare = 0
	}
	if _, set := lines["policy.account_guard"]; !set && c.WriteMode == WritePriority {
		c.Params.AccountGuard = 0
	}
	ps = append(ps, c.validate(name, lines)...)
	sort.SliceStable(ps, func(i, j int) bool {
		if (ps[i].Line == 0) != (ps[j].Line == 0) {
			return ps[j].Line == 0
		}
		return ps[i].Line < ps[j].Line
	})
	if len(ps) > 0 {
		return c, ps
	}
	return c, nil
}

// validate checks values (not files); the problems carry the keys' lines.
func (c *Config) validate(name string, lines map[string]int) Problems {
	var ps Problems
	add := func(key, format string, args ...any) {
		ps = append(ps, Problem{File: name, Line: lines[key], Key: key, Msg: fmt.Sprintf(format, args...)})
	}
	switch u, err := url.Parse(c.Slurm.URL); {
	case c.Slurm.URL == "":
		add("slurm.url", "required")
	case err != nil:
		add("slurm.url", "%v", err)
	case u.Scheme == "unix":
		if u.Path == "" && u.Opaque == "" {
			add("slurm.url", "unix:// needs a socket path")
		}
	case u.Scheme == "http" || u.Scheme == "https":
		if u.Host == "" {
			add("slurm.url", "no host in %q", c.Slurm.URL)
		}
		if u.User != nil {
			add("slurm.url", "%q carries credentials, which slurmrestd does not use: remove them (the token file authenticates)", u.Redacted())
		}
		if c.Slurm.TokenFile == "" {
			add("slurm.token_file", "required with an %s:// URL", u.Scheme)
		}
	default:
		add("slurm.url", "scheme %q: want http, https or unix", u.Scheme)
	}
	if c.Slurm.API != "" && !slices.Contains([]string{"v0.0.38", "v0.0.42", "v0.0.44"}, c.Slurm.API) {
		add("slurm.api", "%q: want v0.0.38, v0.0.42, v0.0.44 or empty", c.Slurm.API)
	}
	positive := func(key string, d time.Duration) {
		if d <= 0 {
			add(key, "must be positive")
		}
	}
	positive("slurm.timeout", c.Slurm.Timeout)
	positive("sidecar.interval", c.Interval)
	positive("sidecar.dispatch_grace", c.DispatchGrace)
	positive("predictor.retrain_interval", c.Retrain)
	if c.History < 0 {
		add("predictor.history", "must not be negative")
	}
	if c.StateFile == "" {
		add("sidecar.state_file", "required")
	}
	if c.WriteLimit < 1 {
		add("sidecar.write_limit", "%d: must be at least 1", c.WriteLimit)
	}
	if c.WriteMode != WriteFactor && c.WriteMode != WritePriority {
		add("sidecar.write_mode", "%q: want \"factor\" or \"priority\"", c.WriteMode)
	}
	if c.SiteFactorMax < 1 || c.SiteFactorMax > slurmclient.MaxSiteFactor {
		add("sidecar.site_factor_max", "%d: want a number of priority points in 1..%d", c.SiteFactorMax, slurmclient.MaxSiteFactor)
	}
	base, oracle := policy.Split(c.Policy)
	switch {
	case oracle:
		add("policy.name", "%q: oracle variants need true run times and exist only in replays", c.Policy)
	case base == "las":
		add("policy.name", "las preempts any job, which the sidecar cannot do; asrpt-preempt preempts the jobs that opted in")
	case base == "multifactor" || base == "asrpt-factor":
		add("policy.name", "%q models Slurm's own priority in replays; the sidecar's factor mode (sidecar.write_mode) is asrpt-factor live", c.Policy)
	default:
		if _, err := policy.New(c.Policy, nil); err != nil {
			add("policy.name", "%v", err)
		}
	}
	// The ranges the replay's flags are checked against too (one rule).
	var pe *policy.ParamError
	if err := c.Params.Validate(); errors.As(err, &pe) && pe.Name != "unseen" && pe.Name != "rank" && pe.Name != "reservations" {
		add("policy."+pe.Name, "%s: want %s", pe.Value, pe.Want)
	}
	if c.Params.Reservations < 1 {
		add("policy.reservations", "%d: must be at least 1", c.Params.Reservations)
	}
	switch c.Predictor {
	case "forest", "mean", "mean-gpus", "mean-gpus-running", "limit":
	case "oracle":
		add("predictor.name", "oracle needs true run times and exists only in replays")
	default:
		add("predictor.name", "%q: want forest, mean, mean-gpus, mean-gpus-running or limit", c.Predictor)
	}
	if c.MetricsListen != "" {
		if _, _, err := net.SplitHostPort(c.MetricsListen); err != nil {
			add("metrics.listen", "%v", err)
		}
	}
	if !slices.Contains([]string{"debug", "info", "warn", "error"}, c.LogLevel) {
		add("log.level", "%q: want debug, info, warn or error", c.LogLevel)
	}
	if !slices.Contains([]string{"json", "console", "auto"}, c.LogFormat) {
		add("log.format", "%q: want json, console or auto", c.LogFormat)
	}
	if g := c.Profiles.GradientBytes; !(g >= 1 && g <= 1e12) {
		add("profiles.default_gradient_bytes", "%v: want a number of bytes in 1..1e12", g)
	}
	return ps
}

// parseRules reads the [[profiles.rule]] list v (ruleList).
func (p *ProfilesConfig) parseRules(v any, name string, lines map[string]int) Problems {
	p.Rules = []jobprofile.Rule{}
	return ruleList(v, "profiles.rule", maxProfileRules, []string{"family", "account", "model"}, name, lines,
		func(vals map[string]string, add func(string, ...any)) {
			r := jobprofile.Rule{Family: vals["family"], Account: vals["account"], Model: strings.ToLower(vals["model"])}
			if err := r.Validate(); err != nil {
				add("%v", err)
				return
			}
			p.Rules = append(p.Rules, r)
		})
}

// Warnings returns what the configuration allows but an admin should know:
// a token sent in clear text (http://) to a host that is not this machine,
// and a metrics.listen address other hosts can reach (/metrics and
// /healthz answer anyone; /status and /plan only with the state
// directory's token).
func (c *Config) Warnings() []string {
	var out []string
	if u, err := url.Parse(c.Slurm.URL); err == nil && u.Scheme == "http" && !loopback(u.Hostname()) {
		out = append(out, fmt.Sprintf("slurm.url: %s sends the token in clear text to %s; use https:// or a unix:// socket", u.Redacted(), u.Hostname()))
	}
	if len(c.Preemption.Rules) > 0 && c.Policy != "asrpt-preempt" {
		out = append(out, fmt.Sprintf("preemption.rule: policy.name is %q, not \"asrpt-preempt\": the %d rules opt nobody in", c.Policy, len(c.Preemption.Rules)))
	}
	if host, _, err := net.SplitHostPort(c.MetricsListen); err == nil && c.MetricsListen != "" && !loopback(host) {
		out = append(out, fmt.Sprintf("metrics.listen: %s is reachable from other hosts: /metrics and /healthz answer anyone there "+
			"(/status and /plan only with the token in the state directory); 127.0.0.1:PORT keeps it on this machine", c.MetricsListen))
	}
	return out
}

// loopback reports whether host names this machine only (an empty host
// listens on every address).
func loopback(host string) bool {
	ip := net.ParseIP(host)
	return host == "localhost" || ip != nil && ip.IsLoopback()
}

// CheckFiles checks that the files the configuration names exist and can
// be read: the token file, the CA file, slurm.conf in the configuration
// directory, and the state file's directory and files (CheckStateFiles:
// owner, mode, links). It returns every problem.
func (c *Config) CheckFiles(name string) Problems {
	var ps Problems
	add := func(key, format string, args ...any) {
		ps = append(ps, Problem{File: name, Key: key, Msg: fmt.Sprintf(format, args...)})
	}
	readable := func(key, path string) {
		f, err := os.Open(path)
		if err != nil {
			add(key, "%v", err)
			return
		}
		f.Close()
	}
	if c.Slurm.TokenFile != "" && !strings.HasPrefix(c.Slurm.URL, "unix:") {
		if err := slurmclient.CheckTokenFile(c.Slurm.TokenFile); err != nil {
			add("slurm.token_file", "%v", err)
		}
	}
	if c.Slurm.CAFile != "" {
		readable("slurm.ca_file", c.Slurm.CAFile)
	}
	readable("slurm.conf_dir", filepath.Join(c.Slurm.ConfDir, "slurm.conf"))
	if err := CheckStateFiles(c.StateFile); err != nil {
		add("sidecar.state_file", "%v", strings.TrimPrefix(err.Error(), "sidecar.state_file: "))
	}
	return ps
}

// UsePredictor sets the predictor by name (Predictor) and the ranking to
// the predictor's own (policy.RankFor), as a file that names the predictor
// and no policy.rank gets: code that changes the predictor of a Config
// should call it rather than set Predictor alone, which would keep the
// previous predictor's ranking.
func (c *Config) UsePredictor(name string) {
	c.Predictor = name
	c.Params.Rank = policy.RankFor(name)
}

// PredictorConfig returns the predictor settings for predictor.ByName.
func (c *Config) PredictorConfig() predictor.Config {
	pc := predictor.DefaultConfig()
	pc.RetrainEvery = c.Retrain.Seconds()
	return pc
}

func sortedKeys[V any](m map[string]V) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}

func str(p *string) func(any) error {
	return func(v any) error {
		s, ok := v.(string)
		if !ok {
			return fmt.Errorf("want a string, have %s", tomlType(v))
		}
		*p = s
		return nil
	}
}

func dur(p *time.Duration) func(any) error {
	return func(v any) error {
		s, ok := v.(string)
		if !ok {
			return fmt.Errorf("want a duration string such as \"30s\", have %s", tomlType(v))
		}
		d, err := parseDuration(s)
		if err != nil {
			return err
		}
		*p = d
		return nil
	}
}

// parseDuration is time.ParseDuration that also accepts a days suffix
// ("30d").
func parseDuration(s string) (time.Duration, error) {
	if n, ok := strings.CutSuffix(s, "d"); ok {
		var days int
		if _, err := fmt.Sscanf(n, "%d", &days); err == nil && fmt.Sprint(days) == n && days >= 0 && days < 100000 {
			return time.Duration(days) * 24 * time.Hour, nil
		}
	}
	d, err := time.ParseDuration(s)
	if err != nil {
		return 0, fmt.Errorf("%q is not a duration (e.g. 30s, 5m, 24h, 30d)", s)
	}
	return d, nil
}

// seconds binds a duration key to a number of seconds.
func seconds(p *float64) func(any) error {
	return func(v any) error {
		var d time.Duration
		if err := dur(&d)(v); err != nil {
			return err
		}
		*p = d.Seconds()
		return nil
	}
}

// siteFactor binds sidecar.site_factor_max; the range is checked by
// validate.
func siteFactor(p *uint32) func(any) error {
	return func(v any) error {
		n, ok := v.(int64)
		if !ok {
			return fmt.Errorf("want an integer number of priority points, have %s", tomlType(v))
		}
		if n < 1 || n > slurmclient.MaxSiteFactor {
			return fmt.Errorf("%d: want a number of priority points in 1..%d", n, slurmclient.MaxSiteFactor)
		}
		*p = uint32(n)
		return nil
	}
}

func integer(p *int) func(any) error {
	return func(v any) error {
		n, ok := v.(int64)
		if !ok {
			return fmt.Errorf("want an integer, have %s", tomlType(v))
		}
		if n < -1<<31 || n > 1<<31-1 {
			return fmt.Errorf("%d is out of range", n)
		}
		*p = int(n)
		return nil
	}
}

func float(p *float64) func(any) error {
	return func(v any) error {
		switch x := v.(type) {
		case float64:
			*p = x
		case int64:
			*p = float64(x)
		default:
			return fmt.Errorf("want a number, have %s", tomlType(v))
		}
		return nil
	}
}

func boolean(p *bool) func(any) error {
	return func(v any) error {
		b, ok := v.(bool)
		if !ok {
			return fmt.Errorf("want true or false, have %s", tomlType(v))
		}
		*p = b
		return nil
	}
}

func strs(p *[]string) func(any) error {
	return func(v any) error {
		list, ok := v.([]any)
		if !ok {
			return fmt.Errorf("want a list of strings, have %s", tomlType(v))
		}
		out := make([]string, 0, len(list))
		for i, x := range list {
			s, ok := x.(string)
			if !ok || s == "" {
				return fmt.Errorf("element %d: want a non-empty string", i+1)
			}
			out = append(out, s)
		}
		*p = out
		return nil
	}
}

func tomlType(v any) string {
	switch v.(type) {
	case string:
		return "a string"
	case int64:
		return "an integer"
	case float64:
		return "a float"
	case bool:
		return "a boolean"
	case []any, []map[string]any:
		return "an array"
	case map[string]any:
		return "a table"
	}
	return fmt.Sprintf("%T", v)
}

// keyLines maps each "table.key" (and each table name) to the line that
// first defines it. It understands the plain layout the example file uses
// ([table] headers, key = value lines, dotted keys); a key it cannot place
// has no entry and its problems carry no line.
func keyLines(data []byte) map[string]int {
	lines := map[string]int{}
	count := map[string]int{}
	table := ""
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for n := 1; sc.Scan(); n++ {
		s := strings.TrimSpace(sc.Text())
		switch {
		case s == "" || s[0] == '#':
			continue
		case strings.HasPrefix(s, "[["):
			table = ""
			if end := strings.Index(s, "]]"); end > 2 {
				// An array of tables: its n-th header is "name[n]".
				table = unquoteKey(s[2:end])
				count[table]++
				lines[fmt.Sprintf("%s[%d]", table, count[table])] = n
				if _, ok := lines[table]; !ok {
					lines[table] = n
				}
			}
			continue
		case s[0] == '[':
			end := strings.IndexByte(s, ']')
			if end < 0 {
				continue
			}
			table = unquoteKey(s[1:end])
			if _, ok := lines[table]; !ok {
				lines[table] = n
			}
			continue
		}
		eq := strings.IndexByte(s, '=')
		if eq <= 0 {
			continue
		}
		key := unquoteKey(s[:eq])
		if table != "" {
			key = table + "." + key
		}
		if _, ok := lines[key]; !ok {
			lines[key] = n
		}
		if i := strings.IndexByte(key, '.'); i > 0 {
			if _, ok := lines[key[:i]]; !ok {
				lines[key[:i]] = n
			}
		}
	}
	return lines
}

// unquoteKey normalises a possibly dotted, possibly quoted TOML key.
func unquoteKey(k string) string {
	parts := strings.Split(k, ".")
	for i, p := range parts {
		parts[i] = strings.Trim(strings.TrimSpace(p), `"'`)
	}
	return strings.Join(parts, ".")
}

// configKeys lists every key the file may set.
func configKeys() []string {
	var c Config
	var u string
	var ks []string
	for _, f := range c.fields(&u, &u) {
		ks = append(ks, f.key)
	}
	return ks
}

// fields binds each key to the field of c it sets; policy.unseen and
// policy.rank go to *unseen and *rank, parsed afterwards.
func (c *Config) fields(unseen, rank *string) []field {
	return []field{
		{"slurm.url", str(&c.Slurm.URL)},
		{"slurm.token_file", str(&c.Slurm.TokenFile)},
		{"slurm.user", str(&c.Slurm.User)},
		{"slurm.ca_file", str(&c.Slurm.CAFile)},
		{"slurm.api", str(&c.Slurm.API)},
		{"slurm.timeout", dur(&c.Slurm.Timeout)},
		{"slurm.conf_dir", str(&c.Slurm.ConfDir)},
		{"sidecar.interval", dur(&c.Interval)},
		{"sidecar.state_file", str(&c.StateFile)},
		{"sidecar.dry_run", boolean(&c.DryRun)},
		{"sidecar.giveback_on_shutdown", boolean(&c.GivebackOnShutdown)},
		{"sidecar.write_limit", integer(&c.WriteLimit)},
		{"sidecar.dispatch_grace", dur(&c.DispatchGrace)},
		{"sidecar.write_mode", str((*string)(&c.WriteMode))},
		{"sidecar.site_factor_max", siteFactor(&c.SiteFactorMax)},
		{"sidecar.priority_fallback", boolean(&c.PriorityFallback)},
		{"sidecar.required_nodes", boolean(&c.RequiredNodes)},
		{"sidecar.gpus_per_node", boolean(&c.GPUsPerNode)},
		{"policy.name", str(&c.Policy)},
		{"policy.comm_heavy", float(&c.Params.CommHeavy)},
		{"policy.tau", float(&c.Params.Tau)},
		{"policy.slack", float(&c.Params.Slack)},
		{"policy.unseen", str(unseen)},
		{"policy.rank", str(rank)},
		{"policy.depth", integer(&c.Params.Depth)},
		{"policy.reservations", integer(&c.Params.Reservations)},
		{"policy.wait_limit", seconds(&c.Params.WaitLimit)},
		{"policy.wait_factor", float(&c.Params.WaitFactor)},
		{"policy.wait_scale", float(&c.Params.WaitScale)},
		{"policy.overdue_share", float(&c.Params.OverdueShare)},
		{"policy.account_guard", float(&c.Params.AccountGuard)},
		{"policy.preempt_exempt", seconds(&c.Params.PreemptExempt)},
		{"policy.max_preemptions", integer(&c.Params.MaxPreemptions)},
		{"policy.preempt_budget", integer(&c.Params.PreemptBudget)},
		{"policy.preempt_margin", float(&c.Params.PreemptMargin)},
		{"policy.restart_cost", seconds(&c.Params.RestartCost)},
		{"predictor.name", str(&c.Predictor)},
		{"predictor.retrain_interval", dur(&c.Retrain)},
		{"predictor.history", dur(&c.History)},
		{"scope.partitions", strs(&c.Scope.Partitions)},
		{"scope.qos", strs(&c.Scope.QOS)},
		{"scope.accounts", strs(&c.Scope.Accounts)},
		{"metrics.listen", str(&c.MetricsListen)},
		{"log.level", str(&c.LogLevel)},
		{"log.format", str(&c.LogFormat)},
		{"profiles.default_gradient_bytes", float(&c.Profiles.GradientBytes)},
	}
}
