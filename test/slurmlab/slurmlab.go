// Package slurmlab finds the real Slurm clusters ("labs") that
// test/slurmlab/lab.sh starts and gives integration tests what they need to
// use one: the REST endpoints, a JWT, and a way to run Slurm client commands
// (sinfo, scontrol, sbatch) against that lab's release.
//
// A running lab is described by the file $SLURMLAB_ENV_DIR/slurmlab-VERSION.env
// (default directory /tmp), written by `lab.sh up VERSION` and removed by
// `lab.sh down VERSION`. Its lines are KEY=VALUE, the value being the rest of
// the line; blank lines and lines starting with # are ignored.
//
// Tests call Require, which skips when a lab is not up, except under CI
// (CI=true), where a missing lab is a failure.
package slurmlab

import (
	"bufio"
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// Versions lists the lab versions lab.sh knows, oldest first.
var Versions = []string{"22.05", "24.11", "26.05"}

// EnvDirVar names the environment variable that overrides the directory of
// the env files (default /tmp).
const EnvDirVar = "SLURMLAB_ENV_DIR"

// ErrNotUp is returned by Load when a lab's env file does not exist. It wraps
// fs.ErrNotExist.
var ErrNotUp = fmt.Errorf("slurm lab is not up: %w", fs.ErrNotExist)

// maxEnvBytes bounds an env file; real ones are about 1.5 kB.
const maxEnvBytes = 64 << 10

// Lab describes one running Slurm lab. Paths are host paths.
type Lab struct {
	Version     string   // lab version as passed to lab.sh: "22.05", "24.11", "26.05"
	Release     string   // Slurm release, e.g. "24.11.5"
	URL         string   // slurmrestd with rest_auth/jwt, e.g. http://127.0.0.1:7820
	Socket      string   // unix socket of slurmrestd with rest_auth/local (peers: root or the operator)
	JWTKeyFile  string   // HS256 key slurmctld verifies tokens with
	TokenFile   string   // a long-lived (one year) token for TokenUser
	TokenUser   string   // user of TokenFile: the service user with AdminLevel=Operator
	APIVersions []string // REST API versions served, e.g. ["v0.0.40" "v0.0.41" "v0.0.42"]
	Cluster     string   // ClusterName
	ConfDir     string   // directory holding slurm.conf, gres.conf, slurmdbd.conf
	Root        string   // chroot of the lab; empty when it runs on the host
	LogDir      string   // daemon logs
	Partition   string   // the default partition, containing every node (PriorityTier 1)
	Partition2  string   // a second partition over node3 and node4 (PriorityTier 2)
	Account     string   // the account every test user belongs to
	Users       []string // test users registered in slurmdbd: alice, bob and the operator
	Operator    string   // the service user with AdminLevel=Operator
	Nodes       int      // number of nodes, named node1…nodeN
	GPUsPerNode int      // fake GPUs per node
	GPUType     string   // GRES type of the GPUs, e.g. "tesla"
	Sched       string   // scheduler plugin at start-up: "backfill" or "builtin"
	Prio        string   // multifactor weights: "zero" (all 0) or "fairshare" (lab.sh prio)

	Exec     []string // command prefix running a Slurm client command as root in the lab
	As       []string // command prefix running USER CMD… in the lab
	SchedCmd []string // command prefix switching the scheduler: append "builtin" or "backfill"
	PrioCmd  []string // command prefix switching the weights: append "zero" or "fairshare"
	TokenCmd []string // command prefix printing a JWT: append USER [LIFESPAN_S]

	// Vars holds every KEY=VALUE of the file, including keys not mapped above.
	Vars map[string]string
}

// EnvDir is the directory holding the labs' env files.
func EnvDir() string {
	if d := os.Getenv(EnvDirVar); d != "" {
		return d
	}
	return "/tmp"
}

// EnvFile is the path of the env file of lab version.
func EnvFile(version string) string {
	return filepath.Join(EnvDir(), "slurmlab-"+version+".env")
}

// Load reads the env file of lab version. It returns an error wrapping
// ErrNotUp (and fs.ErrNotExist) when the lab is not up.
func Load(version string) (*Lab, error) {
	name := EnvFile(version)
	f, err := os.Open(name)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("lab %s: %s: %w", version, name, ErrNotUp)
	}
	if err != nil {
		return nil, fmt.Errorf("lab %s: %w", version, err)
	}
	defer f.Close()
	lab, err := Parse(f, name)
	if err != nil {
		return nil, err
	}
	if lab.Version != version {
		return nil, fmt.Errorf("%s: SLURMLAB_VERSION is %q, want %q", name, lab.Version, version)
	}
	return lab, nil
}

