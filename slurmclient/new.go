package slurmclient

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"net/url"
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
		if errors.Is(err, fs.ErrNotExist) || errors.Is(err, fs.ErrPermission) {
			return nil, connectError(cfg, err)
		}
		return nil, err
	}
	if cfg.API != "" {
		c, err := adapter(cfg.API, t)
		if err != nil {
			return nil, err
		}
		if _, err := c.Ping(ctx); err != nil {
			return nil, fmt.Errorf("%w (API %s)", connectError(cfg, err), cfg.API)
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
			return nil, connectError(cfg, err)
		}
		tried = append(tried, err)
	}
	return nil, fmt.Errorf("slurmclient: %w: no supported REST API version answered at %s: %w",
		ErrUnsupported, cfg.URL, errors.Join(tried...))
}

// connectError says what failed when the first request to slurmrestd did:
// the token file could not be read, the token was refused, slurmrestd
// could not be reached, or something else, naming the file or URL.
func connectError(cfg Config, err error) error {
	var ne net.Error
	var oe *net.OpError
	switch {
	case errors.Is(err, fs.ErrNotExist) || errors.Is(err, fs.ErrPermission):
		return fmt.Errorf("slurmclient: cannot read the token file %s: %w", cfg.TokenFile, err)
	case errors.Is(err, ErrAuth):
		if cfg.TokenFile != "" {
			return fmt.Errorf("slurmclient: slurmrestd at %s refused the token in %s (expired, or signed with another key?): %w", redactURL(cfg.URL), cfg.TokenFile, err)
		}
		return fmt.Errorf("slurmclient: slurmrestd at %s refused the request: %w", redactURL(cfg.URL), err)
	case errors.As(err, &oe), errors.As(err, &ne):
		return fmt.Errorf("slurmclient: cannot reach slurmrestd at %s: %w", redactURL(cfg.URL), err)
	}
	return fmt.Errorf("slurmclient: slurmrestd at %s: %w", redactURL(cfg.URL), err)
}

// redactURL returns raw with any password masked.
func redactURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return "(unparsable URL)"
	}
	return u.Redacted()
}
