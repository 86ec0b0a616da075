package slurmclient

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
)

// jobSim is a fake slurmctld's view of one pending job, rendered in the
// shape of a recorded job of the API version and changed by POSTs the way
// the real one was seen to (lab notes §5).
type jobSim struct {
	mu   sync.Mutex
	api  string
	job  map[string]any // recorded job, mutated
	resp func(body map[string]any) (int, string)
	// site is the stored site factor (2^31 + the factor; 0 until one is
	// written, read as 2^31); direct is set by an explicit priority and
	// cleared by a release, as slurmctld's direct_set_prio.
	site   uint64
	direct bool
}

// computed is what multifactor with all weights 0 gives the job: its site
// factor, at least 1.
func (s *jobSim) computed() uint32 {
	f := int64(s.site) - siteFactorOffset
	if s.site == 0 || f < 1 {
		return 1
	}
	return uint32(f)
}

func (s *jobSim) held() bool { h, _ := s.job["hold"].(bool); return h }

func newJobSim(t *testing.T, rel, api string) (*jobSim, string) {
	var m map[string]any
	if err := json.Unmarshal(fixture(t, rel, "jobs"), &m); err != nil {
		t.Fatal(err)
	}
	for _, j := range rawList(m, "jobs") {
		if rawState(j["job_state"]) == "PENDING" {
			s := &jobSim{api: api, job: j}
			s.setGPUs("", 1)
			return s, fmt.Sprint(j["job_id"])
		}
	}
	t.Skip("no pending job recorded")
	return nil, ""
}

func (s *jobSim) setGPUs(typ string, n int) {
	spec := fmt.Sprintf("gpu:%d", n)
	if typ != "" {
		spec = fmt.Sprintf("gpu:%s:%d", typ, n)
	}
	if s.api == "v0.0.38" {
		s.job["tres_per_node"] = "gres:" + spec
	} else {
		s.job["tres_per_node"] = "gres/" + spec
	}
	s.job["tres_req_str"] = fmt.Sprintf("cpu=1,mem=1000M,node=1,billing=1,gres/gpu=%d", n)
}

func (s *jobSim) setPriority(p uint32) {
	if s.api == "v0.0.38" {
		s.job["priority"] = p
	} else {
		s.job["priority"] = map[string]any{"set": true, "infinite": false, "number": p}
	}
}

func (s *jobSim) body() []byte {
	s.mu.Lock()
	defer s.mu.Unlock()
	b, _ := json.Marshal(map[string]any{"jobs": []any{s.job}, "errors": []any{}, "warnings": []any{}})
	return b
}

