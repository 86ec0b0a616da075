package slurmclient

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
)

// shapesOf returns the jobs of the jobs-shapes recording of release r, as
// the adapter reads them.
func shapesOf(t *testing.T, rel, api string) []Job {
	t.Helper()
	f := newFake(t)
	p, _ := prefixes(api)
	f.set("GET", p+"/jobs", 200, fixture(t, rel, "jobs-shapes"))
	jobs, err := f.client(t, api).Jobs(ctxT(t))
	if err != nil {
		t.Fatal(err)
	}
	return jobs
}

// TestAdapterJobShapes reads the shapes recorded from each real Slurm: an
// array running two tasks at its throttle of 2 with tasks 3-4 pending, a
// pending heterogeneous job of two components (1 + 2 GPUs) and a pending
// job submitted to two partitions.
func TestAdapterJobShapes(t *testing.T) {
	for _, r := range releases {
		t.Run(r.rel, func(t *testing.T) {
			by := map[Shape][]Job{}
			var multi []Job
			for _, j := range shapesOf(t, r.rel, r.api) {
				by[j.Shape()] = append(by[j.Shape()], j)
				if len(j.Partitions()) > 1 {
					multi = append(multi, j)
				}
			}
			rem := by[ShapeArrayRemainder]
			if len(rem) != 1 || rem[0].Array.Tasks != "3-4" || rem[0].Array.Throttle != 2 || rem[0].Array.JobID != rem[0].ID ||
				rem[0].State != "PENDING" || rem[0].GPUs.Total != 1 {
				t.Fatalf("array remainders %+v: want one, tasks 3-4, throttle 2, pending, 1 GPU", rem)
			}
			tasks := by[ShapeArrayTask]
			if len(tasks) != 2 {
				t.Fatalf("array tasks %+v: want the two running ones", tasks)
			}
			var idx []int
			for _, task := range tasks {
				if task.Array.JobID != rem[0].ID || task.State != "RUNNING" || task.ID == rem[0].ID || task.Array.Tasks != "" {
					t.Errorf("array task %+v", task)
				}
				idx = append(idx, task.Array.TaskID)
			}
			slices.Sort(idx)
			if !slices.Equal(idx, []int{1, 2}) {
				t.Errorf("running task indices %v, want 1 2", idx)
			}
			lead, comp := by[ShapeHetLeader], by[ShapeHetComponent]
			if len(lead) != 1 || len(comp) != 1 {
				t.Fatalf("het leader %+v, components %+v: want one each", lead, comp)
			}
			if want := []string{lead[0].ID, comp[0].ID}; !slices.Equal(lead[0].Het.Components, want) ||
				!slices.Equal(comp[0].Het.Components, want) || comp[0].Het.LeaderID != lead[0].ID || comp[0].Het.Offset != 1 ||
				lead[0].GPUs.Total != 1 || comp[0].GPUs.Total != 2 {
				t.Errorf("het job %+v / %+v", lead[0], comp[0])
			}
			if len(multi) != 1 || multi[0].State != "PENDING" || !slices.Contains(multi[0].Partitions(), "gpu") ||
				!slices.Contains(multi[0].Partitions(), "urgent") {
				t.Errorf("multi-partition jobs %+v: want one pending in gpu and urgent", multi)
			}
		})
	}
}

// newShapeSim is a jobSim of the record of shape sh in the jobs-shapes
// recording of release rel.
func newShapeSim(t *testing.T, rel, api string, sh Shape) (*jobSim, string) {
	t.Helper()
	var want string
	for _, j := range shapesOf(t, rel, api) {
		if j.Shape() == sh {
			want = j.ID
			break
		}
	}
	var m map[string]any
	if err := json.Unmarshal(fixture(t, rel, "jobs-shapes"), &m); err != nil {
		t.Fatal(err)
	}
	for _, j := range rawList(m, "jobs") {
		if fmt.Sprint(j["job_id"]) == want {
			return &jobSim{api: api, job: j}, want
		}
	}
	t.Fatalf("no %s record in the recording of %s", sh, rel)
	return nil, ""
}

// TestUpdateArrayRemainder: an update of an array's remainder reaches its
// pending tasks only (22.05: by their indices, since an update of the
// array's id reaches the running tasks too; 24.11+: by the array's id),
// and a value Slurm applied although it answered an error is recognised
// by the re-read.
func TestUpdateArrayRemainder(t *testing.T) {
	for _, r := range releases {
		t.Run(r.rel, func(t *testing.T) {
			s, id := newShapeSim(t, r.rel, r.api, ShapeArrayRemainder)
			f := newFake(t)
			p, _ := prefixes(r.api)
			f.onPost = func(path string, b []byte) route {
				rt := s.apply(b)
				if r.api == "v0.0.38" {
					// What 22.05 answers, having applied the update.
					return route{200, []byte(`{"errors":[{"description":"job array update from [localhost]:1 failed","source":"_parse_job_list"}]}`)}
				}
				return rt
			}
			f.srv.Config.Handler = wrapGet(f, s, p+"/job/"+id)
			c := f.client(t, r.api)
			err := c.UpdateJob(ctxT(t), id, JobUpdate{Priority: ptr(uint32(4242))})
			wantPath := p + "/job/" + id
			if r.api == "v0.0.38" {
				wantPath += "_[3-4]"
				if !errors.Is(err, ErrAppliedDespiteError) {
					t.Errorf("error %v, want ErrAppliedDespiteError", err)
				}
			} else if err != nil {
				t.Errorf("error %v", err)
			}
			var posts []string
			for _, l := range f.log {
				if strings.HasPrefix(l, "POST ") {
					posts = append(posts, strings.TrimSuffix(strings.TrimPrefix(l, "POST "), "?"))
				}
			}
			if !slices.Equal(posts, []string{wantPath}) {
				t.Errorf("POSTs %v, want %s", posts, wantPath)
			}
			if j, _ := c.Job(ctxT(t), id); j.Priority != 4242 {
				t.Errorf("priority %d after the update", j.Priority)
			}
		})
	}
}

