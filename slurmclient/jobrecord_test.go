package slurmclient

import (
	"reflect"
	"testing"

	api38 "github.com/asrpt/asrpt/slurmclient/internal/api/v0038"
	api42 "github.com/asrpt/asrpt/slurmclient/internal/api/v0042"
	api44 "github.com/asrpt/asrpt/slurmclient/internal/api/v0044"
)

// TestJobRecordsMatchTheSchema: every field of a job record asrpt decodes
// is the generated job struct's field of the same name, type and JSON key,
// so that the records read what the OpenAPI documents say.
func TestJobRecordsMatchTheSchema(t *testing.T) {
	for _, c := range []struct {
		slim, full any
	}{
		{jobRecord38{}, api38.V0038JobResponseProperties{}},
		{jobRecord42{}, api42.V0042JobInfo{}},
		{jobRecord44{}, api44.V0044JobInfo{}},
	} {
		st, ft := reflect.TypeOf(c.slim), reflect.TypeOf(c.full)
		for i := range st.NumField() {
			f := st.Field(i)
			g, ok := ft.FieldByName(f.Name)
			switch {
			case !ok:
				t.Errorf("%s.%s: no such field in %s", st.Name(), f.Name, ft.Name())
			case g.Type != f.Type:
				t.Errorf("%s.%s is %v, %s's %v", st.Name(), f.Name, f.Type, ft.Name(), g.Type)
			case g.Tag != f.Tag:
				t.Errorf("%s.%s has tag %q, %s's %q", st.Name(), f.Name, f.Tag, ft.Name(), g.Tag)
			}
		}
	}
}
