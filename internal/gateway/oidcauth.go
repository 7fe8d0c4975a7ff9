package gateway

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/rockstream/rockstream/internal/errs"
	"github.com/rockstream/rockstream/internal/oidc"
)

// OIDCConfig configures AuthOIDC: the keys that sign tokens and what a
// token must claim.
type OIDCConfig struct {
	Keys  *oidc.KeySet
	Token oidc.Config
}

// authOIDC asks for a password and verifies it as an OIDC bearer token
// (oidc.Verify): the token's role claim must name c.user. Why a token is
// refused goes to the log; the client learns only that it was.
func (c *conn) authOIDC() error {
	cfg := c.srv.cfg.Auth.OIDC
	if cfg == nil || cfg.Keys == nil {
		return errs.New(errs.Internal, "oidc authentication is not configured")
	}
	pm, err := c.readCleartextPassword()
	if err != nil {
		return err
	}
	ctx, cancel := context.WithDeadline(context.Background(), c.authDeadline)
	defer cancel()
	claims, err := cfg.Keys.Verify(ctx, pm.Password, cfg.Token, time.Now())
	if err == nil && !slices.Contains(claims.Roles, c.user) {
		err = fmt.Errorf("token refused: claim %q is %q, which does not name user %q", cfg.Token.RoleClaim, claims.Roles, c.user)
	}
	if err != nil {
		c.srv.throttle.failed(throttleKeyOf(c.nc.RemoteAddr(), c.user), time.Now())
		c.srv.log.Info("gateway: OIDC token refused", "pid", c.pid, "user", c.user, "remote", c.nc.RemoteAddr().String(), "reason", err.Error())
		return &errs.Error{Code: errs.InvalidAuthorization, SQLState: "28000",
			Message: fmt.Sprintf("OIDC authentication failed for user %q", c.user),
			Hint:    "the password must be a valid, unexpired token of the configured issuer and audience whose " + cfg.Token.RoleClaim + " claim names the user"}
	}
	c.authSucceeded()
	if err := c.trustedUser(); err != nil {
		return err
	}
	return c.checkLogin()
}
