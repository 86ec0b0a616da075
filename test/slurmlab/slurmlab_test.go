package slurmlab

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/asrpt/asrpt/internal/fuzzbound"
)

const goodEnv = `# Slurm lab 24.11, written by test/slurmlab/lab.sh up
SLURMLAB_VERSION=24.11
SLURMLAB_RELEASE=24.11.5
SLURMLAB_URL=http://127.0.0.1:7820
SLURMLAB_SOCKET=/var/cache/asrpt-slurmlab/24.11/root/lab/run/slurmrestd.sock
SLURMLAB_JWT_KEY=/var/cache/asrpt-slurmlab/24.11/root/etc/slurm/jwt_hs256.key
SLURMLAB_TOKEN_FILE=/tmp/slurmlab/24.11/token-slurmrest
SLURMLAB_TOKEN_USER=slurmrest
SLURMLAB_API_VERSIONS=v0.0.40 v0.0.41 v0.0.42

SLURMLAB_CLUSTER=lab24
SLURMLAB_NODES=4
SLURMLAB_GPUS_PER_NODE=4
SLURMLAB_GPU_TYPE=tesla
SLURMLAB_USERS=alice bob slurmrest
SLURMLAB_EXEC=bash /repo/test/slurmlab/lab.sh exec 24.11
SLURMLAB_AS=bash /repo/test/slurmlab/lab.sh as 24.11
SLURMLAB_SCHED_CMD=bash /repo/test/slurmlab/lab.sh sched 24.11
SLURMLAB_EXTRA=a=b
`

func TestParse(t *testing.T) {
	lab, err := Parse(strings.NewReader(goodEnv), "good.env")
	if err != nil {
		t.Fatal(err)
	}
	checks := []struct {
		name      string
		got, want any
	}{
		{"Version", lab.Version, "24.11"},
		{"Release", lab.Release, "24.11.5"},
		{"URL", lab.URL, "http://127.0.0.1:7820"},
		{"APIVersions", lab.APIVersions, []string{"v0.0.40", "v0.0.41", "v0.0.42"}},
		{"Nodes", lab.Nodes, 4},
		{"GPUsPerNode", lab.GPUsPerNode, 4},
		{"Users", lab.Users, []string{"alice", "bob", "slurmrest"}},
		{"Exec", lab.Exec, []string{"bash", "/repo/test/slurmlab/lab.sh", "exec", "24.11"}},
		{"Root (absent)", lab.Root, ""},
		{"Vars keeps the rest of the line", lab.Vars["SLURMLAB_EXTRA"], "a=b"},
	}
	for _, c := range checks {
		if !reflect.DeepEqual(c.got, c.want) {
			t.Errorf("%s = %#v, want %#v", c.name, c.got, c.want)
		}
	}
}

func TestParseErrors(t *testing.T) {
	replace := func(old, new string) string { return strings.Replace(goodEnv, old, new, 1) }
	tests := []struct {
		name, in, want string
	}{
		{"no equals sign", replace("SLURMLAB_CLUSTER=lab24", "SLURMLAB_CLUSTER lab24"), "x.env:11: "},
		{"lower-case key", replace("SLURMLAB_CLUSTER=", "slurmlab_cluster="), `x.env:11: bad key "slurmlab_cluster"`},
		{"duplicate key", goodEnv + "SLURMLAB_URL=http://x\n", "x.env:20: SLURMLAB_URL: already set on line 4"},
		{"missing URL", replace("SLURMLAB_URL=http://127.0.0.1:7820\n", ""), "x.env: SLURMLAB_URL: missing or empty"},
		{"empty exec", replace("SLURMLAB_EXEC=bash /repo/test/slurmlab/lab.sh exec 24.11", "SLURMLAB_EXEC="), "SLURMLAB_EXEC: missing or empty"},
		{"URL not http", replace("http://127.0.0.1:7820", "127.0.0.1:7820"), "x.env:4: SLURMLAB_URL: "},
		{"bad count", replace("SLURMLAB_NODES=4", "SLURMLAB_NODES=four"), `x.env:12: SLURMLAB_NODES: "four" is not a count`},
		{"negative count", replace("SLURMLAB_GPUS_PER_NODE=4", "SLURMLAB_GPUS_PER_NODE=-1"), "x.env:13: SLURMLAB_GPUS_PER_NODE"},
		{"too large", goodEnv + "SLURMLAB_X=" + strings.Repeat("x", maxEnvBytes) + "\n", "larger than"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse(strings.NewReader(tt.in), "x.env")
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("Parse error = %v, want it to contain %q", err, tt.want)
			}
		})
	}
}

func FuzzParse(f *testing.F) {
	f.Add(goodEnv)
	f.Add("SLURMLAB_VERSION=1\n=\n#x\n")
	f.Add("A=1\nA=2\n")
	f.Fuzz(func(t *testing.T, in string) {
		fuzzbound.Within(t, time.Second, func() {
			lab, err := Parse(strings.NewReader(in), "fuzz.env")
			if err != nil {
				if lab != nil {
					t.Fatal("non-nil lab with an error")
				}
				return
			}
			if lab.URL == "" || len(lab.Exec) == 0 || lab.Nodes < 0 || lab.GPUsPerNode < 0 {
				t.Fatalf("accepted an incomplete lab: %+v", lab)
			}
		})
	})
}