// Require returns lab version, or ends the test: with t.Skip when the lab is
// not up, or with t.Fatal when it is not up and the environment has CI=true,
// or when its env file is bad.
func Require(t testing.TB, version string) *Lab {
	t.Helper()
	lab, err := Load(version)
	switch {
	case errors.Is(err, ErrNotUp) && os.Getenv("CI") != "true":
		t.Skipf("Slurm lab %s is not up (start it with `make lab-up LAB=%s`)", version, version)
	case err != nil:
		t.Fatalf("Slurm lab %s: %v", version, err)
	}
	return lab
}

var keyRE = regexp.MustCompile(`^[A-Z][A-Z0-9_]*$`)

// Parse reads an env file; name is used in error messages. Every problem is
// reported with the file name, line and key. SLURMLAB_VERSION, SLURMLAB_URL,
// SLURMLAB_SOCKET, SLURMLAB_JWT_KEY, SLURMLAB_TOKEN_FILE and SLURMLAB_EXEC are
// required. Command prefixes are split on white space (lab.sh writes no
// quoted words).
func Parse(r io.Reader, name string) (*Lab, error) {
	vars := map[string]string{}
	lines := map[string]int{}
	sc := bufio.NewScanner(io.LimitReader(r, maxEnvBytes+1))
	sc.Buffer(make([]byte, 4096), maxEnvBytes+1)
	n, size := 0, 0
	for sc.Scan() {
		n++
		size += len(sc.Bytes()) + 1
		if size > maxEnvBytes {
			return nil, fmt.Errorf("%s:%d: file larger than %d bytes", name, n, maxEnvBytes)
		}
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		k, v, ok := strings.Cut(line, "=")
		if !ok {
			return nil, fmt.Errorf("%s:%d: %q is not KEY=VALUE", name, n, truncate(line))
		}
		if !keyRE.MatchString(k) {
			return nil, fmt.Errorf("%s:%d: bad key %q", name, n, truncate(k))
		}
		if prev, dup := lines[k]; dup {
			return nil, fmt.Errorf("%s:%d: %s: already set on line %d", name, n, k, prev)
		}
		vars[k], lines[k] = v, n
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s:%d: %w", name, n+1, err)
	}
	for _, k := range []string{"SLURMLAB_VERSION", "SLURMLAB_URL", "SLURMLAB_SOCKET", "SLURMLAB_JWT_KEY",
		"SLURMLAB_TOKEN_FILE", "SLURMLAB_EXEC"} {
		if vars[k] == "" {
			return nil, fmt.Errorf("%s: %s: missing or empty", name, k)
		}
	}
	lab := &Lab{
		Version: vars["SLURMLAB_VERSION"], Release: vars["SLURMLAB_RELEASE"],
		URL: vars["SLURMLAB_URL"], Socket: vars["SLURMLAB_SOCKET"],
		JWTKeyFile: vars["SLURMLAB_JWT_KEY"], TokenFile: vars["SLURMLAB_TOKEN_FILE"],
		TokenUser: vars["SLURMLAB_TOKEN_USER"], APIVersions: strings.Fields(vars["SLURMLAB_API_VERSIONS"]),
		Cluster: vars["SLURMLAB_CLUSTER"], ConfDir: vars["SLURMLAB_CONF_DIR"], Root: vars["SLURMLAB_ROOT"],
		LogDir: vars["SLURMLAB_LOG_DIR"], Partition: vars["SLURMLAB_PARTITION"],
		Partition2: vars["SLURMLAB_PARTITION2"],
		Account:    vars["SLURMLAB_ACCOUNT"], Users: strings.Fields(vars["SLURMLAB_USERS"]),
		Operator: vars["SLURMLAB_OPERATOR"], GPUType: vars["SLURMLAB_GPU_TYPE"], Sched: vars["SLURMLAB_SCHED"],
		Prio: vars["SLURMLAB_PRIO"], PrioCmd: strings.Fields(vars["SLURMLAB_PRIO_CMD"]),
		Exec: strings.Fields(vars["SLURMLAB_EXEC"]), As: strings.Fields(vars["SLURMLAB_AS"]),
		SchedCmd: strings.Fields(vars["SLURMLAB_SCHED_CMD"]), TokenCmd: strings.Fields(vars["SLURMLAB_TOKEN_CMD"]),
		Vars: vars,
	}
	if !strings.HasPrefix(lab.URL, "http://") && !strings.HasPrefix(lab.URL, "https://") {
		return nil, fmt.Errorf("%s:%d: SLURMLAB_URL: %q is not an http(s) URL", name, lines["SLURMLAB_URL"], truncate(lab.URL))
	}
	for _, f := range []struct {
		key string
		dst *int
	}{{"SLURMLAB_NODES", &lab.Nodes}, {"SLURMLAB_GPUS_PER_NODE", &lab.GPUsPerNode}} {
		s, ok := vars[f.key]
		if !ok {
			continue
		}
		v, err := strconv.Atoi(s)
		if err != nil || v < 0 {
			return nil, fmt.Errorf("%s:%d: %s: %q is not a count", name, lines[f.key], f.key, truncate(s))
		}
		*f.dst = v
	}
	return lab, nil
}

