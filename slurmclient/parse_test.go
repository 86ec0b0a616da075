package slurmclient

import (
	"errors"
	"slices"
	"strings"
	"testing"
)

func TestExpandHostlist(t *testing.T) {
	tests := []struct {
		in      string
		want    []string
		wantErr bool
	}{
		{"", nil, false},
		{"node3", []string{"node3"}, false},
		{"node[2-3]", []string{"node2", "node3"}, false},
		{"node[1-2,4],gpu01", []string{"node1", "node2", "node4", "gpu01"}, false},
		{"r[01-02]n[1-2]", []string{"r01n1", "r01n2", "r02n1", "r02n2"}, false},
		{"n[008-010]", []string{"n008", "n009", "n010"}, false},
		{"node[3-1]", nil, true},
		{"node[1-", nil, true},
		{"node]", nil, true},
		{"n[0-99999999]", nil, true},
	}
	for _, tc := range tests {
		got, err := expandHostlist(tc.in)
		if (err != nil) != tc.wantErr || !slices.Equal(got, tc.want) {
			t.Errorf("expandHostlist(%q) = %v, %v; want %v, err %v", tc.in, got, err, tc.want, tc.wantErr)
		}
	}
}

func TestGPURequest(t *testing.T) {
	tests := []struct {
		perNode, perJob, req string
		want                 GPURequest
	}{
		{"gres:gpu:2", "", "cpu=2,mem=2G,node=1,billing=2,gres/gpu=2", GPURequest{PerNode: 2, Total: 2}},
		{"gres:gpu:tesla:4", "", "cpu=1,gres/gpu=4,gres/gpu:tesla=4", GPURequest{PerNode: 4, Type: "tesla", Total: 4}},
		{"", "gres:gpu:3", "cpu=1,node=1", GPURequest{PerJob: 3, Total: 3}},
		{"gres/gpu:2", "", "cpu=1,mem=1000M,node=2,billing=1,gres/gpu=4", GPURequest{PerNode: 2, Total: 4}},
		{"gres/gpu:tesla:1", "", "", GPURequest{PerNode: 1, Type: "tesla", Total: 1}},
		{"gres/shard:2,gres/gpu:1", "", "", GPURequest{PerNode: 1, Total: 1}},
		{"gres/gpu", "", "", GPURequest{PerNode: 1, Total: 1}},
		{"", "", "cpu=1,mem=1G", GPURequest{}},
		{"gres/gpu:tesla", "", "", GPURequest{PerNode: 1, Type: "tesla", Total: 1}},
	}
	for _, tc := range tests {
		got, err := gpuRequest(tc.perNode, tc.perJob, tc.req)
		if err != nil || got != tc.want {
			t.Errorf("gpuRequest(%q, %q, %q) = %+v, %v; want %+v", tc.perNode, tc.perJob, tc.req, got, err, tc.want)
		}
	}
	for _, bad := range []string{"gres/gpu:a:b:c", "gres/gpu:tesla:-1", "gres/gpu:99999999999"} {
		if _, err := gpuRequest(bad, "", ""); err == nil {
			t.Errorf("gpuRequest(%q): no error", bad)
		}
	}
}

func TestNodeGPUsAndIndices(t *testing.T) {
	tests := []struct {
		gres string
		n    int
		typ  string
	}{
		{"gpu:tesla:4", 4, "tesla"},
		{"gpu:tesla:4(S:0-1)", 4, "tesla"},
		{"gpu:tesla:1(IDX:0)", 1, "tesla"},
		{"gpu:tesla:0(IDX:N/A)", 0, "tesla"},
		{"gpu:a100:2(IDX:0,2),gpu:v100:1(IDX:3)", 3, "a100"},
		{"", 0, ""},
	}
	for _, tc := range tests {
		n, typ, err := nodeGPUs(tc.gres)
		if err != nil || n != tc.n || typ != tc.typ {
			t.Errorf("nodeGPUs(%q) = %d, %q, %v; want %d, %q", tc.gres, n, typ, err, tc.n, tc.typ)
		}
	}
	idx := []struct {
		in   string
		want []int
	}{
		{"gpu:tesla:2(IDX:0-1)", []int{0, 1}},
		{"gpu:2(IDX:0,2-3)", []int{0, 2, 3}},
		{"gpu:tesla:0(IDX:N/A)", nil},
		{"gpu:1", nil},
	}
	for _, tc := range idx {
		got, err := gpuIndices(tc.in)
		if err != nil || !slices.Equal(got, tc.want) {
			t.Errorf("gpuIndices(%q) = %v, %v; want %v", tc.in, got, err, tc.want)
		}
	}
}

