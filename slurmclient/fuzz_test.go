package slurmclient

import (
	"bytes"
	"errors"
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/asrpt/asrpt/hostlist"
	"github.com/asrpt/asrpt/internal/fuzzbound"
)

// bodyRT answers every request with one canned status and body.
type bodyRT struct {
	status int
	body   []byte
}

func (b bodyRT) RoundTrip(r *http.Request) (*http.Response, error) {
	return &http.Response{StatusCode: b.status, Body: io.NopCloser(bytes.NewReader(b.body)), Header: http.Header{}, Request: r}, nil
}

func fuzzClient(t testing.TB, api string, status int, body []byte, maxBody int64) Client {
	tr, err := newTransport(Config{URL: "http://slurm.invalid", TokenFile: testToken(t, "root"), Retries: -1,
		MaxBody: maxBody, HTTPClient: &http.Client{Transport: bodyRT{status, body}}})
	if err != nil {
		t.Fatal(err)
	}
	c, err := adapter(api, tr)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// typed reports whether err wraps one of this package's sentinels.
func typed(err error) bool {
	for _, s := range []error{ErrAuth, ErrPermission, ErrJobGone, ErrNotPersistent, ErrHeld, ErrNotPending,
		ErrInvalid, ErrIgnoredField, ErrNotApplied, ErrUnsupported, ErrBadResponse, ErrServer} {
		if errors.Is(err, s) {
			return true
		}
	}
	return false
}

// FuzzDecoders feeds arbitrary bodies and statuses to every read of every
// adapter: the result is data or a typed error, never a panic.
func FuzzDecoders(f *testing.F) {
	for _, r := range releases {
		which := uint8(slices.Index(APIVersions, r.api)) // the recording's own adapter
		for _, name := range fixtureNames {
			f.Add(which, uint16(200), fixture(f, r.rel, name))
		}
	}
	f.Add(uint8(1), uint16(200), []byte(`{"jobs":[{"job_id":1,`))
	f.Add(uint8(2), uint16(500), []byte(`{"errors":[{"error_number":"x"}]}`))
	f.Add(uint8(0), uint16(200), []byte(`{"jobs":[{"job_id":1,"job_state":["NEW_STATE"],"tres_per_node":"gres/gpu:x:y:z"}]}`))
	f.Add(uint8(2), uint16(200), []byte(`{"nodes":[{"name":"n","state":["WEIRD"],"gres":"gpu:1(IDX:9-1)"}]}`))
	// Heterogeneous components in accounting, merged under their leader.
	f.Add(uint8(0), uint16(200), []byte(`{"jobs":[{"job_id":9,"het":{"job_id":8,"job_offset":1},"state":{"current":"COMPLETED"},"time":{"end":5,"elapsed":3}},{"job_id":8,"het":{"job_id":8,"job_offset":null},"state":{"current":"COMPLETED"},"time":{"end":5}}]}`))
	f.Add(uint8(2), uint16(200), []byte(`{"jobs":[{"job_id":9,"het":{"job_id":8,"job_offset":{"set":true,"number":1}},"state":{"current":["COMPLETED"]},"time":{"end":5}},{"job_id":8,"het":{"job_id":-8},"state":{"current":["FAILED"]},"time":{"end":5}}]}`))
	f.Fuzz(func(t *testing.T, which uint8, status uint16, body []byte) {
		fuzzbound.Within(t, time.Second, func() {
			api := APIVersions[int(which)%len(APIVersions)]
			c := fuzzClient(t, api, 100+int(status)%500, body, 1<<20)
			ctx := ctxT(t)
			check := func(op string, err error) {
				if err != nil && !typed(err) {
					t.Fatalf("%s %s: untyped error %v", api, op, err)
				}
			}
			_, err := c.Ping(ctx)
			check("ping", err)
			_, err = c.Jobs(ctx)
			check("jobs", err)
			_, err = c.Job(ctx, "1")
			check("job", err)
			_, err = c.Nodes(ctx)
			check("nodes", err)
			_, err = c.AccountingJobs(ctx, time.Unix(0, 0), time.Unix(1<<40, 0))
			check("accounting", err)
		})
	})
}

func FuzzHostlist(f *testing.F) {
	for _, s := range []string{"node[1-3,5],gpu01", "r[01-02]n[1-2]", "n[0-99999]", "a[", "]"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		fuzzbound.Within(t, time.Second, func() {
			hs, err := expandHostlist(s)
			if err == nil && len(hs) > hostlist.MaxHosts {
				t.Fatalf("%d hosts", len(hs))
			}
		})
	})
}

func FuzzGPUStrings(f *testing.F) {
	for _, s := range []string{"gres:gpu:tesla:4", "gres/gpu:2", "gpu:tesla:2(IDX:0-1)", "cpu=1,gres/gpu=2", "gpu:a:1(IDX:0,2-3),gpu:b:0(IDX:N/A)"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		fuzzbound.Within(t, time.Second, func() {
			if r, err := gpuRequest(s, s, s); err == nil && (r.Total < 0 || r.PerNode < 0) {
				t.Fatalf("negative count from %q: %+v", s, r)
			}
			nodeGPUs(s)
			if idx, err := gpuIndices(s); err == nil && len(idx) > 1<<13*strings.Count(s, ",")+1<<13 {
				t.Fatalf("%d indices from %q", len(idx), s)
			}
		})
	})
}

// FuzzArrayAndHet: the array and heterogeneous job fields never yield a
// shape the record does not have, nor more than maxHetComponents ids.
func FuzzArrayAndHet(f *testing.F) {
	f.Add(int64(10), int64(-1), int64(2), "3-6%2", int64(11), "11-12", int64(1))
	f.Add(int64(0), int64(0), int64(0), "", int64(5), "5,7,9-10", int64(0))
	f.Add(int64(4294967295), int64(4294967294), int64(-1), "1-4294967295", int64(1), "1-4294967295", int64(7))
	f.Fuzz(func(t *testing.T, arr, task, max int64, tasks string, het int64, set string, off int64) {
		fuzzbound.Within(t, time.Second, func() {
			j := Job{ID: "1"}
			if err := arrayAndHet(&j, arr, true, task, task >= 0, max, tasks, het, true, set, off); err != nil {
				return
			}
			if len(j.Het.Components) > maxHetComponents || len(j.Array.Tasks) > maxArrayTasksLen {
				t.Fatalf("%d components, %d bytes of tasks", len(j.Het.Components), len(j.Array.Tasks))
			}
			if (j.Array.JobID == "") != (arr <= 0) || (j.Het.LeaderID == "") != (het <= 0) {
				t.Fatalf("array %q from %d, het %q from %d", j.Array.JobID, arr, j.Het.LeaderID, het)
			}
		})
	})
}

func TestHugeResponse(t *testing.T) {
	body := append([]byte(`{"jobs":[`), bytes.Repeat([]byte(`{"job_id":1},`), 1<<16)...)
	c := fuzzClient(t, "v0.0.42", 200, body, 64<<10)
	if _, err := c.Jobs(ctxT(t)); !errors.Is(err, ErrBadResponse) || !strings.Contains(err.Error(), "larger than") {
		t.Fatalf("err = %v, want ErrBadResponse for a body over the limit", err)
	}
}
