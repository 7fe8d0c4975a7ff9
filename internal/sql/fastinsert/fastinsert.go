// Package fastinsert parses the statement that loaders, drivers and
// generated scripts send most — an INSERT of literal rows,
//
//	INSERT INTO [schema.]table [(column, ...)] VALUES (value, ...), ... [;]
//
// where each value is a number (with an optional sign), a standard string
// literal (also typed: TIMESTAMP '...', '...'::numeric(10,2)), NULL, TRUE,
// FALSE or DEFAULT — without calling PostgreSQL's
// parser, whose cost (a cgo call and a protobuf decode of the whole tree)
// dominates the ingestion of such statements.
//
// Invariants:
//
//   - Parse either declines (ok false) or returns exactly the tree
//     PostgreSQL's parser (pg_query) returns for the same text, locations
//     included; a caller may use one in place of the other. The fuzz test
//     checks this against pg_query on arbitrary input.
//   - It declines anything it is not sure of, rather than guess: comments,
//     escape and dollar-quoted strings, string continuation across lines,
//     casts of anything but a string, expressions other than a sign before
//     a number, parameters,
//     numbers in other bases or with underscores, identifiers that are
//     reserved words, not ASCII or need truncation, RETURNING, ON CONFLICT, more
//     than one statement. PostgreSQL's parser handles those.
//   - It is pure: no I/O, no state but caches of which words may be names
//     and of the tree of each spelling of a type, filled by asking pg_query
//     once per distinct word or spelling (at most 16,384 of each are kept).
//     Trees it returns share those type names' nodes: callers must not
//     modify them.
package fastinsert

import (
	"math"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"unicode/utf8"

	pg "github.com/pganalyze/pg_query_go/v6"
	"google.golang.org/protobuf/proto"

	"github.com/rockstream/rockstream/internal/sql/pgparse"
)

// version is the parse tree version pg_query reports.
const version = 170007

// maxIdentifier is the longest identifier PostgreSQL keeps unchanged
// (NAMEDATALEN - 1); a longer one is truncated with a notice.
const maxIdentifier = 63

// Parse returns the parse tree of text when it is an INSERT of literal
// rows, and false otherwise.
func Parse(text string) (*pg.ParseResult, bool) {
	p := &parser{s: text}
	stmt, ok := p.insert()
	if !ok {
		return nil, false
	}
	raw := &pg.RawStmt{Stmt: &pg.Node{Node: &pg.Node_InsertStmt{InsertStmt: stmt}}}
	p.space()
	if p.peek() == ';' {
		raw.StmtLen = int32(p.i)
		p.i++
		p.space()
	}
	if p.i != len(p.s) {
		return nil, false
	}
	return &pg.ParseResult{Version: version, Stmts: []*pg.RawStmt{raw}}, true
}

type parser struct {
	s string
	i int
	// Slabs the tree's most frequent nodes are carved from: a statement
	// of a thousand rows allocates a few blocks, not five objects per
	// value (the nodes stay in use as long as the tree).
	ints     []intConst
	lists    []rowList
	items    []*pg.Node // every row's values, back to back
	intSlab  int        // the length of the last slab of ints
	listSlab int        // and of lists
}

// intConst is the tree of one integer constant, allocated together.
type intConst struct {
	node pg.Node
	wrap pg.Node_AConst
	c    pg.A_Const
	ival pg.A_Const_Ival
	i    pg.Integer
}

// rowList is the tree of one VALUES row, allocated together.
type rowList struct {
	node pg.Node
	wrap pg.Node_List
	list pg.List
}

// maxSlab is the most nodes of one kind a slab holds; slabs start small
// and double, so that a one-row INSERT allocates little.
const maxSlab = 512

// slabLen returns the length of the next slab after one of length n.
func slabLen(n int) int { return min(max(8, 2*n), maxSlab) }

// intNode returns the node of the integer constant v at location at.
func (p *parser) intNode(v int32, at int) *pg.Node {
	if len(p.ints) == 0 {
		p.intSlab = slabLen(p.intSlab)
		p.ints = make([]intConst, p.intSlab)
	}
	x := &p.ints[0]
	p.ints = p.ints[1:]
	x.i.Ival = v
	x.ival.Ival = &x.i
	x.c.Val, x.c.Location = &x.ival, int32(at)
	x.wrap.AConst = &x.c
	x.node.Node = &x.wrap
	return &x.node
}

