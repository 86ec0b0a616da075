//go:build !cgo

package topo

import (
	"errors"
	"testing"
)

func TestProbeNotBuilt(t *testing.T) {
	if _, err := Probe("x"); !errors.Is(err, ErrNotBuilt) {
		t.Fatalf("err = %v, want ErrNotBuilt", err)
	}
	if NVMLBuilt {
		t.Error("NVMLBuilt is true without cgo")
	}
}
