//go:build integration

// Package integration holds smoke tests of the Slurm labs started by
// test/slurmlab/lab.sh: every lab whose env file exists must answer a REST
// ping over JWT (TCP) and over rest_auth/local (unix socket), and show its
// nodes idle with their GPUs. Under CI=true a missing lab fails the test.
package integration

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/asrpt/asrpt/test/slurmlab"
)

// pingResponse is the part of every API version's ping answer checked here.
type pingResponse struct {
	Errors []json.RawMessage `json:"errors"`
	Pings  []struct {
		Ping       string `json:"ping"`       // v0.0.38: "UP"
		Pinged     string `json:"pinged"`     // v0.0.40–v0.0.44: "UP"
		Responding *bool  `json:"responding"` // v0.0.40+ (v0.0.45 has only this)
	} `json:"pings"`
}

func checkPing(t *testing.T, client *http.Client, url string, header http.Header) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header = header
	resp, err := client.Do(req)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		t.Fatalf("GET %s: reading body: %v", url, err)
	}
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: HTTP %d: %.300s", url, resp.StatusCode, body)
	}
	var p pingResponse
	if err := json.Unmarshal(body, &p); err != nil {
		t.Fatalf("GET %s: %v: %.300s", url, err, body)
	}
	if len(p.Errors) != 0 || len(p.Pings) == 0 {
		t.Fatalf("GET %s: errors %s, %d pings", url, p.Errors, len(p.Pings))
	}
	for i, ping := range p.Pings {
		up := ping.Ping == "UP" || ping.Pinged == "UP" || (ping.Responding != nil && *ping.Responding)
		if !up {
			t.Errorf("GET %s: pings[%d] is not up: %+v", url, i, ping)
		}
	}
}

func TestLabs(t *testing.T) {
	for _, version := range slurmlab.Versions {
		t.Run(version, func(t *testing.T) {
			lab := slurmlab.Require(t, version)
			if len(lab.APIVersions) == 0 {
				t.Fatalf("lab %s lists no API versions", version)
			}
			tcp := &http.Client{Timeout: 15 * time.Second}
			sock := lab.SocketClient(15 * time.Second)
			for _, api := range lab.APIVersions {
				path := "/slurm/" + api + "/ping"
				t.Run("jwt/"+api, func(t *testing.T) {
					tok, err := lab.Token()
					if err != nil {
						t.Fatal(err)
					}
					checkPing(t, tcp, lab.URL+path, http.Header{
						"X-Slurm-User-Name":  {lab.TokenUser},
						"X-Slurm-User-Token": {tok},
					})
				})
				t.Run("socket/"+api, func(t *testing.T) {
					checkPing(t, sock, "http://localhost"+path, http.Header{})
				})
			}
			t.Run("minted-token", func(t *testing.T) {
				// A token signed here with the lab's key, for a plain user.
				tok, err := lab.MintToken("alice", time.Now(), 5*time.Minute)
				if err != nil {
					t.Fatal(err)
				}
				api := lab.APIVersions[len(lab.APIVersions)-1]
				checkPing(t, tcp, lab.URL+"/slurm/"+api+"/ping", http.Header{
					"X-Slurm-User-Name":  {"alice"},
					"X-Slurm-User-Token": {tok},
				})
			})
			t.Run("sinfo", func(t *testing.T) { checkNodes(t, lab) })
		})
	}
}

// checkNodes waits (up to a minute, as other tests may still be finishing
// jobs) until sinfo shows every node idle with all its GPUs.
func checkNodes(t *testing.T, lab *slurmlab.Lab) {
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	wantGres := fmt.Sprintf("gpu:%s:%d", lab.GPUType, lab.GPUsPerNode)
	var last string
	for {
		out, err := lab.Run(ctx, "sinfo", "-h", "-N", "-p", lab.Partition, "-o", "%N|%t|%G")
		if err != nil {
			t.Fatal(err)
		}
		last = out
		if problem := nodeProblem(out, lab.Nodes, wantGres); problem == "" {
			return
		} else if ctx.Err() != nil || strings.Contains(problem, "gres") || strings.Contains(problem, "nodes,") {
			t.Fatalf("sinfo on lab %s: %s\n%s", lab.Version, problem, last)
		}
		select {
		case <-ctx.Done():
			t.Fatalf("sinfo on lab %s: nodes not idle in time:\n%s", lab.Version, last)
		case <-time.After(time.Second):
		}
	}
}

// nodeProblem says what is wrong with sinfo output "NAME|STATE|GRES" lines,
// or returns "" when there are n distinct nodes, all idle with wantGres.
func nodeProblem(out string, n int, wantGres string) string {
	seen := map[string]bool{}
	var notIdle []string
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		f := strings.Split(line, "|")
		if len(f) != 3 {
			return fmt.Sprintf("bad sinfo line %q", line)
		}
		seen[f[0]] = true
		// GRES may carry a socket suffix, e.g. gpu:tesla:4(S:0).
		if g, _, _ := strings.Cut(f[2], "("); g != wantGres {
			return fmt.Sprintf("node %s has gres %q, want %q", f[0], f[2], wantGres)
		}
		if f[1] != "idle" {
			notIdle = append(notIdle, f[0]+"="+f[1])
		}
	}
	if len(seen) != n {
		return fmt.Sprintf("%d nodes, want %d", len(seen), n)
	}
	if len(notIdle) > 0 {
		return "not idle: " + strings.Join(notIdle, " ")
	}
	return ""
}

func TestNodeProblem(t *testing.T) {
	const idle = "node1|idle|gpu:tesla:4\nnode2|idle|gpu:tesla:4(S:0)\n"
	tests := []struct {
		name, out string
		n         int
		want      string // substring of the problem; "" means none
	}{
		{"all idle", idle, 2, ""},
		{"one allocated", idle + "node3|mix|gpu:tesla:4\n", 3, "not idle: node3=mix"},
		{"missing node", idle, 3, "2 nodes, want 3"},
		{"wrong gres", "node1|idle|gpu:tesla:2\n", 1, `gres "gpu:tesla:2"`},
		{"garbage", "node1 idle\n", 1, "bad sinfo line"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := nodeProblem(tt.out, tt.n, "gpu:tesla:4")
			if (tt.want == "") != (got == "") || !strings.Contains(got, tt.want) {
				t.Errorf("nodeProblem = %q, want %q", got, tt.want)
			}
		})
	}
}