func truncate(s string) string {
	if len(s) > 60 {
		return s[:60] + "…"
	}
	return s
}

// Token reads the operator's long-lived token from TokenFile. The file is
// re-read on every call (lab.sh up replaces it).
func (l *Lab) Token() (string, error) {
	b, err := os.ReadFile(l.TokenFile)
	if err != nil {
		return "", fmt.Errorf("lab %s token: %w", l.Version, err)
	}
	tok := strings.TrimSpace(string(b))
	if tok == "" {
		return "", fmt.Errorf("lab %s token: %s is empty", l.Version, l.TokenFile)
	}
	return tok, nil
}

// MintToken signs a Slurm JWT (HS256, claims iat, exp and sun) for user with
// the lab's key, valid from now for lifespan. slurmctld accepts it like one
// from `scontrol token`; a negative lifespan makes an expired token.
func (l *Lab) MintToken(user string, now time.Time, lifespan time.Duration) (string, error) {
	key, err := os.ReadFile(l.JWTKeyFile)
	if err != nil {
		return "", fmt.Errorf("lab %s: %w", l.Version, err)
	}
	return mint(key, user, now, lifespan)
}

func mint(key []byte, user string, now time.Time, lifespan time.Duration) (string, error) {
	if user == "" {
		return "", errors.New("mint token: empty user name")
	}
	enc := base64.RawURLEncoding
	claims, err := json.Marshal(struct {
		Exp int64  `json:"exp"`
		Iat int64  `json:"iat"`
		Sun string `json:"sun"`
	}{now.Add(lifespan).Unix(), now.Unix(), user})
	if err != nil {
		return "", fmt.Errorf("mint token: %w", err)
	}
	msg := enc.EncodeToString([]byte(`{"alg":"HS256","typ":"JWT"}`)) + "." + enc.EncodeToString(claims)
	mac := hmac.New(sha256.New, key)
	mac.Write([]byte(msg))
	return msg + "." + enc.EncodeToString(mac.Sum(nil)), nil
}