// listNode returns the node of a VALUES row of items.
func (p *parser) listNode(items []*pg.Node) *pg.Node {
	if len(p.lists) == 0 {
		p.listSlab = slabLen(p.listSlab)
		p.lists = make([]rowList, p.listSlab)
	}
	x := &p.lists[0]
	p.lists = p.lists[1:]
	x.list.Items = items
	x.wrap.List = &x.list
	x.node.Node = &x.wrap
	return &x.node
}

func (p *parser) peek() byte {
	if p.i < len(p.s) {
		return p.s[p.i]
	}
	return 0
}

// space skips white space (PostgreSQL's: space, tab, newline, carriage
// return, form feed, vertical tab).
func (p *parser) space() {
	for p.i < len(p.s) && strings.IndexByte(" \t\n\r\f\v", p.s[p.i]) >= 0 {
		p.i++
	}
}

// punct consumes the byte c after white space.
func (p *parser) punct(c byte) bool {
	p.space()
	if p.peek() != c {
		return false
	}
	p.i++
	return true
}

// word consumes a bare word after white space and returns it as written
// and where it starts.
func (p *parser) word() (string, int) {
	p.space()
	start := p.i
	for p.i < len(p.s) {
		c := p.s[p.i]
		if c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= 0x80 || p.i > start && (c >= '0' && c <= '9' || c == '$') {
			p.i++
			continue
		}
		break
	}
	return p.s[start:p.i], start
}

// keyword consumes the keyword kw (lower case) after white space.
func (p *parser) keyword(kw string) bool {
	save := p.i
	w, _ := p.word()
	if strings.EqualFold(w, kw) && isASCII(w) {
		return true
	}
	p.i = save
	return false
}

// ident consumes an identifier after white space: a quoted one, or a bare
// word folded to lower case as PostgreSQL folds it that the grammar takes
// as a name (ColId: no keyword, or an unreserved or column-name one).
func (p *parser) ident() (string, int, bool) {
	p.space()
	start := p.i
	if p.peek() == '"' {
		s, ok := p.quoted('"')
		if !ok || s == "" || len(s) > maxIdentifier || strings.IndexByte(s, 0) >= 0 || !utf8.ValidString(s) {
			return "", 0, false
		}
		return s, start, true
	}
	w, _ := p.word()
	if w == "" || len(w) > maxIdentifier || !isASCII(w) {
		return "", 0, false
	}
	w = strings.ToLower(w)
	if !isColID(w) {
		return "", 0, false
	}
	return w, start, true
}

// quoted consumes a quoted token delimited by q, in which a doubled q
// stands for one.
func (p *parser) quoted(q byte) (string, bool) {
	p.i++ // the opening quote
	var b strings.Builder
	for {
		j := strings.IndexByte(p.s[p.i:], q)
		if j < 0 {
			return "", false
		}
		b.WriteString(p.s[p.i : p.i+j])
		p.i += j + 1
		if p.peek() != q {
			return b.String(), true
		}
		b.WriteByte(q)
		p.i++
	}
}

func (p *parser) insert() (*pg.InsertStmt, bool) {
	if !p.keyword("insert") || !p.keyword("into") {
		return nil, false
	}
	rel := &pg.RangeVar{Inh: true, Relpersistence: "p"}
	name, at, ok := p.ident()
	if !ok {
		return nil, false
	}
	rel.Relname, rel.Location = name, int32(at)
	if p.punct('.') {
		if rel.Relname, _, ok = p.ident(); !ok {
			return nil, false
		}
		rel.Schemaname = name
	}
	stmt := &pg.InsertStmt{Relation: rel, Override: pg.OverridingKind_OVERRIDING_NOT_SET}
	if p.punct('(') {
		for {
			col, at, ok := p.ident()
			if !ok {
				return nil, false
			}
			stmt.Cols = append(stmt.Cols, &pg.Node{Node: &pg.Node_ResTarget{ResTarget: &pg.ResTarget{Name: col, Location: int32(at)}}})
			if p.punct(')') {
				break
			}
			if !p.punct(',') {
				return nil, false
			}
		}
	}
	if !p.keyword("values") {
		return nil, false
	}
	sel := &pg.SelectStmt{LimitOption: pg.LimitOption_LIMIT_OPTION_DEFAULT, Op: pg.SetOperation_SETOP_NONE}
	for {
		if !p.punct('(') {
			return nil, false
		}
		start := len(p.items)
		for {
			v, ok := p.value()
			if !ok {
				return nil, false
			}
			p.items = append(p.items, v)
			if p.punct(')') {
				break
			}
			if !p.punct(',') {
				return nil, false
			}
		}
		items := p.items[start:len(p.items):len(p.items)]
		sel.ValuesLists = append(sel.ValuesLists, p.listNode(items))
		if !p.punct(',') {
			break
		}
	}
	stmt.SelectStmt = &pg.Node{Node: &pg.Node_SelectStmt{SelectStmt: sel}}
	return stmt, true
}

