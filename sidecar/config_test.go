package sidecar

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/asrpt/asrpt/internal/fuzzbound"
	"github.com/asrpt/asrpt/policy"
	"github.com/asrpt/asrpt/predictor"
)

// TestExampleConfig checks that contrib/asrpt.toml parses and states the
// defaults (apart from the keys that have none).
func TestExampleConfig(t *testing.T) {
	c, err := LoadConfig(filepath.Join("..", "contrib", "asrpt.toml"))
	if err != nil {
		t.Fatal(err)
	}
	want := DefaultConfig()
	want.Slurm.URL, want.Slurm.TokenFile = "http://127.0.0.1:6820", "/etc/asrpt/slurm.jwt"
	want.Scope = Scope{Partitions: []string{}, QOS: []string{}, Accounts: []string{}}
	if !reflect.DeepEqual(c, want) {
		t.Errorf("example file:\n%+v\ndefaults:\n%+v", c, want)
	}
	// Every key the parser knows is documented in the example.
	data, _ := os.ReadFile(filepath.Join("..", "contrib", "asrpt.toml"))
	lines := keyLines(data)
	for _, k := range configKeys() {
		if lines[k] == 0 {
			t.Errorf("key %s is not in contrib/asrpt.toml", k)
		}
	}
}

func TestParseConfig(t *testing.T) {
	cases := []struct {
		name string
		in   string
		// want lists "line:key" (or "line:" for syntax) of every problem,
		// in order; empty for a valid file.
		want  []string
		check func(t *testing.T, c Config)
	}{
		{
			name: "minimal unix",
			in:   "[slurm]\nurl = \"unix:///run/slurmrestd.sock\"\n",
			check: func(t *testing.T, c Config) {
				if c.Interval != 30*time.Second || c.Policy != "asrpt" || c.MetricsListen != "127.0.0.1:9870" {
					t.Errorf("defaults not applied: %+v", c)
				}
			},
		},
		{
			name: "values",
			in: `[slurm]
url = "https://ctl:6820"
token_file = "/t"
[sidecar]
interval = "1m"
write_limit = 50
[policy]
name = "asrpt-paper"
tau = 1
unseen = "fallback"
[predictor]
history = "7d"
[scope]
partitions = ["gpu", "a100"]
`,
			check: func(t *testing.T, c Config) {
				if c.Interval != time.Minute || c.WriteLimit != 50 || c.Policy != "asrpt-paper" || c.Params.Tau != 1 ||
					c.Params.Unseen.String() != "fallback" || c.History != 7*24*time.Hour || len(c.Scope.Partitions) != 2 {
					t.Errorf("%+v", c)
				}
			},
		},
		{
			name: "all problems at once, each with its line",
			in: `[slurm]
url = "ftp://x"
timeout = 5
[sidecar]
intervall = "30s"
write_limit = 0
dry_run = "yes"
[policy]
name = "las"
slack = -1
unseen = "later"
[scope]
partitions = ["gpu", 3]
[log]
level = "verbose"
[extra]
x = 1
`,
			want: []string{"2:slurm.url", "3:slurm.timeout", "5:sidecar.intervall", "6:sidecar.write_limit",
				"7:sidecar.dry_run", "9:policy.name", "10:policy.slack", "11:policy.unseen",
				"13:scope.partitions", "15:log.level", "16:extra"},
		},
		{
			name: "http needs a token file",
			in:   "[slurm]\nurl = \"http://h:1\"\n",
			want: []string{"0:slurm.token_file"},
		},
		{
			name: "missing url",
			in:   "[sidecar]\ninterval = \"10s\"\n",
			want: []string{"0:slurm.url"},
		},
		{
			name: "syntax error",
			in:   "[slurm]\nurl = \"unix:///s\"\ninterval = = 3\n",
			want: []string{"3:"},
		},
		{
			name: "oracle refused",
			in:   "[slurm]\nurl = \"unix:///s\"\n[policy]\nname = \"asrpt-oracle\"\n[predictor]\nname = \"oracle\"\n",
			want: []string{"4:policy.name", "6:predictor.name"},
		},
		{
			name: "mean-gpus ranked by the expected run time",
			in:   "[slurm]\nurl = \"unix:///s\"\n[policy]\nrank = \"expected\"\n[predictor]\nname = \"mean-gpus\"\n",
			check: func(t *testing.T, cfg Config) {
				if cfg.Predictor != "mean-gpus" || cfg.Params.Rank != policy.RankExpected {
					t.Errorf("predictor %q, rank %v", cfg.Predictor, cfg.Params.Rank)
				}
			},
		},
		{
			name: "bad durations and addresses",
			in:   "[slurm]\nurl = \"unix:///s\"\n[sidecar]\ninterval = \"-5s\"\ndispatch_grace = \"soon\"\n[metrics]\nlisten = \"9870\"\n",
			want: []string{"4:sidecar.interval", "5:sidecar.dispatch_grace", "7:metrics.listen"},
		},
		{
			name: "top-level key",
			in:   "url = \"unix:///s\"\n[slurm]\nurl = \"unix:///s\"\n",
			want: []string{"1:url"},
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cfg, err := ParseConfig([]byte(c.in), "asrpt.toml")
			var got []string
			var ps Problems
			if errors.As(err, &ps) {
				for _, p := range ps {
					got = append(got, strings.Join([]string{itoa(p.Line), p.Key}, ":"))
					if !strings.HasPrefix(p.Error(), "asrpt.toml") {
						t.Errorf("problem %q does not name the file", p.Error())
					}
				}
			} else if err != nil {
				t.Fatalf("error %v is not Problems", err)
			}
			if strings.Join(got, " ") != strings.Join(c.want, " ") {
				t.Errorf("problems %v, want %v\n%v", got, c.want, err)
			}
			if c.check != nil && err == nil {
				c.check(t, cfg)
			}
		})
	}
}

