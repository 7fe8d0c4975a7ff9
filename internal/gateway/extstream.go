package gateway

import (
	"context"
	"io"

	"github.com/jackc/pgx/v5/pgproto3"
)

// executeStream sends up to maxRows (0: all) more rows of a portal whose
// query's rows are produced as they are sent (runtime.RowStream): each
// Execute makes only the chunks it sends, so a client fetching a big
// result a few rows at a time (a JDBC fetch size, a cursor-style portal)
// holds at most one chunk in the server, and a portal closed or dropped
// early stops the work there. As for a portal whose rows are all made,
// an Execute that sent as many rows as asked suspends the portal, even
// when no row remains; the last one's CommandComplete counts the rows it
// sent.
func (c *conn) executeStream(ctx context.Context, p *portal, maxRows uint32) error {
	res := p.res
	enc := c.portalEncoder(res.Columns, p.formats, c.sess.Zone())
	sent := 0
	for maxRows == 0 || uint32(sent) < maxRows {
		if len(p.pending) == 0 {
			if p.ended {
				break
			}
			rows, err := res.Stream.Next(ctx)
			if err == io.EOF {
				p.ended = true
				break
			}
			if err != nil {
				p.done = true
				c.srv.errors.Add(1)
				return c.extendedError(c.statementError(ctx, err))
			}
			p.pending = rows
		}
		n := len(p.pending)
		if maxRows > 0 {
			n = min(n, int(maxRows)-sent)
		}
		if err := c.sendRows(enc, p.pending[:n]); err != nil {
			return c.extendedError(err)
		}
		p.pending = p.pending[n:]
		sent += n
		if len(p.pending) == 0 && !res.Stream.More() {
			p.ended = true
			break
		}
		// The rows go out as they are made: a client reading slowly
		// holds the statement back, not the server's memory. (The last
		// chunk's go with what follows them.)
		if err := c.flush(); err != nil {
			return err
		}
	}
	if maxRows > 0 && uint32(sent) >= maxRows {
		p.sent = true
		c.be.Send(&pgproto3.PortalSuspended{})
		return nil
	}
	tag := res.Stream.Tag()
	if p.sent {
		tag = retag(tag, sent)
	}
	p.done, p.pending = true, nil
	res.Tag = tag
	c.commandComplete(tag)
	return nil
}
