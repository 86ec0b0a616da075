package main

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"runtime"
	"runtime/pprof"
)

// profileFlags are --cpuprofile and --memprofile: Go's pprof profiles of a
// run, for `go tool pprof` (make bench and performance work).
type profileFlags struct {
	cpu, mem string
}

func addProfileFlags(fs *flag.FlagSet) *profileFlags {
	p := &profileFlags{}
	fs.StringVar(&p.cpu, "cpuprofile", "", "write a CPU profile of the run to `file` (go tool pprof)")
	fs.StringVar(&p.mem, "memprofile", "", "write a heap profile at the end of the run to `file` (go tool pprof)")
	return p
}

// start begins the CPU profile, if asked for, and returns the function that
// ends it and writes the heap profile; errors name the file.
func (p *profileFlags) start() (stop func() error, err error) {
	var cpu *os.File
	if p.cpu != "" {
		if cpu, err = os.Create(p.cpu); err != nil {
			return nil, fmt.Errorf("--cpuprofile: %w", err)
		}
		if err := pprof.StartCPUProfile(cpu); err != nil {
			cpu.Close()
			return nil, fmt.Errorf("--cpuprofile %s: %w", p.cpu, err)
		}
	}
	return func() error {
		var errs []error
		if cpu != nil {
			pprof.StopCPUProfile()
			if err := cpu.Close(); err != nil {
				errs = append(errs, fmt.Errorf("--cpuprofile %s: %w", p.cpu, err))
			}
		}
		if p.mem != "" {
			errs = append(errs, writeHeapProfile(p.mem))
		}
		return errors.Join(errs...)
	}, nil
}

func writeHeapProfile(path string) error {
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("--memprofile: %w", err)
	}
	runtime.GC()
	err = pprof.Lookup("allocs").WriteTo(f, 0)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("--memprofile %s: %w", path, err)
	}
	return nil
}