// TestUpdateRefusedByShape: nothing is sent for a node list or GPU count
// of an array or heterogeneous job, for a component other than the
// leader, or for a job that is not pending.
func TestUpdateRefusedByShape(t *testing.T) {
	for _, r := range releases {
		for _, c := range []struct {
			shape Shape
			u     JobUpdate
			want  error
		}{
			{ShapeArrayRemainder, JobUpdate{RequiredNodes: []string{"node1"}}, ErrInvalid},
			{ShapeArrayRemainder, JobUpdate{GPUsPerNode: ptr(1)}, ErrInvalid},
			{ShapeArrayTask, JobUpdate{Priority: ptr(uint32(7))}, ErrNotPending},
			{ShapeHetLeader, JobUpdate{RequiredNodes: []string{"node1"}}, ErrInvalid},
			{ShapeHetComponent, JobUpdate{Priority: ptr(uint32(7))}, ErrInvalid},
		} {
			t.Run(fmt.Sprintf("%s/%s", r.rel, c.shape), func(t *testing.T) {
				s, id := newShapeSim(t, r.rel, r.api, c.shape)
				f := newFake(t)
				p, _ := prefixes(r.api)
				f.onPost = func(path string, b []byte) route { return s.apply(b) }
				f.srv.Config.Handler = wrapGet(f, s, p+"/job/"+id)
				err := f.client(t, r.api).UpdateJob(ctxT(t), id, c.u)
				if !errors.Is(err, c.want) {
					t.Errorf("error %v, want %v", err, c.want)
				}
				for _, l := range f.log {
					if strings.HasPrefix(l, "POST") {
						t.Errorf("sent %s", l)
					}
				}
			})
		}
	}
}

// TestUpdateRefusedNotApplied: an error answer whose value the re-read
// does not show stays an error.
func TestUpdateRefusedNotApplied(t *testing.T) {
	s, id := newShapeSim(t, "22.05", "v0.0.38", ShapeArrayRemainder)
	f := newFake(t)
	f.onPost = func(string, []byte) route {
		return route{200, []byte(`{"errors":[{"description":"job array update from [localhost]:1 failed","source":"_parse_job_list"}]}`)}
	}
	f.srv.Config.Handler = wrapGet(f, s, "/slurm/v0.0.38/job/"+id)
	err := f.client(t, "v0.0.38").UpdateJob(ctxT(t), id, JobUpdate{Priority: ptr(uint32(4242))})
	if err == nil || errors.Is(err, ErrAppliedDespiteError) {
		t.Errorf("error %v, want a refusal", err)
	}
}

func TestExpandIDSet(t *testing.T) {
	for _, c := range []struct {
		in   string
		want []string
		bad  bool
	}{
		{"", nil, false},
		{"11-12", []string{"11", "12"}, false},
		{"5,7,9-10", []string{"5", "7", "9", "10"}, false},
		{"9-7", nil, true},
		{"1-100000", nil, true},
		{"x", nil, true},
		{"4294967296", nil, true},
	} {
		got, err := expandIDSet(c.in)
		if (err != nil) != c.bad || !slices.Equal(got, c.want) {
			t.Errorf("expandIDSet(%q) = %v, %v", c.in, got, err)
		}
	}
}

// TestNotPersistentStaysNotPersistent: 2095 (an owner lowering a priority:
// applied, but not lasting) stays ErrNotPersistent although the re-read
// shows the value.
func TestNotPersistentStaysNotPersistent(t *testing.T) {
	s, id := newShapeSim(t, "24.11", "v0.0.42", ShapePlain)
	f := newFake(t)
	f.onPost = func(_ string, b []byte) route {
		s.apply(b)
		return route{500, []byte(`{"errors":[{"error_number":2095,"error":"Changes to job priority are not persistent, change nice instead"}]}`)}
	}
	f.srv.Config.Handler = wrapGet(f, s, "/slurm/v0.0.42/job/"+id)
	err := f.client(t, "v0.0.42").UpdateJob(ctxT(t), id, JobUpdate{Priority: ptr(uint32(50))})
	if !errors.Is(err, ErrNotPersistent) || errors.Is(err, ErrAppliedDespiteError) {
		t.Errorf("error %v, want ErrNotPersistent", err)
	}
}
