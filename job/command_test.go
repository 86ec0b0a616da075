package job

import "testing"

// TestCommandKey: white space does not count, the directory and the
// line are kept apart, and the key is 16 hex digits.
func TestCommandKey(t *testing.T) {
	base := CommandKey("/home/ann/bert", "sbatch train.sh --epochs 90")
	for _, tc := range []struct {
		name, dir, line string
		same            bool
	}{
		{"same", "/home/ann/bert", "sbatch train.sh --epochs 90", true},
		{"spacing", " /home/ann/bert\n", "sbatch  train.sh\t--epochs 90 ", true},
		{"other argument", "/home/ann/bert", "sbatch train.sh --epochs 30", false},
		{"other directory", "/home/ann/gpt", "sbatch train.sh --epochs 90", false},
		{"split moved", "/home/ann/bert sbatch", "train.sh --epochs 90", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := CommandKey(tc.dir, tc.line)
			if (got == base) != tc.same {
				t.Errorf("CommandKey(%q, %q) = %s, base %s: same = %v, want %v", tc.dir, tc.line, got, base, got == base, tc.same)
			}
			if len(got) != 16 {
				t.Errorf("key %q is not 16 digits", got)
			}
		})
	}
	for _, dir := range []string{" ", "/home/ann"} {
		if got := CommandKey(dir, " \t"); got != "" {
			t.Errorf("directory %q without a submit line: %q, want \"\"", dir, got)
		}
	}
	if CommandKey("", "x y") == CommandKey("x", "y") {
		t.Error("a line and a directory of the same text give one key")
	}
}
