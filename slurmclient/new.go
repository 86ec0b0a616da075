package slurmclient

import (
	"context"
	"errors"
	"fmt"
	"strings"
)

// APIVersions lists the REST API versions this package speaks, newest first;
// probing tries them in this order.
var APIVersions = []string{"v0.0.44", "v0.0.42", "v0.0.38"}

func adapter(api string, t *transport) (Client, error) {
	r := rest{t: t}
	switch api {
	case "v0.0.44":
		return &v0044{r}, nil
	case "v0.0.42":
		return &v0042{r}, nil
	case "v0.0.38":
		return &v0038{r}, nil
	}
	return nil, fmt.Errorf("slurmclient: %w: API version %q (supported: %s)", ErrUnsupported, api, strings.Join(APIVersions, ", "))
}

// New connects to slurmrestd and returns the adapter for cfg.API, or, when
// that is empty, for the newest API version whose ping answers. It fails
// with ErrAuth at once when the token is refused, and with ErrUnsupported
// when no known version answers.
func New(ctx context.Context, cfg Config) (Client, error) {
	t, err := newTransport(cfg)
	if err != nil {
		return nil, err
	}
	if cfg.API != "" {
		c, err := adapter(cfg.API, t)
		if err != nil {
			return nil, err
		}
		if _, err := c.Ping(ctx); err != nil {
			return nil, fmt.Errorf("slurmclient: %s: %w", cfg.API, err)
		}
		return c, nil
	}
	var tried []error
	for _, v := range APIVersions {
		c, _ := adapter(v, t)
		_, err := c.Ping(ctx)
		if err == nil {
			return c, nil
		}
		if !errors.Is(err, ErrUnsupported) && !errors.Is(err, ErrBadResponse) {
			return nil, fmt.Errorf("slurmclient: probing %s: %w", v, err)
		}
		tried = append(tried, err)
	}
	return nil, fmt.Errorf("slurmclient: %w: no supported REST API version answered at %s: %w",
		ErrUnsupported, cfg.URL, errors.Join(tried...))
}
