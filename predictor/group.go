package predictor

import "github.com/asrpt/asrpt/job"

// GroupKey returns the key of j's recurrence group: its user and the
// family of its name (Family). Jobs of one group share the features that
// change when one of them finishes, so a finish is a reason to predict the
// group's waiting jobs again (design §5.3).
func GroupKey(j *job.Job) string { return j.User + "\x00" + Family(j.Name) }