// apply changes the job by one request body, as slurmctld would.
func (s *jobSim) apply(b []byte) route {
	var body map[string]any
	if err := json.Unmarshal(b, &body); err != nil {
		return route{400, []byte("Unable to parse query.")}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.resp != nil {
		if st, out := s.resp(body); st != 0 {
			return route{st, []byte(out)}
		}
	}
	if acct, ok := body["account"]; ok {
		// slurmctld checks the account before the node list, and refuses
		// the whole request of a job no longer pending.
		switch {
		case rawState(s.job["job_state"]) != "PENDING":
			return route{500, []byte(`{"errors":[{"error_number":2073,"error":"Job is no longer pending execution"}]}`)}
		case acct != s.job["account"]:
			return route{500, []byte(`{"errors":[{"error_number":2045,"error":"Invalid account or account/partition combination specified"}]}`)}
		}
		delete(body, "account")
	}
	for k, v := range body {
		switch k {
		case "priority":
			if m, ok := v.(map[string]any); ok {
				v = m["number"]
			}
			s.setPriority(uint32(v.(float64)))
			s.direct = true
		case "hold":
			if v.(bool) {
				s.setPriority(0)
				s.job["state_reason"] = "JobHeldAdmin"
			} else {
				// A release recomputes the priority, dropping an explicit one.
				s.direct = false
				s.setPriority(s.computed())
				s.job["state_reason"] = "None"
			}
			s.job["hold"] = v
		case "site_factor":
			if s.api == "v0.0.38" {
				return route{200, []byte(`{"errors":[{"description":"Unknown key \"site_factor\"","error_number":9001,"error":"Failure during parsing"}]}`)}
			}
			s.site = uint64(v.(float64))
			if !s.held() && !s.direct {
				s.setPriority(s.computed())
			}
		case "nodelist":
			s.job["required_nodes"] = v
		case "required_nodes":
			s.job["required_nodes"] = strings.Join(toStrings(v), ",")
		case "gres", "tres_per_node":
			g, _, err := parseGPUTres(v.(string))
			if err != nil {
				return route{500, []byte(`{"errors":[{"error_number":2115,"error":"Invalid Trackable RESource (TRES) specification"}]}`)}
			}
			s.setGPUs(g.typ, g.count)
		case "comment":
			s.job["comment"] = v
		case "nice":
			s.job["nice"] = v
		default:
			return route{200, []byte(fmt.Sprintf(`{"errors":[],"warnings":[{"description":"Ignoring unknown field %q","source":"#/%s/"}]}`, k, k))}
		}
	}
	return route{200, []byte(`{"errors":[],"warnings":[]}`)}
}

func toStrings(v any) []string {
	var out []string
	for _, e := range v.([]any) {
		out = append(out, e.(string))
	}
	return out
}

func simClient(t *testing.T, rel, api string) (*fakeRest, *jobSim, Client, string) {
	s, id := newJobSim(t, rel, api)
	f := newFake(t)
	p, _ := prefixes(api)
	f.onPost = func(path string, b []byte) route { return s.apply(b) }
	f.srv.Config.Handler = wrapGet(f, s, p+"/job/"+id)
	return f, s, f.client(t, api), id
}

// wrapGet serves the simulated job on its path and everything else from f.
func wrapGet(f *fakeRest, s *jobSim, path string) httpHandlerFunc {
	return func(w responseWriter, r *request) {
		if r.Method == "GET" && strings.TrimSuffix(r.URL.Path, "/") == path {
			f.set("GET", path, 200, s.body())
		}
		f.serve(w, r)
	}
}

func ptr[T any](v T) *T { return &v }

func TestUpdateOrderAndBodies(t *testing.T) {
	want := map[string][]string{
		"v0.0.38": {`{"hold":false}`, `{"nodelist":"node3,node4"}`, `{"gres":"gpu:2"}`, `{"comment":"asrpt"}`, `{"priority":1000}`},
		"v0.0.42": {`{"hold":false}`, `{"required_nodes":["node3","node4"]}`, `{"tres_per_node":"gres/gpu:2"}`, `{"comment":"asrpt"}`, `{"priority":{"number":1000,"set":true}}`},
	}
	want["v0.0.44"] = want["v0.0.42"]
	for _, r := range releases {
		t.Run(r.rel, func(t *testing.T) {
			f, _, c, id := simClient(t, r.rel, r.api)
			u := JobUpdate{Hold: ptr(false), RequiredNodes: []string{"node3", "node4"}, GPUsPerNode: ptr(2),
				Comment: ptr("asrpt"), Priority: ptr(uint32(1000))}
			if err := c.UpdateJob(ctxT(t), id, u); err != nil {
				t.Fatal(err)
			}
			posts := f.posts()
			if strings.Join(posts, " ") != strings.Join(want[r.api], " ") {
				t.Errorf("POST bodies\n got %v\nwant %v", posts, want[r.api])
			}
			j, err := c.Job(ctxT(t), id)
			if err != nil {
				t.Fatal(err)
			}
			if j.Priority != 1000 || j.GPUs.PerNode != 2 || j.Comment != "asrpt" ||
				strings.Join(j.RequiredNodes, ",") != "node3,node4" {
				t.Errorf("job after update: %+v", j)
			}
		})
	}
}

// TestUpdateClearsNodeList: an empty node list clears ReqNodeList with the
// body each release was seen to take ({"nodelist":""} on 22.05, one empty
// name from 24.11 on: an empty array is ignored there).
func TestUpdateClearsNodeList(t *testing.T) {
	want := map[string]string{"v0.0.38": `{"nodelist":""}`, "v0.0.42": `{"required_nodes":[""]}`, "v0.0.44": `{"required_nodes":[""]}`}
	for _, r := range releases {
		t.Run(r.rel, func(t *testing.T) {
			f, s, c, id := simClient(t, r.rel, r.api)
			s.job["required_nodes"] = "node2"
			if err := c.UpdateJob(ctxT(t), id, JobUpdate{RequiredNodes: []string{}}); err != nil {
				t.Fatal(err)
			}
			posts := f.posts()
			if len(posts) != 1 || posts[0] != want[r.api] {
				t.Errorf("POST bodies %v, want %s", posts, want[r.api])
			}
			if j, _ := c.Job(ctxT(t), id); len(j.RequiredNodes) != 0 {
				t.Errorf("required nodes %v after clearing", j.RequiredNodes)
			}
		})
	}
}

// TestUpdateGuarded: a guarded node list goes out in one request with the
// job's priority and its own account (no hold, no release), and a refusal
// leaves the job as it was.
func TestUpdateGuarded(t *testing.T) {
	want := map[string]string{
		"v0.0.38": `{"account":"lab","nodelist":"node3","priority":1234}`,
		"v0.0.42": `{"account":"lab","priority":{"number":1234,"set":true},"required_nodes":["node3"]}`,
	}
	want["v0.0.44"] = want["v0.0.42"]
	for _, r := range releases {
		for _, refuse := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/refused=%v", r.rel, refuse), func(t *testing.T) {
				f, s, c, id := simClient(t, r.rel, r.api)
				s.setPriority(7)
				if refuse {
					s.resp = func(b map[string]any) (int, string) {
						return 500, `{"errors":[{"error_number":2018,"error":"Invalid node name specified"}]}`
					}
				}
				err := c.UpdateJob(ctxT(t), id, JobUpdate{RequiredNodes: []string{"node3"}, Priority: ptr(uint32(1234)), Guard: true})
				if refuse != (err != nil) || refuse && !errors.Is(err, ErrInvalid) {
					t.Errorf("error %v (refused %v)", err, refuse)
				}
				if posts := f.posts(); len(posts) != 1 || posts[0] != want[r.api] {
					t.Errorf("POST bodies\n got %v\nwant %s", posts, want[r.api])
				}
				j, _ := c.Job(ctxT(t), id)
				wantPrio := uint32(1234)
				if refuse {
					wantPrio = 7
				}
				if j.Held || j.Priority != wantPrio || refuse == (len(j.RequiredNodes) == 1) {
					t.Errorf("job after the guarded update: held %v priority %d nodes %v", j.Held, j.Priority, j.RequiredNodes)
				}
			})
		}
	}
	if err := validate("1", JobUpdate{RequiredNodes: []string{"n1"}, Guard: true, Hold: ptr(true)}); !errors.Is(err, ErrInvalid) {
		t.Errorf("guard with a hold: %v", err)
	}
}

