package rockstream

import (
	"context"
	"encoding/hex"
	"fmt"
	"strconv"
	"sync"
	"time"

	"github.com/rockstream/rockstream/internal/errs"
	"github.com/rockstream/rockstream/internal/runtime"
	"github.com/rockstream/rockstream/internal/types"
)

// How Exec's and Query's arguments reach a statement.
//
// A statement run with arguments is prepared, as a client's Parse
// prepares it: the types of $1, $2, ... are inferred from their use. Each
// argument is then converted to its parameter's type as a value, with no
// text in between, when its Go type maps onto that type (a Go integer for
// an integer parameter, float64 for double precision, bool, []byte for
// bytea, time.Time for the date and time types, time.Duration for
// interval); any other argument is rendered as the text a client would
// send and read by the type's input function, as before. Either way a
// value means the same: a time.Time is taken in UTC.
//
// Prepared statements are kept in the DB's statement cache between calls,
// each with the catalog it was bound against, and taken out while they
// run, so a cached statement is never used by two sessions at once nor
// against another catalog than its own (after DDL, or inside a
// transaction block that changed the catalog, the statement is prepared
// again). A statement that does not prepare, or whose parameter count
// differs from the arguments', runs through the text path, which reports
// the error PostgreSQL would.

// maxCachedStmts bounds the statement cache; past it the cache starts
// over.
const maxCachedStmts = 256

type stmtCache struct {
	mu   sync.Mutex
	idle map[string][]cachedStmt
	n    int
}

type cachedStmt struct {
	p       *runtime.Prepared
	catalog any
}

// take removes and returns a statement prepared from sql against catalog,
// or nil; entries bound against another catalog are dropped on the way.
func (c *stmtCache) take(sql string, catalog any) *runtime.Prepared {
	c.mu.Lock()
	defer c.mu.Unlock()
	list := c.idle[sql]
	for len(list) > 0 {
		e := list[len(list)-1]
		list = list[:len(list)-1]
		c.n--
		if e.catalog == catalog {
			c.idle[sql] = list
			return e.p
		}
	}
	delete(c.idle, sql)
	return nil
}

// put returns a statement to the cache.
func (c *stmtCache) put(sql string, p *runtime.Prepared, catalog any) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.idle == nil || c.n >= maxCachedStmts {
		c.idle, c.n = map[string][]cachedStmt{}, 0
	}
	c.idle[sql] = append(c.idle[sql], cachedStmt{p: p, catalog: catalog})
	c.n++
}

// execArgs runs sql, one statement, with args bound to its parameters.
func execArgs(ctx context.Context, s *runtime.Session, cache *stmtCache, sql string, args []any) (*runtime.Result, error) {
	catalog := s.CatalogIdentity()
	p := cache.take(sql, catalog)
	if p == nil {
		var err error
		if p, err = s.Prepare(sql, nil); err != nil || p.RowsUnknown || len(p.ParamTypes) != len(args) {
			return execArgsAsText(ctx, s, sql, args)
		}
	}
	params := make([]types.Value, len(args))
	for i, a := range args {
		v, err := paramValue(ctx, s, p.ParamTypes[i], a, i)
		if err != nil {
			cache.put(sql, p, catalog)
			return nil, err
		}
		params[i] = v
	}
	res, err := s.ExecPrepared(ctx, p, params)
	cache.put(sql, p, catalog)
	return res, err
}

// execArgsAsText runs sql with every argument rendered as text.
func execArgsAsText(ctx context.Context, s *runtime.Session, sql string, args []any) (*runtime.Result, error) {
	texts := make([]*string, len(args))
	for i, a := range args {
		if a == nil {
			continue
		}
		t, err := argText(a, i)
		if err != nil {
			return nil, err
		}
		texts[i] = &t
	}
	return s.Exec(ctx, sql, texts)
}

// paramValue converts argument i to a value of its parameter's type t.
func paramValue(ctx context.Context, s *runtime.Session, t types.Type, a any, i int) (types.Value, error) {
	switch v := a.(type) {
	case nil:
		return types.Null, nil
	case bool:
		if t.ID == types.Bool {
			return types.MakeBool(v), nil
		}
	case int, int8, int16, int32, int64, uint, uint8, uint16, uint32, uint64:
		switch t.ID {
		case types.Int2, types.Int4, types.Int8:
			if x, err := goValue(v, t); err == nil {
				return x, nil
			} // out of range: the input function words the error
		}
	case float64:
		if t.ID == types.Float8 {
			return types.MakeFloat8(v), nil
		}
	case float32:
		if t.ID == types.Float4 {
			return types.MakeFloat4(v), nil
		}
	case []byte:
		if t.ID == types.Bytea {
			return types.MakeBytea(v), nil
		}
	case time.Time:
		switch t.ID {
		case types.Date, types.Timestamp, types.TimestampTZ:
			return types.FromGoTime(v.UTC(), t.ID)
		}
	case time.Duration:
		if t.ID == types.Interval {
			return types.MakeInterval(types.IntervalValue{Micros: v.Microseconds()}), nil
		}
	}
	text, err := argText(a, i)
	if err != nil {
		return types.Null, err
	}
	return s.DecodeParam(ctx, t, text)
}

// argText renders argument i, not nil, as the text a client would send
// for it.
func argText(a any, i int) (string, error) {
	switch v := a.(type) {
	case string:
		return v, nil
	case []byte:
		return `\x` + hex.EncodeToString(v), nil
	case bool:
		return strconv.FormatBool(v), nil
	case int:
		return strconv.FormatInt(int64(v), 10), nil
	case int8:
		return strconv.FormatInt(int64(v), 10), nil
	case int16:
		return strconv.FormatInt(int64(v), 10), nil
	case int32:
		return strconv.FormatInt(int64(v), 10), nil
	case int64:
		return strconv.FormatInt(v, 10), nil
	case uint:
		return strconv.FormatUint(uint64(v), 10), nil
	case uint8:
		return strconv.FormatUint(uint64(v), 10), nil
	case uint16:
		return strconv.FormatUint(uint64(v), 10), nil
	case uint32:
		return strconv.FormatUint(uint64(v), 10), nil
	case uint64:
		return strconv.FormatUint(v, 10), nil
	case float32:
		return strconv.FormatFloat(float64(v), 'g', -1, 32), nil
	case float64:
		return strconv.FormatFloat(v, 'g', -1, 64), nil
	case time.Time:
		return v.UTC().Format("2006-01-02 15:04:05.999999Z07:00"), nil
	case fmt.Stringer:
		return v.String(), nil
	}
	return "", errs.Newf(errs.InvalidParameterValue, "unsupported argument type %T for $%d", a, i+1)
}
