package main

import (
	"errors"
	"fmt"
	"strings"

	"github.com/asrpt/asrpt/policy"
)

// checkParams validates the policy tunables given as flags: a value out of
// range is a usage error naming the flag (--comm-heavy, --tau, …) and the
// values allowed.
func checkParams(p policy.Params) error {
	err := p.Validate()
	if err == nil {
		return nil
	}
	var pe *policy.ParamError
	if errors.As(err, &pe) {
		return fmt.Errorf("%w: --%s %s: want %s", errUsage, strings.ReplaceAll(pe.Name, "_", "-"), pe.Value, pe.Want)
	}
	return fmt.Errorf("%w: %w", errUsage, err)
}