// TestUpdateGuardOnStartedJob: when Slurm starts the job between the
// client's read and its write, slurmctld refuses the whole guarded request
// (2073): ErrNotPending, one POST, and no node list reaches the running job.
func TestUpdateGuardOnStartedJob(t *testing.T) {
	for _, r := range releases {
		t.Run(r.rel, func(t *testing.T) {
			f, s, c, id := simClient(t, r.rel, r.api)
			s.resp = func(b map[string]any) (int, string) {
				if r.api == "v0.0.38" {
					s.job["job_state"] = "RUNNING"
				} else {
					s.job["job_state"] = []any{"RUNNING"}
				}
				return 0, ""
			}
			err := c.UpdateJob(ctxT(t), id, JobUpdate{RequiredNodes: []string{"node3"}, Priority: ptr(uint32(9)), Guard: true})
			if !errors.Is(err, ErrNotPending) {
				t.Errorf("error %v, want ErrNotPending", err)
			}
			if posts := f.posts(); len(posts) != 1 {
				t.Errorf("POST bodies %v, want the one guarded request", posts)
			}
			if j, _ := c.Job(ctxT(t), id); len(j.RequiredNodes) != 0 || j.Priority == 9 {
				t.Errorf("running job got nodes %v priority %d", j.RequiredNodes, j.Priority)
			}
		})
	}
}

