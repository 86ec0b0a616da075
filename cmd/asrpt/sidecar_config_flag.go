package main

import (
	"flag"
	"fmt"

	"github.com/asrpt/asrpt/loop"
)

// sidecarConfigFlag adds --sidecar-config to fs (replay and quality) and
// returns the function that loads it after parsing: the site's sidecar
// configuration the closed-loop policies run (nil without the flag).
func sidecarConfigFlag(fs *flag.FlagSet) func() (*loop.Site, error) {
	path := fs.String("sidecar-config", "", "asrpt-sidecar, asrpt-sidecar-priority: run the sidecar with the site's configuration `file` "+
		"(its asrpt.toml: interval, policy settings, write bounds; the write mode is the policy's, with its defaults for what the file leaves unset; the connection settings are not used) "+
		"instead of the defaults")
	return func() (*loop.Site, error) {
		if *path == "" {
			return nil, nil
		}
		site, err := loop.LoadSite(*path)
		if err != nil {
			return nil, fmt.Errorf("--sidecar-config: %w", err)
		}
		return site, nil
	}
}
