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