func TestLoad(t *testing.T) {
	dir := t.TempDir()
	t.Setenv(EnvDirVar, dir)
	if _, err := Load("24.11"); !errors.Is(err, ErrNotUp) || !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("Load of an absent lab: %v, want ErrNotUp", err)
	}
	if err := os.WriteFile(filepath.Join(dir, "slurmlab-24.11.env"), []byte(goodEnv), 0o644); err != nil {
		t.Fatal(err)
	}
	lab, err := Load("24.11")
	if err != nil || lab.Cluster != "lab24" {
		t.Fatalf("Load = %+v, %v", lab, err)
	}
	if err := os.WriteFile(filepath.Join(dir, "slurmlab-22.05.env"), []byte(goodEnv), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Load("22.05"); err == nil || !strings.Contains(err.Error(), `SLURMLAB_VERSION is "24.11", want "22.05"`) {
		t.Fatalf("Load of a mislabelled file: %v", err)
	}
}

// fakeTB records how Require ends a test instead of ending it.
type fakeTB struct {
	testing.TB
	skipped, failed bool
}

func (f *fakeTB) Helper()               {}
func (f *fakeTB) Skipf(string, ...any)  { f.skipped = true }
func (f *fakeTB) Fatalf(string, ...any) { f.failed = true }

func TestRequire(t *testing.T) {
	t.Setenv(EnvDirVar, t.TempDir())
	for _, ci := range []struct {
		env                string
		wantSkip, wantFail bool
	}{{"", true, false}, {"false", true, false}, {"true", false, true}} {
		t.Setenv("CI", ci.env)
		tb := &fakeTB{TB: t}
		Require(tb, "26.05")
		if tb.skipped != ci.wantSkip || tb.failed != ci.wantFail {
			t.Errorf("CI=%q: skipped=%v failed=%v, want %v %v", ci.env, tb.skipped, tb.failed, ci.wantSkip, ci.wantFail)
		}
	}
}

func TestMint(t *testing.T) {
	key := []byte("0123456789abcdef0123456789abcdef")
	now := time.Unix(1_800_000_000, 0)
	tok, err := mint(key, "alice", now, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	parts := strings.Split(tok, ".")
	if len(parts) != 3 {
		t.Fatalf("token %q has %d parts, want 3", tok, len(parts))
	}
	mac := hmac.New(sha256.New, key)
	mac.Write([]byte(parts[0] + "." + parts[1]))
	if got := base64.RawURLEncoding.EncodeToString(mac.Sum(nil)); got != parts[2] {
		t.Errorf("signature %s, want %s", parts[2], got)
	}
	raw, err := base64.RawURLEncoding.DecodeString(parts[1])
	if err != nil {
		t.Fatal(err)
	}
	var claims map[string]any
	if err := json.Unmarshal(raw, &claims); err != nil {
		t.Fatal(err)
	}
	want := map[string]any{"iat": 1_800_000_000.0, "exp": 1_800_003_600.0, "sun": "alice"}
	if !reflect.DeepEqual(claims, want) {
		t.Errorf("claims %v, want %v", claims, want)
	}
	if _, err := mint(key, "", now, time.Hour); err == nil {
		t.Error("mint accepted an empty user")
	}
}

// TestSetScheduler runs SetScheduler and SetPriorityWeights against fake
// SLURMLAB_SCHED_CMD and SLURMLAB_PRIO_CMD that record their arguments.
func TestSetScheduler(t *testing.T) {
	for _, sw := range []struct {
		name, key, good, other string
		set                    func(l *Lab, ctx context.Context, name string) error
		field                  func(l *Lab) string
	}{
		{"scheduler", "SLURMLAB_SCHED", "backfill", "builtin", (*Lab).SetScheduler, func(l *Lab) string { return l.Sched }},
		{"weights", "SLURMLAB_PRIO", "zero", "fairshare", (*Lab).SetPriorityWeights, func(l *Lab) string { return l.Prio }},
	} {
		t.Run(sw.name, func(t *testing.T) {
			dir := t.TempDir()
			log := filepath.Join(dir, "args")
			script := filepath.Join(dir, "cmd.sh")
			body := "#!/bin/sh\nprintf '%s\\n' \"$*\" >>" + log + "\n[ \"$2\" != " + sw.good + " ] || [ -z \"$FAIL\" ] || { echo refused >&2; exit 3; }\n"
			if err := os.WriteFile(script, []byte(body), 0o755); err != nil {
				t.Fatal(err)
			}
			env := goodEnv
			if i := strings.Index(env, sw.key+"_CMD="); i >= 0 {
				env = env[:i] + env[i+strings.Index(env[i:], "\n")+1:]
			}
			lab, err := Parse(strings.NewReader(env+sw.key+"_CMD=sh "+script+" 24.11\n"), "fake.env")
			if err != nil {
				t.Fatal(err)
			}
			ctx := context.Background()
			tests := []struct {
				name, value, fail string
				wantErr           string // substring; "" for success
				want              string // the field afterwards
			}{
				{"switch", sw.other, "", "", sw.other},
				{"unknown", "gang", "", sw.name + ` "gang"`, sw.other},
				{"command fails", sw.good, "1", "refused", sw.other},
				{"back", sw.good, "", "", sw.good},
			}
			for _, tc := range tests {
				t.Setenv("FAIL", tc.fail)
				err := sw.set(lab, ctx, tc.value)
				if (tc.wantErr == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), tc.wantErr)) {
					t.Errorf("%s: set %q = %v, want error containing %q", tc.name, tc.value, err, tc.wantErr)
				}
				if sw.field(lab) != tc.want || lab.Vars[sw.key] != tc.want {
					t.Errorf("%s: field %q, Vars %q, want %q", tc.name, sw.field(lab), lab.Vars[sw.key], tc.want)
				}
			}
			got, err := os.ReadFile(log)
			if err != nil {
				t.Fatal(err)
			}
			if want := "24.11 " + sw.other + "\n24.11 " + sw.good + "\n24.11 " + sw.good + "\n"; string(got) != want {
				t.Errorf("commands run:\n%s\nwant:\n%s", got, want)
			}
		})
	}
}