// value consumes one value of a VALUES row.
func (p *parser) value() (*pg.Node, bool) {
	p.space()
	start := p.i
	switch c := p.peek(); {
	case c == '\'':
		str, ok := p.str()
		if !ok {
			return nil, false
		}
		p.space()
		if strings.HasPrefix(p.s[p.i:], "::") {
			return p.castSuffix(str)
		}
		if !p.endsValue() {
			return nil, false
		}
		return &pg.Node{Node: &pg.Node_AConst{AConst: str}}, true
	case c == '-' || c == '+' || c == '.' || c >= '0' && c <= '9':
		return p.number()
	}
	w, _ := p.word()
	if !isASCII(w) {
		return nil, false
	}
	if p.endsValue() {
		switch strings.ToLower(w) {
		case "null":
			return aConst(&pg.A_Const{Isnull: true}, start), true
		case "true", "false":
			return aConst(&pg.A_Const{Val: &pg.A_Const_Boolval{Boolval: &pg.Boolean{Boolval: strings.EqualFold(w, "true")}}}, start), true
		case "default":
			return &pg.Node{Node: &pg.Node_SetToDefault{SetToDefault: &pg.SetToDefault{Location: int32(start)}}}, true
		}
		return nil, false
	}
	return p.castPrefix(start)
}

// str consumes a standard string literal.
func (p *parser) str() (*pg.A_Const, bool) {
	start := p.i
	s, ok := p.quoted('\'')
	if !ok || strings.IndexByte(s, 0) >= 0 || !utf8.ValidString(s) {
		return nil, false
	}
	return &pg.A_Const{Val: &pg.A_Const_Sval{Sval: &pg.String{Sval: s}}, Location: int32(start)}, true
}

// castPrefix consumes a typed string literal, type 'string' (TIMESTAMP
// '2024-01-01 10:00', DATE '...'), whose type name, words alone, starts
// at start.
func (p *parser) castPrefix(start int) (*pg.Node, bool) {
	for {
		p.space()
		if p.peek() == '\'' {
			break
		}
		if w, _ := p.word(); w == "" || !isASCII(w) {
			return nil, false
		}
	}
	// A word touching the quote may be a string prefix (E'...', N'...',
	// B'...', X'...'), which makes another kind of string.
	if c := p.s[p.i-1]; c != ' ' && strings.IndexByte("\t\n\r\f\v", c) < 0 {
		return nil, false
	}
	spelling := p.s[start:p.i]
	t := lookupCast(&prefixCasts, spelling, "SELECT "+spelling+"''", len("SELECT ")+len(spelling), len("SELECT "))
	str, ok := p.str()
	if !ok || t == nil || !p.endsValue() {
		return nil, false
	}
	return t.node(str, int(str.Location)), true
}

// castSuffix consumes the cast of a string literal, 'string'::type, at
// the "::".
func (p *parser) castSuffix(str *pg.A_Const) (*pg.Node, bool) {
	colons := p.i
	p.i += 2
	depth := 0
	for ; p.i < len(p.s); p.i++ {
		c := p.s[p.i]
		if depth == 0 && (c == ',' || c == ')') {
			break
		}
		switch {
		case c == '(':
			depth++
		case c == ')':
			depth--
		case c == '_' || c == ',' || c == '[' || c == ']' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.IndexByte(" \t\n\r\f\v", c) >= 0:
		default:
			return nil, false
		}
	}
	spelling := p.s[colons+2 : p.i]
	typeAt := len("SELECT ''::") + len(spelling) - len(strings.TrimLeft(spelling, " \t\n\r\f\v"))
	t := lookupCast(&suffixCasts, spelling, "SELECT ''::"+spelling, len("SELECT ''"), typeAt)
	if t == nil || !p.endsValue() {
		return nil, false
	}
	return t.node(str, colons), true
}