func itoa(n int) string { return strconv.Itoa(n) }

func TestCheckFiles(t *testing.T) {
	dir := t.TempDir()
	c := DefaultConfig()
	c.Slurm.URL, c.Slurm.TokenFile = "http://h:1", filepath.Join(dir, "missing.jwt")
	c.Slurm.ConfDir = dir
	c.StateFile = filepath.Join(dir, "nodir", "state.json")
	ps := c.CheckFiles("f.toml")
	var keys []string
	for _, p := range ps {
		keys = append(keys, p.Key)
	}
	if strings.Join(keys, " ") != "slurm.token_file slurm.conf_dir sidecar.state_file" {
		t.Errorf("problems %v", ps)
	}
}

func FuzzParseConfig(f *testing.F) {
	data, _ := os.ReadFile(filepath.Join("..", "contrib", "asrpt.toml"))
	f.Add(data)
	f.Add([]byte("[slurm]\nurl = 3\n[x]\n"))
	f.Add([]byte("[policy]\nname = \"asrpt-preempt\"\n[[preemption.rule]]\nfamily = \"train\"\nstop = \"B:USR1@120\"\n[[preemption.rule]]\nqos = 1\n"))
	f.Fuzz(func(t *testing.T, in []byte) {
		fuzzbound.Within(t, time.Second, func() {
			_, err := ParseConfig(in, "f")
			var ps Problems
			if err != nil && !errors.As(err, &ps) {
				t.Fatalf("error %v is not Problems", err)
			}
		})
	})
}

