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
				t.Errorf("CommandKey(%q, %q) = %x, base %x: same = %v, want %v", tc.dir, tc.line, got, base, got == base, tc.same)
			}
			if back, err := ParseCommand(FormatCommand(got)); err != nil || back != got || len(FormatCommand(got)) != 16 {
				t.Errorf("key %d: formatted %q, read back %d, %v", got, FormatCommand(got), back, err)
			}
		})
	}
	for _, dir := range []string{" ", "/home/ann"} {
		if got := CommandKey(dir, " \t"); got != 0 {
			t.Errorf("directory %q without a submit line: %x, want 0", dir, got)
		}
	}
	if CommandKey("", "x y") == CommandKey("x", "y") {
		t.Error("a line and a directory of the same text give one key")
	}
}

// TestParseCommand: what FormatCommand writes reads back; other text is
// an error.
func TestParseCommand(t *testing.T) {
	for _, bad := range []string{"x", "-1", "+1", "0x10", "1_0", "00000000000000001", " 1"} {
		if c, err := ParseCommand(bad); err == nil {
			t.Errorf("ParseCommand(%q) = %d, want an error", bad, c)
		}
	}
	for _, c := range []uint64{0, 1, 0xffffffffffffffff} {
		if back, err := ParseCommand(FormatCommand(c)); err != nil || back != c {
			t.Errorf("%d: read back %d, %v", c, back, err)
		}
	}
}