// TestUpdateGuardRefusals: a job that shows no usable account is refused
// before anything is sent; a held job is written without being released.
func TestUpdateGuardRefusals(t *testing.T) {
	f, s, c, id := simClient(t, "24.11", "v0.0.42")
	s.job["account"] = ""
	err := c.UpdateJob(ctxT(t), id, JobUpdate{RequiredNodes: []string{"node3"}, Guard: true})
	if !errors.Is(err, ErrInvalid) || len(f.posts()) != 0 {
		t.Errorf("no account: error %v after %d POSTs, want ErrInvalid before any", err, len(f.posts()))
	}
	f, s, c, id = simClient(t, "24.11", "v0.0.42")
	s.job["hold"], s.job["state_reason"] = true, "JobHeldUser"
	s.setPriority(0)
	if err := c.UpdateJob(ctxT(t), id, JobUpdate{RequiredNodes: []string{"node3"}, Guard: true}); err != nil {
		t.Fatal(err)
	}
	if j, _ := c.Job(ctxT(t), id); !j.Held || len(j.RequiredNodes) != 1 || len(f.posts()) != 1 {
		t.Errorf("held job: held %v nodes %v after %v", j.Held, j.RequiredNodes, f.posts())
	}
}

func TestUpdateFailures(t *testing.T) {
	tests := []struct {
		name  string
		u     JobUpdate
		resp  func(map[string]any) (int, string)
		want  error
		posts int
	}{
		{name: "zero priority refused before sending", u: JobUpdate{Priority: ptr(uint32(0))}, want: ErrInvalid},
		{name: "bad node name", u: JobUpdate{RequiredNodes: []string{"node 1"}}, want: ErrInvalid},
		{name: "GPU count 0", u: JobUpdate{GPUsPerNode: ptr(0)}, want: ErrInvalid},
		{name: "GPU type with colon", u: JobUpdate{GPUsPerNode: ptr(1), GPUType: "a:b"}, want: ErrInvalid},
		{name: "comment with newline", u: JobUpdate{Comment: ptr("a\nb")}, want: ErrInvalid},
		{name: "nice with priority", u: JobUpdate{Nice: ptr(1), Priority: ptr(uint32(9))}, want: ErrInvalid},
		{name: "22.05 unknown key: 200 with errors", u: JobUpdate{Comment: ptr("x")}, posts: 1, want: ErrIgnoredField,
			resp: func(map[string]any) (int, string) {
				return 200, `{"errors":[{"description":"Unknown key \"comment\"","error_number":9001,"error":"Failure during parsing"}]}`
			}},
		{name: "24.11 warning about our key", u: JobUpdate{Comment: ptr("x")}, posts: 1, want: ErrIgnoredField,
			resp: func(map[string]any) (int, string) {
				return 200, `{"errors":[],"warnings":[{"description":"Ignoring unknown field \"comment\"","source":"#/comment/"}]}`
			}},
		{name: "permission", u: JobUpdate{Priority: ptr(uint32(5))}, posts: 1, want: ErrPermission,
			resp: func(map[string]any) (int, string) {
				return 500, `{"errors":[{"error_number":2002,"error":"Access/permission denied"}]}`
			}},
		{name: "held", u: JobUpdate{RequiredNodes: []string{"node2"}}, posts: 1, want: ErrHeld,
			resp: func(map[string]any) (int, string) {
				return 500, `{"errors":[{"error_number":2042,"error":"Job is in held state, pending scheduler release"}]}`
			}},
		{name: "not persistent", u: JobUpdate{Priority: ptr(uint32(5))}, posts: 1, want: ErrNotPersistent,
			resp: func(map[string]any) (int, string) {
				return 500, `{"errors":[{"error_number":2095,"error":"Changes to job priority are not persistent, change nice instead"}]}`
			}},
		{name: "success claimed but nothing changed", u: JobUpdate{Comment: ptr("never")}, posts: 1, want: ErrNotApplied,
			resp: func(map[string]any) (int, string) { return 200, `{"errors":[],"warnings":[]}` }},
		{name: "stops at first failure", u: JobUpdate{Comment: ptr("c"), Nice: ptr(3)}, posts: 1, want: ErrPermission,
			resp: func(b map[string]any) (int, string) {
				return 500, `{"errors":[{"error_number":2010,"error":"Invalid user id"}]}`
			}},
	}
	for _, r := range releases {
		for _, tc := range tests {
			t.Run(r.rel+"/"+tc.name, func(t *testing.T) {
				f, s, c, id := simClient(t, r.rel, r.api)
				s.resp = tc.resp
				err := c.UpdateJob(ctxT(t), id, tc.u)
				if !errors.Is(err, tc.want) {
					t.Fatalf("err = %v, want %v", err, tc.want)
				}
				posts := len(f.posts())
				if posts != tc.posts {
					t.Errorf("%d POSTs, want %d", posts, tc.posts)
				}
			})
		}
	}
}

