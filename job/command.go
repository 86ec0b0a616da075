package job

import (
	"fmt"
	"hash/fnv"
	"strconv"
	"strings"
)

// CommandKey returns the Command of a job that was submitted by
// submitLine (Slurm's SubmitLine, e.g. "sbatch --gres=gpu:4 train.sh
// --epochs 90") from the directory workDir (Slurm's WorkDir): an FNV-64a
// hash of the two, with runs of white space counted as one space and the
// ends trimmed. It is 0 (no command) when the submit line is empty: a
// directory alone is not a command (one user submits everything from the
// same one), and a key made of it would pool unrelated jobs. The text is
// user-written and may hold anything (paths, arguments, secrets): only the
// hash is kept, so a model file or trace written from it does not repeat
// it. A hash that comes out 0 is taken as 1.
func CommandKey(workDir, submitLine string) uint64 {
	workDir, submitLine = strings.TrimSpace(workDir), strings.TrimSpace(submitLine)
	if submitLine == "" {
		return 0
	}
	h := fnv.New64a()
	for i, s := range [2]string{workDir, submitLine} {
		if i > 0 {
			h.Write([]byte{0})
		}
		for k, f := range strings.Fields(s) {
			if k > 0 {
				h.Write([]byte{' '})
			}
			h.Write([]byte(f))
		}
	}
	return max(h.Sum64(), 1)
}

// FormatCommand writes a Command as traces hold it: 16 hex digits, "" for
// 0 (no command).
func FormatCommand(c uint64) string {
	if c == 0 {
		return ""
	}
	return fmt.Sprintf("%016x", c)
}

// ParseCommand reads what FormatCommand writes: "" is 0; anything but 1 to
// 16 hex digits is an error.
func ParseCommand(s string) (uint64, error) {
	if s == "" {
		return 0, nil
	}
	c, err := strconv.ParseUint(s, 16, 64) // no sign, prefix or '_' with an explicit base
	if err != nil || len(s) > 16 {
		return 0, fmt.Errorf("command %.32q is not 1 to 16 hex digits", s)
	}
	return c, nil
}