func TestClassify(t *testing.T) {
	e := func(n int, msg, src string) []apiError {
		return []apiError{{Number: n, Error: msg, Source: src}}
	}
	tests := []struct {
		name   string
		status int
		errs   []apiError
		warns  []apiWarning
		sent   []string
		want   error
	}{
		{"ok", 200, nil, nil, nil, nil},
		{"warning about another key", 200, nil, []apiWarning{{Description: "x", Source: "#/other/"}}, []string{"comment"}, nil},
		{"warning about our key", 200, nil, []apiWarning{{Description: `Ignoring unknown field "gres"`, Source: "#/gres/"}}, []string{"gres"}, ErrIgnoredField},
		{"type warning on our key", 200, nil, []apiWarning{{Description: "Expected OpenAPI type=array", Source: "#/required_nodes"}}, []string{"required_nodes"}, ErrIgnoredField},
		{"22.05 disabled key", 200, []apiError{{Number: 1, Error: "Operation not permitted", Description: `Disabled key: "required_nodes"`}, {Number: 9001}}, nil, nil, ErrIgnoredField},
		{"22.05 error_code", 200, []apiError{{Code: 9202, Error: "Unable to read string"}}, nil, nil, ErrIgnoredField},
		// A read sends no key: its 200 with errors[] is no ignored field.
		{"read: 200 with a controller error", 200, e(1011, "Unable to contact slurm controller", "slurm_load_jobs"), nil, nil, ErrServer},
		{"read: 200 with -1", 200, e(-1, "Unspecified error", "slurm_load_jobs"), nil, nil, ErrServer},
		{"read: 200 with 2017", 200, e(2017, "Invalid job id specified", ""), nil, nil, ErrJobGone},
		{"2017", 404, e(2017, "Invalid job id specified", ""), nil, nil, ErrJobGone},
		{"2017 as 500", 500, e(2017, "Invalid job id specified", ""), nil, nil, ErrJobGone},
		{"2084 finished (22.05/24.11)", 500, e(2084, "Job has already finished", ""), nil, nil, ErrJobGone},
		{"2084 finished (26.05)", 422, e(2084, "Job has already finished", ""), nil, nil, ErrJobGone},
		{"2002", 500, e(2002, "Access/permission denied", ""), nil, nil, ErrPermission},
		{"2010 as 422", 422, e(2010, "Invalid user id", ""), nil, nil, ErrPermission},
		{"2095", 500, e(2095, "Changes to job priority are not persistent", ""), nil, nil, ErrNotPersistent},
		{"2042", 500, e(2042, "Job is in held state", ""), nil, nil, ErrHeld},
		{"2018", 422, e(2018, "Invalid node name specified", ""), nil, nil, ErrInvalid},
		{"2073", 422, e(2073, "Requested operation not supported on this job", ""), nil, nil, ErrNotPending},
		{"2115", 500, e(2115, "Invalid TRES specification", ""), nil, nil, ErrInvalid},
		{"1007 511", 511, e(1007, "Protocol authentication error", "slurm_load_jobs()"), nil, nil, ErrAuth},
		{"22.05 bad token", 500, e(-1, "Unspecified error", "slurm_load_jobs"), nil, nil, ErrAuth},
		{"401 plain", 401, nil, nil, nil, ErrAuth},
		{"500 other", 500, e(-1, "Unspecified error", "_update_job"), nil, nil, ErrServer},
		{"404 no errors", 404, nil, nil, nil, ErrUnsupported},
		{"400", 400, nil, nil, nil, ErrInvalid},
		{"wrong type 9202", 500, []apiError{{Number: 9202}, {Number: 9000}}, nil, nil, ErrInvalid},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			op := "POST /x"
			if strings.HasPrefix(tc.name, "read:") {
				op = "GET /x"
			}
			err := classify(op, tc.status, tc.errs, tc.warns, tc.sent, "plain")
			if tc.want == nil {
				if err != nil {
					t.Fatalf("err = %v, want nil", err)
				}
				return
			}
			if !errors.Is(err, tc.want) {
				t.Fatalf("err = %v, want %v", err, tc.want)
			}
			var ae *APIError
			if !errors.As(err, &ae) || ae.Status != tc.status || !strings.Contains(err.Error(), op) {
				t.Errorf("err %v: not an APIError with status and op", err)
			}
		})
	}
}
