package lake

import (
	"fmt"
	"strings"
)

// String describes the statement's kind and plan, for logs and the
// classification golden tests.
func (s *Statement) String() string {
	var b strings.Builder
	b.WriteString(s.Kind.String())
	switch s.Kind {
	case KindUnsupported:
		b.WriteString(": " + s.err.code + " " + s.err.msg)
		if s.err.detail != "" {
			b.WriteString(" (" + s.err.detail + ")")
		}
	case KindSelect:
		b.WriteString(" " + s.sel.String())
	case KindCopyOut:
		fmt.Fprintf(&b, " binary=%v %s", s.binary, s.sel.String())
	case KindCopyIn:
		fmt.Fprintf(&b, " binary=%v null=%q into %s %v", s.binary, s.nullStr, s.copyIn.rel, s.copyIn.cols)
	case KindInsert:
		fmt.Fprintf(&b, " into %s %v: %d rows", s.insert.rel, s.insert.cols, len(s.insert.rows))
	case KindUpdate:
		u := s.update
		b.WriteString(" " + u.rel.String() + " set")
		for _, c := range u.sets {
			b.WriteString(" " + c.col + "=" + c.e.String())
		}
		if u.values != nil {
			fmt.Fprintf(&b, " from values %s%v (%d rows)", u.values.name, u.values.cols, len(u.values.rows))
		}
		if u.fromRel != nil {
			b.WriteString(" from " + u.fromRel.String())
		}
		if u.where != nil {
			b.WriteString(" where " + u.where.String())
		}
	case KindDelete:
		b.WriteString(" from " + s.delete.rel.String())
		if s.delete.where != nil {
			b.WriteString(" where " + s.delete.where.String())
		}
	case KindCreateTable:
		c := s.create
		fmt.Fprintf(&b, " %s temp=%v if_not_exists=%v", c.rel, c.temp, c.ifNotExists)
		for _, col := range c.cols {
			b.WriteString(" " + col.Name + ":" + col.Type.String())
		}
		if len(c.pk) > 0 {
			fmt.Fprintf(&b, " pk=%v", c.pk)
		}
	case KindDropTable:
		fmt.Fprintf(&b, " %v if_exists=%v", s.drop.rels, s.drop.missingOK)
	case KindCreateSchema:
		fmt.Fprintf(&b, " %s if_not_exists=%v", s.schema.name, s.schema.ifNotExists)
	case KindColumns, KindInfoColumns:
		if len(s.filter.schemas) > 0 || s.filter.rel != "" {
			fmt.Fprintf(&b, " schemas=%v rel=%q", s.filter.schemas, s.filter.rel)
		}
	case KindProbeRegclass:
		b.WriteString(" " + s.regclass)
	case KindSelectConst:
		for _, c := range s.constCols {
			b.WriteString(" " + c.String())
		}
		if s.limit >= 0 {
			fmt.Fprintf(&b, " limit %d", s.limit)
		}
	}
	return b.String()
}

func (p *selectPlan) String() string {
	var b strings.Builder
	b.WriteString("select")
	for i, t := range p.targets {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(" " + t.e.String())
	}
	if p.targets == nil {
		b.WriteString(" *")
	}
	if p.sub != nil {
		b.WriteString(" from (" + p.sub.String() + ") " + p.alias)
	} else {
		b.WriteString(" from " + p.from.String())
	}
	if p.where != nil {
		b.WriteString(" where " + p.where.String())
	}
	if p.limit >= 0 {
		fmt.Fprintf(&b, " limit %d", p.limit)
	}
	return b.String()
}