// A castTemplate is the tree PostgreSQL makes of a typed literal with one
// spelling of a type, learnt once from parsing that spelling, with its
// locations relative to a base: the string for type 'string', the "::"
// for 'string'::type.
type castTemplate struct {
	typeName *pg.TypeName
	castAt   int32 // the TypeCast's location relative to the base; -1 stays -1
	typeAt   int32
	typmods  []int32 // the typmods' locations relative to the base, or noLocation
}

// noLocation marks a template location that stays -1 (none).
const noLocation = math.MinInt32

var prefixCasts, suffixCasts memo[*castTemplate] // by spelling; nil: declined

// lookupCast returns the template of a spelling, learning it from
// PostgreSQL's tree of text, a SELECT of the typed literal of an empty
// string whose base is at base and whose type name starts at typeAt.
func lookupCast(cache *memo[*castTemplate], spelling, text string, base, typeAt int) *castTemplate {
	if t, ok := cache.load(spelling); ok {
		return t
	}
	t := learnCast(text, int32(base), int32(typeAt))
	cache.store(spelling, t)
	return t
}

func learnCast(text string, base, typeAt int32) *castTemplate {
	tree, err := pgparse.Parse(text)
	if err != nil || len(tree.Stmts) != 1 {
		return nil
	}
	sel := tree.Stmts[0].Stmt.GetSelectStmt()
	if sel == nil || len(sel.TargetList) != 1 {
		return nil
	}
	// Nothing but the one target: words after the type may have made
	// another clause (''::t INTO x is SELECT INTO).
	rest := proto.Clone(sel).(*pg.SelectStmt)
	rest.TargetList = nil
	if !proto.Equal(rest, &pg.SelectStmt{LimitOption: pg.LimitOption_LIMIT_OPTION_DEFAULT, Op: pg.SetOperation_SETOP_NONE}) {
		return nil
	}
	rt := sel.TargetList[0].GetResTarget()
	tc := rt.GetVal().GetTypeCast()
	if rt.Name != "" || tc == nil || tc.TypeName == nil || len(tc.TypeName.Typmods) > 0 && tc.TypeName.Typmods[0].GetAConst() == nil {
		return nil
	}
	if c := tc.Arg.GetAConst(); c == nil || c.GetSval() == nil || c.GetSval().Sval != "" {
		return nil
	}
	tn := tc.TypeName
	// The type name must start where the spelling does: words before it
	// (ALL, DISTINCT) would be another clause.
	if tn.Setof || tn.PctType || tn.TypeOid != 0 || tn.Location != typeAt {
		return nil
	}
	t := &castTemplate{typeName: tn, castAt: -1, typeAt: tn.Location - base}
	if tc.Location >= 0 {
		t.castAt = tc.Location - base
	}
	for _, m := range tn.Typmods {
		c := m.GetAConst()
		if c == nil {
			return nil
		}
		at := int32(noLocation) // a modifier the grammar implies (char is char(1))
		if c.Location >= 0 {
			at = c.Location - base
		}
		t.typmods = append(t.typmods, at)
	}
	return t
}

// node returns the TypeCast of str with the template's type, its
// locations moved to base.
func (t *castTemplate) node(str *pg.A_Const, base int) *pg.Node {
	b := int32(base)
	tn := &pg.TypeName{Names: t.typeName.Names, Typemod: t.typeName.Typemod, ArrayBounds: t.typeName.ArrayBounds, Location: b + t.typeAt}
	for i, m := range t.typeName.Typmods {
		c := *m.GetAConst()
		c.Location = -1
		if t.typmods[i] != noLocation {
			c.Location = b + t.typmods[i]
		}
		tn.Typmods = append(tn.Typmods, &pg.Node{Node: &pg.Node_AConst{AConst: &c}})
	}
	tc := &pg.TypeCast{Arg: &pg.Node{Node: &pg.Node_AConst{AConst: str}}, TypeName: tn, Location: -1}
	if t.castAt >= 0 {
		tc.Location = b + t.castAt
	}
	return &pg.Node{Node: &pg.Node_TypeCast{TypeCast: tc}}
}

