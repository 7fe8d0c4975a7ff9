package runtime

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"strconv"

	pg "github.com/pganalyze/pg_query_go/v6"

	"github.com/rockstream/rockstream/internal/errs"
	"github.com/rockstream/rockstream/internal/pgcatalog"
	"github.com/rockstream/rockstream/internal/sql"
	"github.com/rockstream/rockstream/internal/state"
)

// COMMENT ON TABLE | VIEW | MATERIALIZED VIEW | COLUMN attaches a
// description to a relation or one of its columns, as in PostgreSQL:
// pg_description lists them, obj_description and col_description return
// them (psql's \d+ and \dt+ show them), a comment of NULL or '' removes
// one, and dropping the relation drops its comments. A relation's
// comments are one metadata record (commentKey), written in the epoch of
// the statement, so they commit and roll back with the transaction
// around it.

// relationComments is the stored form of one relation's comments.
type relationComments struct {
	// Relation is the relation's own comment; empty when none.
	Relation string `json:"relation,omitempty"`
	// Columns are the columns' comments by column number (attnum).
	Columns map[string]string `json:"columns,omitempty"`
}

// commentKey is where the comments of the relation with catalog id id
// are kept.
func commentKey(id uint64) []byte {
	return binary.AppendUvarint(append([]byte{nsMeta}, "comment/"...), id)
}

// readComments returns the comments of the relation with catalog id id.
func readComments(r state.Reader, id uint64) (relationComments, error) {
	var c relationComments
	v, ok, err := r.Get(commentKey(id))
	if err != nil || !ok {
		return c, err
	}
	if err := json.Unmarshal(v, &c); err != nil {
		return c, errs.Newf(errs.DataCorrupted, "comments of relation %d: %v", id, err)
	}
	return c, nil
}

func writeComments(st state.Store, id uint64, c relationComments) error {
	if c.Relation == "" && len(c.Columns) == 0 {
		return st.Delete(commentKey(id))
	}
	v, err := json.Marshal(c)
	if err != nil {
		return err
	}
	return st.Set(commentKey(id), v)
}

// execComment runs COMMENT ON.
func (s *Session) execComment(ctx context.Context, cs *pg.CommentStmt) (*Result, error) {
	return s.ddl(ctx, func(st state.Store, w *epochWrite) (*catalog, *Result, error) {
		if cs.Objtype == pg.ObjectType_OBJECT_SCHEMA {
			return s.commentSchema(st, w.cat, cs)
		}
		if err := setComment(st, w.cat, cs); err != nil {
			return nil, nil, err
		}
		return nil, &Result{Tag: "COMMENT"}, nil
	})
}

func setComment(st state.Store, cat *catalog, cs *pg.CommentStmt) error {
	var names []string
	for _, n := range cs.Object.GetList().GetItems() {
		names = append(names, n.GetString_().GetSval())
	}
	var want sql.RelationKind
	var kindWord, column string
	switch cs.Objtype {
	case pg.ObjectType_OBJECT_TABLE:
		want, kindWord = sql.Table, "a table"
	case pg.ObjectType_OBJECT_VIEW:
		want, kindWord = sql.View, "a view"
	case pg.ObjectType_OBJECT_MATVIEW:
		want, kindWord = sql.MaterializedView, "a materialized view"
	case pg.ObjectType_OBJECT_COLUMN:
		if len(names) < 2 {
			return errs.New(errs.SyntaxError, "column name must be qualified")
		}
		names, column = names[:len(names)-1], names[len(names)-1]
	default:
		return errs.Newf(errs.FeatureNotSupported, "COMMENT ON %s is not supported", objectTypeName(cs.Objtype))
	}
	var name string
	switch len(names) {
	case 1:
		name = names[0]
	case 2:
		name = qualifiedName(names[0], names[1])
	default:
		return errs.Newf(errs.FeatureNotSupported, "cross-database references are not implemented")
	}
	o := cat.resolve(name)
	switch {
	case o == nil:
		return errs.Newf(errs.UndefinedTable, "relation %q does not exist", name)
	case o.system != nil:
		return errs.Newf(errs.FeatureNotSupported, "comments on system relation %q are not supported", name)
	case column == "" && o.kind != want:
		return errs.Newf(errs.WrongObjectType, "%q is not %s", o.name, kindWord)
	}
	c, err := readComments(st, o.id)
	if err != nil {
		return err
	}
	if column == "" {
		c.Relation = cs.Comment
		return writeComments(st, o.id, c)
	}
	i, err := o.columnIndex(column)
	if err != nil {
		return err
	}
	attnum := strconv.Itoa(o.attnumsOf()[i]) // stable across DROP COLUMN
	if cs.Comment == "" {
		delete(c.Columns, attnum)
	} else {
		if c.Columns == nil {
			c.Columns = map[string]string{}
		}
		c.Columns[attnum] = cs.Comment
	}
	return writeComments(st, o.id, c)
}

// dropComments removes a dropped relation's comments.
func dropComments(st state.Store, o *object) error { return st.Delete(commentKey(o.id)) }

// Comments implements pgcatalog.Source: the comments stored in the
// reader of a session's query; none outside one.
func (s catalogSource) Comments(id uint64) (pgcatalog.Comments, error) {
	if s.c.reader == nil {
		return pgcatalog.Comments{}, nil
	}
	cm, err := readComments(s.c.reader, id)
	if err != nil {
		return pgcatalog.Comments{}, err
	}
	out := pgcatalog.Comments{Relation: cm.Relation}
	for attnum, text := range cm.Columns {
		n, err := strconv.Atoi(attnum)
		if err != nil {
			return pgcatalog.Comments{}, errs.Newf(errs.DataCorrupted, "comments of relation %d: column number %q", id, attnum)
		}
		if out.Columns == nil {
			out.Columns = map[int]string{}
		}
		out.Columns[n] = text
	}
	return out, nil
}