// SocketClient is an HTTP client whose every request goes to the lab's
// rest_auth/local unix socket; use URLs like http://localhost/slurm/v0.0.42/ping.
// Only root and the operator's uid may connect.
func (l *Lab) SocketClient(timeout time.Duration) *http.Client {
	var d net.Dialer
	return &http.Client{
		Timeout: timeout,
		Transport: &http.Transport{
			DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
				return d.DialContext(ctx, "unix", l.Socket)
			},
		},
	}
}

// Command returns a command running args (a Slurm client command such as
// sinfo, with its arguments) as root in the lab.
func (l *Lab) Command(ctx context.Context, args ...string) *exec.Cmd {
	full := append(append([]string{}, l.Exec[1:]...), args...)
	return exec.CommandContext(ctx, l.Exec[0], full...)
}

// Run runs args as root in the lab and returns its standard output. A failure
// includes the command's standard error.
func (l *Lab) Run(ctx context.Context, args ...string) (string, error) {
	return run(l.Command(ctx, args...), l.Version, args)
}

// RunAs runs args as user (one of Users) in the lab and returns its standard
// output.
func (l *Lab) RunAs(ctx context.Context, user string, args ...string) (string, error) {
	if len(l.As) == 0 {
		return "", fmt.Errorf("lab %s: no SLURMLAB_AS in %s", l.Version, EnvFile(l.Version))
	}
	full := append(append(append([]string{}, l.As[1:]...), user), args...)
	return run(exec.CommandContext(ctx, l.As[0], full...), l.Version, args)
}

// SetScheduler switches SchedulerType to sched/<name> ("builtin" or
// "backfill"), restarting slurmctld; jobs survive. It returns once the nodes
// are back, with l.Sched updated. Tests that switch should switch back.
func (l *Lab) SetScheduler(ctx context.Context, name string) error {
	return l.reconfigure(ctx, "scheduler", l.SchedCmd, "SLURMLAB_SCHED", &l.Sched, name, "builtin", "backfill")
}

// SetPriorityWeights switches the multifactor weights: "zero" (every
// weight 0, the labs' default: a job's priority is what is set explicitly,
// or its site factor) or "fairshare" (PriorityWeightFairshare=10000,
// PriorityWeightAge=1000), restarting slurmctld; jobs survive, and the
// restart recomputes fair share at once (its decay pass runs at start). It
// returns once the nodes are back, with l.Prio updated. Tests that switch
// should switch back.
func (l *Lab) SetPriorityWeights(ctx context.Context, name string) error {
	return l.reconfigure(ctx, "weights", l.PrioCmd, "SLURMLAB_PRIO", &l.Prio, name, "zero", "fairshare")
}

// reconfigure runs the lab.sh command prefix cmd (the env file's key+"_CMD")
// with name, one of allowed, and records name in *field and Vars[key].
func (l *Lab) reconfigure(ctx context.Context, what string, cmd []string, key string, field *string, name string, allowed ...string) error {
	if !slices.Contains(allowed, name) {
		return fmt.Errorf("lab %s: %s %q: want %s", l.Version, what, name, strings.Join(allowed, " or "))
	}
	if len(cmd) == 0 {
		return fmt.Errorf("lab %s: no %s_CMD in %s (run lab.sh up again)", l.Version, key, EnvFile(l.Version))
	}
	full := append(append([]string{}, cmd[1:]...), name)
	if _, err := run(exec.CommandContext(ctx, cmd[0], full...), l.Version, []string{what, name}); err != nil {
		return err
	}
	*field = name
	if l.Vars != nil {
		l.Vars[key] = name
	}
	return nil
}

func run(cmd *exec.Cmd, version string, args []string) (string, error) {
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return stdout.String(), fmt.Errorf("lab %s: %s: %w: %s", version, strings.Join(args, " "), err,
			strings.TrimSpace(stderr.String()))
	}
	return stdout.String(), nil
}