// TestParseConfigWriteKeys covers the write-mode keys and the wait bounds:
// each good value lands in its field, each bad one is one problem on its
// key and line, with a message that says what is wanted.
func TestParseConfigWriteKeys(t *testing.T) {
	const head = "[slurm]\nurl = \"unix:///s\"\n"
	cases := []struct {
		name, in string
		// key and msg (a substring) of the one problem; "" for none.
		key, msg string
		check    func(c Config) bool
	}{
		{name: "defaults", in: "", check: func(c Config) bool {
			return c.WriteMode == WriteFactor && c.SiteFactorMax == 10000 && !c.PriorityFallback &&
				c.Params.WaitLimit == 0 && c.Params.WaitFactor == 0
		}},
		{name: "priority mode", in: "[sidecar]\nwrite_mode = \"priority\"\n", check: func(c Config) bool { return c.WriteMode == WritePriority }},
		{name: "factor mode with fallback", in: "[sidecar]\nwrite_mode = \"factor\"\npriority_fallback = true\nsite_factor_max = 250000\n",
			check: func(c Config) bool {
				return c.WriteMode == WriteFactor && c.PriorityFallback && c.SiteFactorMax == 250000
			}},
		{name: "largest site factor", in: "[sidecar]\nsite_factor_max = 2147483645\n",
			check: func(c Config) bool { return c.SiteFactorMax == 2147483645 }},
		{name: "wait bounds", in: "[policy]\nwait_limit = \"3d\"\nwait_factor = 4\n",
			check: func(c Config) bool { return c.Params.WaitLimit == 3*86400 && c.Params.WaitFactor == 4 }},
		{name: "wait factor as a float", in: "[policy]\nwait_factor = 2.5\n",
			check: func(c Config) bool { return c.Params.WaitFactor == 2.5 }},
		{name: "unknown mode", in: "[sidecar]\nwrite_mode = \"absolute\"\n", key: "4:sidecar.write_mode", msg: `want "factor" or "priority"`},
		{name: "mode not a string", in: "[sidecar]\nwrite_mode = 1\n", key: "4:sidecar.write_mode", msg: "want a string"},
		{name: "site factor 0", in: "[sidecar]\nsite_factor_max = 0\n", key: "4:sidecar.site_factor_max", msg: "in 1..2147483645"},
		{name: "site factor too large", in: "[sidecar]\nsite_factor_max = 2147483646\n", key: "4:sidecar.site_factor_max", msg: "in 1..2147483645"},
		{name: "site factor not an integer", in: "[sidecar]\nsite_factor_max = 1.5\n", key: "4:sidecar.site_factor_max", msg: "want an integer"},
		{name: "fallback not a boolean", in: "[sidecar]\npriority_fallback = \"yes\"\n", key: "4:sidecar.priority_fallback", msg: "want true or false"},
		{name: "wait limit a number", in: "[policy]\nwait_limit = 3600\n", key: "4:policy.wait_limit", msg: "duration string"},
		{name: "wait limit not a duration", in: "[policy]\nwait_limit = \"a week\"\n", key: "4:policy.wait_limit", msg: "not a duration"},
		{name: "wait limit negative", in: "[policy]\nwait_limit = \"-1h\"\n", key: "4:policy.wait_limit", msg: "-3600: want a finite number in 0.."},
		{name: "wait limit beyond ten years", in: "[policy]\nwait_limit = \"4000d\"\n", key: "4:policy.wait_limit", msg: "want a finite number in 0..3.1536e+08"},
		{name: "wait factor negative", in: "[policy]\nwait_factor = -2\n", key: "4:policy.wait_factor", msg: "-2: want a finite number in 0..1e+06"},
		{name: "wait factor not a number", in: "[policy]\nwait_factor = \"x\"\n", key: "4:policy.wait_factor", msg: "want a number"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c, err := ParseConfig([]byte(head+tc.in), "asrpt.toml")
			var ps Problems
			errors.As(err, &ps)
			if tc.key == "" {
				if err != nil {
					t.Fatalf("problems: %v", err)
				}
				if !tc.check(c) {
					t.Errorf("config %+v", c)
				}
				return
			}
			if len(ps) != 1 || itoa(ps[0].Line)+":"+ps[0].Key != tc.key || !strings.Contains(ps[0].Msg, tc.msg) {
				t.Errorf("problems %v, want one on %s saying %q", err, tc.key, tc.msg)
			}
		})
	}
	// A configuration built in code is checked too.
	c := DefaultConfig()
	c.Slurm.URL, c.WriteMode, c.SiteFactorMax = "unix:///s", "", 0
	var keys []string
	for _, p := range c.validate("f", nil) {
		keys = append(keys, p.Key)
	}
	if strings.Join(keys, " ") != "sidecar.write_mode sidecar.site_factor_max" {
		t.Errorf("problems of a bad Config: %v", keys)
	}
}

