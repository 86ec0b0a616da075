package sidecar

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/asrpt/asrpt/slurmclient"
)

// TestFailReason: each error from Slurm gets its label, and the label
// says what the failed write means: stop the cycle (systemic), wait for
// the next read (raced), or count it against the job only (refused); a
// node list refused as invalid or as an ignored field is final.
func TestFailReason(t *testing.T) {
	for _, c := range []struct {
		err                                                error
		want                                               FailReason
		systemic, raced, refused, nodesFinal, stillPending bool
	}{
		{nil, FailNone, false, false, false, false, true},
		{slurmclient.ErrJobGone, FailJobGone, false, true, false, false, false},
		{slurmclient.ErrPermission, FailPermission, true, false, false, false, false},
		{slurmclient.ErrAuth, FailAuth, true, false, false, false, false},
		{slurmclient.ErrNotPending, FailNotPending, false, true, false, false, false},
		{slurmclient.ErrInvalid, FailInvalid, false, false, true, true, true},
		{slurmclient.ErrIgnoredField, FailIgnoredField, false, false, true, true, true},
		{slurmclient.ErrNotApplied, FailNotApplied, false, false, true, false, true},
		{slurmclient.ErrAppliedDespiteError, FailAppliedDespiteError, false, false, false, false, true},
		{slurmclient.ErrHeld, FailHeld, false, true, false, false, false},
		{slurmclient.ErrServer, FailServer, false, false, false, false, false},
		{slurmclient.ErrBadResponse, FailBadResponse, false, false, false, false, false},
		{context.Canceled, FailCanceled, true, false, false, false, false},
		{context.DeadlineExceeded, FailTimeout, true, false, false, false, false},
		{errors.New("connection reset"), FailOther, false, false, false, false, false},
	} {
		err := c.err
		if err != nil {
			err = fmt.Errorf("update job 7: %w", err)
		}
		r := Reason(err)
		if r != c.want {
			t.Errorf("Reason(%v) = %q, want %q", err, r, c.want)
			continue
		}
		if r.Systemic() != c.systemic || r.Raced() != c.raced || r.Refused() != c.refused ||
			r.NodesFinal() != c.nodesFinal || r.StillPending() != c.stillPending {
			t.Errorf("%q: systemic %v raced %v refused %v final %v pending %v", r,
				r.Systemic(), r.Raced(), r.Refused(), r.NodesFinal(), r.StillPending())
		}
	}
}
