package runtime

import (
	"slices"
	"strconv"
	"strings"

	"github.com/rockstream/rockstream/internal/diff"
	"github.com/rockstream/rockstream/internal/plan"
	"github.com/rockstream/rockstream/internal/sql"
	"github.com/rockstream/rockstream/internal/zset"
)

// A view's inputs. A view (plain or materialized) binds its definition
// once, when it is created, against the relations its names then denote.
// ALTER TABLE and ALTER ... RENAME may later add, drop, rename and retype
// columns and rename relations, and the view must go on meaning what it
// meant: like PostgreSQL, which stores a view as a query tree of object
// and column numbers, not as text.
//
// So each view keeps, for every name its definition resolved in the
// catalog, an inputImage: the relation's catalog id and, for a table,
// the columns the view saw (their stable column numbers, attnums, and
// their names then). Binding the definition again (at start-up, after an
// ALTER) resolves names through the images, not the current catalog
// (boundCatalog):
//
//   - a table is presented with exactly the imaged columns, under their
//     imaged names, with their current types; when that is not the whole
//     current table in order, the scan is named by a shaped name
//     (shapedName) that says which current columns it reads, and every
//     reader of circuit inputs (propagate, backfill, ad-hoc queries)
//     projects the table's rows to them (catalog.input);
//   - a materialized view or plain view is found by id, under its current
//     name; a plain view binds its own definition through its own images.
//
// Invariants: binding a view's definition through its images gives the
// plan it had when created, as long as the imaged columns exist with the
// types they had; ALTER keeps every image true (it refuses or recomputes
// a view whose imaged columns it drops or retypes). A view without images
// (created by a build that did not keep them) binds against the current
// catalog, and gets images, from its current binding, before the first
// ALTER of a relation it reads.

// inputImage is one relation as a view's definition saw it.
type inputImage struct {
	ID uint64 `json:"id"`
	// Cols, for a table, are the columns the view saw, in the order it
	// saw them; nil for other relations.
	Cols []imageColumn `json:"cols,omitempty"`
}

// imageColumn is one column of a table as a view saw it.
type imageColumn struct {
	Attnum int    `json:"attnum"`
	Name   string `json:"name"`
}

// shapeSep separates a table's name from the column list in a shaped
// scan name; no relation name holds it.
const shapeSep = "\x00"

// shapedName names the scan of table name that reads its current columns
// at positions pos, in that order.
func shapedName(name string, pos []int) string {
	var b strings.Builder
	b.WriteString(name)
	b.WriteString(shapeSep)
	for i, p := range pos {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(strconv.Itoa(p))
	}
	return b.String()
}

// displayScanName is a scan name as a user reads it: a shaped name shows
// its table's name.
func displayScanName(name string) string {
	if i := strings.Index(name, shapeSep); i >= 0 {
		return name[:i]
	}
	return name
}

// input resolves the name of a circuit's input: the relation it reads
// and, for a shaped name, the positions of the columns it reads (nil:
// all, in order).
func (c *catalog) input(name string) (*object, []int) {
	i := strings.Index(name, shapeSep)
	if i < 0 {
		return c.lookup(name), nil
	}
	o := c.lookup(name[:i])
	var pos []int
	if rest := name[i+len(shapeSep):]; rest != "" {
		for _, f := range strings.Split(rest, ",") {
			p, err := strconv.Atoi(f)
			if err != nil || o == nil || p < 0 || p >= len(o.cols) {
				return nil, nil
			}
			pos = append(pos, p)
		}
	}
	if pos == nil {
		pos = []int{}
	}
	return o, pos
}

// projectRows returns b's rows cut to the columns at pos (nil: b itself).
func projectRows(b zset.Batch, pos []int) zset.Batch {
	if pos == nil {
		return b
	}
	out := make(zset.Batch, len(b))
	for i, e := range b {
		row := make(zset.Row, len(pos))
		for j, p := range pos {
			row[j] = e.Row[p]
		}
		out[i] = zset.Entry{Row: row, Weight: e.Weight}
	}
	return out
}

// attnumsOf returns a table's column numbers, in column order: 1..n when
// it never lost a column.
func (o *object) attnumsOf() []int {
	if o.attnums != nil {
		return o.attnums
	}
	out := make([]int, len(o.cols))
	for i := range out {
		out[i] = i + 1
	}
	return out
}

// attnumPos returns the position of the column numbered attnum, or -1.
func (o *object) attnumPos(attnum int) int {
	for i, a := range o.attnumsOf() {
		if a == attnum {
			return i
		}
	}
	return -1
}

// byID returns the user relation with catalog id id, or nil.
func (c *catalog) byID(id uint64) *object {
	for _, o := range c.byName {
		if o.id == id {
			return o
		}
	}
	return nil
}

// imageOf is o as a view that reads it now sees it.
func imageOf(o *object) *inputImage {
	img := &inputImage{ID: o.id}
	if o.kind == sql.Table {
		for i, a := range o.attnumsOf() {
			img.Cols = append(img.Cols, imageColumn{Attnum: a, Name: o.cols[i].Name})
		}
	}
	return img
}

// boundCatalog resolves a view definition's names through its images,
// over base for everything else (system relations, and the session's
// services: subqueries, the system catalog).
type boundCatalog struct {
	*catalog
	images map[string]*inputImage
	// record, while a view is being defined, resolves names without an
	// image in base and adds their images.
	record bool
	// funcPath, when set, is the search path calls of SQL functions
	// resolve through: a plain view's, as when it was created, whatever
	// the reading session's path.
	funcPath []string
}

