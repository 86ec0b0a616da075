package slurmclient

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"strings"
)

// AdminLeveler is implemented by the clients of every API version: it
// tells the Slurm administrator level of the identity asrpt acts as, which
// decides whether it may change other users' jobs (Operator or
// Administrator; see contrib/setup.md).
type AdminLeveler interface {
	// Identity is the user asrpt acts as: the configured user, else the
	// token's, else "" (a Unix socket acts as slurmrestd's own user).
	Identity() string
	// AdminLevel returns the accounting administrator level of user:
	// "None", "Operator" or "Administrator".
	AdminLevel(ctx context.Context, user string) (string, error)
}

// Identity implements AdminLeveler.
func (r *rest) Identity() string {
	if r.t.user != "" {
		return r.t.user
	}
	if r.t.tok != nil {
		if _, sun, err := r.t.tok.get(); err == nil {
			return sun
		}
	}
	return ""
}

// adminLevel reads /slurmdb/VERSION/user/NAME (db is the version's
// slurmdb prefix). Releases write the level as a string (v0.0.38) or a
// list of flags (v0.0.40+).
func (r *rest) adminLevel(ctx context.Context, db, user string) (string, error) {
	if !nameRE.MatchString(user) {
		return "", fmt.Errorf("%w: user name %.40q", ErrInvalid, user)
	}
	var resp struct {
		Users []struct {
			Name  string          `json:"name"`
			Level json.RawMessage `json:"administrator_level"`
		} `json:"users"`
	}
	path := db + "/user/" + url.PathEscape(user)
	if err := r.call(ctx, "GET", path, nil, nil, nil, &resp); err != nil {
		return "", err
	}
	for _, u := range resp.Users {
		if u.Name != user {
			continue
		}
		var s string
		if json.Unmarshal(u.Level, &s) == nil {
			return s, nil
		}
		var list []string
		if json.Unmarshal(u.Level, &list) == nil {
			return strings.Join(list, ","), nil
		}
		return "", fmt.Errorf("GET %s: %w: administrator_level %.40s", path, ErrBadResponse, u.Level)
	}
	return "", fmt.Errorf("GET %s: user %s is not in Slurm's accounting", path, user)
}

// AdminLevel implements AdminLeveler.
func (c *v0038) AdminLevel(ctx context.Context, user string) (string, error) {
	return c.adminLevel(ctx, pdb38, user)
}

// AdminLevel implements AdminLeveler.
func (c *v0042) AdminLevel(ctx context.Context, user string) (string, error) {
	return c.adminLevel(ctx, pdb42, user)
}

// AdminLevel implements AdminLeveler.
func (c *v0044) AdminLevel(ctx context.Context, user string) (string, error) {
	return c.adminLevel(ctx, pdb44, user)
}
