package docs

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestRelativeLinksResolve: every relative link of the repository's
// Markdown files names a file or directory of the repository, so a fresh
// clone's docs stand on their own.
func TestRelativeLinksResolve(t *testing.T) {
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command("git", "-C", root, "ls-files", "*.md").Output()
	if err != nil {
		t.Skipf("not a git checkout: %v", err)
	}
	link := regexp.MustCompile(`\]\(([^)\s]+)\)`)
	files := strings.Fields(string(out))
	if len(files) < 10 {
		t.Fatalf("only %d Markdown files found", len(files))
	}
	checked := 0
	for _, f := range files {
		b, err := os.ReadFile(filepath.Join(root, f))
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range link.FindAllStringSubmatch(string(b), -1) {
			target := m[1]
			if strings.Contains(target, "://") || strings.HasPrefix(target, "#") || strings.HasPrefix(target, "mailto:") {
				continue
			}
			target, _, _ = strings.Cut(target, "#")
			p := filepath.Clean(filepath.Join(root, filepath.Dir(f), target))
			if !strings.HasPrefix(p, root+string(filepath.Separator)) && p != root {
				t.Errorf("%s: link %s leaves the repository", f, m[1])
				continue
			}
			if _, err := os.Stat(p); err != nil {
				t.Errorf("%s: link %s: %v", f, m[1], err)
			}
			checked++
		}
	}
	if checked < 10 {
		t.Errorf("only %d relative links checked", checked)
	}
}
