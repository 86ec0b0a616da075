package tomlbound

import (
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/BurntSushi/toml"
)

// nested returns "a=" and n levels of inline tables, "{b={b=…1…}}".
func nested(n int) string {
	return "a=" + strings.Repeat("{b=", n-1) + "{b=1" + strings.Repeat("}", n) + "\n"
}

func TestCheck(t *testing.T) {
	tests := []struct {
		name string
		in   string
		line int // 0: accepted
		err  error
	}{
		{"empty", "", 0, nil},
		{"flat", "[bandwidth]\nnvlink = \"300 GB/s\"\n[[node]]\nnames = \"n[1-4]\"\n", 0, nil},
		{"at the limit", nested(MaxDepth), 0, nil},
		{"arrays at the limit", "x=" + strings.Repeat("[", MaxDepth) + strings.Repeat("]", MaxDepth), 0, nil},
		{"one level too deep", nested(MaxDepth + 1), 1, ErrTooDeep},
		{"reproducer: 10000 levels", nested(10000), 1, ErrTooDeep},
		{"deep on line 3", "# c\nx = 1\ny=" + strings.Repeat("[", MaxDepth+1), 3, ErrTooDeep},
		{"brackets in strings", "a=\"" + strings.Repeat("{[", 40) + "\"\nb='" + strings.Repeat("[", 40) + "'\n", 0, nil},
		{"brackets in a comment", "a=1 # " + strings.Repeat("{", 40) + "\n", 0, nil},
		{"escaped quote", `a="\"` + strings.Repeat("[", 40) + `"` + "\n", 0, nil},
		{"multi-line basic string", "a=\"\"\"\n" + strings.Repeat("[", 40) + "\n\"\"\"\nb=" + strings.Repeat("[", MaxDepth+1), 4, ErrTooDeep},
		{"multi-line literal string", "a='''\n\n" + strings.Repeat("{", 40) + "'''\nb=" + strings.Repeat("{", MaxDepth+1), 4, ErrTooDeep},
		{"quotes closing a multi-line string", "a=\"\"\"x\"\"\"\"\"\nb=" + strings.Repeat("[", MaxDepth+1), 2, ErrTooDeep},
		{"unterminated string ends at the line", "a=\"x\nb=" + strings.Repeat("[", MaxDepth+1), 2, ErrTooDeep},
		{"dotted key at the limit", strings.Repeat("a.", MaxDepth-1) + "a = 1.5\n", 0, nil},
		{"dotted header at the limit", "[" + strings.Repeat("a . ", MaxDepth-1) + "\"a.b\"]\nx=1979-05-27T07:32:00.999\n", 0, nil},
		{"floats are not keys", "x = [" + strings.Repeat("1.5, ", 40) + "]\ny = {" + strings.Repeat("a.b = 1.5, ", 40) + "}", 0, nil},
		{"dotted key too long", "\n" + strings.Repeat("a.", MaxDepth) + "a = 1\n", 2, ErrTooDeep},
		{"reproducer: 10000 key parts", strings.Repeat("a.", 10000) + "a = 1\n", 1, ErrTooDeep},
		{"dotted header too long", "[" + strings.Repeat("\"a\".", MaxDepth) + "a]\n", 1, ErrTooDeep},
		{"too large", strings.Repeat("#", MaxSize+1), 0, ErrTooLarge},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			line, err := Check([]byte(tt.in))
			if !errors.Is(err, tt.err) || line != tt.line {
				t.Fatalf("Check = %d, %v; want %d, %v", line, err, tt.line, tt.err)
			}
			if err != nil && errors.Is(err, ErrTooDeep) && !strings.Contains(err.Error(), "16") {
				t.Errorf("error %q does not name the limit", err)
			}
		})
	}
}

// TestCheckAcceptsWhatDecodes checks that files the decoder reads at depth
// up to MaxDepth pass, so Check changes nothing for normal input.
func TestCheckAcceptsWhatDecodes(t *testing.T) {
	for _, in := range []string{
		nested(MaxDepth),
		"[a.b]\nc = [[1, 2], [3]]\nd = { e = { f = [\"]\"] } }\n",
		"[[x]]\ny = '''\n[[[[\n'''\n",
		strings.Repeat("a.", MaxDepth-1) + "a = 1.5\n",
		"[" + strings.Repeat("a . ", MaxDepth-1) + "\"a.b\"]\nx=1979-05-27T07:32:00.999\n",
	} {
		var v map[string]any
		if _, err := toml.Decode(in, &v); err != nil {
			t.Fatalf("test input %q does not decode: %v", in, err)
		}
		if line, err := Check([]byte(in)); err != nil {
			t.Errorf("Check(%q) = %d, %v", in, line, err)
		}
	}
}

func TestReadFile(t *testing.T) {
	dir := t.TempDir()
	ok := filepath.Join(dir, "ok.toml")
	big := filepath.Join(dir, "big.toml")
	if err := os.WriteFile(ok, []byte("a = 1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(big, make([]byte, MaxSize+1), 0o644); err != nil {
		t.Fatal(err)
	}
	if b, err := ReadFile(ok); err != nil || string(b) != "a = 1\n" {
		t.Errorf("ReadFile(ok) = %q, %v", b, err)
	}
	if _, err := ReadFile(big); !errors.Is(err, ErrTooLarge) || !strings.Contains(err.Error(), big) {
		t.Errorf("ReadFile(big) = %v; want ErrTooLarge naming the file", err)
	}
	if _, err := ReadFile(dir); !errors.Is(err, ErrNotRegular) {
		t.Errorf("ReadFile(dir) = %v; want ErrNotRegular", err)
	}
	if runtime.GOOS != "windows" {
		fifo := filepath.Join(dir, "fifo")
		if err := syscall.Mkfifo(fifo, 0o600); err != nil {
			t.Skip("mkfifo:", err)
		}
		done := make(chan error, 1)
		go func() { _, err := ReadFile(fifo); done <- err }()
		select {
		case err := <-done:
			if !errors.Is(err, ErrNotRegular) || !strings.Contains(err.Error(), fifo) {
				t.Errorf("ReadFile(fifo) = %v; want ErrNotRegular naming the file", err)
			}
		case <-time.After(5 * time.Second):
			t.Fatal("ReadFile(fifo) blocked")
		}
	}
}

// TestDecodeReproducer shows the bound on the reproducer of quadratic
// decoding: 10,000 levels are refused before decoding, fast.
func TestDecodeReproducer(t *testing.T) {
	in := []byte(nested(10000))
	start := time.Now()
	line, err := Check(in)
	if !errors.Is(err, ErrTooDeep) || line != 1 {
		t.Fatalf("Check = %d, %v", line, err)
	}
	if d := time.Since(start); d > 100*time.Millisecond {
		t.Errorf("Check took %v", d)
	}
}