// endsValue reports whether what follows (after white space) ends a
// value: a comma or a closing parenthesis. A string followed by anything
// else may continue on the next line, which PostgreSQL concatenates.
func (p *parser) endsValue() bool {
	save := p.i
	p.space()
	c := p.peek()
	p.i = save
	return c == ',' || c == ')'
}

// number consumes an optionally signed decimal number. PostgreSQL folds a
// minus sign into the constant (at the sign's location); a plus sign stays
// an operator, which this parser declines.
func (p *parser) number() (*pg.Node, bool) {
	start := p.i
	neg := false
	if p.peek() == '-' {
		neg = true
		p.i++
		p.space()
		if strings.HasPrefix(p.s[p.i:], "--") {
			return nil, false
		}
	}
	digitsFrom := p.i
	digits := func() int {
		n := 0
		for p.i < len(p.s) && p.s[p.i] >= '0' && p.s[p.i] <= '9' {
			p.i++
			n++
		}
		return n
	}
	whole := digits()
	integer := true
	if p.peek() == '.' {
		p.i++
		integer = false
		if digits() == 0 && whole == 0 {
			return nil, false
		}
	} else if whole == 0 {
		return nil, false
	}
	if c := p.peek(); c == 'e' || c == 'E' {
		p.i++
		integer = false
		if c := p.peek(); c == '+' || c == '-' {
			p.i++
		}
		if digits() == 0 {
			return nil, false
		}
	}
	lit := p.s[digitsFrom:p.i]
	if integer && len(lit) > 1 && lit[0] == '0' {
		return nil, false // 0x.., 0o.., 0b.. and leading zeros: leave them to PostgreSQL
	}
	// The number must end here: "1abc", "1_000" or "1.2.3" are PostgreSQL's
	// to judge.
	if c := p.peek(); c == '_' || c == '.' || c == '$' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c >= 0x80 {
		return nil, false
	}
	if !p.endsValue() {
		return nil, false
	}
	if integer {
		if v, err := strconv.ParseInt(lit, 10, 32); err == nil {
			if neg {
				v = -v
			}
			return p.intNode(int32(v), start), true
		}
	}
	if neg {
		lit = "-" + lit
	}
	return aConst(&pg.A_Const{Val: &pg.A_Const_Fval{Fval: &pg.Float{Fval: lit}}}, start), true
}

func aConst(c *pg.A_Const, at int) *pg.Node {
	c.Location = int32(at)
	return &pg.Node{Node: &pg.Node_AConst{AConst: c}}
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			return false
		}
	}
	return true
}

// memo caches answers by word or spelling. Those come from clients, so
// it holds at most maxMemo of them; past that, answers are computed each
// time.
type memo[V any] struct {
	m sync.Map
	n atomic.Int64
}

const maxMemo = 1 << 14

func (c *memo[V]) load(key string) (V, bool) {
	v, ok := c.m.Load(key)
	if !ok {
		var zero V
		return zero, false
	}
	return v.(V), true
}

func (c *memo[V]) store(key string, v V) {
	if c.n.Add(1) <= maxMemo {
		c.m.Store(key, v)
	}
}

// colIDs caches, per lower-case word, whether PostgreSQL's grammar takes
// it as a name (ColId).
var colIDs memo[bool]

func isColID(w string) bool {
	if v, ok := colIDs.load(w); ok {
		return v
	}
	ok := false // a scan that fails proves nothing: decline the word
	if res, err := pg.Scan(w); err == nil && len(res.Tokens) == 1 {
		switch res.Tokens[0].KeywordKind {
		case pg.KeywordKind_NO_KEYWORD, pg.KeywordKind_UNRESERVED_KEYWORD, pg.KeywordKind_COL_NAME_KEYWORD:
			ok = true
		}
	}
	colIDs.store(w, ok)
	return ok
}
