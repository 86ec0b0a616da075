package job

import (
	"hash/fnv"
	"strconv"
	"strings"
)

// CommandKey returns the Command of a job that was submitted by
// submitLine (Slurm's SubmitLine, e.g. "sbatch --gres=gpu:4 train.sh
// --epochs 90") from the directory workDir (Slurm's WorkDir): a 16-digit
// hex hash of the two, with runs of white space counted as one space and
// the ends trimmed. It is "" when the submit line is empty: a directory
// alone is not a command (one user submits everything from the same
// one), and a key made of it would pool unrelated jobs. The text is
// user-written and may hold anything (paths, arguments, secrets): only the
// hash is kept, so a model file or trace written from it does not repeat
// it.
func CommandKey(workDir, submitLine string) string {
	workDir, submitLine = strings.TrimSpace(workDir), strings.TrimSpace(submitLine)
	if submitLine == "" {
		return ""
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
	k := strconv.FormatUint(h.Sum64(), 16)
	return strings.Repeat("0", 16-len(k)) + k
}