// TestUpdateGPULoss reproduces the 26.05 bug: a rejected tres_per_node
// update drops the job's GPU request; the client must notice.
func TestUpdateGPULoss(t *testing.T) {
	for _, r := range releases {
		t.Run(r.rel, func(t *testing.T) {
			_, s, c, id := simClient(t, r.rel, r.api)
			s.resp = func(b map[string]any) (int, string) {
				delete(s.job, "tres_per_node")
				s.job["tres_req_str"] = "cpu=1,mem=1000M,node=1,billing=1"
				return 422, `{"errors":[{"error_number":2115,"error":"Invalid Trackable RESource (TRES) specification"}]}`
			}
			err := c.UpdateJob(ctxT(t), id, JobUpdate{GPUsPerNode: ptr(2)})
			if !errors.Is(err, ErrNotApplied) || !errors.Is(err, ErrInvalid) {
				t.Fatalf("err = %v, want ErrNotApplied and ErrInvalid", err)
			}
		})
	}
}

// TestUpdateSiteFactor: a site factor goes out offset by 2^31, as slurmctld
// stores it, and makes the priority plugin's value move by it; v0.0.38
// refuses it before sending anything (not even the read).
func TestUpdateSiteFactor(t *testing.T) {
	for _, r := range releases {
		for _, f := range []uint32{0, 1000, MaxSiteFactor} {
			t.Run(fmt.Sprintf("%s/%d", r.rel, f), func(t *testing.T) {
				fr, _, c, id := simClient(t, r.rel, r.api)
				err := c.UpdateJob(ctxT(t), id, JobUpdate{SiteFactor: ptr(f)})
				if !c.SupportsSiteFactor() {
					if !errors.Is(err, ErrUnsupported) || len(fr.log) != 0 {
						t.Errorf("v0.0.38: error %v after %d requests, want ErrUnsupported before any", err, len(fr.log))
					}
					return
				}
				if err != nil {
					t.Fatal(err)
				}
				posts := fr.posts()
				if want := fmt.Sprintf(`{"site_factor":%d}`, uint64(1<<31)+uint64(f)); len(posts) != 1 || posts[0] != want {
					t.Errorf("POST bodies %v, want %s", posts, want)
				}
				if j, _ := c.Job(ctxT(t), id); j.Priority != max(f, 1) {
					t.Errorf("priority %d after site factor %d, want %d", j.Priority, f, max(f, 1))
				}
			})
		}
	}
	if err := validate("1", JobUpdate{SiteFactor: ptr(uint32(MaxSiteFactor + 1))}); !errors.Is(err, ErrInvalid) {
		t.Errorf("site factor above MaxSiteFactor: %v", err)
	}
}

// TestUpdateGuardedSiteFactor: a guarded node list without a priority goes
// out in one request with the site factor; an explicit priority set before
// stays (taking it back is a release, which the caller sends on its own).
func TestUpdateGuardedSiteFactor(t *testing.T) {
	want := `{"account":"lab","required_nodes":["node3"],"site_factor":2147484148}`
	for _, r := range releases[1:] {
		t.Run(r.rel, func(t *testing.T) {
			f, s, c, id := simClient(t, r.rel, r.api)
			err := c.UpdateJob(ctxT(t), id, JobUpdate{RequiredNodes: []string{"node3"}, SiteFactor: ptr(uint32(500)), Guard: true})
			if err != nil {
				t.Fatal(err)
			}
			if posts := f.posts(); len(posts) != 1 || posts[0] != want {
				t.Errorf("POST bodies\n got %v\nwant %s", posts, want)
			}
			if j, _ := c.Job(ctxT(t), id); j.Held || j.Priority != 500 || len(j.RequiredNodes) != 1 {
				t.Errorf("job after the guarded update: held %v priority %d nodes %v", j.Held, j.Priority, j.RequiredNodes)
			}
			s.setPriority(99)
			s.direct = true
			if err := c.UpdateJob(ctxT(t), id, JobUpdate{RequiredNodes: []string{"node4"}, SiteFactor: ptr(uint32(600)), Guard: true}); err != nil {
				t.Fatal(err)
			}
			if j, _ := c.Job(ctxT(t), id); j.Priority != 99 {
				t.Errorf("explicit priority %d after a guarded update, want it kept (99)", j.Priority)
			}
		})
	}
}
