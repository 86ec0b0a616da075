package main

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
)

func TestSpliceBlock(t *testing.T) {
	const block = "| a |\n|---|\n| 1 |\n"
	tests := []struct {
		name, doc, want string
		markerErr       bool
	}{
		{name: "replaces the block", doc: "# T\n\n<!-- bench:begin -->\nold\ntyped 42 s\n<!-- bench:end -->\n\nafter\n",
			want: "# T\n\n<!-- bench:begin -->\n" + block + "<!-- bench:end -->\n\nafter\n"},
		{name: "empty block", doc: "<!-- bench:begin -->\n<!-- bench:end -->",
			want: "<!-- bench:begin -->\n" + block + "<!-- bench:end -->"},
		{name: "no markers", doc: "# T\n", markerErr: true},
		{name: "no end", doc: "<!-- bench:begin -->\nx\n", markerErr: true},
		{name: "end first", doc: "<!-- bench:end -->\nx\n<!-- bench:begin -->\n", markerErr: true},
		{name: "twice", doc: "<!-- bench:begin -->\n<!-- bench:end -->\n<!-- bench:begin -->\n<!-- bench:end -->\n", markerErr: true},
		{name: "marker inside a line", doc: "see <!-- bench:begin -->\nx\n<!-- bench:end -->\n", markerErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := SpliceBlock(tt.doc, block)
			if tt.markerErr {
				if !errors.Is(err, ErrMarkers) {
					t.Fatalf("err = %v, want ErrMarkers", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got != tt.want {
				t.Errorf("got %q\nwant %q", got, tt.want)
			}
			if b, err := Block(got); err != nil || b != block {
				t.Errorf("Block after splice = %q, %v; want the block", b, err)
			}
		})
	}
}

// TestSpliceFile: a file without markers is an error naming it and is
// left as it was, with no temporary file beside it; with markers it is
// rewritten.
func TestSpliceFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "README.md")
	const doc = "# T\nno markers\n"
	if err := os.WriteFile(path, []byte(doc), 0o644); err != nil {
		t.Fatal(err)
	}
	err := SpliceFile(path, "x\n")
	if !errors.Is(err, ErrMarkers) {
		t.Fatalf("err = %v, want ErrMarkers", err)
	}
	if got, _ := os.ReadFile(path); string(got) != doc {
		t.Errorf("file changed to %q", got)
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 1 {
		t.Errorf("%d files in the directory, want the README alone", len(ents))
	}
	if err := os.WriteFile(path, []byte("a\n<!-- bench:begin -->\n<!-- bench:end -->\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := SpliceFile(path, "x\n"); err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile(path); string(got) != "a\n<!-- bench:begin -->\nx\n<!-- bench:end -->\n" {
		t.Errorf("file is %q", got)
	}
}