// TestWaitScaleDefault checks the wait bound's defaults per write mode:
// the factor mode bounds waiting (policy.DefaultFactorWaitScale) and caps
// the front (policy.DefaultFactorOverdueShare), the priority mode keeps
// the strict order, and a value set in the file wins in both; the
// replay-only policies are refused.
func TestWaitScaleDefault(t *testing.T) {
	base := "[slurm]\nurl = \"unix:///run/slurmrestd.sock\"\n"
	for _, tc := range []struct {
		name, conf  string
		scale, cap0 float64
	}{
		{"factor default", base, policy.DefaultFactorWaitScale, policy.DefaultFactorOverdueShare},
		{"priority default", base + "[sidecar]\nwrite_mode = \"priority\"\n", 0, 0},
		{"priority set", base + "[sidecar]\nwrite_mode = \"priority\"\n[policy]\nwait_scale = 50.0\noverdue_share = 0.25\n", 50, 0.25},
		{"factor set off", base + "[policy]\nwait_scale = 0.0\noverdue_share = 0.0\n", 0, 0},
	} {
		c, err := ParseConfig([]byte(tc.conf), "asrpt.toml")
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if c.Params.WaitScale != tc.scale || c.Params.OverdueShare != tc.cap0 {
			t.Errorf("%s: wait_scale %v, overdue_share %v; want %v, %v", tc.name, c.Params.WaitScale, c.Params.OverdueShare, tc.scale, tc.cap0)
		}
	}
	// ParseConfigIn: the mode forced, with its defaults for what the file
	// leaves unset and the file's values for what it sets.
	for _, tc := range []struct {
		name, conf  string
		mode        WriteMode
		scale, cap0 float64
	}{
		{"factor file in priority mode", base, WritePriority, 0, 0},
		{"priority file in factor mode", base + "[sidecar]\nwrite_mode = \"priority\"\n", WriteFactor, policy.DefaultFactorWaitScale, policy.DefaultFactorOverdueShare},
		{"set, in priority mode", base + "[policy]\nwait_scale = 50.0\noverdue_share = 0.25\n", WritePriority, 50, 0.25},
	} {
		c, err := ParseConfigIn([]byte(tc.conf), "asrpt.toml", tc.mode)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if c.WriteMode != tc.mode || c.Params.WaitScale != tc.scale || c.Params.OverdueShare != tc.cap0 {
			t.Errorf("%s: mode %s, wait_scale %v, overdue_share %v; want %s, %v, %v", tc.name, c.WriteMode,
				c.Params.WaitScale, c.Params.OverdueShare, tc.mode, tc.scale, tc.cap0)
		}
	}
	for _, name := range []string{"multifactor", "asrpt-factor"} {
		_, err := ParseConfig([]byte(base+"[policy]\nname = \""+name+"\"\n"), "asrpt.toml")
		if err == nil || !strings.Contains(err.Error(), "replays") {
			t.Errorf("policy %s: err %v, want a refusal", name, err)
		}
	}
	if _, err := ParseConfig([]byte(base+"[policy]\nwait_scale = -1.0\n"), "asrpt.toml"); err == nil || !strings.Contains(err.Error(), "policy.wait_scale") {
		t.Errorf("negative wait_scale: err %v", err)
	}
	// The account guard: the factor mode's default, off in priority mode
	// unless set, refused when negative.
	for _, tc := range []struct {
		conf  string
		guard float64
	}{
		{base, policy.DefaultFactorAccountGuard},
		{base + "[sidecar]\nwrite_mode = \"priority\"\n", 0},
		{base + "[sidecar]\nwrite_mode = \"priority\"\n[policy]\naccount_guard = 16.0\n", 16},
		{base + "[policy]\naccount_guard = 4.0\n", 4},
	} {
		c, err := ParseConfig([]byte(tc.conf), "asrpt.toml")
		if err != nil || c.Params.AccountGuard != tc.guard {
			t.Errorf("%q: account_guard %v (%v), want %v", tc.conf, c.Params.AccountGuard, err, tc.guard)
		}
	}
	if _, err := ParseConfig([]byte(base+"[policy]\naccount_guard = -1.0\n"), "asrpt.toml"); err == nil || !strings.Contains(err.Error(), "policy.account_guard") {
		t.Errorf("negative account_guard: err %v", err)
	}
	if _, err := ParseConfig([]byte(base+"[policy]\noverdue_share = 2.0\n"), "asrpt.toml"); err == nil || !strings.Contains(err.Error(), "policy.overdue_share") {
		t.Errorf("overdue_share 2: err %v", err)
	}
}

// TestConfigRankFollowsPredictor: without policy.rank the ranking is the
// predictor's own (policy.RankFor): the expected value for the default
// mean-gpus and mean-gpus-running, the median for the forest; a rank in
// the file wins.
func TestConfigRankFollowsPredictor(t *testing.T) {
	const head = "[slurm]\nurl = \"unix:///s\"\n"
	for _, tc := range []struct {
		body string
		want policy.Rank
	}{
		{"", policy.RankExpected},
		{"[predictor]\nname = \"mean-gpus\"\n", policy.RankExpected},
		{"[predictor]\nname = \"mean-gpus-running\"\n", policy.RankExpected},
		{"[predictor]\nname = \"forest\"\n", policy.RankMedian},
		{"[predictor]\nname = \"mean\"\n", policy.RankMedian},
		{"[policy]\nrank = \"median\"\n", policy.RankMedian},
		{"[policy]\nrank = \"expected\"\n[predictor]\nname = \"forest\"\n", policy.RankExpected},
	} {
		c, err := ParseConfig([]byte(head+tc.body), "asrpt.toml")
		if err != nil {
			t.Fatalf("%q: %v", tc.body, err)
		}
		if c.Params.Rank != tc.want {
			t.Errorf("%q: rank %v, want %v", tc.body, c.Params.Rank, tc.want)
		}
	}
	c := DefaultConfig()
	c.UsePredictor("forest")
	if c.Predictor != "forest" || c.Params.Rank != policy.RankMedian {
		t.Errorf("UsePredictor(forest): predictor %s rank %v, want the median", c.Predictor, c.Params.Rank)
	}
	if DefaultConfig().Predictor != predictor.Default || DefaultConfig().Params.Rank != policy.RankFor(predictor.Default) {
		t.Errorf("defaults: predictor %s rank %v", DefaultConfig().Predictor, DefaultConfig().Params.Rank)
	}
}
