package main

import (
	"flag"
	"fmt"

	"github.com/asrpt/asrpt/sidecar"
)

// sidecarConfigFlag adds --sidecar-config to fs (replay and quality) and
// returns the function that loads it after parsing: the site's sidecar
// configuration the closed-loop policies run (nil without the flag).
func sidecarConfigFlag(fs *flag.FlagSet) func() (*sidecar.Config, error) {
	path := fs.String("sidecar-config", "", "asrpt-sidecar, asrpt-sidecar-priority: run the sidecar with the site's configuration `file` "+
		"(its asrpt.toml: interval, policy settings, write bounds; the write mode is the policy's, the connection settings are not used) "+
		"instead of the defaults")
	return func() (*sidecar.Config, error) {
		if *path == "" {
			return nil, nil
		}
		cfg, err := sidecar.LoadConfig(*path)
		if err != nil {
			return nil, fmt.Errorf("--sidecar-config: %w", err)
		}
		return &cfg, nil
	}
}