// Functions implements sql.FunctionCatalog: through funcPath when set.
func (b *boundCatalog) Functions(schema, name string) []*sql.Function {
	if b.funcPath != nil {
		return b.catalog.withPath(b.funcPath).Functions(schema, name)
	}
	return b.catalog.Functions(schema, name)
}

// Relation implements sql.Catalog.
func (b *boundCatalog) Relation(name string) *sql.Relation {
	if img, ok := b.images[name]; ok {
		return b.catalog.imageRelation(img)
	}
	o := b.catalog.resolve(name)
	if !b.record || o == nil || o.system != nil {
		return b.catalog.Relation(name)
	}
	img := imageOf(o)
	b.images[name] = img
	return b.catalog.imageRelation(img)
}

// imageRelation is the relation img denotes in c, as its view sees it;
// nil when it no longer exists.
func (c *catalog) imageRelation(img *inputImage) *sql.Relation {
	o := c.byID(img.ID)
	if o == nil {
		return nil
	}
	if o.kind != sql.Table {
		return c.relationOf(o)
	}
	cols := make([]plan.Column, 0, len(img.Cols))
	pos := make([]int, 0, len(img.Cols))
	for _, ic := range img.Cols {
		p := o.attnumPos(ic.Attnum)
		if p < 0 {
			continue // dropped: a definition that reads it no longer binds
		}
		cols = append(cols, plan.Column{Name: ic.Name, Type: o.cols[p].Type})
		pos = append(pos, p)
	}
	name := o.name
	identity := len(pos) == len(o.cols)
	for i, p := range pos {
		identity = identity && p == i
	}
	if !identity {
		name = shapedName(o.name, pos)
	}
	return &sql.Relation{Name: name, Kind: o.kind, Cols: cols, AppendOnly: o.appendOnly, Unique: keyAmong(o, pos)}
}

// keyAmong reports whether table o has a primary key whose columns are
// all among pos (column positions): rows of those columns are then never
// equal.
func keyAmong(o *object, pos []int) bool {
	if len(o.pk) == 0 {
		return false
	}
	for _, k := range o.pk {
		if !slices.Contains(pos, k) {
			return false
		}
	}
	return true
}

// relationOf is o for the binder; a plain view binds its definition
// through its images.
func (c *catalog) relationOf(o *object) *sql.Relation {
	rel := &sql.Relation{Name: o.name, Kind: o.kind, Cols: o.cols, Query: o.query, AppendOnly: o.appendOnly,
		Unique: o.kind == sql.Table && len(o.pk) > 0, SystemCols: o.systemCols}
	if o.kind == sql.View && o.inputs != nil {
		rel.Cat = viewCatalog(c, o, o.inputs)
	}
	return rel
}

// viewCatalog is the catalog existing view o's definition binds again
// in: through images, its calls of SQL functions resolving through the
// search path it was created in.
func viewCatalog(c *catalog, o *object, images map[string]*inputImage) *boundCatalog {
	bc := definitionCatalog(c, images, images == nil)
	bc.funcPath = o.funcPath
	if bc.funcPath == nil {
		bc.funcPath = defaultPath
	}
	return bc
}

// definitionCatalog is the catalog a view's definition binds in: through
// images, recording new ones when images is empty and record is set.
func definitionCatalog(c *catalog, images map[string]*inputImage, record bool) *boundCatalog {
	if images == nil {
		images = map[string]*inputImage{}
	}
	return &boundCatalog{catalog: c, images: images, record: record}
}

// readsRelation reports whether view o's definition resolved a name to
// the relation with id id.
func (o *object) readsRelation(id uint64, name string) bool {
	if o.inputs == nil {
		for _, d := range o.deps {
			if d == name {
				return true
			}
		}
		return false
	}
	for _, img := range o.inputs {
		if img.ID == id {
			return true
		}
	}
	return false
}

// circuitDeltas returns the deltas a circuit's step takes from deltas,
// which hold relations' changes by name: deltas itself when the circuit
// reads no shaped input, else a map with its shaped inputs projected.
// touched reports whether any input has a change.
func circuitDeltas(cat *catalog, c *diff.Circuit, deltas map[string]zset.Batch) (_ map[string]zset.Batch, touched bool) {
	var shaped map[string]zset.Batch
	for _, r := range c.Relations() {
		i := strings.Index(r, shapeSep)
		if i < 0 {
			touched = touched || len(deltas[r]) > 0
			continue
		}
		d := deltas[r[:i]]
		if len(d) == 0 {
			continue
		}
		touched = true
		_, pos := cat.input(r)
		if shaped == nil {
			shaped = make(map[string]zset.Batch, len(deltas)+1)
			for k, v := range deltas {
				shaped[k] = v
			}
		}
		shaped[r] = projectRows(d, pos)
	}
	if shaped == nil {
		return deltas, touched
	}
	return shaped, touched
}

// baseRelation is the relation a circuit's input name reads: the table
// of a shaped scan name, else the name itself.
func baseRelation(name string) string {
	if i := strings.Index(name, shapeSep); i >= 0 {
		return name[:i]
	}
	return name
}

// displayExplain is an EXPLAIN text with its shaped scan names shown as
// their tables' names.
func displayExplain(text string) string {
	for {
		i := strings.Index(text, shapeSep)
		if i < 0 {
			return text
		}
		j := i
		for j < len(text) && text[j] != ' ' && text[j] != '\n' {
			j++
		}
		text = text[:i] + text[j:]
	}
}
