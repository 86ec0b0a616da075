package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/asrpt/asrpt/internal/golden"
)

// TestCommittedResults: results.md is what results.json renders to, and
// the README's bench block is results.md, so that a figure typed into
// either fails here. After a change of the tables' layout:
// go run ./test/bench -render -readme README.md.
func TestCommittedResults(t *testing.T) {
	res, err := readResults(".")
	if err != nil {
		t.Fatal(err)
	}
	md, err := os.ReadFile("results.md")
	if err != nil {
		t.Fatal(err)
	}
	if want := Markdown(res); string(md) != want {
		t.Errorf("results.md is not what results.json renders to (go run ./test/bench -render -readme README.md):\n%s",
			golden.Diff(string(md), want))
	}
	readme, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	block, err := Block(string(readme))
	if err != nil {
		t.Fatalf("README.md: %v", err)
	}
	if block != string(md) {
		t.Errorf("README.md's bench block is not results.md (go run ./test/bench -render -readme README.md):\n%s",
			golden.Diff(string(md), block))
	}
}
